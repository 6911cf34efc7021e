"""The demo's review round (issue 20, section 3; EgoNight seed 000 App. A.2.1, the second round), run
by ``demo_setup`` on every ``make demo``: each step is done once and reused on a rerun.

1. A reviewer, ``reviewer1`` (password ``cedar-harbor-37``), joins the demo project.
2. A quality round over a seeded sample of the units awaiting review (``DEMO_SAMPLE``, seed 0),
   with ``DEMO_TAGS`` as its vocabulary.
3. The reviewer rejects the round's first unit, with a comment on an open-ended QA pair
   (``wrong_answer``) and, when the first pass deleted one, on the deleted pair (``wrong_delete``),
   and accepts the others. The last review closes the round: its summary goes to the annotators.
4. The unit's annotator takes the rework through the real queue (it is served to them first):
   modifies the commented answer, restores the deleted pair, keeps the rest, and submits.
5. The reviewer accepts the resubmitted unit.
"""

from __future__ import annotations

from annotator.projects.services import ensure_member
from annotator.qa.models import QAPair, QueueItem
from annotator.qa.queue import claim_next, release
from annotator.qa.services import Decision, submit_unit
from annotator.review.models import Review, ReviewRound, ReviewState, RoundUnit
from annotator.review.services import Comment, open_round, review_unit, reviewable_pairs

DEMO_REVIEWER = ("reviewer1", "cedar-harbor-37")
DEMO_SAMPLE = 3
DEMO_TAGS = ("wrong_answer", "vague_question", "not_visible", "wrong_delete")


def run_demo(project, stdout) -> dict:
    """Script the review round on ``project`` (see the module docstring) and print what it did.
    Returns ``{"round", "units", "rejected", "accepted", "reworked", "accepted_after_rework",
    "summaries"}`` (unit ids; ``round`` None when nothing awaited review)."""
    reviewer, _ = ensure_member(DEMO_REVIEWER[0], role="reviewer", project=project, password=DEMO_REVIEWER[1])
    round_ = ReviewRound.objects.filter(project=project).order_by("id").first()
    if round_ is None:
        if not ReviewState.objects.filter(project=project, state__in=ReviewState.AWAITING).exists():
            stdout.write("review round: no unit awaits review yet; none opened")
            return {"round": None}
        round_ = open_round(project, sample=DEMO_SAMPLE, seed=0, tags=DEMO_TAGS)
        stdout.write(
            f"review round {round_.pk} opened over {round_.units.count()} units (sample of {DEMO_SAMPLE}, "
            f"seed 0; tags: {', '.join(DEMO_TAGS)})"
        )
    units = list(RoundUnit.objects.filter(round=round_).order_by("unit_id").values_list("unit_id", flat=True))
    for n, unit_id in enumerate(units):
        state = ReviewState.objects.filter(unit_id=unit_id).first()
        if (
            state is None
            or state.state not in ReviewState.AWAITING
            or Review.objects.filter(round=round_, unit_id=unit_id).exists()
        ):
            continue
        if n == 0:
            comments = _rejection(state)
            review_unit(unit_id, reviewer, "reject", comments, f"demo-review-{round_.pk}-{unit_id}")
            said = f"{len(comments)} comment{'' if len(comments) == 1 else 's'}"
            stdout.write(
                f"{reviewer.username} rejected unit {unit_id} with {said}; it went back to "
                f"{state.annotator.username} as rework"
            )
        else:
            review_unit(unit_id, reviewer, "accept", [], f"demo-review-{round_.pk}-{unit_id}")
            stdout.write(f"{reviewer.username} accepted unit {unit_id}")
    rejected = list(
        Review.objects.filter(round=round_, decision=Review.Decision.REJECT).values_list("unit_id", flat=True)
    )
    reworked, accepted_after = [], []
    for unit_id in rejected:
        if _rework(project, unit_id, stdout):
            reworked.append(unit_id)
        state = ReviewState.objects.get(unit_id=unit_id)
        if state.state == ReviewState.State.RESUBMITTED:
            review_unit(unit_id, reviewer, "accept", [], f"demo-review-after-rework-{unit_id}")
            stdout.write(f"{reviewer.username} accepted unit {unit_id} after its rework")
            accepted_after.append(unit_id)
    round_.refresh_from_db()
    if round_.summary:
        tags = ", ".join(f"{t['tag']} {t['count']}" for t in round_.summary["tags"]) or "none"
        stdout.write(
            f"review round {round_.pk}: {round_.summary['reviewed']} reviewed, {round_.summary['accepted']} "
            f"accepted, {round_.summary['rejected']} rejected; issue tags: {tags}; summaries sent to "
            f"{round_.summaries.count()} annotators"
        )
    return {
        "round": round_.pk,
        "units": units,
        "rejected": rejected,
        "accepted": list(
            Review.objects.filter(round=round_, decision=Review.Decision.ACCEPT).values_list("unit_id", flat=True)
        ),
        "reworked": reworked,
        "accepted_after_rework": accepted_after,
        "summaries": round_.summaries.count(),
    }


