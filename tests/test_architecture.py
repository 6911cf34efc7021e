"""Arrows point down (issue 23): the import graph of ``annotator/`` and ``api/`` has no arrow from a
lower layer up to a higher one, and no circle, between apps or between files.

The layers, top first. A unit may import any unit in a layer below its own, never one above, and
never a peer in its own layer (peers are independent of each other):

 1. ``annotator.urls`` ``annotator.settings`` ``annotator.wsgi`` ``annotator.demo`` -- the wiring
    and the demo's seeding; nothing imports them (Django reads settings and the urlconf by name).
 2. ``api`` ``annotator.console`` -- DRF and the home/my-work pages, over the domain.
 3. ``annotator.reports``
 4. ``annotator.evaluation``
 5. ``annotator.agreement``
 6. ``annotator.gold`` ``annotator.review``
 7. ``annotator.studies`` ``annotator.team``
 8. ``annotator.drafts`` -- writes QA, so it sits over qa.
 9. ``annotator.qa``
10. ``annotator.exposure`` ``annotator.inference``
11. ``annotator.media``
12. ``annotator.access`` -- role sets and checks, and who may fetch which stored file (a registry
    each app fills for its own files).
13. ``annotator.projects`` -- the base app: projects, memberships, roles.
14. ``annotator.core`` (with ``annotator/jobs.py``, the outbox whose rows are core's ``Job``) -- jobs,
    handles, and the input bounds and run-parameter checks pages and the API share
    (``core.validators``, ``core.params``).
15. ``annotator.errors`` (the domain errors, and ``status_of``: their HTTP status) ``annotator.markdown``
    ``annotator.cli`` ``annotator.readonly_admin`` ``annotator.converters`` ``annotator.health``
    ``annotator.lockout`` ``annotator.middleware`` ``annotator.session_store`` ``annotator.env``
    ``annotator.logging`` -- one-file helpers.
16. ``annotator.scoring`` ``annotator.adapters`` -- pure: scoring imports no Django, adapters
    nothing of the domain.

Every import counts, module-level, inside a function or under ``TYPE_CHECKING``
(``tests/import_graph.py`` reads them with ``ast``; migrations are left out). Print the graph and
the numbers with ``.venv/bin/python -m tests.import_graph``.
"""

from __future__ import annotations

import textwrap

import pytest

from tests import import_graph as graph

LAYERS = [
    ["annotator.urls", "annotator.settings", "annotator.wsgi", "annotator.demo"],
    ["api", "annotator.console"],
    ["annotator.reports"],
    ["annotator.evaluation"],
    ["annotator.agreement"],
    ["annotator.gold", "annotator.review"],
    ["annotator.studies", "annotator.team"],
    ["annotator.drafts"],
    ["annotator.qa"],
    ["annotator.exposure", "annotator.inference"],
    ["annotator.media"],
    ["annotator.access"],
    ["annotator.projects"],
    ["annotator.core"],
    [
        "annotator.errors",
        "annotator.markdown",
        "annotator.cli",
        "annotator.readonly_admin",
        "annotator.converters",
        "annotator.health",
        "annotator.lockout",
        "annotator.middleware",
        "annotator.session_store",
        "annotator.env",
        "annotator.logging",
    ],
    ["annotator.scoring", "annotator.adapters"],
]

DOMAIN = [unit for layer in LAYERS[2:] for unit in layer]

# What scoring must not import: Django and what runs on it (it is pure Python over numeric libraries).
SCORING_MUST_NOT_IMPORT = {"django", "rest_framework", "drf_spectacular", "celery", "annotator", "api"}


@pytest.fixture(scope="module")
def found():
    return graph.imports()


@pytest.fixture(scope="module")
def arrows(found):
    return graph.unit_arrows(found)


def _lines(arrows) -> str:
    return "\n".join(str(imp) for lines in arrows.values() for imp in lines)


def test_every_unit_has_a_layer(arrows):
    placed = {unit for layer in LAYERS for unit in layer}
    units = {unit for pair in arrows for unit in pair}
    assert sorted(units - placed) == []
    assert len(placed) == sum(map(len, LAYERS)), "a unit is listed in two layers"


def test_no_arrow_points_up(arrows):
    up = graph.upward(arrows, LAYERS)
    assert not up, f"{len(up)} arrows point up or sideways:\n{_lines(up)}"


def test_no_app_imports_another_that_imports_it_back(arrows):
    assert graph.circles(arrows) == []


def test_no_file_circle(found):
    files = graph.module_arrows(found, graph.modules())
    assert graph.circles(files) == []


def test_no_domain_module_imports_api(found):
    bad = [str(i) for i in found if graph.unit_of(i.source) in DOMAIN and graph.unit_of(i.target) == "api"]
    assert bad == []


def _third_party(found, unit):
    return sorted(
        {i.target.split(".")[0] for i in found if graph.unit_of(i.source) == unit and graph.unit_of(i.target) is None}
    )


def test_scoring_imports_no_django_and_nothing_of_the_project(found, arrows):
    assert sorted(set(_third_party(found, "annotator.scoring")) & SCORING_MUST_NOT_IMPORT) == []
    assert [pair for pair in arrows if pair[0] == "annotator.scoring"] == []


def test_adapters_import_nothing_of_the_project(arrows):
    assert [pair for pair in arrows if pair[0] == "annotator.adapters"] == []


# The checks themselves, on small made-up trees: each must catch what it is there for.


def _tree(tmp_path, files: dict[str, str]):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return graph.imports(tmp_path), graph.modules(tmp_path)


def test_the_check_catches_a_domain_module_importing_api(tmp_path):
    found, _ = _tree(
        tmp_path,
        {
            "annotator/__init__.py": "",
            "annotator/qa/__init__.py": "",
            "annotator/qa/views.py": "def export():\n    from api.views import export_filters\n",
            "api/__init__.py": "",
            "api/views.py": "from annotator.qa import views\n",
        },
    )
    arrows = graph.unit_arrows(found)
    assert sorted(graph.upward(arrows, LAYERS)) == [("annotator.qa", "api")]
    assert graph.circles(arrows) == [["annotator.qa", "api"]]
    [imp] = arrows[("annotator.qa", "api")]
    assert (imp.path, imp.line, imp.target, imp.in_function) == ("annotator/qa/views.py", 2, "api.views", True)


def test_the_check_catches_scoring_importing_django(tmp_path):
    found, _ = _tree(
        tmp_path,
        {
            "annotator/__init__.py": "",
            "annotator/scoring/__init__.py": "",
            "annotator/scoring/agreement.py": "import math\n\ndef alpha():\n    from django.db import models\n",
        },
    )
    assert _third_party(found, "annotator.scoring") == ["django", "math"]
    assert sorted(set(_third_party(found, "annotator.scoring")) & SCORING_MUST_NOT_IMPORT) == ["django"]


def test_the_check_catches_a_file_circle_through_a_function_level_import(tmp_path):
    found, known = _tree(
        tmp_path,
        {
            "annotator/__init__.py": "",
            "annotator/media/__init__.py": "",
            "annotator/media/services.py": "from . import streaming\n",
            "annotator/media/streaming.py": "def go():\n    from annotator.media.services import x\n",
        },
    )
    files = graph.module_arrows(found, known)
    assert graph.circles(files) == [["annotator.media.services", "annotator.media.streaming"]]
    # Inside one app: no arrow between units, so only the file check sees it.
    assert graph.unit_arrows(found) == {}
