"""Login throttling (django-axes): five wrong passwords for one username from one address lock that
pair out for 15 minutes; the right password is then refused too. API tokens keep working."""

from io import StringIO

from django.core.management import call_command

WRONG = {"username": "ann", "password": "not-the-password"}
RIGHT = {"username": "ann", "password": "pw-ann-123"}


def _logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_after_fifty_wrong_passwords_the_right_one_is_refused(client, annotator):
    for i in range(50):
        # A guesser who claims a new address each time gains nothing: only REMOTE_ADDR counts.
        response = client.post("/accounts/login/", WRONG, HTTP_X_FORWARDED_FOR=f"10.0.{i // 250}.{i % 250}")
        assert response.status_code in (200, 429)
    response = client.post("/accounts/login/", RIGHT)
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many wrong passwords" in page
    assert "The password for this account was wrong 5 times in a row" in page
    assert "Wait 15 minutes, then try again." in page
    assert not _logged_in(client)


def test_the_lock_starts_at_the_fifth_failure(client, annotator):
    statuses = [client.post("/accounts/login/", WRONG).status_code for _ in range(5)]
    assert statuses == [200, 200, 200, 200, 429]
    assert client.post("/accounts/login/", RIGHT).status_code == 429


def test_four_wrong_passwords_then_the_right_one_logs_in(client, annotator):
    for _ in range(4):
        assert client.post("/accounts/login/", WRONG).status_code == 200
    assert client.post("/accounts/login/", RIGHT).status_code == 302
    assert _logged_in(client)


def test_the_lock_is_per_username_and_address(client, annotator, annotator2):
    for _ in range(5):
        client.post("/accounts/login/", WRONG)
    # Someone else at the same address, and the same person from another address, still log in.
    other = client.__class__()
    assert other.post("/accounts/login/", {"username": "ann2", "password": "pw-ann2-123"}).status_code == 302
    elsewhere = client.__class__(REMOTE_ADDR="192.0.2.7")
    assert elsewhere.post("/accounts/login/", RIGHT).status_code == 302


def test_api_tokens_keep_working_for_a_locked_out_user(client, annotator, project):
    for _ in range(6):
        client.post("/accounts/login/", WRONG)
    out = StringIO()
    call_command("createuser", "ann", "--role", "annotator", "--project", project.slug, "--token", stdout=out)
    response = client.__class__().get(
        f"/api/projects/{project.slug}/qa-types/", HTTP_AUTHORIZATION=f"Token {out.getvalue().strip()}"
    )
    assert response.status_code == 200
