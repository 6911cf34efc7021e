"""REST endpoints of human-baseline studies: create, list items, enrol, the current trial, "shown",
answers.

Only the project's annotators take part (``services.require_participant_role``): admins, reviewers,
researchers and superusers, who can export the truth, get 403 with the reason in plain words.
Admins and researchers create studies; admins, reviewers and researchers read items and results.
Participants' pages name things by per-trial handles and trial ids, never by item or element id.
"""

from django.db.models import Count
from django.shortcuts import get_object_or_404
from drf_spectacular.authentication import SessionScheme
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.core.validators import INT_MAX, LABEL_MAX, MARKDOWN_MAX, TIME_SPENT_MS_MAX, StorableJSONField
from annotator.errors import Invalid, NotFound
from annotator.studies import dashboard, links, selectors, services, sessions
from annotator.studies.kinds import KINDS, kind_module
from annotator.studies.kinds.likert import CRITERIA as LIKERT_CRITERIA
from annotator.studies.models import Item, Participant, Study, Trial
from api.views import project_for

FORBIDDEN = OpenApiResponse(
    description="Your role does not allow this (only annotators take part; people who can export the truth cannot)."
)
NOT_FOUND = OpenApiResponse(description="No such study or trial, or not yours.")


class ExclusionIn(serializers.Serializer):
    min_median_rt_s = serializers.FloatField(min_value=0, max_value=3600, required=False, allow_null=True)
    min_practice_score = serializers.IntegerField(min_value=0, max_value=1000, required=False, allow_null=True)
    max_attention_failures = serializers.IntegerField(min_value=0, max_value=1000, required=False, allow_null=True)


class StudyIn(serializers.Serializer):
    name = serializers.SlugField(max_length=100)
    kind = serializers.ChoiceField(choices=KINDS)
    preset = serializers.CharField(max_length=50, required=False, allow_blank=True, default="")
    seed = serializers.IntegerField(min_value=0, max_value=INT_MAX, required=False, default=0)
    per_type = serializers.IntegerField(
        min_value=1, max_value=10_000, required=False, help_text="Items sampled per QA type (subtask)."
    )
    qa_types = serializers.ListField(
        child=serializers.SlugField(max_length=64),
        min_length=1,
        max_length=100,
        required=False,
        help_text="Multiple choice, open answers, Likert: only these QA types.",
    )
    time_limits = serializers.ListField(
        child=serializers.FloatField(min_value=1, max_value=3600),
        min_length=1,
        max_length=20,
        required=False,
        help_text="Seconds per trial, one condition each (e.g. [60, 180]).",
    )
    raters_per_item = serializers.IntegerField(min_value=1, max_value=1000, required=False, allow_null=True)
    independent = serializers.BooleanField(required=False, allow_null=True, default=None)
    questions_per_participant = serializers.IntegerField(min_value=1, max_value=10_000, required=False)
    conditions_per_participant = serializers.IntegerField(min_value=1, max_value=100, required=False)
    practice_items = serializers.IntegerField(min_value=0, max_value=100, required=False)
    instructions = serializers.CharField(max_length=MARKDOWN_MAX, required=False, allow_blank=True)
    exclusion = ExclusionIn(required=False)
    source = serializers.ChoiceField(
        choices=["qa", "records"],
        required=False,
        help_text="Likert: rate verified QA pairs (with control groups) or records (videos and groups).",
    )
    criteria = serializers.ListField(
        child=serializers.ChoiceField(choices=list(LIKERT_CRITERIA)),
        min_length=1,
        max_length=len(LIKERT_CRITERIA),
        required=False,
        help_text="Likert: the criteria rated, one condition each.",
    )
    control_groups = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Likert on QA pairs: add the random-matched and filtered groups.",
    )
    justify_below = serializers.IntegerField(
        min_value=0,
        max_value=5,
        required=False,
        help_text="Likert: a score below this needs a written justification (0: never).",
    )
    attention_items = serializers.IntegerField(
        min_value=0,
        max_value=20,
        required=False,
        help_text="Multiple choice and Likert: items with an instructed answer.",
    )
    frame_size = serializers.IntegerField(
        min_value=16, max_value=2048, required=False, help_text="Ordering: square frame size in px."
    )


class StudyOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    items = serializers.IntegerField(help_text="Scored items (0 while building).")
    status = serializers.ChoiceField(choices=Study.Status.choices)
    build_error = serializers.CharField(help_text="Why the build failed, in plain words ('' otherwise).")


class AnswerIn(serializers.Serializer):
    response = StorableJSONField(
        allow_null=True,
        help_text="Multiple choice: the option index. Ordering: the trial's element handles in order, earliest first. "
        'Likert: {"score": 1-5, "justification": str} (a justification is required below 3 where the study '
        "asks). Open answer: the text. null only once the trial's time limit has run out.",
    )
    client_rt_ms = serializers.FloatField(
        min_value=0,
        max_value=TIME_SPENT_MS_MAX,
        help_text="Page time (ms) from the trial visible to the answer; at most the server's time since the trial was "
        "reported shown plus STUDY_RT_SLACK_MS.",
    )
    idempotency_key = serializers.CharField(max_length=LABEL_MAX)


def _study(request, pk: int, roles=access.ALL_ROLES) -> Study:
    study = get_object_or_404(Study.objects.select_related("project"), pk=pk)
    project_for(request, study.project.slug, roles)
    return study


class LinkSessionAuthentication(SessionAuthentication):
    """DRF's session authentication, which checks CSRF only for a logged-in user, and here also for
    a study link's anonymous participant (``sessions``) on unsafe methods: their session is their
    credential, so a page elsewhere must not post answers with it."""

    def authenticate(self, request):
        result = super().authenticate(request)
        if result is None and request.method not in SAFE_METHODS and sessions.participant_ids(request._request):
            self.enforce_csrf(request)
        return result


class LinkSessionScheme(SessionScheme):
    """The schema's name for ``LinkSessionAuthentication``: the session cookie, as Django's."""

    target_class = "api.studies.LinkSessionAuthentication"
    name = "linkSessionAuth"


class AccountOrLinkSession(BasePermission):
    """A logged-in user (the views check their role), or a session bound to a link participant."""

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated) or bool(sessions.participant_ids(request._request))


class ParticipantView(APIView):
    """The participant's endpoints: accounts (annotators; admins and researchers in preview with
    ``?preview=1``) and link participants by their session."""

    authentication_classes = [TokenAuthentication, LinkSessionAuthentication]
    permission_classes = [AccountOrLinkSession]


def _wants_preview(request) -> bool:
    return request.query_params.get("preview") == "1"


def _taker(request, pk: int) -> tuple[Study, Participant | None, str]:
    """(study, the requester's participant in it or None, how: ``link``, ``preview`` or
    ``account``). A link participant bound to the session comes first; without one, an anonymous
    session gets NotFound for any study (no study is listed or confirmed to it); a preview needs
    an admin or researcher of the project; an account must be an annotator (Forbidden)."""
    anonymous = sessions.participant_for(request._request, pk)
    if anonymous is not None:
        return anonymous.study, anonymous, "link"
    if not request.user.is_authenticated:
        raise NotFound("no such study")  # the same answer whether the study exists or not
    study = get_object_or_404(Study.objects.select_related("project"), pk=pk)
    if _wants_preview(request):
        project_for(request, study.project.slug, access.RESEARCH_ROLES)
        return (
            study,
            Participant.objects.filter(study=study, user=request.user, kind=Participant.Kind.PREVIEW).first(),
            "preview",
        )
    project_for(request, study.project.slug, access.ALL_ROLES)
    services.require_participant_role(request.user, study.project)
    return study, Participant.objects.filter(study=study, user=request.user).first(), "account"


