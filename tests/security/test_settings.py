"""Start-up refusals and the security settings with DEBUG off, read from a fresh process with its
own environment (settings are read once per process)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PRINT = (
    "import django, json; django.setup(); from django.conf import settings as s; print(json.dumps({n: getattr(s, n) "
    "for n in %r}))"
)


def _run(code: str, tmp_path: Path, **env) -> subprocess.CompletedProcess:
    """``python -c code`` with annotator.settings, none of the key or security variables of this
    process, key files that do not exist unless given, and ``env`` on top."""
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "PSEUDONYM_KEY", "HANDLE_KEY", "AXES_")) and k != "CSP_MEDIA_ORIGINS"
    }
    base |= {
        "DJANGO_SETTINGS_MODULE": "annotator.settings",
        "DJANGO_SECRET_KEY_FILE": str(tmp_path / "no-secret-key"),
        "PSEUDONYM_KEY_FILE": str(tmp_path / "no-pseudonym-key"),
        "HANDLE_KEY_FILE": str(tmp_path / "no-handle-key"),
    }
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=base | env, capture_output=True, text=True, timeout=60
    )


def _settings(tmp_path, names, **env) -> dict:
    proc = _run(PRINT % (names,), tmp_path, **env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


KEYS = {"DJANGO_SECRET_KEY": "s" * 50, "PSEUDONYM_KEY": "p" * 50, "HANDLE_KEY": "h" * 50}


def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off(tmp_path):
    proc = _run("import django; django.setup()", tmp_path, PSEUDONYM_KEY="p" * 50)
    assert proc.returncode == 1
    assert (
        "django.core.exceptions.ImproperlyConfigured: DJANGO_SECRET_KEY is not set, and DJANGO_DEBUG is off."
        in proc.stderr
    )


@pytest.mark.parametrize(
    "key", ["local-only-insecure-key-set-DJANGO_SECRET_KEY-in-production", "django-insecure-abc", "   "]
)
def test_it_refuses_to_start_with_the_public_or_a_blank_secret_key(tmp_path, key):
    proc = _run(
        "import django; django.setup()", tmp_path, DJANGO_SECRET_KEY=key, PSEUDONYM_KEY="p" * 50, HANDLE_KEY="h" * 50
    )
    assert proc.returncode == 1
    problem = "is not set" if not key.strip() else "is a published placeholder"
    assert f"ImproperlyConfigured: DJANGO_SECRET_KEY {problem}, and DJANGO_DEBUG is off." in proc.stderr


def test_it_refuses_to_start_without_a_pseudonym_key_when_debug_is_off(tmp_path):
    proc = _run("import django; django.setup()", tmp_path, DJANGO_SECRET_KEY="s" * 50)
    assert proc.returncode == 1
    assert "ImproperlyConfigured: PSEUDONYM_KEY is not set, and DJANGO_DEBUG is off." in proc.stderr


def test_it_refuses_to_start_without_a_handle_key_when_debug_is_off(tmp_path):
    proc = _run("import django; django.setup()", tmp_path, DJANGO_SECRET_KEY="s" * 50, PSEUDONYM_KEY="p" * 50)
    assert proc.returncode == 1
    assert "ImproperlyConfigured: HANDLE_KEY is not set, and DJANGO_DEBUG is off." in proc.stderr


def test_keys_come_from_their_files_when_the_variables_are_unset(tmp_path):
    (tmp_path / "secret").write_text("secret-from-file-" + "x" * 40 + "\n")
    (tmp_path / "pseudonym").write_text("pseudonym-from-file\n")
    (tmp_path / "handle").write_text("handle-from-file\n")
    got = _settings(
        tmp_path,
        ["SECRET_KEY", "PSEUDONYM_KEY", "HANDLE_KEY"],
        DJANGO_SECRET_KEY_FILE=str(tmp_path / "secret"),
        PSEUDONYM_KEY_FILE=str(tmp_path / "pseudonym"),
        HANDLE_KEY_FILE=str(tmp_path / "handle"),
    )
    assert got == {
        "SECRET_KEY": "secret-from-file-" + "x" * 40,
        "PSEUDONYM_KEY": "pseudonym-from-file",
        "HANDLE_KEY": "handle-from-file",
    }


def test_the_variable_wins_over_the_file(tmp_path):
    (tmp_path / "secret").write_text("from-file")
    got = _settings(tmp_path, ["SECRET_KEY"], DJANGO_SECRET_KEY_FILE=str(tmp_path / "secret"), **KEYS)
    assert got == {"SECRET_KEY": "s" * 50}


def test_with_debug_on_it_starts_with_local_placeholder_keys(tmp_path):
    got = _settings(tmp_path, ["SECRET_KEY", "PSEUDONYM_KEY", "HANDLE_KEY"], DJANGO_DEBUG="1")
    assert got == {
        "SECRET_KEY": "local-only-insecure-key-set-DJANGO_SECRET_KEY-in-production",
        "PSEUDONYM_KEY": "local-only-insecure-pseudonym-key",
        "HANDLE_KEY": "local-only-insecure-handle-key",
    }


SECURITY = [
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SESSION_COOKIE_HTTPONLY",
    "CSRF_COOKIE_HTTPONLY",
    "SECURE_HSTS_SECONDS",
    "SECURE_SSL_REDIRECT",
    "SECURE_PROXY_SSL_HEADER",
]


def test_with_debug_off_cookies_are_secure_and_http_only_and_hsts_is_a_year(tmp_path):
    assert _settings(tmp_path, SECURITY, **KEYS) == {
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SESSION_COOKIE_HTTPONLY": True,
        "CSRF_COOKIE_HTTPONLY": True,
        "SECURE_HSTS_SECONDS": 31_536_000,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_PROXY_SSL_HEADER": None,
    }


def test_the_plain_http_demo_switch_turns_off_only_the_secure_flag(tmp_path):
    got = _settings(tmp_path, SECURITY, DJANGO_SECURE_COOKIES="0", **KEYS)
    assert (got["SESSION_COOKIE_SECURE"], got["CSRF_COOKIE_SECURE"]) == (False, False)
    assert (got["SESSION_COOKIE_HTTPONLY"], got["CSRF_COOKIE_HTTPONLY"], got["SECURE_HSTS_SECONDS"]) == (
        True,
        True,
        31_536_000,
    )


def test_behind_a_proxy_the_forwarded_scheme_and_the_redirect_are_switched_on(tmp_path):
    got = _settings(tmp_path, SECURITY, DJANGO_TRUST_X_FORWARDED_PROTO="1", DJANGO_SSL_REDIRECT="1", **KEYS)
    assert (got["SECURE_PROXY_SSL_HEADER"], got["SECURE_SSL_REDIRECT"]) == (["HTTP_X_FORWARDED_PROTO", "https"], True)


def test_a_malformed_switch_stops_the_start(tmp_path):
    proc = _run("import django; django.setup()", tmp_path, DJANGO_SECURE_COOKIES="maybe", **KEYS)
    assert proc.returncode == 1
    assert "DJANGO_SECURE_COOKIES must be a boolean (1/0, true/false), got 'maybe'" in proc.stderr


def test_the_key_script_makes_private_keys_once(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SECRET_KEY_FILE": str(tmp_path / "k" / "secret"),
        "PSEUDONYM_KEY_FILE": str(tmp_path / "k" / "pseudonym"),
    }
    first = subprocess.run([str(REPO / "scripts" / "keys.sh")], env=env, capture_output=True, text=True, check=True)
    secret = (tmp_path / "k" / "secret").read_text()
    again = subprocess.run([str(REPO / "scripts" / "keys.sh")], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.count("keys: created") == 2 and again.stdout == ""
    assert (tmp_path / "k" / "secret").read_text() == secret
    assert len(secret) >= 50 and secret != (tmp_path / "k" / "pseudonym").read_text()
    assert {oct((tmp_path / "k" / n).stat().st_mode & 0o777) for n in ("secret", "pseudonym")} == {"0o600"}
