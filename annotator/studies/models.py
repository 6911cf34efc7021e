"""Human-baseline studies: one engine for every kind of human study the source papers run.

A *study* (what researchers name and script) has a *kind* (``annotator.studies.kinds``: ordering,
mcq, open_answer, likert), *conditions* (the variables crossed in it and each one's time limit),
*items* (a kind-specific payload and its truth, both kept on the server), and *participants*, who
take assigned items as timed *trials*. Model runs import *predictions* for the same items. Trials
and predictions are scored by a worker into the same ``scores`` JSON, one key per metric of the
kind.

Sources: frame ordering, EGO-FLIGHT (seed 003 Sec. 3.2-3.5, App. A, D, E) and X-LeBench summary
ordering (seed 002 App. C.4); timed multiple choice, EgoExoBench (seed 001 Sec. 4, App. A.5); open
answers without drafts, EgoNight (seed 000 App. A.2.1); Likert ratings, X-LeBench (seed 002 App. D)
and VUDG (seed 004 Sec. 4.5).
"""

from django.conf import settings
from django.db import models

from annotator.media.models import Video
from annotator.projects.models import Project
from annotator.studies.kinds import kind_choices


class Study(models.Model):
    """A named human-baseline study of one kind, with its assignment and exclusion rules.

    ``settings``: the kind's build options as given (``per_type``, ``frame_size``, ``criteria``,
    ``source``...), kept so a study can be described and rebuilt. ``sampling``: what was drawn, with
    the seed (per QA type: how many items were available and how many taken).
    ``exclusion`` (EGO-FLIGHT Sec. 3.5; all optional, null or absent means no rule):
    ``min_median_rt_s`` (flag a participant whose median response time over scored trials is below
    this many seconds), ``min_practice_score`` (flag one whose practice items scored right fewer
    than this many times), ``max_attention_failures`` (flag one who failed more attention items
    than this). Flagged participants are kept, with their reasons.
    ``raters_per_item``: at most this many participants get each item (null: no cap).
    ``independent``: refuse participants who drafted, verified or double-checked any of the study's
    QA pairs (EgoExoBench App. A.5). ``status``: ``building`` while a worker builds the items of a
    study created through the API (``build_error`` says why one ``failed``), else ``ready``.
    """

    class Status(models.TextChoices):
        BUILDING = "building", "building"
        READY = "ready", "ready"
        FAILED = "failed", "failed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="studies")
    name = models.SlugField(max_length=100)
    kind = models.CharField(max_length=20, choices=kind_choices, help_text="A module of annotator.studies.kinds.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.READY)
    build_error = models.TextField(blank=True)
    preset = models.CharField(max_length=50, blank=True)
    seed = models.BigIntegerField(
        default=0, help_text="Seed of every draw: item sampling, option and element shuffles."
    )
    settings = models.JSONField(default=dict, blank=True)
    sampling = models.JSONField(default=dict, blank=True)
    questions_per_participant = models.PositiveIntegerField(default=30)
    conditions_per_participant = models.PositiveIntegerField(default=1)
    practice_items = models.PositiveIntegerField(default=0)
    raters_per_item = models.PositiveIntegerField(null=True, blank=True)
    independent = models.BooleanField(default=False)
    instructions = models.TextField(blank=True, help_text="Markdown shown before the practice items.")
    exclusion = models.JSONField(default=dict, blank=True)
    # Participants from a link (``StudyLink``, issue 19): the pages before and after the trials.
    consent = models.TextField(blank=True, help_text="Markdown of the consent page (links' participants).")
    debrief = models.TextField(blank=True, help_text="Markdown shown after the last trial (links' participants).")
    completion_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="Where a link's participant goes with their code (a link may name its own).",
    )
    min_viewport_width = models.PositiveIntegerField(default=1024, help_text="Screening: the smallest window, px.")
    min_viewport_height = models.PositiveIntegerField(default=600, help_text="Screening: the smallest window, px.")
    abandon_after_min = models.PositiveIntegerField(
        default=60,
        help_text="A link's participant idle this many minutes is timed out and their unanswered items released.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "name"]
        verbose_name_plural = "studies"
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="study_unique_name")]

    def __str__(self) -> str:
        return self.name


