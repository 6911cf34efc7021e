"""REST endpoints of review with rework (issue 20, section 3): review a submitted unit (accept or
reject with comments per QA pair, idempotent by key), read a unit's reviews, reopen one's own unit,
the review queue, and quality rounds.

Reviewers and admins of the unit's project review and read the queue; an annotator reopens only
units whose last pass they submitted, and reads only the reviews of their own passes. Non-members
get 404, other roles 403 (``annotator.access``). Views catch no errors: the domain's map
to 400/403/404/409 in ``api.exceptions``, and the schema adds the error answers (``api.schema``).
"""

from django.db.models import Count, Q
from django.http import Http404
from django.urls import path
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.core import handles
from annotator.core.validators import BIGINT_MAX
from annotator.qa.selectors import refuse_during_blind_pass
from annotator.review import selectors, services
from annotator.review.models import Review, ReviewRound, ReviewState
from api.views import project_for

REFUSED = {
    409: OpenApiResponse(
        description="Not awaiting review (already reviewed, reopened, a pass still open), "
        "or the idempotency key was used for another review."
    )
}


class CommentIn(serializers.Serializer):
    qa_id = serializers.IntegerField(
        min_value=1, max_value=BIGINT_MAX, help_text="A QA pair of the unit: verified, or deleted by its last pass."
    )
    text = serializers.CharField(
        max_length=services.MAX_COMMENT_TEXT,
        required=False,
        allow_blank=True,
        default="",
        trim_whitespace=False,
        help_text="What to change, in plain words.",
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=40),
        max_length=services.MAX_TAGS,
        required=False,
        default=list,
        help_text="Issue tags (lowercase letters, digits, - or _); in a quality round, from its vocabulary.",
    )


class ReviewIn(serializers.Serializer):
    decision = serializers.ChoiceField(choices=Review.Decision.values)
    comments = serializers.ListField(
        child=CommentIn(),
        max_length=services.MAX_COMMENTS,
        required=False,
        default=list,
        help_text="One per QA pair at most; a rejection needs at least one.",
    )
    idempotency_key = serializers.CharField(max_length=100, help_text="The same key on a retry replays the result.")


class ReviewOut(serializers.Serializer):
    review_id = serializers.IntegerField()
    unit_id = serializers.IntegerField()
    decision = serializers.ChoiceField(choices=Review.Decision.values)
    state = serializers.ChoiceField(choices=ReviewState.State.values, help_text="The unit's review state after it.")
    rework_item_id = serializers.IntegerField(allow_null=True, help_text="The rework a rejection opened.")
    round_id = serializers.IntegerField(allow_null=True, help_text="The quality round this review answered.")
    round_closed = serializers.BooleanField(help_text="This review was the round's last: its summary went out.")
    comments = serializers.IntegerField()
    replayed = serializers.BooleanField(help_text="True when a review with this key was already saved.")


def _row_or_handle(what: str) -> serializers.JSONField:
    return serializers.JSONField(
        help_text=f"The {what}: its row id for reviewers, researchers and admins, its handle "
        "(a string, as their pages name it) for annotators (issue 20)."
    )


class ReviewCommentOut(serializers.Serializer):
    qa_id = _row_or_handle("QA pair")
    text = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())


class ReviewOfUnitOut(serializers.Serializer):
    id = _row_or_handle("review")
    decision = serializers.ChoiceField(choices=Review.Decision.values)
    round = serializers.IntegerField(allow_null=True, help_text="The quality round it answered (null for annotators).")
    at = serializers.DateTimeField()
    comments = ReviewCommentOut(many=True)


class UnitReviewsOut(serializers.Serializer):
    unit_id = _row_or_handle("unit")
    state = serializers.ChoiceField(choices=ReviewState.State.values)
    annotator = serializers.CharField(help_text="Who submitted the unit's last pass.")
    submitted_at = serializers.DateTimeField()
    can_reopen = serializers.BooleanField(help_text="You may reopen it now (your own unit, not reviewed yet).")
    reviews = ReviewOfUnitOut(many=True)


class ReopenOut(serializers.Serializer):
    unit_id = serializers.CharField(help_text="The unit's handle.")
    state = serializers.ChoiceField(choices=ReviewState.State.values)
    rework_item_id = serializers.CharField(help_text="The handle of the rework item now first in your queue.")


class QueueRowOut(serializers.Serializer):
    unit_id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=ReviewState.State.values, help_text="submitted or resubmitted.")
    annotator = serializers.CharField()
    pass_kind = serializers.CharField(help_text="The pass under review: first_pass, double_check or rework.")
    submitted_at = serializers.DateTimeField()
    round_id = serializers.IntegerField(allow_null=True, help_text="In the open quality round (served first).")


class SummaryOut(serializers.Serializer):
    round = serializers.IntegerField()
    closed_at = serializers.DateTimeField()
    units = serializers.IntegerField()
    reviewed = serializers.IntegerField()
    accepted = serializers.IntegerField()
    rejected = serializers.IntegerField()
    tags = serializers.ListField(
        child=serializers.DictField(),
        help_text="[{tag, count, units, examples: [{unit_id, qa_id, text}]}], most used first.",
    )


class RoundOut(serializers.Serializer):
    id = serializers.IntegerField()
    sample_size = serializers.IntegerField(allow_null=True, help_text="None: all units awaiting review.")
    seed = serializers.IntegerField()
    tags = serializers.ListField(child=serializers.CharField())
    opened_at = serializers.DateTimeField()
    closed_at = serializers.DateTimeField(allow_null=True)
    units = serializers.IntegerField()
    reviewed = serializers.IntegerField()
    summary = SummaryOut(allow_null=True)


