"""Drafting pipelines are one module each (issue 23, "one registry style"): the package imports
every module in it, ``DraftRun.pipeline`` takes its choices from the registry, so a new pipeline is
a valid choice with no migration, and pages list stages in pipeline order."""

from __future__ import annotations

import pkgutil
from io import StringIO

import pytest
from django.core.management import call_command

from annotator.drafts import pipelines
from annotator.drafts import views as draft_views
from annotator.drafts.models import DraftRun
from annotator.drafts.pipelines import PIPELINES, PipelineDef, register, stage_names
from annotator.inference import engine


def test_every_module_of_the_package_registers_its_pipeline():
    modules = {m.name for m in pkgutil.iter_modules(pipelines.__path__)} - {"base"}
    assert {type(p).__module__.rsplit(".", 1)[1] for p in PIPELINES.values()} == modules
    assert list(PIPELINES) == ["templates", "llm", "egonight", "vudg", "egoexobench_checks", "import"]
    assert [c for c, _ in DraftRun._meta.get_field("pipeline").choices] == list(PIPELINES)


def test_the_stages_are_listed_in_pipeline_order_then_the_judge():
    import annotator.evaluation.prompts  # noqa: F401 (registers the judge)

    assert stage_names() == (
        "llm",
        "caption",
        "questions",
        "answer",
        "vudg_open",
        "vudg_distractors",
        "vudg_review",
        "consistency_check",
        "text_only",
        "judge",
    )


@pytest.fixture
def captions():
    """A pipeline registered at run time, as a module of its own would register it; removed after."""

    class Captions(PipelineDef):
        name, label, position, stages = "captions", "One caption question per video", 70, ("caption",)

    yield register(Captions())
    PIPELINES.pop("captions")


@pytest.mark.django_db
def test_a_pipeline_registered_at_run_time_is_a_valid_choice_with_no_migration(project, captions):
    run = DraftRun(project=project, pipeline="captions", prompt_version="caption:v1")
    run.full_clean()  # its choice exists
    assert {"value": "captions", "label": "One caption question per video", "stages": ["caption"]} in (
        draft_views._pipelines()
    )
    out = StringIO()
    call_command("makemigrations", "drafts", "--check", "--dry-run", stdout=out)  # raises SystemExit on changes
    assert "No changes detected" in out.getvalue()
    with pytest.raises(Exception, match="not a valid choice"):
        DraftRun(project=project, pipeline="nowhere", prompt_version="x").full_clean()


def test_a_pipeline_or_stage_name_that_cannot_be_stored_is_refused():
    class TooLong(PipelineDef):
        name = "a-name-longer-than-twenty"

    with pytest.raises(ValueError, match="1 to 20 characters"):
        register(TooLong())
    with pytest.raises(ValueError, match="lower-case letters"):
        engine.register(engine.Stage("Caption Stage", "v1", "system", None))
