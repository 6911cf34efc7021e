"""Statements per request on a link participant's path (issue 19's benchmark, bench/participants.py),
counted with Django's test client as the browser, for the second person through a multiple-choice
study (1 practice + 3 questions): the link's open, the pages, enrolment, shown, answer, current,
done. A budget: a change that adds a statement to a request fails here and says which.

Before the trims (commit 2825729): link 25 (17 of them under the study's lock), enroll 13, shown 5,
answer 19 with the next trial served (12 after the practice, 12 for the last), current 11.
Before serving became one statement (stamp, source videos and ledger rows): enroll 11, answer 15
with the next trial served, current 10. Before the scoring job became a read under a shared lock
(``services.queue_scoring``): answer 11 serving the next trial, 10 otherwise, one statement fewer
but each answer locked the job's row until its commit.
Before counters replaced the counts under the study's lock and the ledger came with the open
trials elsewhere in one statement (commit 355145d): link 18 (8 under the lock; the session's row 4),
enroll 7, answer 11 for the practice and the last, 12 with the next trial served, current 6.
Before the participant was inserted ahead of the study's lock, the conditions chosen, joined and
their items read in one statement, the resume check read with the link and the conditions with the
practice items: link 13 (8 from BEGIN to COMMIT)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotator.studies import links
from annotator.studies.services import create_study
from tests.studies.conftest import verified  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

# The outbox's bookkeeping after a job's message is sent (``jobs.send``): sent only when the
# study's scoring job was not queued already, which depends on whether a worker ran it meanwhile.
SEND_MARK = 'UPDATE "core_job" SET "sent_at"'


@pytest.fixture(autouse=True)
def no_job_messages(monkeypatch):
    """The scoring job's message is not sent: no worker runs it, so it stays queued after the first
    person's first answer and every later answer only reads it (a worker that ran it meanwhile
    would have the next answer queue it again: two statements more)."""
    from annotator import jobs

    monkeypatch.setattr(jobs, "send", lambda *args, **kwargs: True)


@pytest.fixture
def mcq(verified, project):
    cache.clear()  # the link pages' rate limit
    verified(6)
    study, _ = create_study(
        project,
        "budget",
        "mcq",
        seed=3,
        options={
            "per_type": 5,
            "questions_per_participant": 3,
            "practice_items": 1,
            "attention_items": 0,
            "raters_per_item": 10,
        },
    )
    return study, links.create_link(study).token


def take_part(study, token: str, pid: str) -> list[tuple[str, int]]:
    """One panel participant from the link to the code; (endpoint, statements) per request."""
    client, log = Client(), []

    def counted(name, call):
        with CaptureQueriesContext(connection) as ctx:
            res = call()
        assert res.status_code in (200, 302), (name, res.status_code, res.content[:300])
        log.append((name, sum(1 for q in ctx.captured_queries if not q["sql"].startswith(SEND_MARK))))
        return res

    base, api = f"/s/{token}/", f"/api/studies/{study.pk}/"
    counted("link", lambda: client.get(base, {"PROLIFIC_PID": pid, "STUDY_ID": "s", "SESSION_ID": "x"}))
    counted("page", lambda: client.get(base))
    counted("consent", lambda: client.post(base + "consent/", {"decision": "accept"}))
    counted("page", lambda: client.get(base))
    counted(
        "screening",
        lambda: client.post(base + "screening/", {"width": "1366", "height": "768", "codec": "yes", "played": "yes"}),
    )
    counted("page", lambda: client.get(base))
    state = counted("enroll", lambda: client.post(api + "enroll/", {}, content_type="application/json")).json()
    while state.get("trial") or state.get("next") == "current":
        if not state.get("trial"):
            state = counted("current", lambda: client.get(api + "current/")).json()
            continue
        tid = state["trial"]["trial_id"]
        counted("shown", lambda tid=tid: client.post(f"/api/trials/{tid}/shown/", {}, content_type="application/json"))
        state = counted(
            "answer",
            lambda tid=tid: client.post(
                f"/api/trials/{tid}/answer/",
                {"response": 0, "client_rt_ms": 5, "idempotency_key": f"k{tid}"},
                content_type="application/json",
            ),
        ).json()
    counted("page", lambda: client.get(base))
    counted("done", lambda: client.get(base + "done/"))
    return log


def test_each_request_of_a_link_participant_stays_within_its_statements(mcq):
    study, token = mcq
    take_part(study, token, "first-person")  # the first person's requests also make the scoring job's row
    assert take_part(study, token, "second-person") == [
        ("link", 10),  # link with the resume check, ledger with open trials elsewhere (one statement),
        # attention and practice items with the conditions; BEGIN, the participant, then
        # under the lock (3 and COMMIT, test_the_link_holds_the_study_lock_for_three_statements);
        # the session's row (1: no look-up of its random key, no transaction)
        ("page", 3),
        ("consent", 7),
        ("page", 3),
        ("screening", 7),
        ("page", 7),  # the take page: 3, and the made instructions' facts (4, issue 21's 6567f04)
        ("enroll", 6),  # the first trial served: the ledger with open trials elsewhere, then its stamp
        # and ledger rows in one statement
        ("shown", 4),
        ("answer", 10),  # the practice: its feedback, no trial served; the scoring job only read
        # (shared lock and whether it is queued, one statement: it is)
        ("current", 5),
        ("shown", 4),
        ("answer", 10),  # with the next trial served
        ("shown", 4),
        ("answer", 10),
        ("shown", 4),
        ("answer", 10),  # the last: the stage moves to done, nothing served
        ("page", 3),
        ("done", 4),
    ]


def test_the_link_holds_the_study_lock_for_three_statements(mcq):
    """The statements of a new person's link request, in order: the study's lock is taken after the
    participant's insert, and held for the choice of conditions with their items (one statement),
    the trials' insert and the commit. A statement moved under the lock, or the lock taken earlier,
    fails here."""
    study, token = mcq
    take_part(study, token, "first-person")
    client = Client()
    with CaptureQueriesContext(connection) as ctx:
        res = client.get(f"/s/{token}/", {"PROLIFIC_PID": "second-person", "STUDY_ID": "s", "SESSION_ID": "x"})
    assert res.status_code == 302
    first_words = [" ".join(q["sql"].split()[:3]) for q in ctx.captured_queries]
    assert first_words == [
        'SELECT "studies_studylink"."id", "studies_studylink"."study_id",',  # the link, the study, the resume check
        "SELECT * FROM",  # the ledger and open trials elsewhere
        'SELECT "studies_item"."id", "studies_item"."condition_id",',  # practice items, the conditions
        "BEGIN",
        'INSERT INTO "studies_participant"',
        'SELECT "studies_study"."status" AS',  # the lock
        "WITH chosen AS",  # conditions, memberships, items
        'INSERT INTO "studies_trial"',
        "COMMIT",
        'INSERT INTO "django_session"',
    ]
    assert ctx.captured_queries[5]["sql"].endswith('FOR NO KEY UPDATE OF "studies_study"')