def _own_trial(request, pk: int) -> Trial:
    """The requester's trial ``pk`` (NotFound if it is someone else's): a trial of a link
    participant bound to the session, or of the account (an annotator's, or their preview's)."""
    trial = get_object_or_404(Trial.objects.select_related("participant__study__project", "item__condition"), pk=pk)
    trial.item.condition.study = trial.participant.study  # a trial's item is of its participant's study: read once
    if trial.participant_id in sessions.participant_ids(request._request) and trial.participant.user_id is None:
        links.require_taking(trial.participant)
        links.touch(trial.participant)
        return trial
    if not request.user.is_authenticated:
        raise NotFound("not one of your trials")
    project = trial.participant.study.project
    project_for(request, project.slug, access.ALL_ROLES)
    if trial.participant.user_id != request.user.pk:
        raise NotFound("not one of your trials")
    if trial.participant.kind != Participant.Kind.PREVIEW:
        services.require_participant_role(request.user, project)
    return trial


def state(participant: Participant | None, **first) -> dict:
    """The participant's ``stage`` and current ``trial`` (``selectors.trial_payload``), or
    ``not_started``. ``first``: passed to ``services.current_trial`` (an answer's ``next_open``)."""
    if participant is None:
        return {"stage": "not_started", "trial": None}
    taking = participant.stage in (Participant.Stage.PRACTICE, Participant.Stage.TRIALS)
    trial = services.current_trial(participant, **first) if taking else None
    return {"stage": participant.stage, "trial": selectors.trial_payload(trial) if trial else None}


class StudyListView(APIView):
    @extend_schema(
        responses={200: StudyOut(many=True), 403: FORBIDDEN, 404: NOT_FOUND}, summary="The project's studies"
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.ALL_ROLES)
        studies = Study.objects.filter(project=project).order_by("name")
        counts = dict(
            Item.objects.filter(condition__study__project=project, role=Item.Role.SCORED)
            .values_list("condition__study")
            .annotate(n=Count("id"))
        )
        # A build error may name source files; participants see only that a build failed.
        oversees = access.role_in(request.user, project) in access.OVERSEE_ROLES or request.user.is_superuser
        return Response(
            [
                {
                    "id": s.pk,
                    "name": s.name,
                    "kind": s.kind,
                    "items": counts.get(s.pk, 0),
                    "status": s.status,
                    "build_error": s.build_error if oversees or not s.build_error else "the build failed",
                }
                for s in studies
            ]
        )

    @extend_schema(
        request=StudyIn,
        responses={
            202: StudyOut,
            400: OpenApiResponse(description="A bad option, a taken name or an unknown preset."),
            403: FORBIDDEN,
            404: NOT_FOUND,
        },
        summary="Create a study (admins and researchers); a worker builds its items from the project's data: "
        "list the studies to see it ready, or failed with the reason",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.RESEARCH_ROLES)
        data = StudyIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = dict(data.validated_data)
        name, kind, preset, seed = v.pop("name"), v.pop("kind"), v.pop("preset"), v.pop("seed")
        study, _ = services.create_study(project, name, kind, preset=preset, seed=seed, options=v, background=True)
        return Response(
            {
                "id": study.pk,
                "name": study.name,
                "kind": study.kind,
                "items": 0,
                "status": study.status,
                "build_error": "",
            },
            status=202,
        )


class StudyItemOut(serializers.Serializer):
    """One item for researchers (``selectors.items_export``); the kind's own fields follow these."""

    item_id = serializers.IntegerField()
    condition = serializers.IntegerField(help_text="The condition's number.")
    condition_label = serializers.CharField()
    role = serializers.ChoiceField(choices=Item.Role.choices)
    subtask = serializers.CharField(help_text="The QA type's slug ('' for none).")
    group = serializers.CharField(help_text="Likert: real, random_matched or filtered ('' otherwise).")


class StudyItemsView(APIView):
    @extend_schema(
        responses={200: StudyItemOut(many=True), 403: FORBIDDEN, 404: NOT_FOUND},
        summary="The study's items with their truth (admins and researchers)",
    )
    def get(self, request, pk):
        study = _study(request, pk, access.RESEARCH_ROLES)  # researchers and admins only (issue 8)
        return Response(list(selectors.items_export(study)))


