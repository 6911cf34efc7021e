#!/usr/bin/env bash
# Run the test suite against the project-local PostgreSQL and Redis (started here if they are not
# running, and stopped again afterwards in that case). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

started=0
if ! scripts/stack.sh status | grep -q "postgres: running" || ! scripts/stack.sh status | grep -q "redis: running"; then
  started=1
fi
scripts/stack.sh start
trap '[ "$started" = 1 ] && scripts/stack.sh stop' EXIT
.venv/bin/python manage.py migrate --noinput -v0
.venv/bin/pytest "$@"
