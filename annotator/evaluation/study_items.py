"""Models on a study's items, with what the study's participants got (issue 18, part 2).

``start`` writes an evaluation of a study (``Evaluation.study``) with one prediction per scored item
(``Prediction.role = study``), run by the evaluation engine (``runs.execute``: threads, the cache,
cancelling, retries) like any other. Each item's input is made from what its page shows, from the
same builders:

- **ordering** (EGO-FLIGHT seed 003 Sec. 3, App. G): the item's frame files in the recorded shown
  order (``kinds.ordering.shown_elements``: the same shuffle for every person and model), text
  elements as numbered texts, pinned hints stated as the paper's hints, the condition's
  annotation as the scene context; the reply's order is mapped back to element ids;
- **multiple choice, open answers, Likert**: the item's stored stimulus (``qa.stimulus``: every
  view, labelled video or life-log segment, in order, under its label) sampled into frames as the
  project evaluation samples them (``runs.stimulus_input``), with the same shuffled options;
- **time-limited conditions**: each condition's frames (``frames_by_condition``, else ``n_frames``).

When the evaluation settles, its done predictions become the trials of a model participant
(``studies.services.record_model_answers``), so ``study_scores`` scores people and models with one
code path. An item the model could not answer (its reply unreadable after every attempt, or the
server failing) stays a failed prediction with its reason and has no trial.
"""

from __future__ import annotations

import json
import re

from django.core.files.storage import default_storage
from django.db import transaction

from annotator import jobs
from annotator.errors import Invalid
from annotator.evaluation import prompts, runs
from annotator.evaluation.models import FRAMES_MAX, FRAMES_MIN, Ablation, Evaluation, Prediction
from annotator.inference import engine
from annotator.qa import stimulus as stimuli
from annotator.studies import services as study_services
from annotator.studies.kinds import kind_module
from annotator.studies.models import Item, Study

KIND_OF = {
    "mcq": Prediction.Kind.MCQ,
    "open_answer": Prediction.Kind.OPEN,
    "likert": Prediction.Kind.RATING,
    "ordering": Prediction.Kind.ORDERING,
}
_FRAMES_SPEC = re.compile(r"\s*(\d{1,3})\s*=\s*(\d{1,3})\s*")


def column(model: str, ablation: str) -> str:
    """A model's column name in results: its name, with the ablation in words (``gpt-4o (text
    only)``)."""
    return f"{model} ({Ablation(ablation).label})" if ablation else model


def parse_frames(spec: str | int | None, study: Study) -> tuple[int | None, dict[str, int]]:
    """``--frames`` of a study evaluation: ``N`` (every condition) or ``C=N[,C=N...]`` (frames per
    condition number C). Returns (frames for all, or None; condition number as text -> frames).
    Raises Invalid for frames outside 1-64 or a condition the study does not have."""
    if spec is None or spec == "":
        return None, {}
    if isinstance(spec, int) and not isinstance(spec, bool):
        spec = str(spec)
    if not isinstance(spec, str) or len(spec) > 2000:
        raise Invalid("frames is a number, or condition=frames pairs such as 1=4,2=8", errors={"frames": "unreadable"})
    numbers = set(study.conditions.values_list("number", flat=True))
    if spec.strip().isdigit():
        n = int(spec)
        if not FRAMES_MIN <= n <= FRAMES_MAX:
            raise Invalid(
                f"frames must be a whole number from {FRAMES_MIN} to {FRAMES_MAX}", errors={"frames": "out of bounds"}
            )
        return n, {}
    out: dict[str, int] = {}
    for part in spec.split(","):
        m = _FRAMES_SPEC.fullmatch(part)
        if not m:
            raise Invalid(
                f"frames: {part.strip()!r} is not condition=frames (e.g. 1=4)", errors={"frames": "unreadable"}
            )
        cond, n = int(m[1]), int(m[2])
        if cond not in numbers:
            raise Invalid(
                f"study {study.name} has no condition {cond} (it has {', '.join(map(str, sorted(numbers)))})",
                errors={"frames": "unknown condition"},
            )
        if not FRAMES_MIN <= n <= FRAMES_MAX:
            raise Invalid(
                f"frames must be a whole number from {FRAMES_MIN} to {FRAMES_MAX}", errors={"frames": "out of bounds"}
            )
        out[str(cond)] = n
    return None, out


