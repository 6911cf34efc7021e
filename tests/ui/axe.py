"""axe-core in the browser tests: the serious and critical accessibility violations of a Playwright page.

axe-core is vendored for the tests only (tests/ui/vendor/axe-core-4.14.1/, see its README.md); no page
of the app loads it. It is put into the page through Playwright's ``evaluate`` (the DevTools protocol),
which the app's Content-Security-Policy does not govern, so pages are checked under their real CSP.
Issue 21's target: 0 serious or critical violations on every page kind.

    from tests.ui import axe
    assert axe.violations(page) == []
"""

from __future__ import annotations

import functools
from pathlib import Path

AXE_JS = Path(__file__).resolve().parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
SEVERE = ("serious", "critical")

# Runs axe on the whole document with its default rules (WCAG 2.0/2.1/2.2 A and AA and best
# practices; experimental rules off) and keeps what a test needs to name the fault.
_RUN = """async (impacts) => {
  const result = await window.axe.run(document, {resultTypes: ["violations"]});
  return result.violations.filter((v) => impacts.includes(v.impact)).map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => n.target.join(" ")),
  }));
}"""


@functools.cache
def _source() -> str:
    return AXE_JS.read_text(encoding="utf-8")


def violations(page, impacts: tuple[str, ...] = SEVERE) -> list[dict]:
    """The accessibility violations axe-core finds in ``page``'s current document, of the given impacts
    (default serious and critical; axe's others are "minor" and "moderate").

    Returns a list of ``{"id": rule id, "impact": str, "help": one line, "nodes": [CSS selector, ...]}``,
    one per rule broken, in axe's order; [] when none. axe is injected once per document (again after a
    navigation). Raises playwright's Error if the page is closed or axe cannot run."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate("() => {\n" + _source() + "\n}")
    return page.evaluate(_RUN, list(impacts))


def counts(found: list[dict]) -> dict[str, int]:
    """``violations``' list as {rule id: number of elements}, for a report or an assertion message."""
    return {v["id"]: len(v["nodes"]) for v in found}
