"""The exposure ledger (issue 19): every range of footage and every QA answer a person was served.

One append-only table (a database trigger refuses UPDATE and DELETE, whoever asks). A row says
that ``person`` was shown something, once, from a queue unit or a study trial (``source``,
``ref``): footage of a video over a range (``footage``: a playable clip or video, which gives away
the order of events in it), stills of it (``frames``), a QA pair with its answer (``answer``), a QA
pair's question with the answer among options (``options``), or its question alone (``question``).
Rows outlive the skip, lapse, release or withdrawal of what showed them, so what a person saw is
never forgotten. Videos are stored as their source footage (a night rendition's ``derived_from``).
"""

from django.db import models


class Exposure(models.Model):
    """One thing shown to one person. ``person`` is ``user:<id>`` for an account and
    ``anon:<pseudonym>`` for an anonymous panel participant (``ledger.person_key``). ``start_s`` and
    ``end_s`` are seconds of the video ``video_id`` (both null: the whole video). Ids are plain ids,
    not foreign keys: the ledger keeps its rows whatever becomes of the project, video or pair."""

    class Kind(models.TextChoices):
        FOOTAGE = "footage", "footage played"
        FRAMES = "frames", "frames shown"
        ANSWER = "answer", "QA answer shown"
        OPTIONS = "options", "QA options shown"
        QUESTION = "question", "QA question shown"

    class Source(models.TextChoices):
        QUEUE = "queue", "verification queue"
        STUDY = "study", "study trial"
        REVIEW = "review", "review page"

    person = models.CharField(max_length=80)
    project_id = models.BigIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    video_id = models.BigIntegerField(null=True, blank=True)
    start_s = models.FloatField(null=True, blank=True)
    end_s = models.FloatField(null=True, blank=True)
    qa_pair_id = models.BigIntegerField(null=True, blank=True)
    source = models.CharField(max_length=10, choices=Source.choices)
    ref = models.CharField(max_length=40, help_text="What showed it: unit:<id> or trial:<id>.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["project_id", "person"], name="exposure_person")]

    def __str__(self) -> str:
        return f"{self.person} {self.kind} {self.ref}"


class Refusal(models.Model):
    """An item the ledger kept from a person: at enrolment (never assigned) or when it was about to
    be served (its trial withdrawn unserved), with the reason in words (``ledger.REASONS``)."""

    class When(models.TextChoices):
        ENROLMENT = "enrolment", "at enrolment"
        SERVE = "serve", "when served"

    person = models.CharField(max_length=80)
    project_id = models.BigIntegerField()
    study_id = models.BigIntegerField()
    item_id = models.BigIntegerField()
    reason = models.CharField(max_length=40)
    when = models.CharField(max_length=10, choices=When.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["project_id", "study_id"], name="refusal_study")]
