"""A small world for the report, written as rows (no video files needed): two videos (day/real/easy/
kitchen and night/synthetic/hard/sports), four QA pairs, a timed multiple-choice study with a 60 s
and a 180 s condition, three people (one excluded), a model participant, an imported prediction and
a finished evaluation on the same QA pairs.

Scored answers (accuracy), by QA pair (q1, q2 day; q3, q4 night; q1, q3 of type "obj", q2, q4 "count"):

    respondent       condition  q1  q2  q3  q4
    human p0         60 s       1   1   0   -
    human p1         180 s      1   0   -   0
    human p2         60 s       0   -   1   -
    (p-excl, excluded)   60 s       0   0   0   0   left out
    (p0 practice trial)  60 s       on q4, 0         left out
    model "mp"       60 s       1   1   1   1   (model participant)
    model "imp"      60 s       0   0   1   1   (imported study predictions)
    evaluation "ev"  -          1   0   0   1   (done; a failed prediction on q4's night role left out)
"""

from __future__ import annotations

import hashlib
import itertools

import pytest
from django.utils import timezone

from annotator.evaluation.models import Evaluation
from annotator.evaluation.models import Prediction as EvalPrediction
from annotator.media.models import Video
from annotator.projects.services import ensure_member
from annotator.qa.models import QAPair, WorkUnit
from annotator.qa.services import ensure_qa_type
from annotator.studies.models import Condition, Item, Participant, Prediction, Study, Trial

TABLE = {  # respondent -> (condition number, {qa index: accuracy})
    "p0": (1, {1: 1, 2: 1, 3: 0}),
    "p1": (2, {1: 1, 2: 0, 4: 0}),
    "p2": (1, {1: 0, 3: 1}),
}


@pytest.fixture
def world(project):
    now = timezone.now()
    counter = itertools.count()

    def video(**kw):
        i = next(counter)
        return Video.objects.create(
            project=project,
            sha256=hashlib.sha256(f"rep-{i}".encode()).hexdigest(),
            filename=f"v{i}.mp4",
            status=Video.Status.READY,
            duration_s=60.0,
            **kw,
        )

    day = video(illumination="day", source="real", difficulty="easy", domain="kitchen", scenario="cooking")
    night = video(illumination="night", source="synthetic", difficulty="hard", domain="sports", scenario="=cmd()")
    obj, count = ensure_qa_type(project, "obj"), ensure_qa_type(project, "count")
    pairs = {}
    for i, (v, t) in enumerate([(day, obj), (day, count), (night, obj), (night, count)], start=1):
        unit = WorkUnit.objects.create(project=project, video=v, start_s=0, end_s=60)
        pairs[i] = QAPair.objects.create(
            project=project,
            unit=unit,
            video=v,
            qa_type=t,
            origin="machine",
            question=f"q{i}?",
            answer="a",
            options=["a", "b"],
            answer_index=0,
            clip_start_s=0,
            clip_end_s=5 if i < 3 else 30,
            status="verified",
            provenance="machine_kept",
        )
    study = Study.objects.create(project=project, name="timed", kind="mcq")
    conds = {
        1: Condition.objects.create(study=study, number=1, label="quick", time_limit_s=60),
        2: Condition.objects.create(study=study, number=2, label="deliberate", time_limit_s=180),
    }
    items = {
        (c, i): Item.objects.create(
            condition=conds[c],
            index=i,
            subtask=pairs[i].qa_type.slug,
            qa_pair=pairs[i],
            key=f"qa{i}",
            payload={},
            truth=0,
        )
        for c in (1, 2)
        for i in pairs
    }
    practice_item = Item.objects.create(
        condition=conds[1], index=99, role=Item.Role.PRACTICE, qa_pair=pairs[4], subtask="count", payload={}, truth=0
    )

    def trial(participant, item, value, pos, practice=False):
        Trial.objects.create(
            participant=participant,
            item=item,
            position=pos,
            practice=practice,
            response=0,
            answered_at=now,
            scores={"accuracy": float(value)},
            scored_at=now,
        )

    for name, (c, answers) in TABLE.items():
        user = ensure_member(name, role="annotator", project=project, password=f"pw-{name}-123")[0]
        p = Participant.objects.create(study=study, user=user)
        for pos, (i, v) in enumerate(answers.items()):
            trial(p, items[(c, i)], v, pos)
        if name == "p0":
            trial(p, practice_item, 0, 0, practice=True)
    excl = Participant.objects.create(
        study=study,
        user=ensure_member("pex", role="annotator", project=project, password="pw-pex-123")[0],
        excluded=True,
    )
    for pos, i in enumerate(pairs):
        trial(excl, items[(1, i)], 0, pos)
    model = Participant.objects.create(study=study, kind=Participant.Kind.MODEL, model="mp")
    for pos, i in enumerate(pairs):
        trial(model, items[(1, i)], 1, pos)
    for i, v in {1: 0, 2: 0, 3: 1, 4: 1}.items():
        Prediction.objects.create(
            study=study, model="imp", item=items[(1, i)], predicted=0, scores={"accuracy": float(v)}, scored_at=now
        )
    ev = Evaluation.objects.create(
        project=project,
        model="ev",
        judge_model="j",
        endpoint={},
        judge_endpoint={},
        prompt_version="v1",
        status=Evaluation.Status.DONE,
    )
    for i, v in {1: 1, 2: 0, 3: 0, 4: 1}.items():
        p = pairs[i]
        EvalPrediction.objects.create(
            evaluation=ev,
            qa_pair=p,
            video=p.video,
            kind="mcq",
            qa_type=p.qa_type.slug,
            illumination=p.video.illumination,
            source=p.video.source,
            provenance=p.provenance,
            question=p.question,
            truth="a",
            clip_start_s=p.clip_start_s,
            clip_end_s=p.clip_end_s,
            status="done",
            correct=bool(v),
        )
    EvalPrediction.objects.create(
        evaluation=ev,
        qa_pair=pairs[4],
        video=night,
        role="night",
        kind="mcq",
        qa_type="count",
        illumination="night",
        source="synthetic",
        question="q4?",
        truth="a",
        clip_start_s=0,
        clip_end_s=30,
        status="failed",
    )
    return {"study": study, "evaluation": ev, "pairs": pairs, "videos": (day, night)}
