"""Writes for machine drafts: save one video's job's drafts.

A run's video job (``DraftJob``) saves its drafts, QA pairs, the unit that serves them and a
``draft`` revision per pair in one transaction, so a job either wrote everything or nothing
(runs themselves are started and worked in ``annotator.drafts.runs``).
"""

from __future__ import annotations

from django.db import transaction

from annotator.drafts.models import Draft, DraftJob
from annotator.drafts.templates import DraftSpec
from annotator.qa import services as qa_services
from annotator.qa.models import QAPair


def save_drafts(job: DraftJob, specs: list[DraftSpec], actor: str, *, commit=None, summary: dict | None = None) -> int:
    """Save ``specs`` as drafts of ``job`` with their QA pairs and one unit; mark the job done.

    Specs with a ``flag`` become model flags (``qa.services.flag_qa_pair``, source ``actor``):
    their unit is served first. ``commit(job)``, if given, runs last in the same transaction, and
    ``summary`` is stored on the job. Returns how many drafts were written (0 if the job was
    already done or cancelled: a redelivered task).
    """
    with transaction.atomic():
        job = DraftJob.objects.select_for_update().select_related("run", "video").get(pk=job.pk)
        if job.status in (DraftJob.Status.DONE, DraftJob.Status.CANCELLED):
            return 0
        drafts = Draft.objects.bulk_create(
            [
                Draft(
                    job=job,
                    qa_type=s.qa_type,
                    question=s.question,
                    answer=s.answer,
                    options=s.options,
                    answer_index=s.answer_index,
                    clip_start_s=s.clip_start_s,
                    clip_end_s=s.clip_end_s,
                    source_key=s.source_key,
                    params=s.params,
                )
                for s in specs
            ]
        )
        if drafts:
            qa_services.open_units_for_drafts(job.run.project, job.video, drafts, actor=actor)
        flags = {d.pk: s.flag for d, s in zip(drafts, specs) if s.flag}
        for pair_id, draft_id in QAPair.objects.filter(draft_id__in=flags).values_list("id", "draft_id"):
            qa_services.flag_qa_pair(pair_id, reason=flags[draft_id], source=actor)
        if commit is not None:
            commit(job)
        job.status = DraftJob.Status.DONE
        job.n_drafts = len(drafts)
        job.error = ""
        job.summary = summary or job.summary
        job.save(update_fields=["status", "n_drafts", "error", "summary", "updated_at"])
    return len(drafts)
