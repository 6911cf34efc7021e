"""A migrated template database, copied for the session's test database(s) and the benches' scratch
databases: ``CREATE DATABASE ... TEMPLATE`` copies it in about a second, where migrating an empty
database takes 25 s of CPU (105 s of wall time on a loaded 2-core machine), which a fresh clone's
``make test`` paid once per test database (one per xdist worker) and once per bench scratch database.

The template is ``<POSTGRES_DB>_template_<hash>``, the hash covering every migration file of the
repository and the requirements files (the migrations of Django and the other installed apps), so a
changed or new migration gives a new template: a database copied from one is exactly what migrating
an empty one gives. It is built once (under a PostgreSQL advisory lock, so two xdist workers or two
runs with the same POSTGRES_DB build it once) under another name, then renamed: a template that
exists is complete. Templates of older hashes are dropped when a new one is made.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _params() -> dict:
    """Connection parameters of the project's PostgreSQL (as ``annotator.settings`` reads them)."""
    return {
        "host": os.environ.get("POSTGRES_HOST", "127.0.0.1"),
        "port": int(os.environ.get("POSTGRES_PORT", "54329")),
        "user": os.environ.get("POSTGRES_USER", "annotator"),
        "password": os.environ.get("POSTGRES_PASSWORD", ""),
    }


def _migrations_hash() -> str:
    """12 hex digits over every migration file (path and bytes) and the requirements files."""
    digest = hashlib.sha256()
    tops = [top for top in REPO.iterdir() if top.is_dir() and not top.name.startswith(".")]  # not .venv, .local
    files = sorted(path for top in tops for path in top.glob("**/migrations/*.py"))
    files += sorted(REPO.glob("requirements*.txt"))
    for path in files:
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def template_prefix() -> str:
    return f"{os.environ.get('POSTGRES_DB', 'annotator')}_template_"


@contextmanager
def _admin():
    """An autocommit connection to the maintenance database ``postgres``."""
    import psycopg

    with psycopg.connect(**_params(), dbname="postgres", autocommit=True) as conn:
        yield conn


def _exists(conn, name: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


_built: str | None = None


def ensure_template() -> str:
    """The name of the migrated template database, built first if missing (see the module's
    docstring). Raises RuntimeError with migrate's output when migrating it fails."""
    global _built
    if _built:
        return _built
    from psycopg import sql

    name = template_prefix() + _migrations_hash()
    lock = int.from_bytes(hashlib.sha256(template_prefix().encode()).digest()[:8], "big", signed=True)
    with _admin() as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", [lock])
        try:
            if not _exists(conn, name):
                building = f"{name}_building"
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(building)))
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(building)))
                env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "POSTGRES_DB": building}
                done = subprocess.run(
                    [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
                    cwd=REPO,
                    env=env,
                    capture_output=True,
                    text=True,
                )
                if done.returncode != 0:
                    raise RuntimeError(
                        f"migrating the template database {building} failed:\n{done.stdout}{done.stderr}"
                    )
                conn.execute(
                    sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(building), sql.Identifier(name))
                )
                old = conn.execute(
                    "SELECT datname FROM pg_database WHERE datname LIKE %s AND datname <> %s",
                    [template_prefix().replace("_", r"\_") + "%", name],
                ).fetchall()
                for (stale,) in old:
                    try:
                        conn.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(stale)))
                    except Exception:  # noqa: BLE001 (in use by another run: left for a later one)
                        pass
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", [lock])
    _built = name
    return name


def ensure_copy(db: str) -> None:
    """Create the database ``db`` as a copy of the template when it does not exist (an existing one
    is left as it is)."""
    from psycopg import errors, sql

    template = ensure_template()
    with _admin() as conn:
        if not _exists(conn, db):
            try:
                conn.execute(
                    sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(db), sql.Identifier(template))
                )
            except errors.DuplicateDatabase:  # made meanwhile by another run
                pass
