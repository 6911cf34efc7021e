"""People re-judging the LLM judge (EgoNight, seed 000 App. A.5.1: 300 judged answers, sampled at
random, checked by people; 95.67% agreement).

1. ``create_sample`` draws ``size`` of an evaluation's judged open answers with
   ``random.Random(seed).sample`` over their ids in order, so one seed gives the same items in the
   same order every time; the seed is recorded (a random one when none is given).
2. A person takes the next item (``next_item``): the first open one not held by someone else,
   claimed with ``SELECT ... FOR UPDATE SKIP LOCKED`` and held for ``LEASE_S`` seconds, so two
   people re-judging at once never get the same answer.
3. ``record`` stores their verdict: ``right`` (the person's label is the judge's) or ``wrong`` (the
   other label), once (a second verdict is a Conflict).
4. ``sync``, in the verdict's transaction, writes the judge's labels and the people's as a nominal
   rating set of the agreement engine (``source="judge"``, raters ``judge`` and ``human``, item
   ``prediction-<id>``, only the items with a verdict) and queues its computation on commit:
   percent agreement and Cohen's kappa come from the engine, with its intervals, on the agreement
   dashboard (scope ``ratings:<name>``) and on the evaluation's page. Locks are taken in one order
   (the item's row, then the sample's) and the verdicts are read after the sample's lock, so of two
   verdicts recorded at once the second to commit writes both.
"""

from __future__ import annotations

import random
import secrets
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotator.agreement import services as agreement
from annotator.agreement.models import RatingSet, Report
from annotator.errors import Conflict, Invalid, NotFound, NotHeld
from annotator.evaluation.models import Evaluation, Prediction, RejudgeItem, RejudgeSample

SIZE_DEFAULT, SIZE_MIN, SIZE_MAX = 300, 1, 5000
SEED_MAX = 2**63 - 1
LEASE_S = 600
LABELS = ("correct", "incorrect")
JUDGE, HUMAN = "judge", "human"


def rating_set_name(evaluation: Evaluation) -> str:
    return f"evaluation-{evaluation.pk}-rejudge"


def scope_key(sample: RejudgeSample) -> str:
    return f"ratings:{sample.rating_set}"


def candidates(evaluation: Evaluation) -> list[int]:
    """Ids of the evaluation's judged open answers, in id order (the population sampled)."""
    return list(
        evaluation.predictions.filter(status=Prediction.Status.DONE, kind=Prediction.Kind.OPEN, judge_pred__in=LABELS)
        .order_by("id")
        .values_list("id", flat=True)
    )


def draw(ids: list[int], size: int, seed: int) -> list[int]:
    """``min(size, len(ids))`` of ``ids`` drawn without replacement by ``random.Random(seed)``, in
    the order drawn (each subset equally likely)."""
    return random.Random(seed).sample(ids, min(size, len(ids)))


def create_sample(
    evaluation: Evaluation, *, size: int = SIZE_DEFAULT, seed: int | None = None, replace: bool = False, user=None
) -> RejudgeSample:
    """Draw the evaluation's re-judge sample (see the module docstring). Raises Invalid for a size
    outside 1-5000, a seed outside 0 to 2^63-1 or no judged answer yet; Conflict when the evaluation
    has a sample and ``replace`` is false (a replaced sample's verdicts go with it)."""
    if isinstance(size, bool) or not isinstance(size, int) or not SIZE_MIN <= size <= SIZE_MAX:
        raise Invalid(
            f"the sample size is a whole number from {SIZE_MIN} to {SIZE_MAX}", errors={"size": "out of bounds"}
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX):
        raise Invalid("the seed is a whole number from 0 to 2^63 - 1", errors={"seed": "out of bounds"})
    seed = secrets.randbelow(2**31) if seed is None else seed
    ids = candidates(evaluation)
    if not ids:
        raise Invalid("this evaluation has no judged open answer to re-judge yet", errors={"size": "nothing to sample"})
    chosen = draw(ids, size, seed)
    labels = dict(Prediction.objects.filter(pk__in=chosen).values_list("id", "judge_pred"))
    with transaction.atomic():
        old = RejudgeSample.objects.select_for_update().filter(evaluation=evaluation).first()
        if old is not None:
            if not replace:
                raise Conflict(
                    f"evaluation {evaluation.pk} has a re-judge sample already ({old.n_items} answers, seed "
                    f"{old.seed}); replace it to draw another"
                )
            old.delete()
        sample = RejudgeSample.objects.create(
            evaluation=evaluation,
            size=size,
            seed=seed,
            n_items=len(chosen),
            rating_set=rating_set_name(evaluation),
            created_by=user,
        )
        RejudgeItem.objects.bulk_create(
            [
                RejudgeItem(sample=sample, prediction_id=pid, position=i, judge_label=labels[pid])
                for i, pid in enumerate(chosen)
            ]
        )
        if old is not None:
            sync(sample)
    return sample


