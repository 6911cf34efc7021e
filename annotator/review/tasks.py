"""Review's background work: gold copies settled a drawn while after the event that reached them."""

from annotator.jobs import job_task
from annotator.review import services


def settle(project_id: int, how: str, ref: int | str | dict) -> str:
    """Settle the gold copies a review, a double-check or a round's close reached, once the delay
    drawn when it happened has passed (``services.settle_gold_later``, ``services.settle_reached``)."""
    return f"settled {services.settle_reached(project_id, how, ref)}"


settle_gold = job_task("review.settle_gold", time_limit_s=120, max_deliveries=3)(settle)
