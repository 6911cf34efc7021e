"""What every page sends: a Content-Security-Policy without inline script or style, Secure and
HttpOnly cookies with DEBUG off (as in the test settings), HSTS on HTTPS."""

import pytest

CSP = (
    "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; img-src 'self' data:; media-src 'self' blob:; object-src 'none'; "
    "script-src 'self'; style-src 'self'"
)


def _directives(header: str) -> dict[str, str]:
    return dict(part.strip().split(" ", 1) for part in header.split(";"))


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/", "/api/schema/", "/nowhere/"])
def test_pages_send_the_policy_even_to_strangers(client, db, path):
    response = client.get(path)
    assert _directives(response["Content-Security-Policy"]) == _directives(CSP)


def test_member_pages_send_the_policy(client, annotator, project):
    client.force_login(annotator)
    for path in ["/", f"/projects/{project.slug}/verify/", f"/projects/{project.slug}/qa-types/"]:
        response = client.get(path)
        assert response.status_code == 200, path
        assert _directives(response["Content-Security-Policy"]) == _directives(CSP), path


def test_login_sets_secure_http_only_session_and_csrf_cookies(client, annotator):
    page = client.get("/accounts/login/")
    csrf = page.cookies["csrftoken"]
    assert (csrf["secure"], csrf["httponly"], csrf["samesite"]) == (True, True, "Lax")
    # The token scripts use is in the page, since the cookie is out of their reach.
    assert f'<meta name="csrf-token" content="{page.context["csrf_token"]}">' in page.content.decode()

    response = client.post("/accounts/login/", {"username": "ann", "password": "pw-ann-123"})
    assert response.status_code == 302
    session = response.cookies["sessionid"]
    assert (session["secure"], session["httponly"], session["samesite"]) == (True, True, "Lax")


def test_https_responses_carry_hsts_and_refuse_framing(client, db):
    response = client.get("/accounts/login/", secure=True)
    assert response["Strict-Transport-Security"] == "max-age=31536000"
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "Strict-Transport-Security" not in client.get("/accounts/login/")  # never over plain http
