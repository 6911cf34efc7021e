"""The per-trial CSV export guards its cells against spreadsheet formulas (issue 19 finding: an open
answer typed as ``+cmd|' /C calc'!A0`` reached the researcher's spreadsheet as a formula; the
evaluation's CSV was guarded, the study's was not)."""

import csv
import io

import pytest
from django.test import Client

from annotator.studies import services
from tests.studies.conftest import people

pytestmark = pytest.mark.django_db

ANSWERS = ["+cmd|' /C calc'!A0", '=HYPERLINK("http://x")', "@SUM(1)", "-2+3", "a plain answer"]


def test_typed_formulas_reach_the_trial_csv_as_text(verified, project, admin_user):
    verified(2)
    study, _ = services.create_study(project, "open", "open_answer", seed=1, options={"questions_per_participant": 5})
    (person,) = people(project, 1)
    p = services.enroll(study, person)
    services.start(p)
    typed = iter(ANSWERS)
    while (trial := services.current_trial(p)) is not None:
        services.mark_shown(p, trial.pk)
        services.answer_trial(p, trial.pk, next(typed), client_rt_ms=1.0, idempotency_key=f"k{trial.pk}")
        p.refresh_from_db()
    client = Client()
    client.force_login(admin_user)
    res = client.get(f"/projects/{project.slug}/studies/open/trials.csv")
    assert res.status_code == 200
    rows = list(csv.DictReader(io.StringIO(b"".join(res.streaming_content).decode())))
    got = sorted(r["response"] for r in rows)
    n = len(rows)
    assert n >= 2
    expected = sorted(("'" + a if a[0] in "=+-@" else a) for a in ANSWERS[:n])
    assert got == expected
    assert not any(r["response"][:1] in ("=", "+", "-", "@") for r in rows)
