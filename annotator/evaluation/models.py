"""Model evaluation on a project's verified QA, and people re-judging the LLM judge.

An *evaluation* runs one model (on one of the project's model servers) over the verified QA pairs:
one *prediction* per pair and video it is asked of (a pair of a day-night unit is asked of the day
clip and of the night clip, so day and night can be compared). Multiple choice is scored exactly
from the option letter the answer names; an open answer is scored by an LLM judge (EgoNight, seed
000 App. A.5.1: ``pred`` correct/incorrect, ``score`` 0-5, ``reason``; or VUDG, seed 004 Sec. 3.4:
accuracy 0-5 and relevance 0-5). A prediction keeps a snapshot of what it was asked (question,
truth, options, QA type, illumination, source, provenance), so an evaluation's results do not
change when the QA pairs are edited later.

A *re-judge sample* is a seeded random sample of an evaluation's judged open answers; people mark
each judge label right or wrong (EgoNight re-judged 300 and reports 95.67% agreement).
"""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotator.inference.models import ModelCall, ModelServer
from annotator.media.models import Video
from annotator.projects.models import Project
from annotator.qa.models import QAPair

FRAMES_MIN, FRAMES_MAX, FRAMES_DEFAULT = 1, 64, 8


class Ablation(models.TextChoices):
    """Input ablations, each recorded on its evaluation and shown as its own column (issue 18):
    EgoExoBench's text-only check (seed 001 Sec. 3.2), VUDG's static-bias check (seed 004: one
    frame; frames in a shuffled order) and EGO-FLIGHT's hint study (seed 003 Sec. 3.4)."""

    NONE = "", "none"
    TEXT_ONLY = "text_only", "text only (no frames)"
    ONE_FRAME = "one_frame", "one frame per video"
    SHUFFLED_FRAMES = "shuffled_frames", "frames in a shuffled order"
    NO_HINTS = "no_hints", "ordering hints not stated"


class Rubric(models.TextChoices):
    # EgoNight seed 000 App. A.5.1; VUDG seed 004 Sec. 3.4 (the references stay here, not in the words people read).
    EGONIGHT = "egonight", "EgoNight: correct/incorrect and a score 0-5"
    VUDG = "vudg", "VUDG: accuracy 0-5 and relevance 0-5"


class Evaluation(models.Model):
    """One model evaluated on a project's verified QA pairs (optionally of one QA type).

    ``endpoint`` and ``judge_endpoint`` are the server snapshots called (``ModelServer.snapshot``,
    with ``model`` the model evaluated or the judge's), kept as they were at the start.
    ``n_frames`` frames are sampled evenly over each clip (1 to 64).
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "done, some items failed"
        CANCELLED = "cancelled", "cancelled"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="evaluations")
    server = models.ForeignKey(ModelServer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    judge_server = models.ForeignKey(ModelServer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    model = models.CharField(max_length=200, help_text="The model evaluated.")
    judge_model = models.CharField(max_length=200)
    endpoint = models.JSONField(help_text="Snapshot of the evaluated model's server.")
    judge_endpoint = models.JSONField(help_text="Snapshot of the judge's server.")
    n_frames = models.PositiveSmallIntegerField(
        default=FRAMES_DEFAULT, validators=[MinValueValidator(FRAMES_MIN), MaxValueValidator(FRAMES_MAX)]
    )
    qa_type = models.CharField(max_length=64, blank=True, help_text="Only this QA type ('' for all).")
    study = models.ForeignKey(
        "studies.Study",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Evaluated on this study's scored items, with what its participants got.",
    )
    participant = models.ForeignKey(
        "studies.Participant",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The model participant its study answers are stored as.",
    )
    frames_by_condition = models.JSONField(
        default=dict, blank=True, help_text="Study evaluations: frames per condition number (else n_frames)."
    )
    ablation = models.CharField(max_length=20, choices=Ablation.choices, blank=True, default="")
    rubric = models.CharField(max_length=10, choices=Rubric.choices, default=Rubric.EGONIGHT)
    prompt_version = models.CharField(max_length=100)
    use_cache = models.BooleanField(default=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(n_frames__gte=FRAMES_MIN, n_frames__lte=FRAMES_MAX),
                name="evaluation_frames_in_bounds",
            )
        ]

    def __str__(self) -> str:
        return f"evaluation {self.pk} of {self.model}"

    @property
    def score_max(self) -> int:
        """The judge score's top: 5 (EgoNight) or 10 (VUDG, accuracy + relevance)."""
        return 10 if self.rubric == Rubric.VUDG else 5


