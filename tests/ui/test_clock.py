"""One clock format (issue 21): the pages' templates (``annotator.core.clock``, the ``hms`` filter)
and their scripts (``static/js/clock.js``) write the same ``h:mm:ss.f`` for the same seconds,
rounding included, checked by running the script in Chromium."""

import random

import pytest
from django.template import Context, Template

from annotator.core.clock import hms, span

pytestmark = [pytest.mark.browser]

EDGES = [0, 0.04, 0.05, 0.15, 0.25, 1.05, 59.94, 59.95, 59.96, 1081.2, 3599.95, 3600, 7200, 86399.9, 100000.25]


def test_the_template_filter_writes_what_the_script_writes(live_server, browser):
    values = EDGES + [round(random.Random(7).uniform(0, 90000), 3) for _ in range(200)]
    page = browser.new_page()
    page.goto(f"{live_server.url}/accounts/login/")  # any page of the site: the script loads from its origin
    script = page.evaluate(
        "async (values) => { const c = await import('/static/js/clock.js'); return values.map(c.hms); }", values
    )
    page.close()
    assert [hms(v) for v in values] == script
    assert hms(1081.2) == "0:18:01.2" and hms(59.96) == "0:01:00.0" and hms(0.05) == "0:00:00.1"


def test_no_value_reads_as_nothing_and_a_bad_one_as_zero():
    rendered = Template("{% load clock %}[{{ a|hms }}][{{ b|hms }}][{{ c|span:d }}]").render(
        Context({"a": None, "b": -3, "c": 3, "d": 19})
    )
    assert rendered == "[][0:00:00.0][0:00:03.0 – 0:00:19.0]"
    assert span(3, 7.5) == "0:00:03.0 – 0:00:07.5"
    assert hms(float("nan")) == hms(float("inf")) == "0:00:00.0"