class Condition(models.Model):
    """One combination of the study's variables, with its time limit per trial (seconds; null: none).

    ``variables`` is kind-specific: for ordering ``n_frames``, ``clip_length``, ``annotation``,
    ``hints``, ``item_kind`` (a row of EGO-FLIGHT App. E Table 8); for multiple choice nothing but
    the limit (EgoExoBench App. A.5: 60 s "quick", 180 s "deliberate").

    ``people``: how many ``person`` participants were given the condition (its membership rows), kept
    by the database (migration 0008's trigger on the membership table, in the statement that adds
    or removes them), so assignment reads it under the study's lock instead of counting."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="conditions")
    number = models.PositiveSmallIntegerField()
    label = models.CharField(max_length=100)
    time_limit_s = models.FloatField(null=True, blank=True)
    variables = models.JSONField(default=dict, blank=True)
    baseline = models.BooleanField(default=False)
    people = models.PositiveIntegerField(
        default=0, editable=False, help_text="Person participants given this condition (kept by a trigger)."
    )

    class Meta:
        ordering = ["study", "number"]
        constraints = [
            models.UniqueConstraint(fields=["study", "number"], name="study_condition_unique_number"),
            models.CheckConstraint(
                condition=models.Q(time_limit_s__isnull=True) | models.Q(time_limit_s__gt=0),
                name="study_condition_positive_limit",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.number}. {self.label}"

    def described(self) -> dict:
        """The condition as an object (item exports, score tables): number, label, time limit (s), variables."""
        return {"number": self.number, "label": self.label, "time_limit_s": self.time_limit_s, **self.variables}


class StudyLink(models.Model):
    """A shareable address of a study for panel participants (Prolific and the like, issue 19):
    ``/s/<token>/``. Only the SHA-256 of the token is stored (``token_hash``), so the table does not
    give the links away; a lookup hashes the token it is given. ``max_participants``: at most this
    many participants (not counting those who returned or timed out) enter through it (null: only
    the study's own limits). ``expires_at``: closed after (null: never). ``completion_url``: where a
    participant goes with their code (blank: the study's)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="links")
    token_hash = models.CharField(max_length=64, unique=True)
    max_participants = models.PositiveIntegerField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    completion_url = models.URLField(max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"link {self.pk} of {self.study}"


class Element(models.Model):
    """One thing to order (ordering kind): a frame of a video at ``t_s`` seconds resized to ``size``
    px square, stored once under its content hash and shared by every item that uses it, or a
    short text."""

    class Kind(models.TextChoices):
        FRAME = "frame", "frame"
        TEXT = "text", "text"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    video = models.ForeignKey(Video, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    t_s = models.FloatField(null=True, blank=True)
    size = models.PositiveIntegerField(null=True, blank=True)
    image = models.FileField(max_length=500, blank=True)
    text = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["video", "t_s", "size"], name="study_element_unique_frame", condition=models.Q(kind="frame")
            )
        ]


class Item(models.Model):
    """One question of a study: what the kind shows (``payload``) and the answer (``truth``), both
    server-side; the participant's page gets only what ``kinds.<kind>.payload`` derives from them.

    ``role``: ``scored``, ``practice`` (feedback after the answer, not in results) or ``attention``
    (an instructed answer; failures count towards exclusion, not in results). ``group`` (Likert,
    VUDG Sec. 4.5): ``real``, ``random_matched`` (a question paired with another pair's answer) or
    ``filtered`` (a pair deleted in review). ``subtask``: the QA type's slug (results per subtask).
    ``key``: items sharing a key are versions of one thing (the same clip in two ordering
    conditions, the same QA pair in two time-limit conditions); nobody gets two of them.
    ``footage``: the source video whose content the item is about (never assigned to someone who
    could play it in a verification queue). Clips the page plays are cut for the item and named in
    ``payload["media"]`` (``[{"name": storage name, "label": "Video 1"}, ...]``); they are served
    only to participants with an unanswered trial of the item (and to overseers).
    ``raters``: how many ``person`` participants have a trial of the item (answered or not; a
    released or withdrawn trial no longer counts), kept by the database (migration 0008's trigger
    on the trials table, in the statement that inserts or deletes them): the raters-per-item cap
    reads it under the study's lock instead of counting the item's trials.
    """

    class Role(models.TextChoices):
        SCORED = "scored", "scored"
        PRACTICE = "practice", "practice"
        ATTENTION = "attention", "attention check"

    class Group(models.TextChoices):
        NONE = "", "none"
        REAL = "real", "real"
        RANDOM_MATCHED = "random_matched", "random-matched"
        FILTERED = "filtered", "filtered"

    condition = models.ForeignKey(Condition, on_delete=models.CASCADE, related_name="items")
    index = models.PositiveIntegerField()
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.SCORED)
    group = models.CharField(max_length=20, choices=Group.choices, blank=True, default="")
    subtask = models.CharField(max_length=64, blank=True)
    key = models.CharField(max_length=100, blank=True)
    qa_pair = models.ForeignKey("qa.QAPair", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    footage = models.ForeignKey(Video, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    seed = models.BigIntegerField(default=0)
    payload = models.JSONField(default=dict)
    truth = models.JSONField(null=True, blank=True)
    raters = models.PositiveIntegerField(
        default=0, editable=False, help_text="Person participants with a trial of this item (kept by a trigger)."
    )

    class Meta:
        ordering = ["condition", "index"]
        constraints = [models.UniqueConstraint(fields=["condition", "index"], name="study_item_unique_index")]


class Participant(models.Model):
    """Who takes a study: a person (``kind=person``) with their conditions, stage and exclusion flag
    with reasons, or a model (``kind=model``, ``model`` its column name in results, e.g. ``gpt-4o``
    or ``gpt-4o (text only)``, ``user`` null) whose answers to the study's items (``evaluate
    --study``, issue 18) are stored as trials, so people and models are scored by one code path
    (``services.score_pending``). Model trials carry no times and are never excluded.

    A person is an account (``user`` set) or, from a study link (issue 19), anonymous: ``user``
    null, ``link`` set, ``pseudonym`` the HMAC-SHA256 (hex) of their panel id under
    ``PSEUDONYM_KEY`` (one participant per pseudonym and study), ``external_id`` the raw panel id
    (kept only for the participant export that approves payments), ``panel_study_id`` and
    ``panel_session_id`` as the panel sent them. ``kind=preview``: an admin or researcher taking
    the study as a participant would (``preview`` is true); assignment counts only ``person``
    participants, so a preview takes no place, and results and exports leave it out.
    ``status``: ``in_progress``, or how a link's participant left: ``returned`` (declined consent),
    ``timed_out`` (idle past ``Study.abandon_after_min``: unanswered trials released);
    ``export_status`` adds ``completed`` and ``excluded`` from the stage and exclusion flag."""

    class Kind(models.TextChoices):
        PERSON = "person", "person"
        MODEL = "model", "model"
        PREVIEW = "preview", "preview"

    class Status(models.TextChoices):
        IN_PROGRESS = "in_progress", "in progress"
        RETURNED = "returned", "returned"
        TIMED_OUT = "timed_out", "timed out"

    class Stage(models.TextChoices):
        INSTRUCTIONS = "instructions", "instructions"
        PRACTICE = "practice", "practice"
        TRIALS = "trials", "trials"
        DONE = "done", "done"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.PERSON)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    model = models.CharField(max_length=200, blank=True, help_text="A model participant's name in results.")
    conditions = models.ManyToManyField(Condition, related_name="participants")
    stage = models.CharField(max_length=20, choices=Stage.choices, default=Stage.INSTRUCTIONS)
    excluded = models.BooleanField(default=False)
    exclusion_reasons = models.JSONField(default=list, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    link = models.ForeignKey(StudyLink, null=True, blank=True, on_delete=models.SET_NULL, related_name="participants")
    pseudonym = models.CharField(max_length=64, blank=True, db_index=True)
    external_id = models.CharField(max_length=128, blank=True)
    panel_study_id = models.CharField(max_length=128, blank=True)
    panel_session_id = models.CharField(max_length=128, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.IN_PROGRESS)
    completion_code = models.CharField(max_length=32, blank=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    screened_at = models.DateTimeField(null=True, blank=True)
    last_active_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], name="study_participant_unique_user"),
            models.UniqueConstraint(
                fields=["study", "model"], name="study_participant_unique_model", condition=models.Q(kind="model")
            ),
            # The same panel id never enrols twice in a study, from any browser.
            models.UniqueConstraint(
                fields=["study", "pseudonym"],
                name="study_participant_unique_pseudonym",
                condition=~models.Q(pseudonym=""),
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(kind="person", user__isnull=False, model="", pseudonym="")
                    | models.Q(kind="person", user__isnull=True, model="") & ~models.Q(pseudonym="")
                    | models.Q(kind="preview", user__isnull=False, model="", pseudonym="")
                    | models.Q(kind="model", user__isnull=True, pseudonym="") & ~models.Q(model="")
                ),
                name="study_participant_kinds",
            ),
        ]

    @property
    def preview(self) -> bool:
        """An admin's or researcher's preview: never counted in scores, exports or quotas."""
        return self.kind == self.Kind.PREVIEW

    @property
    def export_status(self) -> str:
        """``returned`` or ``timed_out`` as stored; else ``excluded`` or ``completed`` once done
        (flagged by the exclusion rules or not); else ``in_progress``."""
        if self.status != self.Status.IN_PROGRESS:
            return self.status
        if self.stage == self.Stage.DONE:
            return "excluded" if self.excluded else "completed"
        return self.Status.IN_PROGRESS