class Prediction(models.Model):
    """A model's answer to one QA pair on one video (``role``: ``single``, or ``day`` / ``night`` of
    a day-night unit), and its score.

    Multiple choice (``kind=mcq``): ``choice_letter``/``choice_index`` as extracted from the answer
    ('' / null when none could be), ``correct`` when it is the truth's index (an unparseable answer is
    wrong). Open (``kind=open``): the judge's ``judge_pred``, ``judge_score`` (EgoNight 0-5; VUDG
    accuracy + relevance, 0-10), ``judge_accuracy``/``judge_relevance`` (VUDG) and ``judge_reason``.
    Interval (``kind=interval``, a temporal-localisation item of a life log, X-LeBench seed 002
    App. C.1; ``role=life_log``): ``truth_start_s``/``truth_end_s`` the true interval, ``intervals``
    the ones read from the answer (``annotator.scoring.localisation.parse_intervals``, best first, at
    most 5), ``tious`` each one's tIoU with the truth, ``correct`` whether one of them reaches tIoU
    0.3 (the paper's recall@5); an answer naming no interval is wrong, with the reason in
    ``judge_reason``. Times of interval items (clip, truth, intervals) are virtual seconds of the log.
    Clip times are seconds of this prediction's video; ``frame_times`` the seconds sampled.
    Multi-video items (EgoExoBench seed 001): ``role=ego_exo`` is a pair of an ego-exo set asked once
    of every view (``video`` the ego one, clip in ego time), ``role=videos`` a pair whose
    ``QAPair.videos`` are labelled videos ("Video 1", ...; ``video`` the pair's own); their
    ``frame_times`` are every video's sampled seconds (each in that video's own time) in the order
    sent, video after video, the same number per video (``runs.frames_per_video``).
    ``call_ids`` are every ModelCall of this item (attempts and cache hits); ``cost_usd`` their sum.
    """

    class Kind(models.TextChoices):
        MCQ = "mcq", "multiple choice"
        OPEN = "open", "open-ended"
        INTERVAL = "interval", "a time interval (temporal localisation)"
        ORDERING = "ordering", "an order of frames or texts (a study item)"
        RATING = "rating", "a rating 1-5 (a study item)"

    class Role(models.TextChoices):
        SINGLE = "single", "single video"
        DAY = "day", "day video of a pair"
        NIGHT = "night", "night video of a pair"
        LIFE_LOG = "life_log", "a life log, in virtual time"
        EGO_EXO = "ego_exo", "every view of an ego-exo set"
        VIDEOS = "videos", "the labelled videos of an item"
        STUDY = "study", "a study item, as its participants got it"

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="predictions")
    study_item = models.ForeignKey("studies.Item", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    response = models.JSONField(
        null=True, blank=True, help_text="Study items: the answer in the study kind's stored form (None: unreadable)."
    )
    qa_pair = models.ForeignKey(QAPair, null=True, on_delete=models.SET_NULL, related_name="+")
    video = models.ForeignKey(Video, null=True, on_delete=models.SET_NULL, related_name="+")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.SINGLE)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # What was asked, as it was at the start (the breakdown's dimensions included).
    qa_type = models.CharField(max_length=64)
    illumination = models.CharField(max_length=20, help_text="day, night, other or unknown.")
    source = models.CharField(max_length=20)
    provenance = models.CharField(max_length=20, blank=True)
    question = models.TextField()
    truth = models.TextField()
    options = models.JSONField(null=True, blank=True)
    answer_index = models.IntegerField(null=True, blank=True)
    clip_start_s = models.FloatField()
    clip_end_s = models.FloatField()
    frame_times = models.JSONField(default=list, blank=True)
    truth_start_s = models.FloatField(null=True, blank=True, help_text="Interval items: the true start, seconds.")
    truth_end_s = models.FloatField(null=True, blank=True, help_text="Interval items: the true end, seconds.")
    intervals = models.JSONField(
        default=list, blank=True, help_text="Interval items: [[start, end], ...] read from the answer, best first."
    )
    tious = models.JSONField(default=list, blank=True, help_text="Interval items: each interval's tIoU with the truth.")
    # The work.
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=20, blank=True, help_text="The stage running now, or the one that failed.")
    attempts = models.IntegerField(default=0)
    error = models.TextField(blank=True)
    # The answer and its score.
    prediction = models.TextField(blank=True)
    choice_letter = models.CharField(max_length=2, blank=True)
    choice_index = models.IntegerField(null=True, blank=True)
    correct = models.BooleanField(null=True, blank=True)
    judge_pred = models.CharField(max_length=10, blank=True)
    judge_score = models.SmallIntegerField(null=True, blank=True)
    judge_accuracy = models.SmallIntegerField(null=True, blank=True)
    judge_relevance = models.SmallIntegerField(null=True, blank=True)
    judge_reason = models.TextField(blank=True)
    judge_output = models.JSONField(null=True, blank=True)
    predict_call = models.ForeignKey(ModelCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    judge_call = models.ForeignKey(ModelCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    call_ids = models.JSONField(default=list, blank=True)
    cost_usd = models.FloatField(default=0.0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["evaluation", "status"], name="prediction_eval_status")]
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation", "qa_pair", "role"],
                name="prediction_unique_item",
                condition=models.Q(study_item__isnull=True),
            ),
            models.UniqueConstraint(
                fields=["evaluation", "study_item"],
                name="prediction_unique_study_item",
                condition=models.Q(study_item__isnull=False),
            ),
        ]


