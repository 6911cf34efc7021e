"""The axe-core harness (tests/ui/axe.py) finds what it must, and runs under the app's CSP."""

import pytest

from tests.ui import axe

FAULTY = """<!doctype html><html><head>
<meta http-equiv="Content-Security-Policy" content="script-src 'self'; style-src 'self' 'unsafe-inline'">
</head><body><main><h1>Faults</h1><img src="x.png"><button></button>
<p style="color:#ccc;background:#fff">faint</p></main></body></html>"""


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_axe_names_serious_and_critical_faults_and_runs_under_the_apps_csp(live_server, browser):
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    refused = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    page.set_content(FAULTY)
    found = axe.violations(page)
    assert [(v["id"], v["impact"], v["nodes"]) for v in found] == [
        ("button-name", "critical", ["button"]),
        ("color-contrast", "serious", ["p"]),
        ("document-title", "serious", ["html"]),
        ("html-has-lang", "serious", ["html"]),
        ("image-alt", "critical", ["img"]),
    ]
    assert axe.counts(found)["image-alt"] == 1
    assert axe.violations(page, impacts=("moderate",)) == []  # main and h1 are there

    response = page.goto(f"{live_server.url}/accounts/login/")  # the app's own header
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert axe.violations(page) == []
    assert refused == []
    page.close()