def _rejection(state: ReviewState) -> list[Comment]:
    """The scripted reviewer's comments: on the first open-ended verified pair, and on the first pair
    the pass deleted, if any and if it is not the project's last deleted pair."""
    pairs = list(reviewable_pairs(state).order_by("id"))
    open_ended = next((p for p in pairs if p.status == "verified" and p.options is None), None) or pairs[0]
    comments = [Comment(open_ended.pk, "Be specific: say what the person holds and where.", ("wrong_answer",))]
    deleted = next((p for p in pairs if p.status == "deleted"), None)
    # The rework restores the commented deleted pair; ask for it only when the project keeps another
    # deleted pair, so the demo always has deleted QA pairs (the Likert study's filtered control group).
    if (
        deleted is not None
        and QAPair.objects.filter(project_id=state.project_id, status="deleted", unit__purpose="real")
        .exclude(pk=deleted.pk)
        .exists()
    ):
        comments.append(Comment(deleted.pk, "This question is answerable from the clip: keep it.", ("wrong_delete",)))
    return comments


def _rework(project, unit_id: int, stdout) -> bool:
    """The annotator takes and submits the open rework of ``unit_id`` through the queue. Returns
    whether it was done now (False when there is none open, or the queue served something else)."""
    rework = QueueItem.objects.filter(unit_id=unit_id, kind=QueueItem.Kind.REWORK, status=QueueItem.Status.OPEN).first()
    if rework is None or rework.assigned_to is None:
        return False
    annotator = rework.assigned_to
    item = claim_next(project, annotator)
    if item is None or item.pk != rework.pk:
        if item is not None and item.leased_by_id == annotator.pk and item.claimed_at and not item.autosaves.exists():
            release(item)
        stdout.write(f"rework of unit {unit_id}: {annotator.username}'s queue served another unit first; left for them")
        return False
    review = Review.objects.filter(rework_item=rework).first()
    commented = {c.qa_pair_id for c in review.comments.all()} if review else set()
    decisions = []
    for pair in rework.unit.qa_pairs.filter(status__in=["verified", "deleted"]).order_by("id"):
        if pair.status == "deleted":
            if pair.pk in commented:
                decisions.append(Decision(pair.pk, "keep", version=pair.version))  # restored
        elif pair.pk in commented and pair.options is None:
            decisions.append(
                Decision(
                    pair.pk,
                    "modify",
                    answer=f"{pair.answer} (held in the right hand, on the table)",
                    version=pair.version,
                )
            )
        else:
            decisions.append(Decision(pair.pk, "keep", version=pair.version))
    result = submit_unit(
        unit_id,
        annotator,
        idempotency_key=f"demo-rework-{rework.pk}",
        decisions=decisions,
        additions=[],
        time_spent_ms=None,
    )
    stdout.write(
        f"{annotator.username} reworked unit {unit_id}: {result.counts['modified']} modified, "
        f"{result.counts['kept']} kept (a deleted pair restored where the reviewer asked)"
    )
    return True