def by_row_id(user, unit_id: int) -> None:
    """The row-id route is for reviewers, researchers and admins of the unit's project: anyone else
    (an annotator names units by handle) gets the 404 of a unit that does not exist, whether it
    exists or not, so row ids cannot be probed (issue 20)."""
    if access.project_and_role_of_unit(user, unit_id)[1] not in access.OVERSEE_ROLES:
        raise Http404("no such unit")


class UnitReviewView(APIView):
    @extend_schema(
        responses={200: UnitReviewsOut},
        summary="A unit's review state and reviews with their comments (annotators: their own units)",
    )
    def get(self, request, pk, raw=False):
        if raw:
            by_row_id(request.user, pk)
        _, role = access.require(request.user, access.ALL_ROLES, unit_id=pk)
        oversee = role in access.OVERSEE_ROLES
        refuse_during_blind_pass(request.user, pk)  # a blind pass sees no other pass's work
        state = ReviewState.objects.select_related("annotator").filter(unit_id=pk).first()
        out = selectors.unit_reviews(state, request.user, oversee=oversee) if state is not None else None
        if out is None or (not oversee and state.annotator_id != request.user.pk and not out["reviews"]):
            # One answer for "not submitted" and "not yours": an annotator learns nothing of others' units.
            raise Http404("no such unit of yours" if not oversee else "this unit has not been submitted")
        if not oversee and state.annotator_id != request.user.pk:
            out["annotator"] = ""  # their pass was reviewed, but the unit went on to someone else: not named
        if not oversee:  # handles, as their pages name units and QA pairs (issue 20)
            out["unit_id"] = handles.encode("unit", out["unit_id"])
            for review in out["reviews"]:
                # Not the raw review id nor the round: a gold copy's acceptance is written when the
                # real units around it are reviewed, outside any round (review.services.settle_gold).
                review["id"], review["round"] = handles.encode("review", review["id"]), None
                # The day only: a gold copy's acceptance is written in the same moment as the real
                # review that settles it (security review of issue 20).
                review["at"] = review["at"].replace(hour=0, minute=0, second=0, microsecond=0)
                review["comments"] = [{**c, "qa_id": handles.encode("qa", c["qa_id"])} for c in review["comments"]]
        return Response(out)

    @extend_schema(
        request=ReviewIn,
        responses={200: ReviewOut, **REFUSED},
        summary="Accept or reject a submitted unit with a comment and issue tags per QA pair (reviewers, "
        "admins; idempotent by key); a rejection sends it back to its annotator as rework",
    )
    def post(self, request, pk, raw=False):
        if raw:
            by_row_id(request.user, pk)
        access.require(request.user, access.EDIT_QA_ROLES, unit_id=pk)
        refuse_during_blind_pass(request.user, pk)
        data = ReviewIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        result = services.review_unit(
            pk, request.user, v["decision"], [services.Comment(**c) for c in v["comments"]], v["idempotency_key"]
        )
        return Response(result.as_dict())


class UnitReopenView(APIView):
    @extend_schema(
        request=None,
        responses={200: ReopenOut, **REFUSED},
        summary="Reopen your own submitted unit before it is reviewed: it comes back to you first, as rework",
    )
    def post(self, request, pk):
        access.require(request.user, access.ANNOTATE_ROLES, unit_id=pk)
        state = services.reopen_unit(pk, request.user)
        return Response(
            {
                "unit_id": handles.encode("unit", state.unit_id),
                "state": state.state,
                "rework_item_id": handles.encode("item", state.rework_item_id),
            }
        )


class ReviewQueueView(ListAPIView):
    """The project's units awaiting review, in the order reviewers take them (the open round's
    first, then oldest submission first), a page at a time."""

    serializer_class = QueueRowOut

    @extend_schema(summary="Units awaiting review, in order (reviewers, admins)")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        return selectors.review_queue(project_for(self.request, self.kwargs["slug"], access.EDIT_QA_ROLES))

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(QueueRowOut([selectors.queue_row(s) for s in page], many=True).data)


class RoundListView(APIView):
    @extend_schema(
        responses={200: RoundOut(many=True)},
        summary="The project's quality rounds, newest first, with their summaries once closed",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        rounds = (
            ReviewRound.objects.filter(project=project)
            .annotate(n_units=Count("units"), n_reviewed=Count("units", filter=Q(units__review__isnull=False)))
            .order_by("-id")[:100]
        )
        return Response(
            [
                {
                    "id": r.pk,
                    "sample_size": r.sample_size,
                    "seed": r.seed,
                    "tags": r.tags,
                    "opened_at": r.opened_at,
                    "closed_at": r.closed_at,
                    "units": r.n_units,
                    "reviewed": r.n_reviewed,
                    "summary": r.summary,
                }
                for r in rounds
            ]
        )


urlpatterns = [
    # By the unit's handle (annotators, issue 20) or, for reviewers, researchers and admins, its row id.
    path("units/<unit:pk>/review/", UnitReviewView.as_view(), name="api-unit-review"),
    path("units/<id:pk>/review/", UnitReviewView.as_view(), {"raw": True}, name="api-unit-review-by-id"),
    path("units/<unit:pk>/reopen/", UnitReopenView.as_view(), name="api-unit-reopen"),
    path("projects/<slug:slug>/review/queue/", ReviewQueueView.as_view(), name="api-review-queue"),
    path("projects/<slug:slug>/review/rounds/", RoundListView.as_view(), name="api-review-rounds"),
]