def _snapshot(item: Item, kind: str) -> dict:
    """What the prediction keeps of its item (the evaluation's results do not change if items do)."""
    p = item.payload
    video = item.footage
    return {
        "question": str(p.get("question") or p.get("description") or p.get("annotation") or "")[:20000],
        "truth": item.truth if isinstance(item.truth, str) else json.dumps(item.truth),
        "options": p.get("options"),
        "answer_index": item.truth if kind == "mcq" else None,
        "illumination": (video.illumination if video else "") or "unknown",
        "source": (video.source if video else "") or "unknown",
    }


def start(
    study: Study,
    *,
    server: str,
    model: str = "",
    n_frames: int = 8,
    frames: str | int | None = None,
    judge_server: str = "",
    rubric: str = "egonight",
    ablation: str = "",
    use_cache: bool = True,
    user=None,
) -> Evaluation:
    """Start evaluating ``model`` (default: the server's) on ``server`` over ``study``'s scored
    items, condition by condition, with what its participants got (see the module docstring).
    ``frames`` (``parse_frames``) overrides ``n_frames`` overall or per condition; ``ablation`` is
    one of ``Ablation``. The model's answers become the trials of the model participant named
    ``column(model, ablation)`` when the evaluation settles (a second run of the same column
    replaces its answers). Raises Invalid naming what to fix: a study not ready, a kind without
    model input, an unknown server, frames out of bounds, an unknown ablation."""
    if study.status != Study.Status.READY:
        raise Invalid(
            f"study {study.name} is {study.status}; only a built study can be evaluated", errors={"study": "not ready"}
        )
    if study.kind not in KIND_OF:
        raise Invalid(f"{study.kind} studies cannot be given to a model", errors={"study": "kind"})
    if ablation not in Ablation.values:
        raise Invalid(
            f"ablation must be one of {', '.join(v for v in Ablation.values if v)}", errors={"ablation": "unknown"}
        )
    everywhere, per_condition = parse_frames(frames, study)
    n_frames = everywhere or n_frames
    project = study.project
    runs.check(
        project, server=server, model=model, n_frames=n_frames, qa_type="", judge_server=judge_server, rubric=rubric
    )
    evaluated = runs.server_of(project, server, "server")
    judge = runs.server_of(project, judge_server, "judge_server") if judge_server else evaluated
    endpoint = {**evaluated.snapshot(), "model": model or evaluated.model}
    items = list(
        Item.objects.filter(condition__study=study, role=Item.Role.SCORED)
        .select_related("condition", "footage")
        .order_by("condition__number", "index")
    )
    if not items:
        raise Invalid(f"study {study.name} has no scored items", errors={"study": "no items"})
    with transaction.atomic():
        participant = study_services.model_participant(study, column(endpoint["model"], ablation))
        evaluation = Evaluation.objects.create(
            project=project,
            study=study,
            participant=participant,
            server=evaluated,
            judge_server=judge,
            model=endpoint["model"],
            judge_model=judge.model,
            endpoint=endpoint,
            judge_endpoint=judge.snapshot(),
            n_frames=n_frames,
            frames_by_condition=per_condition,
            ablation=ablation,
            rubric=rubric,
            use_cache=use_cache,
            prompt_version=_prompt_version(rubric),
            created_by=user,
        )
        Prediction.objects.bulk_create(
            [
                Prediction(
                    evaluation=evaluation,
                    study_item=item,
                    qa_pair_id=item.qa_pair_id,
                    video=item.footage,
                    role=Prediction.Role.STUDY,
                    kind=KIND_OF[study.kind],
                    qa_type=item.subtask,
                    provenance="",
                    clip_start_s=0.0,
                    clip_end_s=0.0,
                    **_snapshot(item, study.kind),
                )
                for item in items
            ],
            batch_size=2000,
        )
        jobs.enqueue("evaluation.run", evaluation.pk)
    return evaluation


def _prompt_version(rubric: str) -> str:
    return (
        f"{prompts.prompt_version(rubric)}, order:{prompts.PREDICT_ORDER_VERSION}, "
        f"rating:{prompts.PREDICT_RATING_VERSION}"
    )[:100]


def frames_for(evaluation: Evaluation, item: Item) -> int:
    """Frames the model gets for ``item``: its condition's (``frames_by_condition``), else the
    evaluation's ``n_frames`` (the ``one_frame`` ablation is applied where the input is made,
    ``runs.stimulus_input``, as for every evaluation)."""
    return int(evaluation.frames_by_condition.get(str(item.condition.number), evaluation.n_frames))


