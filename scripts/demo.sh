#!/usr/bin/env bash
# Bring up the platform with the demo footage: local stack, migrations, users, a Celery worker,
# ingest + transcode, template drafts, and the web server. Ctrl-C stops every process started here.
# Running it again reuses what is there (ingest dedupes, drafting skips drafted videos).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT="${PORT:-8000}"
# The demo's model server (canned answers, demo/model_server.py) listens beside the web server.
MODEL_PORT="${DEMO_MODEL_PORT:-$((PORT + 11))}"
logs=.local/logs
mkdir -p "$logs"
# The demo serves plain http on 127.0.0.1, where a browser would drop Secure cookies (the default
# with DJANGO_DEBUG off) and nobody could log in. Only for this local demo; see docs/security.md.
export DJANGO_SECURE_COOKIES="${DJANGO_SECURE_COOKIES:-0}"

# Another server on the port (an earlier demo still running?) would answer in this one's place.
if $PY - "$PORT" <<'PYEOF'
import socket, sys
with socket.socket() as s:
    sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)
PYEOF
then
  echo "demo: port $PORT is already in use (is another demo running?). Stop it, or run: PORT=8001 make demo" >&2
  exit 1
fi
if $PY - "$MODEL_PORT" <<'PYEOF'
import socket, sys
with socket.socket() as s:
    sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)
PYEOF
then
  echo "demo: port $MODEL_PORT (the demo model server) is already in use. Free it, or run: DEMO_MODEL_PORT=8111 make demo" >&2
  exit 1
fi

stack_was_running=0
# The status is read whole first: with pipefail, `status | grep -q` fails when grep exits at its match
# and the status script gets SIGPIPE, and a running stack would be taken as stopped (and stopped at exit).
status="$(scripts/stack.sh status)"
[[ "$status" == *"postgres: running"* ]] && stack_was_running=1
pids=()
cleanup() {
  trap - INT TERM EXIT
  echo
  echo "demo: stopping"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$stack_was_running" = 0 ]; then scripts/stack.sh stop; fi
}
trap cleanup INT TERM EXIT

scripts/stack.sh start   # also creates .local/secret_key and .local/pseudonym_key once (scripts/keys.sh)
$PY manage.py migrate --noinput -v0
# Files stored before media keys (issue 20): moved once, then a no-op; a video it cannot move is
# reported and not served, and does not stop the demo.
$PY manage.py relocate_media || echo "relocate_media: some videos were not moved (see above); run it again"
$PY manage.py collectstatic --noinput -v0

# One worker per queue (annotator/settings.py routes the tasks: ffmpeg on media, model calls on
# models, scoring on scores, the rest on default), at concurrencies that fit 2 cores: a long
# transcode never holds up a score. Banners and warnings go to the logs, so this terminal shows only
# the demo's progress.
# The default worker also drains `celery`, the one queue of releases before the split, for one release.
for spec in media:1 models:2 scores:1 default:1; do
  queue="${spec%%:*}"
  consume="$queue"; [ "$queue" = default ] && consume="default,celery"
  .venv/bin/celery -A workers worker -Q "$consume" -n "$queue@%h" --concurrency "${spec##*:}" --loglevel INFO \
    --logfile "$logs/worker-$queue.log" >>"$logs/worker-$queue.out" 2>&1 &
  pids+=($!)
done
# Celery beat runs the job reconciler (re-sends jobs a broker lost, fails those that kill workers).
# Its schedule and lock are in Redis (workers/beat.py): a second beat started by mistake sends nothing.
.venv/bin/celery -A workers beat --loglevel INFO --logfile "$logs/beat.log" >>"$logs/beat.out" 2>&1 &
pids+=($!)

# An OpenAI-compatible server with canned answers (there is no model in the demo), for the model
# pipelines, the evaluation and its judge.
$PY demo/model_server.py --port "$MODEL_PORT" >>"$logs/model_server.out" 2>&1 &
pids+=($!)

# Users, footage, night renditions, QA types, drafts, a scripted first pass, one study of each kind,
# a VUDG run and an evaluation against the demo model server; a rerun reuses them.
$PY manage.py demo_setup --footage .cache/footage --manifest demo/manifest.jsonl --project demo \
  --model-base-url "http://127.0.0.1:$MODEL_PORT/v1"

.venv/bin/gunicorn annotator.wsgi --bind "127.0.0.1:$PORT" --workers 2 --threads 4 \
  --access-logfile "$logs/access.log" --error-logfile "$logs/web.log" &
pids+=($!)
$PY - "$PORT" <<'PYEOF'
import sys, time, urllib.request
for _ in range(100):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/accounts/login/", timeout=1)
        break
    except OSError:
        time.sleep(0.2)
PYEOF

cat <<MSG

  The platform is running: http://127.0.0.1:$PORT/
    admin       harbor-lantern-42   (project admin + Django admin at /admin/, export link on the home page)
    annotator1  maple-river-81
    annotator2  granite-sparrow-64
    reviewer1   cedar-harbor-37     (reviewer: the review round, http://127.0.0.1:$PORT/projects/demo/review/)
    trainee1    willow-beacon-27    (annotator who qualified through the gate: tutorial, qualification, gold)
  The team (as admin): units http://127.0.0.1:$PORT/projects/demo/units/, figures and pay
    http://127.0.0.1:$PORT/projects/demo/team/, qualification and gold http://127.0.0.1:$PORT/projects/demo/gold/
  Human-baseline studies (take part as an annotator; results at .../results/ as admin):
    frame ordering     http://127.0.0.1:$PORT/projects/demo/studies/ego-flight/
    multiple choice    http://127.0.0.1:$PORT/projects/demo/studies/egoexobench-human/
    open answers       http://127.0.0.1:$PORT/projects/demo/studies/open-answers/
    Likert ratings     http://127.0.0.1:$PORT/projects/demo/studies/vudg-quality/
    Likert (records)   http://127.0.0.1:$PORT/projects/demo/studies/xlebench-realism/
    ego-exo views (MCQ, every labelled video)  http://127.0.0.1:$PORT/projects/demo/studies/egoexo-views/
  Benchmark report, humans beside the model (as admin; EGO-FLIGHT's Table 1 layout):
    http://127.0.0.1:$PORT/projects/demo/report/?study=ego-flight&preset=ego-flight-table1
  Inter-annotator agreement (as admin): http://127.0.0.1:$PORT/projects/demo/agreement/
  Models in the loop (as admin; the demo model server at 127.0.0.1:$MODEL_PORT gives CANNED answers):
    pipeline runs      http://127.0.0.1:$PORT/projects/demo/runs/
    evaluation         http://127.0.0.1:$PORT/projects/demo/evaluation/
  API schema: http://127.0.0.1:$PORT/api/schema/   Logs: $logs/
  Press Ctrl-C to stop everything started here.

MSG
wait -n "${pids[@]}"