class Trial(models.Model):
    """One item assigned to one participant, at ``position`` in their sequence, and their answer.

    Times: ``served_at`` (first sent to the page), ``shown_at`` (first reported visible by the page:
    every image decoded and in the viewport, or the first video playable) and ``answered_at`` are
    the server's. The server's response time is ``answered_at - shown_at``. ``client_rt_ms`` is the
    page's high-resolution time from visible to answer; the server refuses one longer than its own
    elapsed time plus ``STUDY_RT_SLACK_MS``. ``timed_out``: answered after the condition's limit
    plus ``STUDY_TIME_GRACE_MS`` (or never, the limit having passed), stored and scored wrong.
    ``response`` is the kind's stored form (an option index, element ids, ``{score, justification}``,
    a text); null for a trial that timed out unanswered. ``scores``: metric -> value, set by the
    scoring worker at ``scored_at``.
    """

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="trials")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="trials")
    position = models.PositiveIntegerField()
    practice = models.BooleanField(default=False)
    response = models.JSONField(null=True, blank=True)
    timed_out = models.BooleanField(default=False)
    client_rt_ms = models.FloatField(null=True, blank=True)
    served_at = models.DateTimeField(null=True, blank=True)
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    idempotency_key = models.CharField(max_length=100, blank=True)
    scores = models.JSONField(null=True, blank=True)
    scored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["participant", "-practice", "position"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "item"], name="study_trial_unique_item"),
            models.UniqueConstraint(fields=["participant", "practice", "position"], name="study_trial_unique_position"),
        ]
        indexes = [
            models.Index(fields=["participant", "answered_at"], name="study_trial_open"),
            # The scorers' claim (``services.score_pending``) reads answered, unscored rows in id order:
            # this index holds only those, so the claim does not scan a study's scored history.
            models.Index(
                fields=["id"],
                name="study_trial_unscored",
                condition=models.Q(scored_at__isnull=True, answered_at__isnull=False),
            ),
        ]


class Prediction(models.Model):
    """A model's prediction for an item (the kind's stored response form), imported from JSONL and
    scored like a trial."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="predictions")
    model = models.CharField(max_length=200)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="predictions")
    predicted = models.JSONField()
    scores = models.JSONField(null=True, blank=True)
    scored_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "item"], name="study_prediction_unique_model_item")]
        indexes = [
            models.Index(fields=["id"], name="study_prediction_unscored", condition=models.Q(scored_at__isnull=True))
        ]