def ask(evaluation: Evaluation, p: Prediction) -> tuple[engine.Stage, engine.StageInput]:
    """The stage and input of study item prediction ``p`` (see the module docstring). Raises
    Invalid when the item cannot be shown (its video gone, a frame file missing)."""
    item = Item.objects.select_related("condition__study").get(pk=p.study_item_id)
    kind = item.condition.study.kind
    record = {"evaluation": evaluation.pk, "prediction": p.pk, "study_item": item.pk}
    if kind == "ordering":
        return _ask_order(evaluation, item, record)
    stim = stimuli.from_json(item.payload)
    payload = item.payload
    if kind == "likert":
        text = prompts.ask_rating(
            criterion=payload.get("criterion", ""),
            scale=payload.get("scale", ""),
            question=payload.get("question", ""),
            answer=payload.get("answer", ""),
            description=payload.get("description", ""),
        )
        stage = prompts.PREDICT_RATING
    else:
        text, stage = None, None
    inp = runs.stimulus_input(evaluation, p, stim, n_frames=frames_for(evaluation, item), text=text, record=record)
    if stage is None:
        stage = prompts.PREDICT if stim.layout == "single" else prompts.PREDICT_VIDEOS
    return stage, inp


def _ask_order(evaluation: Evaluation, item: Item, record: dict) -> tuple[engine.Stage, engine.StageInput]:
    from annotator.studies.kinds.ordering import shown_elements

    elements = shown_elements(item)
    frames = [e for e in elements if e["kind"] == "frame"]
    texts = None if frames else [e["text"] for e in elements]
    hints = (
        {}
        if evaluation.ablation == Ablation.NO_HINTS
        else {i: e["pinned_position"] for i, e in enumerate(elements, start=1) if e["pinned_position"]}
    )
    text = prompts.ask_order(n=len(elements), texts=texts, context=item.payload.get("annotation", ""), hints=hints)
    names = [e["image"] for e in frames]
    if any(not n for n in names):
        raise Invalid("a frame of this item has no stored image")

    def load() -> list[bytes]:
        out = []
        for name in names:
            with default_storage.open(name, "rb") as f:
                out.append(f.read())
        return out

    send = bool(names) and evaluation.ablation != Ablation.TEXT_ONLY
    return prompts.PREDICT_ORDER, engine.StageInput(
        text=text,
        image_key=("frames:" + "|".join(names)) if send else "",
        images=load if send else None,
        context={"n": len(elements)},
        record={**record, "shown": [e["id"] for e in elements]},
    )


def read(p: Prediction, item: Item, kind: str) -> object:
    """The model's reply to ``item`` in the study kind's stored form (``validate_prediction``), or
    None when it cannot be read. Sets ``p.choice_index``/``choice_letter``/``correct`` for multiple
    choice."""
    from annotator.evaluation.metrics import extract_choice, letter

    module = kind_module(kind)
    try:
        if kind == "mcq":
            index = extract_choice(p.prediction, p.options or [])
            p.choice_index, p.choice_letter = index, (letter(index) if index is not None else "")
            p.correct = index is not None and index == item.truth
            return None if index is None else module.validate_prediction(item, index)
        if kind == "ordering":
            numbers = prompts.read_order(p.prediction, len(item.payload["shown"]))
            return (
                None
                if numbers is None
                else module.validate_prediction(item, [item.payload["shown"][i - 1] for i in numbers])
            )
        if kind == "likert":
            score = prompts.read_rating(p.prediction)
            return None if score is None else module.validate_prediction(item, score)
        text = (p.prediction or "").strip()[:4000]
        return module.validate_prediction(item, text) if text else None
    except ValueError:
        return None


def record(evaluation: Evaluation) -> int:
    """Store the done predictions of a study evaluation as its model participant's trials (the
    ``response`` each holds; an unreadable reply is stored as no answer). Returns how many."""
    if evaluation.study_id is None or evaluation.participant_id is None:
        return 0
    answers = dict(
        evaluation.predictions.filter(status=Prediction.Status.DONE, study_item__isnull=False).values_list(
            "study_item_id", "response"
        )
    )
    if not answers:
        return 0
    return study_services.record_model_answers(evaluation.participant, answers)


# The evaluation engine asks, reads and records study items through this source (``runs.ItemSource``);
# registered when the app is ready (``EvaluationConfig.ready``).
runs.register_source(
    Prediction.Role.STUDY,
    runs.ItemSource(ask=ask, read=lambda p: read(p, p.study_item, p.study_item.condition.study.kind), record=record),
)
