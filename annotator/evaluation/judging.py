"""One judge for people and models (issue 18, part 3): the open answers of a study judged by the same
judge stage and rubric as models' answers in an evaluation (EgoNight seed 000 App. A.5.1: correct or
incorrect and a score 0-5; VUDG seed 004 Sec. 3.4: accuracy and relevance 0-5), so the two numbers
can be compared. Exact match and token F1 stay beside it.

``judge_study`` (the job ``evaluation.judge_study``, queued by ``study_scores NAME --judge-server S``)
asks the judge about every answered scored trial of an open-answer study, people's and model
participants' alike: the item's question, its verified answer and the trial's answer, through the
engine (``call_stage``: retries, the content-hash cache, cost), on as many threads as the judge's
server allows. The judgement is merged into the trial's ``scores`` (``judgement_scores``:
``judge_accuracy``, 1.0 correct or 0.0 incorrect, VUDG: accuracy at least 3; and the rubric's
scores). Judging again is answered from the cache (no request, cost 0).
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections, connection

from annotator.errors import Invalid
from annotator.evaluation import prompts
from annotator.evaluation.models import Rubric
from annotator.inference import engine
from annotator.studies.models import Item, Study, Trial

log = logging.getLogger(__name__)


def judgement_scores(rubric: str, output: dict) -> dict:
    """The judge's validated output as trial scores, named as the benchmark report names an
    evaluation's (``annotator.scoring.report.METRICS``): ``judge_accuracy`` (1.0 or 0.0) and
    EgoNight's ``judge_score`` (0-5), or VUDG's ``judge_score_10`` (accuracy + relevance, 0-10),
    ``judge_accuracy_score`` and ``judge_relevance_score`` (0-5 each), read as evaluations read
    them (``prompts.read_judgement``)."""
    read = prompts.read_judgement(rubric, output)
    out = {"judge_accuracy": 1.0 if read["judge_pred"] == "correct" else 0.0}
    if rubric == Rubric.VUDG:
        return {
            **out,
            "judge_score_10": float(read["judge_score"]),
            "judge_accuracy_score": float(read["judge_accuracy"]),
            "judge_relevance_score": float(read["judge_relevance"]),
        }
    return {**out, "judge_score": float(read["judge_score"])}


def judge_study(study_id: int, server: str, rubric: str = Rubric.EGONIGHT, *, use_cache: bool = True) -> dict:
    """Judge every answered, scored trial of open-answer study ``study_id`` that has an answer, with
    the model of the project's server ``server`` and ``rubric``; returns ``{"judged", "failed",
    "errors": [reason, ...] (at most 20)}``. A trial whose judge gives no usable answer keeps its
    other scores and is counted as failed with its reason. Raises Invalid for a study that is not
    an open-answer one, an unknown server or rubric."""
    from annotator.evaluation.runs import server_of
    from annotator.studies.services import score_pending

    study = Study.objects.select_related("project").filter(pk=study_id).first()
    if study is None:
        raise Invalid(f"no study {study_id}")
    if study.kind != "open_answer":
        raise Invalid(f"only open answers are judged; {study.name} is a {study.kind} study", errors={"study": "kind"})
    if rubric not in Rubric.values:
        raise Invalid(f"rubric must be one of {', '.join(Rubric.values)}", errors={"rubric": "unknown"})
    endpoint = engine.Endpoint.from_snapshot(server_of(study.project, server, "judge_server").snapshot())
    score_pending(study.pk)  # the judgement joins the kind's scores
    rows = list(
        Trial.objects.filter(
            participant__study=study,
            practice=False,
            item__role=Item.Role.SCORED,
            scored_at__isnull=False,
            response__isnull=False,
        )
        .values_list("pk", "response", "item__payload", "item__truth", "item__subtask")
        .order_by("pk")
    )
    update = "UPDATE studies_trial SET scores = COALESCE(scores, '{}'::jsonb) || %s::jsonb WHERE id = %s"

    def one(row) -> str:
        pk, response, payload, truth, subtask = row
        close_old_connections()
        try:
            inp = engine.StageInput(
                text=prompts.judge_text(
                    rubric, question=str(payload.get("question", "")), answer=str(truth or ""), prediction=str(response)
                ),
                record={"study": study.pk, "trial": pk},
            )
            output = engine.call_stage(
                prompts.judge_stage(rubric, subtask), endpoint, inp, project_id=study.project_id, use_cache=use_cache
            )
            with connection.cursor() as cursor:
                cursor.execute(update, [json.dumps(judgement_scores(rubric, output)), pk])
            return ""
        except engine.StageFailed as exc:
            return f"trial {pk}: {exc.reason}"
        except Exception as exc:  # a defect fails this trial alone, with its reason
            log.exception("judging trial %s", pk)
            return f"trial {pk}: {type(exc).__name__}: {exc}"
        finally:
            connection.close()

    threads = max(1, min(settings.DRAFT_RUN_MAX_THREADS, endpoint.concurrency))
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"judge{study.pk}") as pool:
        errors = [e for e in pool.map(one, rows) if e]
    return {"judged": len(rows) - len(errors), "failed": len(errors), "errors": errors[:20]}
