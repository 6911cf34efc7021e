#!/usr/bin/env bash
# Project-local PostgreSQL cluster and Redis on loopback, no systemd.
#
#   scripts/stack.sh start   initdb on first use, start both, create role and database
#   scripts/stack.sh stop    stop both
#   scripts/stack.sh status
#
# Data lives in .local/ (git-ignored). Ports come from the same environment variables the
# Django settings read (POSTGRES_PORT, REDIS_PORT), so the two never disagree.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
local_dir="$repo/.local"
pg_data="$local_dir/pg/data"
pg_run="$local_dir/pg/run"
pg_log="$local_dir/pg/postgres.log"
redis_dir="$local_dir/redis"

POSTGRES_HOST="${POSTGRES_HOST:-127.0.0.1}"
POSTGRES_PORT="${POSTGRES_PORT:-54329}"
POSTGRES_DB="${POSTGRES_DB:-annotator}"
POSTGRES_USER="${POSTGRES_USER:-annotator}"
REDIS_PORT="${REDIS_PORT:-63799}"

pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
[ -n "$pg_bin" ] || { echo "stack: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

# initdb and postgres refuse to run as root: run them as the postgres user when we are root.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_running() { as_pg "$pg_bin/pg_ctl" -D "$pg_data" status >/dev/null 2>&1; }
redis_running() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; }

start_pg() {
  mkdir -p "$local_dir/pg" "$pg_run"
  if [ "$(id -u)" = 0 ]; then chown -R postgres: "$local_dir/pg"; fi
  if [ ! -s "$pg_data/PG_VERSION" ]; then
    echo "stack: initdb $pg_data"
    as_pg "$pg_bin/initdb" -D "$pg_data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  fi
  if ! pg_running; then
    # Stale pid file after a killed machine: pg_ctl handles it; a stale socket lock too.
    as_pg "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_log" -w -t 60 start \
      -o "-h $POSTGRES_HOST -p $POSTGRES_PORT -k $pg_run -c max_connections=200 -c fsync=off -c synchronous_commit=off" >/dev/null \
      || { echo "stack: PostgreSQL did not start (is another server on port $POSTGRES_PORT?); last lines of $pg_log:" >&2
           tail -n 5 "$pg_log" >&2; exit 1; }
  fi
  local psql=("$pg_bin/psql" -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -U postgres -d postgres -qtA)
  if [ "$("${psql[@]}" -c "select 1 from pg_roles where rolname='$POSTGRES_USER'")" != 1 ]; then
    "${psql[@]}" -c "create role \"$POSTGRES_USER\" login createdb"
  fi
  if [ "$("${psql[@]}" -c "select 1 from pg_database where datname='$POSTGRES_DB'")" != 1 ]; then
    "${psql[@]}" -c "create database \"$POSTGRES_DB\" owner \"$POSTGRES_USER\""
  fi
  echo "stack: postgres on $POSTGRES_HOST:$POSTGRES_PORT (db $POSTGRES_DB)"
}

start_redis() {
  mkdir -p "$redis_dir"
  cat > "$redis_dir/redis.conf" <<EOF
bind 127.0.0.1
port $REDIS_PORT
dir $redis_dir
daemonize yes
pidfile $redis_dir/redis.pid
logfile $redis_dir/redis.log
save ""
appendonly no
EOF
  if ! redis_running; then
    redis-server "$redis_dir/redis.conf"
    for _ in $(seq 50); do redis_running && break; sleep 0.1; done
    redis_running || { echo "stack: redis did not start, see $redis_dir/redis.log" >&2; exit 1; }
  fi
  echo "stack: redis on 127.0.0.1:$REDIS_PORT"
}

case "${1:-}" in
  # The key files ride along with "start" because every way in (make demo, make test, make stack,
  # make bench) starts the stack before Django reads its settings.
  start) start_pg; start_redis; "$repo/scripts/keys.sh" ;;
  stop)
    if pg_running; then as_pg "$pg_bin/pg_ctl" -D "$pg_data" -m fast stop >/dev/null; fi
    if redis_running; then redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true; fi
    echo "stack: stopped" ;;
  status)
    pg_running && echo "postgres: running" || echo "postgres: stopped"
    redis_running && echo "redis: running" || echo "redis: stopped" ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