def _open(sample: RejudgeSample):
    return RejudgeItem.objects.filter(sample=sample, verdict="")


def held_item(sample: RejudgeSample, user) -> RejudgeItem | None:
    """The open item ``user`` holds (lease not lapsed), or None."""
    return (
        _open(sample)
        .filter(claimed_by=user, claimed_until__gt=timezone.now())
        .select_related("prediction")
        .order_by("position")
        .first()
    )


def next_item(sample: RejudgeSample, user) -> RejudgeItem | None:
    """The item ``user`` holds, else the first open item nobody holds (or whose lease lapsed),
    claimed for ``LEASE_S`` seconds; None when every item has a verdict or is held by others."""
    now = timezone.now()
    with transaction.atomic():
        mine = (
            _open(sample)
            .select_for_update()
            .filter(claimed_by=user, claimed_until__gt=now)
            .order_by("position")
            .first()
        )
        item = mine or (
            _open(sample)
            .select_for_update(skip_locked=True)
            .filter(Q(claimed_by__isnull=True) | Q(claimed_until__lte=now) | Q(claimed_by=user))
            .order_by("position")
            .first()
        )
        if item is None:
            return None
        item.claimed_by, item.claimed_until = user, now + timedelta(seconds=LEASE_S)
        item.save(update_fields=["claimed_by", "claimed_until"])
    return RejudgeItem.objects.select_related("prediction").get(pk=item.pk)


def item_for(project, item_id: int) -> RejudgeItem:
    """Item ``item_id`` of one of ``project``'s samples. Raises NotFound."""
    item = (
        RejudgeItem.objects.select_related("sample__evaluation", "prediction")
        .filter(pk=item_id, sample__evaluation__project=project)
        .first()
    )
    if item is None:
        raise NotFound("no such answer in a re-judge sample of this project")
    return item


def record(item_id: int, user, verdict: str) -> RejudgeItem:
    """Record ``user``'s verdict on the judge's label of item ``item_id`` (``right`` or ``wrong``)
    and bring the agreement rating set up to date. Raises Invalid (another verdict), NotFound,
    Conflict (it has a verdict already) or NotHeld (someone else holds it)."""
    if verdict not in (RejudgeItem.Verdict.RIGHT, RejudgeItem.Verdict.WRONG):
        raise Invalid("the verdict is right or wrong", errors={"verdict": "right or wrong"})
    with transaction.atomic():
        item = RejudgeItem.objects.select_for_update().select_related("sample").filter(pk=item_id).first()
        if item is None:
            raise NotFound("no such answer in a re-judge sample")
        if item.verdict:
            raise Conflict("this answer was re-judged already; nothing was changed")
        if item.claimed_by_id not in (None, user.pk) and item.claimed_until and item.claimed_until > timezone.now():
            raise NotHeld("someone else is re-judging this answer")
        other = {"correct": "incorrect", "incorrect": "correct"}
        item.verdict = verdict
        item.human_label = item.judge_label if verdict == RejudgeItem.Verdict.RIGHT else other[item.judge_label]
        item.judged_by, item.judged_at, item.claimed_by, item.claimed_until = user, timezone.now(), None, None
        item.save(update_fields=["verdict", "human_label", "judged_by", "judged_at", "claimed_by", "claimed_until"])
        sync(item.sample)  # in the same transaction: a verdict and the rating set never disagree
    return item


