"""REST endpoints of the frame-ordering human baseline: start, the current trial, "shown", answers.

Only the project's annotators take part (``services.require_participant_role``): admins, reviewers,
researchers and superusers, who can export the truth, get 403 with the reason in plain words. The
page names elements by per-trial handles, never by element id (``annotator.experiments.handles``).
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.errors import NotFound
from annotator.experiments import handles, selectors, services
from annotator.experiments.models import Experiment, Participant, Trial
from annotator.projects import access
from api.validators import TIME_SPENT_MS_MAX
from api.views import project_for

FORBIDDEN = OpenApiResponse(description="Not an annotator of the project: people who can export the truth cannot take part.")
NOT_FOUND = OpenApiResponse(description="No such experiment or trial, or not yours.")


class AnswerIn(serializers.Serializer):
    order = serializers.ListField(
        child=serializers.RegexField(r"^[0-9a-f]{16}\Z", max_length=16), min_length=1, max_length=64,
        help_text="The trial's element handles (from the trial's ``elements``) in the order given, earliest first.")
    client_rt_ms = serializers.FloatField(
        min_value=0, max_value=TIME_SPENT_MS_MAX,
        help_text="Page time (ms) from all elements visible to the answer; at most the server's time since "
                  "the trial was reported shown plus ORDERING_RT_SLACK_MS.")
    idempotency_key = serializers.CharField(max_length=100)


def _experiment(request, pk: int) -> Experiment:
    experiment = get_object_or_404(Experiment.objects.select_related("project"), pk=pk)
    project_for(request, experiment.project.slug, access.ALL_ROLES)
    services.require_participant_role(request.user, experiment.project)
    return experiment


def _own_trial(request, pk: int) -> Trial:
    """The requesting participant's trial ``pk`` (NotFound if it is someone else's)."""
    trial = get_object_or_404(Trial.objects.select_related("participant__experiment__project", "item"), pk=pk)
    project = trial.participant.experiment.project
    project_for(request, project.slug, access.ALL_ROLES)
    if trial.participant.user_id != request.user.pk:
        raise NotFound("not one of your trials")
    services.require_participant_role(request.user, project)
    return trial


def _state(participant: Participant) -> dict:
    trial = services.current_trial(participant) if participant.stage in (Participant.Stage.PRACTICE, Participant.Stage.TRIALS) else None
    return {"stage": participant.stage, "trial": selectors.trial_payload(trial) if trial else None}


class OrderingStartView(APIView):
    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT, 403: FORBIDDEN, 404: NOT_FOUND},
                   summary="Join the experiment (assigns your items once) and leave the instructions")
    def post(self, request, pk):
        experiment = _experiment(request, pk)
        participant = services.enroll(experiment, request.user)
        services.start(participant)  # updates participant.stage in place
        return Response(_state(participant))


class OrderingCurrentView(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT, 403: FORBIDDEN, 404: NOT_FOUND},
                   summary="Your stage and current trial (the same one after a reload)")
    def get(self, request, pk):
        experiment = _experiment(request, pk)
        participant = Participant.objects.filter(experiment=experiment, user=request.user).first()
        if participant is None:
            return Response({"stage": "not_started", "trial": None})
        return Response(_state(participant))


class OrderingShownView(APIView):
    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT, 403: FORBIDDEN, 404: NOT_FOUND,
                                            409: OpenApiResponse(description="Not your current trial.")},
                   summary="Report the trial visible (every element decoded and on screen): its server time starts now, once")
    def post(self, request, pk):
        trial = _own_trial(request, pk)
        shown = services.mark_shown(trial.participant, trial.pk)
        return Response({"trial_id": shown.pk, "shown_at": shown.shown_at.isoformat()})


class OrderingAnswerView(APIView):
    @extend_schema(request=AnswerIn, responses={200: OpenApiTypes.OBJECT,
                                                400: OpenApiResponse(description="Not an ordering of the trial's handles, "
                                                                                 "a moved hint, or a response time the server cannot have seen."),
                                                403: FORBIDDEN, 404: NOT_FOUND,
                                                409: OpenApiResponse(description="Not your current trial.")},
                   summary="Answer your current trial; practice answers get the true order back as feedback")
    def post(self, request, pk):
        trial = _own_trial(request, pk)
        data = AnswerIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        order = handles.element_ids(trial.pk, trial.item.truth, v["order"])
        answered = services.answer_trial(trial.participant, trial.pk, order, v["client_rt_ms"], v["idempotency_key"])
        participant = Participant.objects.get(pk=trial.participant_id)
        body = _state(participant)
        if answered.practice:
            body["feedback"] = {"correct": answered.response == answered.item.truth, "truth": selectors.feedback_truth(answered)}
        return Response(body)
