"""Creating and building a study: its options (``STUDY_FIELDS``, ``EXCLUSION_RULES``), presets, and
the build job that makes its items through the kind's ``build``."""

from __future__ import annotations

import json
from collections.abc import Callable

from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction

from annotator import jobs
from annotator.errors import Invalid
from annotator.projects.models import Project
from annotator.studies import exposures
from annotator.studies.kinds import KINDS, BuildReport, collecting_files, kind_module
from annotator.studies.models import Study

# Options every kind accepts (the rest go to the kind's ``build`` through ``Study.settings``).
STUDY_FIELDS = (
    "questions_per_participant",
    "conditions_per_participant",
    "practice_items",
    "raters_per_item",
    "independent",
    "instructions",
    "exclusion",
)
EXCLUSION_RULES = ("min_median_rt_s", "min_practice_score", "max_attention_failures")


def presets() -> dict[str, tuple[str, dict]]:
    """Every preset name -> (kind, its options), over all kinds."""
    return {name: (kind, opts) for kind in KINDS for name, opts in kind_module(kind).PRESETS.items()}


def create_study(
    project: Project,
    name: str,
    kind: str,
    *,
    preset: str = "",
    seed: int = 0,
    options: dict | None = None,
    background: bool = False,
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[Study, BuildReport | None]:
    """Create study ``name`` of ``kind`` and build its conditions and items from the project's data.

    ``options`` override the preset's (``kinds.<kind>.PRESETS[preset]``), which override the kind's
    ``DEFAULTS``: the engine's fields (``STUDY_FIELDS``) go on the study, everything else
    (``per_type``, ``time_limits``...) is passed to the kind's ``build`` and kept in
    ``Study.settings``. Raises Invalid for an unknown kind or preset, an existing name or a bad
    exclusion rule, before anything is written.

    In the foreground (the command) the build runs here, in one transaction with the study's row:
    if it fails nothing is kept, files included; it raises Invalid for a bad option or a build with
    no items, MediaError if ffmpeg cannot read a video. With ``background`` (the API: a build may
    take minutes of ffmpeg) the study is saved as ``building`` and a ``studies.build`` job builds it
    (``build_study``); the report is None then.
    """
    if kind not in KINDS:
        raise Invalid(f"unknown study kind {kind!r}; choose one of {', '.join(KINDS)}", errors={"kind": "unknown"})
    module = kind_module(kind)
    if preset and preset not in module.PRESETS:
        known = ", ".join(module.PRESETS) or "none"
        raise Invalid(
            f"unknown preset {preset!r} for {kind} studies; choose one of {known}", errors={"preset": "unknown"}
        )
    merged = {
        **getattr(module, "DEFAULTS", {}),
        **(module.PRESETS.get(preset) or {}),
        **{k: v for k, v in (options or {}).items() if v is not None},
    }
    fields = {k: merged.pop(k) for k in STUDY_FIELDS if k in merged}
    exclusion = fields.get("exclusion") or {}
    if not isinstance(exclusion, dict) or set(exclusion) - set(EXCLUSION_RULES):
        raise Invalid(f"exclusion rules are {', '.join(EXCLUSION_RULES)}", errors={"exclusion": "unknown rule"})
    fields["exclusion"] = {k: v for k, v in exclusion.items() if v is not None}
    if background:
        with transaction.atomic():
            study = _new_study(project, name, kind, preset, seed, merged, fields, Study.Status.BUILDING)
            jobs.enqueue("studies.build", study.pk)
        return study, None
    with transaction.atomic():
        study = _new_study(project, name, kind, preset, seed, merged, fields, Study.Status.READY)
        report = _build(study, progress)
    return study, report


def _new_study(project, name, kind, preset, seed, options, fields, status) -> Study:
    taken = Invalid(f"a study named {name!r} already exists in {project.slug}", errors={"name": "taken"})
    if Study.objects.filter(project=project, name=name).exists():
        raise taken
    try:
        with transaction.atomic():  # a savepoint: two creations racing for one name, one wins
            return Study.objects.create(
                project=project,
                name=name,
                kind=kind,
                preset=preset,
                seed=seed,
                status=status,
                settings=_jsonable(options),
                **fields,
            )
    except IntegrityError:
        raise taken from None


def _build(study: Study, progress: Callable[[str], None]) -> BuildReport:
    """Run the kind's build on ``study`` in the caller's transaction; Invalid if it made no items.
    If it raises, the files it stored (frames, clips) are removed: the caller's transaction is
    about to roll back the rows that name them. Files stored before, and reused, are kept."""
    with collecting_files() as written:
        try:
            report = kind_module(study.kind).build(study, dict(study.settings), progress)
            if report.total == 0:
                reasons = (
                    "; ".join(f"{n} {r}" for r, n in report.skipped.items()) or "the project has no data of this kind"
                )
                raise Invalid(f"no items could be built for this {study.kind} study ({reasons})")
        except BaseException:
            for stored in written:
                default_storage.delete(stored)
            raise
    study.status = Study.Status.READY
    if report.skipped:  # what the build left out, and why (kept for the API's builds, which print no report)
        study.sampling["skipped"] = dict(report.skipped)
    report.exposure = exposures.overlaps_in_project(study)
    study.sampling["exposure"] = report.exposure
    study.save()  # the kind records what it sampled in study.sampling
    return report


def build_study(study_id: int) -> str:
    """Build a study saved as ``building`` (the ``studies.build`` job): its items in one transaction,
    then ``ready``. A build that cannot succeed (Invalid: no items, a bad option; MediaError: a video
    ffmpeg cannot read) marks the study ``failed`` with the reason in ``build_error`` and keeps
    nothing else; other errors propagate so the job is retried. Idempotent: a study that is not
    ``building`` (built, failed, or deleted) is left alone."""
    from annotator.adapters.ffmpeg import MediaError

    with transaction.atomic():
        study = Study.objects.select_for_update().filter(pk=study_id, status=Study.Status.BUILDING).first()
        if study is None:
            return "nothing to build"
        try:
            with transaction.atomic():
                report = _build(study, lambda _: None)
        except (Invalid, MediaError) as exc:
            Study.objects.filter(pk=study.pk).update(status=Study.Status.FAILED, build_error=str(exc))
            return f"failed: {exc}"
    return f"built {report.total} items"


def mark_build_failed(study_id: int, *, reason: str) -> None:
    """The ``studies.build`` job gave up (its worker died on every delivery): the study is ``failed``
    with the reason, not left ``building`` for ever."""
    Study.objects.filter(pk=study_id, status=Study.Status.BUILDING).update(
        status=Study.Status.FAILED, build_error=reason
    )


def _jsonable(options: dict) -> dict:
    return json.loads(json.dumps(options, default=str))
