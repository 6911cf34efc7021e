"""Django's four password validators, applied by createuser before it writes anything; the demo's
passwords pass them and the README lists the same ones."""

import re
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.management import CommandError, call_command

REPO = Path(__file__).resolve().parents[2]


def _createuser(name, password, project="proj"):
    return call_command(
        "createuser", name, "--role", "annotator", "--project", project, "--password", password, stdout=StringIO()
    )


@pytest.mark.parametrize(
    "password, message",
    [
        ("short1", "This password is too short. It must contain at least 8 characters."),
        ("password123", "This password is too common."),
        ("3141592653", "This password is entirely numeric."),
        ("marie-curie", "The password is too similar to the username."),
    ],
)
def test_createuser_refuses_a_weak_password_and_creates_nothing(db, password, message):
    with pytest.raises(CommandError) as refused:
        _createuser("marie-curie", password)
    assert str(refused.value).startswith("password for marie-curie refused: ")
    assert message in str(refused.value)
    assert not User.objects.filter(username="marie-curie").exists()


def test_createuser_refuses_a_weak_new_password_for_an_existing_user_and_keeps_the_old_one(db):
    _createuser("marie", "radium-polonium-1898")
    with pytest.raises(CommandError):
        _createuser("marie", "12345678")
    assert User.objects.get(username="marie").check_password("radium-polonium-1898")


def test_createuser_sets_a_good_password(db):
    _createuser("marie", "radium-polonium-1898")
    assert User.objects.get(username="marie").check_password("radium-polonium-1898")


def _demo_logins() -> list[tuple[str, str]]:
    from annotator.demo.management.commands.demo_setup import DEMO_USERS

    return [(name, password) for name, _, password, _ in DEMO_USERS]


def test_the_demo_passwords_pass_the_validators_and_the_readme_lists_them(db):
    logins = _demo_logins()
    assert [name for name, _ in logins] == ["admin", "annotator1", "annotator2"]
    readme = (REPO / "README.md").read_text()
    for name, password in logins:
        validate_password(password, user=get_user_model()(username=name))  # raises if refused
        assert re.search(rf"\| `{name}` +\| `{re.escape(password)}` +\|", readme), name
