"""Export formats are one module each (issue 23, "one registry style"): the package imports every
module in it, and the formats list, the export page's labels and the file suffixes of page exports
come from each format's registration, so a new format is one module."""

from __future__ import annotations

import pkgutil

import pytest

from annotator.qa import export_jobs, exports
from annotator.qa.exports.base import REGISTRY, Format, register


def test_the_formats_come_from_their_modules_in_position_order():
    assert exports.FORMATS == ("jsonl", "parquet", "vlmevalkit", "lmms-eval")
    registered = {exports.REGISTRY[f].write.__module__.rsplit(".", 1)[1] for f in exports.FORMATS}
    assert registered <= {m.name for m in pkgutil.iter_modules(exports.__path__)}
    assert [(f.label, f.suffix) for f in REGISTRY.values()] == [
        ("JSONL", "jsonl"),
        ("Parquet", "parquet"),
        ("VLMEvalKit", "tsv"),
        ("lmms-eval", ""),
    ]


@pytest.fixture
def csv_format():
    """A format registered at run time, as a module of its own would register it; removed after."""
    yield register(Format("csv", lambda rows, out, result, **_: None, label="CSV", suffix="csv", position=25))
    REGISTRY.pop("csv")


@pytest.mark.django_db
def test_a_format_registered_at_run_time_is_offered_with_its_label(csv_format, project, admin_user):
    assert list(REGISTRY) == ["jsonl", "parquet", "csv", "vlmevalkit", "lmms-eval"]
    job_id = export_jobs.start(project, admin_user, "csv", {}, with_media=False)
    from annotator.core.models import Job

    assert export_jobs.describe(Job.objects.get(pk=job_id))["label"] == "CSV"


def test_a_one_file_format_without_a_suffix_is_refused():
    with pytest.raises(ValueError, match="give it a suffix"):
        register(Format("nosuffix", lambda *a, **k: None))
    assert "nosuffix" not in REGISTRY
