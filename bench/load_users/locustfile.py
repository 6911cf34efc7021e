"""The simulated people of ``bench/load.py`` (issue 22, section 4), as Locust users. Not run alone:
``bench/load.py`` fills the database, starts gunicorn and runs ``locust -f`` on this file with its
settings in the environment (``LOAD_*``, below), then reads what this file writes at the end.

It lives in a folder of its own: Locust puts a locustfile's folder first on ``sys.path``, and in
``bench/`` itself ``bench/queue.py`` would shadow the standard library's ``queue`` (gevent imports it).

**Annotators** (``Annotator``, ``LOAD_ANNOTATORS`` of them, one API token each from
``LOAD_TOKENS``), as the verify page's scripts do (static/js/verify/): claim the next unit
(``POST /api/projects/<slug>/queue/next/``; a 204, nothing left for them, is a success and they
wait ``EMPTY_WAIT_S``), work on it for a time drawn uniformly from half to one and a half times
``LOAD_WORK_S`` seconds, during which they renew the lease every ``LOAD_HEARTBEAT_S`` seconds
(``POST /api/units/<id>/heartbeat/``; the page's interval is 30 s) and autosave every
``LOAD_AUTOSAVE_S`` seconds (``PUT /api/units/<id>/autosave/``), then submit, keeping every QA pair
(``POST /api/units/<id>/submit/`` with a unique idempotency key), and claim again.

**Participants** (``Participant``, ``LOAD_PARTICIPANTS``), link participants made by the fill (opened,
consented and screened through ``annotator.studies.links``), each given its session key in
``LOAD_SESSIONS``: they load the take page once (``page``: its CSRF token, as the page's script reads
it), join (``enroll``), then per trial report it shown (``shown``), think for a time drawn from half
to one and a half times ``LOAD_THINK_MS`` ms and answer (``answer``, with an idempotency key);
after a practice item's feedback they ask for the current trial (``current``), as the page does on
"Continue". A participant with no trial left stops.

**Bounds.** Users and time are Locust's (``-u``, ``-t``); ``LOAD_MAX_REQUESTS`` stops the run once
that many requests were sent, and ``LOAD_UNTIL_SEEN`` (endpoint names, comma-separated) once each
of them has answered a 2xx. Only ``http://127.0.0.1`` is accepted as the host.

**Written** at the end to ``LOAD_OUT`` (JSON): every request's latency in ms by endpoint, the
statuses of failed requests by endpoint, the idempotency keys of every submit and answer the server
acknowledged with a 2xx (``bench/load.py`` then looks for each one's row), the first and last
request's times, the empty claims, and the requests cut by the run's end (in flight when Locust
stopped their users at the time or request bound: neither timed nor counted as errors).
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections import defaultdict

import gevent
from locust import FastHttpUser, events, task
from locust.exception import StopUser

SLUG = os.environ.get("LOAD_SLUG", "bench-load")
TOKENS = json.loads(os.environ.get("LOAD_TOKENS", "[]"))
SESSIONS = json.loads(os.environ.get("LOAD_SESSIONS", "[]"))
STUDY_ID = int(os.environ.get("LOAD_STUDY_ID", "0"))
LINK_TOKEN = os.environ.get("LOAD_LINK_TOKEN", "")
SESSION_COOKIE = os.environ.get("LOAD_SESSION_COOKIE", "sessionid")
WORK_S = float(os.environ.get("LOAD_WORK_S", "60"))
HEARTBEAT_S = float(os.environ.get("LOAD_HEARTBEAT_S", "30"))
AUTOSAVE_S = float(os.environ.get("LOAD_AUTOSAVE_S", "10"))
THINK_MS = float(os.environ.get("LOAD_THINK_MS", "4000"))
MAX_REQUESTS = int(os.environ.get("LOAD_MAX_REQUESTS", "100000"))
RUN_ID = os.environ.get("LOAD_RUN_ID", "run")
# Units an annotator submits in a run before stopping (0: no limit). The smoke sets it, so that the
# first run cannot take the units the next run needs however slow the machine is.
MAX_UNITS = int(os.environ.get("LOAD_MAX_UNITS", "0"))
# Endpoints that, once each has answered a 2xx, end the run early (the smoke: seconds on an idle
# machine, still done on a busy one); empty: run to the time or request bound.
UNTIL_SEEN = {e for e in os.environ.get("LOAD_UNTIL_SEEN", "").split(",") if e}
OUT = os.environ.get("LOAD_OUT", "")
EMPTY_WAIT_S = 5.0
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)"')

calls: dict[str, list[float]] = defaultdict(list)
failures: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
acked = {"submit": [], "answer": []}
clock = {"first": None, "last": None, "empty_claims": 0, "sent": 0, "cut": 0, "sent_again": 0}
SENT_AGAIN = " (no response, sent again)"
_next = {"annotator": 0, "participant": 0}


@events.init.add_listener
def _loopback_only(environment, **_):
    host = environment.host or ""
    if not re.fullmatch(r"http://127\.0\.0\.1:\d{1,5}", host):
        raise SystemExit(f"bench/load.py runs against loopback only (http://127.0.0.1:PORT), not {host!r}")


@events.request.add_listener
def _count(request_type, name, response_time, response_length, response=None, exception=None, **_):
    now = time.time()
    status = getattr(response, "status_code", 0) or 0
    if name.endswith(SENT_AGAIN):
        clock["sent_again"] += 1  # no response on a kept-alive connection: sent again (``send``)
        return
    if exception is not None and status == 0 and clock.get("stopping"):
        clock["cut"] += 1  # in flight when the run ended: Locust stopped the user, the server did not fail
        return
    clock["first"] = clock["first"] or now
    clock["last"] = now
    clock["sent"] += 1
    calls[name].append(response_time)
    if exception is not None:
        failures[name][str(status)] += 1
    if exception is None and name in UNTIL_SEEN:
        UNTIL_SEEN.discard(name)
        if not UNTIL_SEEN:
            clock["all_seen"] = True
    if _runner is not None and not clock.get("quit") and (clock["sent"] >= MAX_REQUESTS or clock.get("all_seen")):
        clock["quit"] = True
        gevent.spawn(_runner.quit)  # not from inside the request's own greenlet, which quit kills


_runner = None


@events.test_start.add_listener
def _keep_runner(environment, **_):
    global _runner
    _runner = environment.runner


@events.test_stopping.add_listener
def _stopping(environment, **_):
    clock["stopping"] = True


@events.quitting.add_listener
def _write(environment, **_):
    if OUT:
        with open(OUT, "w") as f:
            json.dump(
                {
                    "calls": calls,
                    "failures": failures,
                    "acked": acked,
                    "first": clock["first"],
                    "last": clock["last"],
                    "empty_claims": clock["empty_claims"],
                    "cut": clock["cut"],
                    "sent_again": clock["sent_again"],
                },
                f,
            )


def _pause(mean_s: float) -> None:
    gevent.sleep(random.uniform(0.5 * mean_s, 1.5 * mean_s))


def send(client, method: str, path: str, name: str, expected: tuple[int, ...], **kwargs):
    """Send a request; return (response, whether its status is one of ``expected``). When no response
    came (status 0: the server closed the kept-alive connection as the request left, gunicorn's
    keep-alive being 2 s and a person's pause longer), send it once more on a new connection, as a
    browser does; the first attempt is counted apart (``sent_again``), neither timed nor an error.
    Every request here is safe to send twice: claim returns the unit held, heartbeat and autosave
    repeat, submit and answer carry their idempotency key."""
    for attempt in (0, 1):
        with client.request(method, path, name=name, catch_response=True, **kwargs) as r:
            if r.status_code == 0 and attempt == 0 and not clock.get("stopping"):
                r.request_meta["name"] = name + SENT_AGAIN
                r.failure("no response")
                continue
            return r, _ok(r, *expected)


def _ok(response, *expected: int) -> bool:
    """Mark ``response`` (a catch_response context) failed unless its status is one of ``expected``."""
    if response.status_code in expected:
        response.success()
        return True
    response.failure(f"status {response.status_code}")
    return False


class Annotator(FastHttpUser):
    """An annotator on the verify page: claim, heartbeats and autosaves while working, submit."""

    fixed_count = int(os.environ.get("LOAD_ANNOTATORS", "0"))
    network_timeout = 60.0
    connection_timeout = 10.0

    def on_start(self):
        n = _next["annotator"]
        _next["annotator"] += 1
        if n >= len(TOKENS):
            raise StopUser()
        self.n, self.done = n, 0
        self.headers = {"Authorization": f"Token {TOKENS[n]}", "Content-Type": "application/json"}

    @task
    def verify_one_unit(self):
        if MAX_UNITS and self.done >= MAX_UNITS:
            raise StopUser()
        r, ok = send(
            self.client, "POST", f"/api/projects/{SLUG}/queue/next/", "claim", (200, 204), headers=self.headers
        )
        if not ok or r.status_code == 204:
            clock["empty_claims"] += ok
            gevent.sleep(EMPTY_WAIT_S)
            return
        unit = r.json()
        started = time.monotonic()
        work_s = random.uniform(0.5 * WORK_S, 1.5 * WORK_S)
        next_beat, next_save = HEARTBEAT_S, AUTOSAVE_S
        uid = unit["id"]
        while True:
            elapsed = time.monotonic() - started
            upcoming = min(next_beat, next_save, work_s)
            if upcoming > elapsed:
                gevent.sleep(upcoming - elapsed)
            if upcoming >= work_s:
                break
            if next_beat <= next_save:
                send(self.client, "POST", f"/api/units/{uid}/heartbeat/", "heartbeat", (200,), headers=self.headers)
                next_beat += HEARTBEAT_S
            else:
                state = {"decisions": {q["id"]: "keep" for q in unit["qa_pairs"]}, "note": "bench"}
                send(
                    self.client,
                    "PUT",
                    f"/api/units/{uid}/autosave/",
                    "autosave",
                    (204,),
                    headers=self.headers,
                    json={
                        "state": state,
                        "client_saved_at_ms": int(time.time() * 1000),
                        "time_spent_ms": int((time.monotonic() - started) * 1000),
                    },
                )
                next_save += AUTOSAVE_S
        key = f"{RUN_ID}-a{self.n}-{self.done}"
        self.done += 1
        body = {
            "idempotency_key": key,
            "time_spent_ms": int(work_s * 1000),
            "decisions": [{"qa_id": q["id"], "action": "keep", "version": q["version"]} for q in unit["qa_pairs"]],
        }
        if send(self.client, "POST", f"/api/units/{uid}/submit/", "submit", (200,), headers=self.headers, json=body)[1]:
            acked["submit"].append(key)


class Participant(FastHttpUser):
    """A study link's participant on the take page: shown, answer, current after feedback."""

    fixed_count = int(os.environ.get("LOAD_PARTICIPANTS", "0"))
    network_timeout = 60.0
    connection_timeout = 10.0

    def on_start(self):
        n = _next["participant"]
        _next["participant"] += 1
        if n >= len(SESSIONS):
            raise StopUser()
        self.n = n
        self.client.cookiejar.set_cookie(_cookie(SESSION_COOKIE, SESSIONS[n]))
        with self.client.get(f"/s/{LINK_TOKEN}/", name="page", catch_response=True) as r:
            found = CSRF_META.search(r.text or "") if _ok(r, 200) else None
            if found is None:
                if r.status_code == 200:
                    r.failure("no CSRF token on the take page")
                raise StopUser()
        self.headers = {
            "X-CSRFToken": found.group(1),
            "Content-Type": "application/json",
            "Referer": f"{self.host}/s/{LINK_TOKEN}/",
        }
        r, ok = send(self.client, "POST", f"/api/studies/{STUDY_ID}/enroll/", "enroll", (200,), headers=self.headers)
        if not ok:
            raise StopUser()
        self.state = r.json()

    @task
    def one_trial(self):
        trial = self.state.get("trial")
        if trial is None:
            if self.state.get("next") != "current":
                raise StopUser()  # every trial answered
            r, ok = send(
                self.client, "GET", f"/api/studies/{STUDY_ID}/current/", "current", (200,), headers=self.headers
            )
            if not ok:
                raise StopUser()
            self.state = r.json()
            return
        tid = trial["trial_id"]
        shown = (
            trial.get("shown")
            or send(self.client, "POST", f"/api/trials/{tid}/shown/", "shown", (200,), headers=self.headers)[1]
        )
        if not shown:
            raise StopUser()
        shown_at = time.monotonic()
        _pause(THINK_MS / 1000)
        key = f"{RUN_ID}-p{self.n}-{tid}"
        options = (trial.get("content") or {}).get("options") or [""]
        body = {
            "response": self.n % len(options),
            "client_rt_ms": round((time.monotonic() - shown_at) * 1000, 1),
            "idempotency_key": key,
        }
        r, ok = send(
            self.client, "POST", f"/api/trials/{tid}/answer/", "answer", (200,), headers=self.headers, json=body
        )
        if not ok:
            raise StopUser()
        acked["answer"].append(key)
        self.state = r.json()


def _cookie(name: str, value: str):
    from http.cookiejar import Cookie

    return Cookie(
        version=0,
        name=name,
        value=value,
        port=None,
        port_specified=False,
        domain="127.0.0.1",
        domain_specified=False,
        domain_initial_dot=False,
        path="/",
        path_specified=True,
        secure=False,
        expires=None,
        discard=True,
        comment=None,
        comment_url=None,
        rest={"HttpOnly": None},
    )
