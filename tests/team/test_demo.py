"""annotator.demo.team.run_demo: EUR 20 per video, the report printed, the same on a second run."""

from io import StringIO

import pytest
from django.utils import timezone

from annotator.demo.team import run_demo
from annotator.team.models import PayRate


@pytest.mark.django_db
def test_the_demo_pays_eur_20_per_video_and_prints_the_same_report_twice(team):
    out = StringIO()
    data = run_demo(team["project"], out)
    rate = PayRate.objects.get(project=team["project"])
    assert (rate.basis, str(rate.amount), rate.currency) == ("video", "20.00", "EUR")
    today = timezone.localdate().isoformat()
    assert (data["from"], data["to"]) == ("2026-03-02", today)  # the first submit of the scripted team
    # As tests/team/test_reports.py: A 3 units on 2 videos, B 2 on 2, C 2 on 2, EUR 20 a video.
    assert out.getvalue().splitlines() == [
        f"pay report of proj, 2026-03-02 to {today}: 20.00 EUR per video",
        "          user  units videos  active h       amount",
        "           ann      3      2      0.05    40.00 EUR",
        "          ann2      2      2      0.04    40.00 EUR",
        "          ann3      2      2      0.02    40.00 EUR",
        "         total                           120.00 EUR",
    ]
    again = StringIO()
    assert run_demo(team["project"], again) == data
    assert again.getvalue() == out.getvalue()
    assert PayRate.objects.count() == 1