class LinkIn(serializers.Serializer):
    max_participants = serializers.IntegerField(
        min_value=1, max_value=links.MAX_PARTICIPANTS_BOUND, required=False, allow_null=True, default=None
    )
    expires = serializers.DateTimeField(
        required=False, allow_null=True, default=None, help_text="ISO 8601; the link is closed after it (null: never)."
    )
    completion_url = serializers.URLField(
        max_length=links.URL_MAX,
        required=False,
        allow_blank=True,
        default="",
        help_text="Where participants go with their code (blank: the study's).",
    )
    abandon_after_min = serializers.IntegerField(
        min_value=1,
        max_value=10080,
        required=False,
        help_text="Sets the study's minutes idle before a participant is timed out.",
    )


class LinkOut(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField(help_text="Add ?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=... or ?pid=... for panels.")
    token = serializers.CharField(help_text="Shown once: only its hash is stored.")
    max_participants = serializers.IntegerField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    completion_url = serializers.CharField()


class StudyLinksView(APIView):
    @extend_schema(
        request=LinkIn,
        responses={
            201: LinkOut,
            400: OpenApiResponse(description="A value out of bounds."),
            403: FORBIDDEN,
            404: NOT_FOUND,
            409: OpenApiResponse(description="The study is not built."),
        },
        summary="Make a link to the study for panel participants (admins and researchers)",
    )
    def post(self, request, pk):
        study = _study(request, pk, access.RESEARCH_ROLES)
        data = LinkIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        made = links.create_link(
            study,
            created_by=request.user,
            max_participants=v["max_participants"],
            expires_at=v["expires"],
            completion_url=v["completion_url"],
        )
        if "abandon_after_min" in v:
            Study.objects.filter(pk=study.pk).update(abandon_after_min=v["abandon_after_min"])
        link = made.link
        return Response(
            {
                "id": link.pk,
                "url": request.build_absolute_uri(made.path),
                "token": made.token,
                "max_participants": link.max_participants,
                "expires_at": link.expires_at,
                "completion_url": link.completion_url,
            },
            status=201,
        )


PREVIEW = OpenApiParameter(
    "preview", str, enum=["1"], required=False, description="1: an admin's or researcher's preview, never counted."
)


class EnrollView(ParticipantView):
    @extend_schema(
        request=None,
        parameters=[PREVIEW],
        responses={
            200: OpenApiTypes.OBJECT,
            403: FORBIDDEN,
            404: NOT_FOUND,
            409: OpenApiResponse(
                description="The study is full (errors.study: full), not built, "
                "or a link participant has not consented or been screened."
            ),
        },
        summary="Join the study (assigns your items once) and leave the instructions",
    )
    def post(self, request, pk):
        study, participant, how = _taker(request, pk)
        if how == "link":
            links.require_taking(participant)
            links.touch(participant)
        elif how == "preview":
            participant = participant or links.preview_participant(study, request.user)
        else:
            participant = links.enroll_account(study, request.user)
        first = services.start(participant)
        return Response(state(participant, first=first))


class CurrentView(ParticipantView):
    @extend_schema(
        parameters=[PREVIEW],
        responses={200: OpenApiTypes.OBJECT, 403: FORBIDDEN, 404: NOT_FOUND},
        summary="Your stage and current trial (the same one after a reload, with the time already spent)",
    )
    def get(self, request, pk):
        study, participant, how = _taker(request, pk)
        if how == "link":
            links.touch(participant)
        return Response(state(participant))


class ShownView(ParticipantView):
    @extend_schema(
        request=None,
        responses={
            200: OpenApiTypes.OBJECT,
            403: FORBIDDEN,
            404: NOT_FOUND,
            409: OpenApiResponse(description="Not your current trial."),
        },
        summary="Report the trial visible: its server time and time limit start now, once",
    )
    def post(self, request, pk):
        trial = _own_trial(request, pk)
        shown = services.mark_shown(trial.participant, trial.pk)
        return Response({"trial_id": shown.pk, "elapsed_ms": round(selectors.elapsed_ms(shown), 1)})


class AnswerView(ParticipantView):
    @extend_schema(
        request=AnswerIn,
        responses={
            200: OpenApiTypes.OBJECT,
            400: OpenApiResponse(
                description="A response the kind refuses, or a response time the server cannot have seen."
            ),
            403: FORBIDDEN,
            404: NOT_FOUND,
            409: OpenApiResponse(description="Not your current trial, or answered."),
        },
        summary="Answer your current trial; practice answers get feedback",
    )
    def post(self, request, pk):
        trial = _own_trial(request, pk)
        data = AnswerIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        answered = services.answer_trial(
            trial.participant, trial.pk, v["response"], v["client_rt_ms"], v["idempotency_key"], trial=trial
        )
        participant = answered.participant  # as the answer left them (a replayed answer: as read again)
        feedback = kind_module(trial.participant.study.kind).feedback(answered) if answered.practice else {}
        if feedback:
            # The next trial is not served with the feedback: the person reads the feedback for as long
            # as they like, and the next trial's content must not reach the page before its clock can
            # start (``services.mark_shown`` counts from when content is first served). The page asks
            # for the current trial on "Continue".
            body = {"stage": participant.stage, "trial": None, "next": "current"}
        else:
            # The next trial, from the first open trial the answer read under the participant's lock.
            body = state(participant, first=answered.next_open)
        body["answered"] = {"trial_id": answered.pk, "timed_out": answered.timed_out}
        if answered.practice:
            body["feedback"] = feedback
        return Response(body)


# ------------------------------------------------------------------------------ results

OVERSEERS_ONLY = OpenApiResponse(
    description="Only the project's admins, reviewers and researchers see results and trials."
)


class MeanCIOut(serializers.Serializer):
    mean = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(
        allow_null=True, help_text="95% interval of the mean, Student's t (null for n < 2)."
    )
    ci_high = serializers.FloatField(allow_null=True)
    n = serializers.IntegerField()


class ScoreRowOut(serializers.Serializer):
    condition = serializers.DictField(
        help_text="number, label, time_limit_s (null: none) and the condition's variables."
    )
    subtask = serializers.CharField(
        allow_blank=True,
        allow_null=True,
        help_text="The QA type's slug ('' for none); null in the overall rows (all subtasks).",
    )
    group = serializers.CharField(allow_blank=True, help_text="Likert: real, random_matched or filtered; else ''.")
    respondent = serializers.CharField(help_text="'human' or a model's name.")
    metrics = serializers.DictField(child=MeanCIOut(), help_text="Every metric of the kind: mean, 95% CI and n.")


class ResponseTimesOut(serializers.Serializer):
    condition = serializers.DictField()
    n = serializers.IntegerField(help_text="Scored trials with a client response time.")
    timed_out = serializers.IntegerField(help_text="Scored trials stored timed out.")
    mean_s = serializers.FloatField(allow_null=True)
    median_s = serializers.FloatField(allow_null=True)
    q1_s = serializers.FloatField(allow_null=True)
    q3_s = serializers.FloatField(allow_null=True)
    min_s = serializers.FloatField(allow_null=True)
    max_s = serializers.FloatField(allow_null=True)


class StudyRefOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField(help_text="building, ready or failed.")


class ResultsOut(serializers.Serializer):
    study = StudyRefOut()
    kind = serializers.CharField(help_text="ordering, mcq, open_answer or likert.")
    metrics = serializers.ListField(child=serializers.CharField())
    unscored = serializers.IntegerField(help_text="Answers and predictions the scoring worker has not scored yet.")
    participants = serializers.IntegerField()
    excluded = serializers.IntegerField(help_text="Participants flagged by the study's exclusion rules (data kept).")
    rows = ScoreRowOut(
        many=True, help_text="Per condition, subtask, group and respondent, without excluded participants."
    )
    rows_with_excluded = ScoreRowOut(many=True)
    overall = ScoreRowOut(
        many=True, help_text="Per condition, group and respondent over all subtasks, without excluded participants."
    )
    overall_with_excluded = ScoreRowOut(many=True)
    rt = ResponseTimesOut(
        many=True, help_text="Client response times (s) per condition, without excluded participants."
    )
    rt_with_excluded = ResponseTimesOut(many=True)


class StudyResultsView(APIView):
    @extend_schema(
        responses={200: ResultsOut, 403: OVERSEERS_ONLY, 404: NOT_FOUND},
        summary="The study's scores per condition, subtask, group and respondent (humans and models), with 95% "
        "intervals (Student's t), without and with excluded participants (admins, reviewers, researchers)",
    )
    def get(self, request, pk):
        study = _study(request, pk, access.OVERSEE_ROLES)
        flags = list(
            Participant.objects.filter(study=study, kind=Participant.Kind.PERSON).values_list("excluded", flat=True)
        )
        tables = selectors.score_tables(study)  # one read for the four tables
        return Response(
            {
                "study": {"id": study.pk, "name": study.name, "status": study.status},
                "kind": study.kind,
                "metrics": list(kind_module(study.kind).METRICS),
                "unscored": selectors.unscored(study),
                "participants": len(flags),
                "excluded": sum(flags),
                "rows": tables[(False, True)],
                "rows_with_excluded": tables[(True, True)],
                "overall": tables[(False, False)],
                "overall_with_excluded": tables[(True, False)],
                "rt": selectors.rt_summary(selectors.client_rts(study)),
                "rt_with_excluded": selectors.rt_summary(selectors.client_rts(study, include_excluded=True)),
            }
        )


class FormatIsTheExports(DefaultContentNegotiation):
    """``?format=`` names the trials export's format (jsonl, csv), not one of DRF's renderers
    (``URL_FORMAT_OVERRIDE``, which would answer 404 for ``jsonl``): the view reads it itself, and
    its errors are JSON whatever the request's Accept header."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class StudyParticipantsView(APIView):
    content_negotiation_class = FormatIsTheExports
    renderer_classes = [JSONRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "format",
                str,
                enum=list(dashboard.TRIAL_FORMATS),
                default="jsonl",
                description="jsonl or csv (cells guarded against spreadsheet formulas).",
            )
        ],
        responses={
            (200, "application/jsonl"): OpenApiTypes.STR,
            (200, "text/csv"): OpenApiTypes.STR,
            400: OpenApiResponse(description="A format other than jsonl or csv."),
            403: FORBIDDEN,
            404: NOT_FOUND,
        },
        summary="Stream the study's participants for approving panel payments: participant, external_id, panel ids, "
        "status (completed, returned, timed_out, excluded, in_progress), completion_code, started, finished, "
        "active_time_s, answered, exclusion_reasons, attention_failures (admins and researchers)",
    )
    def get(self, request, pk):
        study = _study(request, pk, access.RESEARCH_ROLES)  # raw panel ids: admins and researchers only
        fmt = request.query_params.get("format", "jsonl")
        if fmt not in dashboard.TRIAL_FORMATS:
            raise Invalid("format must be jsonl or csv", errors={"format": "jsonl or csv"})
        return dashboard.participants_response(study, fmt)


class StudyTrialsView(APIView):
    content_negotiation_class = FormatIsTheExports
    renderer_classes = [JSONRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "format",
                str,
                enum=list(dashboard.TRIAL_FORMATS),
                default="jsonl",
                description="jsonl (one JSON object a line) or csv (a header, then JSON in the "
                "response and scores cells).",
            )
        ],
        responses={
            (200, "application/jsonl"): OpenApiTypes.STR,
            (200, "text/csv"): OpenApiTypes.STR,
            400: OpenApiResponse(description="A format other than jsonl or csv."),
            403: OVERSEERS_ONLY,
            404: NOT_FOUND,
        },
        summary="Stream the study's answered trials, one row per trial: trial_id, item_id, participant (a pseudonym), "
        "condition, response, scores, timed_out, client_rt_ms, shown_at, answered_at... (admins, reviewers, "
        "researchers)",
    )
    def get(self, request, pk):
        study = _study(request, pk, access.OVERSEE_ROLES)
        fmt = request.query_params.get("format", "jsonl")
        if fmt not in dashboard.TRIAL_FORMATS:
            raise Invalid("format must be jsonl or csv", errors={"format": "jsonl or csv"})
        return dashboard.trials_response(study, fmt)