def sync(sample: RejudgeSample) -> RatingSet:
    """Write the sample's verdicts as the agreement engine's rating set and queue its computation
    (see the module docstring). Returns the rating set."""
    with transaction.atomic():
        sample = RejudgeSample.objects.select_for_update().select_related("evaluation__project").get(pk=sample.pk)
        rows = []
        for pid, judge, human in (
            RejudgeItem.objects.filter(sample=sample)
            .exclude(verdict="")
            .order_by("position")
            .values_list("prediction_id", "judge_label", "human_label")
        ):
            rows += [
                {"item": f"prediction-{pid}", "rater": JUDGE, "value": judge},
                {"item": f"prediction-{pid}", "rater": HUMAN, "value": human},
            ]
        e = sample.evaluation
        rs = agreement.import_ratings(
            e.project,
            sample.rating_set,
            "nominal",
            rows,
            source=RatingSet.Source.JUDGE,
            replace=True,
            description=f"The LLM judge ({e.judge_model}) of evaluation {e.pk} ({e.model}) against people re-judging "
            f"a sample of {sample.n_items} answers (seed {sample.seed}): correct / incorrect.",
        )
        if rows:
            agreement.request(e.project, scope_key(sample), trigger="rejudge")
    return rs


def status(evaluation: Evaluation) -> dict | None:
    """The re-judge sample's state, or None when there is none::

    {"size", "seed", "n_items", "judged", "right", "wrong", "rating_set", "scope",
     "percent_right": right / judged (null before any verdict),
     "agreement": {"computed_at", "fresh": bool (computed after the last verdict),
                   "percent_agreement": {"value", "ci", "n_items"}, "cohen_kappa": {...},
                   "skipped": {metric: reason}} (null before the engine's first computation)}
    """
    sample = RejudgeSample.objects.filter(evaluation=evaluation).first()
    if sample is None:
        return None
    counts = sample.items.aggregate(
        judged=Count("id", filter=~Q(verdict="")),
        right=Count("id", filter=Q(verdict=RejudgeItem.Verdict.RIGHT)),
        wrong=Count("id", filter=Q(verdict=RejudgeItem.Verdict.WRONG)),
    )
    last = sample.items.exclude(verdict="").order_by("-judged_at").values_list("judged_at", flat=True).first()
    out = {
        "size": sample.size,
        "seed": sample.seed,
        "n_items": sample.n_items,
        **counts,
        "rating_set": sample.rating_set,
        "scope": scope_key(sample),
        "percent_right": round(counts["right"] / counts["judged"], 6) if counts["judged"] else None,
        "agreement": None,
    }
    comp = next(iter(agreement.latest(evaluation.project, scope_key(sample))), None) if counts["judged"] else None
    if comp is not None:
        reports = {r.metric: r for r in Report.objects.filter(computation=comp, subset="", round=Report.Round.FIRST)}
        out["agreement"] = {
            "computed_at": comp.computed_at.isoformat(),
            "fresh": last is None or comp.started_at >= last,
            **{
                m: (
                    {
                        "value": reports[m].value,
                        "ci": [reports[m].ci_low, reports[m].ci_high],
                        "n_items": reports[m].n_items,
                    }
                    if m in reports
                    else None
                )
                for m in ("percent_agreement", "cohen_kappa")
            },
            "skipped": {k.split(" (")[0]: v for k, v in comp.skipped.get("", {}).items()},
        }
    return out


def sample_for(evaluation: Evaluation) -> RejudgeSample:
    """The evaluation's sample. Raises NotFound when it has none."""
    sample = RejudgeSample.objects.filter(evaluation=evaluation).first()
    if sample is None:
        raise NotFound(f"evaluation {evaluation.pk} has no re-judge sample yet")
    return sample