class RejudgeSample(models.Model):
    """A seeded random sample of an evaluation's judged open answers, to be re-judged by people.

    ``size`` is what was asked for, ``n_items`` what the evaluation had to give (at most ``size``);
    ``seed`` makes the draw reproducible. ``rating_set`` names the agreement engine's rating set
    (``ratings:<name>``) that receives the judge's and the people's labels.
    """

    evaluation = models.OneToOneField(Evaluation, on_delete=models.CASCADE, related_name="rejudge")
    size = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    n_items = models.PositiveIntegerField()
    rating_set = models.SlugField(max_length=100)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)


class RejudgeItem(models.Model):
    """One sampled judged answer. ``judge_label`` is the judge's correct/incorrect as sampled;
    ``verdict`` the person's: ``right`` (``human_label`` = the judge's) or ``wrong`` (the other label).
    While a person looks at it, ``claimed_by`` holds it until ``claimed_until``."""

    class Verdict(models.TextChoices):
        NONE = "", "not yet"
        RIGHT = "right", "the judge is right"
        WRONG = "wrong", "the judge is wrong"

    sample = models.ForeignKey(RejudgeSample, on_delete=models.CASCADE, related_name="items")
    prediction = models.ForeignKey(Prediction, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    judge_label = models.CharField(max_length=10)
    verdict = models.CharField(max_length=10, choices=Verdict.choices, blank=True, default="")
    human_label = models.CharField(max_length=10, blank=True)
    judged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    judged_at = models.DateTimeField(null=True, blank=True)
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    claimed_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["sample", "position"]
        indexes = [models.Index(fields=["sample", "position"], condition=models.Q(verdict=""), name="rejudge_open")]
        constraints = [
            models.UniqueConstraint(fields=["sample", "position"], name="rejudge_unique_position"),
            models.UniqueConstraint(fields=["sample", "prediction"], name="rejudge_unique_prediction"),
        ]
