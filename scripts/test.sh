#!/usr/bin/env bash
# Run the test suite against the project-local PostgreSQL and Redis (started here if they are not
# running, and stopped again afterwards in that case). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

# Lint and format first: seconds, and a failure says which file and line (rules in pyproject.toml).
.venv/bin/ruff check .
.venv/bin/ruff format --check .

started=0
# Read whole first (see demo.sh: `status | grep -q` can fail on SIGPIPE under pipefail).
status="$(scripts/stack.sh status)"
if [[ "$status" != *"postgres: running"* || "$status" != *"redis: running"* ]]; then
  started=1
fi
scripts/stack.sh start
trap '[ "$started" = 1 ] && scripts/stack.sh stop' EXIT
.venv/bin/python manage.py migrate --noinput -v0
# Two pytest-xdist workers by default (TEST_WORKERS=0 runs one process): about 23 minutes against 38 on
# this 2-core machine. tests/conftest.py keeps each file's tests (and its SHARED_WORKER groups) on one
# worker and hands the longest groups out first (--no-loadscope-reorder keeps that order).
.venv/bin/pytest -n "${TEST_WORKERS:-2}" --dist loadgroup --no-loadscope-reorder "$@"
