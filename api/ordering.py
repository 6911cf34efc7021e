"""REST endpoints of the frame-ordering human baseline: start, the current trial, answers."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.errors import NotFound
from annotator.experiments import selectors, services
from annotator.experiments.models import Experiment, Participant, Trial
from annotator.projects import access
from api.validators import BIGINT_MAX, TIME_SPENT_MS_MAX
from api.views import project_for


class AnswerIn(serializers.Serializer):
    order = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=BIGINT_MAX), max_length=64,
                                  help_text="Element ids in the order given.")
    client_rt_ms = serializers.FloatField(min_value=0, max_value=TIME_SPENT_MS_MAX,
                                          help_text="Page time (ms) from all elements visible to the answer.")
    idempotency_key = serializers.CharField(max_length=100)


def _experiment(request, pk: int) -> Experiment:
    experiment = get_object_or_404(Experiment.objects.select_related("project"), pk=pk)
    project_for(request, experiment.project.slug, access.ANNOTATE_ROLES)
    return experiment


def _state(participant: Participant) -> dict:
    trial = services.current_trial(participant) if participant.stage in (Participant.Stage.PRACTICE, Participant.Stage.TRIALS) else None
    return {"stage": participant.stage, "trial": selectors.trial_payload(trial) if trial else None}


class OrderingStartView(APIView):
    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT},
                   summary="Join the experiment (assigns your items once) and leave the instructions")
    def post(self, request, pk):
        experiment = _experiment(request, pk)
        participant = services.enroll(experiment, request.user)
        services.start(participant)  # updates participant.stage in place
        return Response(_state(participant))


class OrderingCurrentView(APIView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT}, summary="Your stage and current trial (the same one after a reload)")
    def get(self, request, pk):
        experiment = _experiment(request, pk)
        participant = Participant.objects.filter(experiment=experiment, user=request.user).first()
        if participant is None:
            return Response({"stage": "not_started", "trial": None})
        return Response(_state(participant))


class OrderingAnswerView(APIView):
    @extend_schema(request=AnswerIn, responses={200: OpenApiTypes.OBJECT,
                                                400: OpenApiResponse(description="Not an ordering of the items' elements."),
                                                409: OpenApiResponse(description="Not your current trial.")},
                   summary="Answer your current trial; practice answers get the true order back as feedback")
    def post(self, request, pk):
        trial = get_object_or_404(Trial.objects.select_related("participant__experiment__project", "item"), pk=pk)
        project_for(request, trial.participant.experiment.project.slug, access.ANNOTATE_ROLES)
        if trial.participant.user_id != request.user.pk:
            raise NotFound("not one of your trials")
        data = AnswerIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        answered = services.answer_trial(trial.participant, trial.pk, v["order"], v["client_rt_ms"], v["idempotency_key"])
        participant = Participant.objects.get(pk=trial.participant_id)
        body = _state(participant)
        if answered.practice:
            body["feedback"] = {"correct": answered.response == answered.item.truth, "truth": answered.item.truth}
        return Response(body)
