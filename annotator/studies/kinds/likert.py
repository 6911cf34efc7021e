"""Likert ratings, 1 to 5, of QA pairs or of records.

Two protocols from the source papers:

- **QA pairs with control groups** (VUDG, seed 004 Sec. 4.5 and Table 10): 5 independent evaluators
  rate sampled QA pairs for *relevance* and *correctness* on a 5-point scale (1 poor, 5 excellent).
  Beside the real pairs (``group="real"``, verified) the platform builds two control groups:
  ``random_matched`` (a question paired with another pair's answer) and ``filtered`` (pairs deleted
  in review). Scores are reported per group and criterion; a rater cannot tell the groups apart.
- **Records** (X-LeBench, seed 002 App. D): 3 independent evaluators rate each record (a video, or a
  group of videos shown together) for *realism* and *contextual consistency*, 1 to 5, with a brief
  written justification for any score below 3.

Each criterion is one condition (``variables = {"criterion": ...}``), so results come per criterion
and a participant rates every criterion (``conditions_per_participant`` defaults to the number of
criteria). Items of one thing share no key across criteria: the same rater may rate one QA pair's
relevance and its correctness, as in the papers.

Item ``payload``: ``criterion`` (name), ``scale`` (what 1 and 5 mean), ``question`` and ``answer``
(QA source) or ``description`` (records), ``layout`` and ``media`` (clips, ``_qa.render``), ``justify_below``
(a score below this needs a justification; 0: never), and for attention items ``instruction``.
``truth``: None (no right answer), or the instructed score of an attention item. ``group`` is on the
item row only, never in the payload.

Response (API): ``{"score": 1-5, "justification": str}`` (the justification at most
``JUSTIFICATION_MAX`` characters, required below ``justify_below``). Model predictions: a score,
1-5, as an integer.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from annotator.errors import Invalid
from annotator.studies.kinds import BuildReport, ScoreRow, _qa

# ``score``: the rating (1-5; None for a trial that timed out). ``instructed``: for attention items,
# 1.0 if the rating is the instructed one, else 0.0 (None for other items).
METRICS = ("score",)

# What the pages call this kind (what a participant reads first is ``instructions``), and the
# dashboard's bar charts: (metric, name, axis title with its unit, axis min, axis max).
TITLE = "Likert rating"
PLOTS = ()  # the dashboard draws Likert scores per criterion and group instead
PRIMARY = "instructed"
JUSTIFICATION_MAX = 2000


def instructions(f) -> str:
    """What a participant reads before the first item (Markdown), from the study's ``Facts``
    (``studies.instructions``): clips, the justification rule, keys, time limits, attention items."""
    from annotator.studies.instructions import practice_line, time_limit_line

    text = (
        "You will rate items on a scale from **1** (lowest) to **5** (highest), on the criterion named above "
        "each item.\n\n"
    )
    if f.clips:
        text += "- Play the clips as often as you like before you rate.\n"
    text += "- Press **1**-**5** or click to choose; **Enter** answers (**Shift+Enter** starts a new line while you write).\n"
    if f.justify_below > 1:
        text += f"- A score below **{f.justify_below}** needs a short written justification: the page says when.\n"
    elif f.justify_below == 0:
        text += "- You may add a short written justification to any score.\n"
    text += time_limit_line(f, "item")
    if f.attention:
        text += "- A few items check that you read carefully: they say which score to give.\n"
    return text + practice_line(f, "how you did", "item")


# The criteria and what their ends mean, in the papers' words.
CRITERIA = {
    "relevance": "How relevant is the answer to the question (and the question to the video)? 1 = poor, 5 = excellent.",
    "correctness": "How correct is the answer, given the video? 1 = poor, 5 = excellent.",
    "realism": "How well does the record match real-world daily activity, in time and content? "
    "1 = very unrealistic, 5 = highly realistic.",
    "contextual_consistency": "How logical and smooth is the flow between consecutive parts of the record? "
    "1 = very poor consistency, 5 = strong sequence.",
}

PRESETS = {
    # VUDG Sec. 4.5: relevance and correctness by 5 evaluators, with two control groups.
    "vudg-quality": {
        "source": "qa",
        "criteria": ["relevance", "correctness"],
        "per_type": 30,
        "control_groups": True,
        "raters_per_item": 5,
        "questions_per_participant": 40,
        "justify_below": 0,
        "attention_items": 1,
        "exclusion": {"max_attention_failures": 0},
    },
    # X-LeBench App. D: realism and contextual consistency of records by 3 evaluators, justified below 3.
    "xlebench-realism": {
        "source": "records",
        "criteria": ["realism", "contextual_consistency"],
        "per_type": 20,
        "raters_per_item": 3,
        "questions_per_participant": 20,
        "justify_below": 3,
        "attention_items": 1,
        "exclusion": {"max_attention_failures": 0},
    },
}
# Every criterion of a study is rated by each participant (the slice in ``services.enroll`` takes what exists).
DEFAULTS = {
    "source": "qa",
    "criteria": ["relevance", "correctness"],
    "control_groups": True,
    "justify_below": 0,
    "conditions_per_participant": len(CRITERIA),
}


def _criteria(options: dict) -> list[str]:
    criteria = options.get("criteria") or DEFAULTS["criteria"]
    if (
        not isinstance(criteria, list)
        or not criteria
        or len(set(criteria)) != len(criteria)
        or any(c not in CRITERIA for c in criteria)
    ):
        raise Invalid(f"criteria must be distinct names among {', '.join(CRITERIA)}", errors={"criteria": "unknown"})
    return criteria


def build(study, options: dict, progress: Callable[[str], None]) -> BuildReport:
    """One condition per criterion (``criteria``; the time limit of ``time_limits[0]`` for all,
    seconds, none by default), then items from the project's data by ``source``:

    - ``qa``: ``per_type`` verified QA pairs per QA type (seeded, ``_qa.sample_pairs``) as the
      ``real`` group; with ``control_groups`` as many ``random_matched`` items per QA type (a sampled
      question with the answer of another verified pair, drawn from the seed, never one with the
      same answer text) and up to as many ``filtered`` items (pairs deleted in review, seeded).
    - ``records``: up to ``per_type`` records, drawn from the seed: every video group (its videos
      shown together) and every real, ready video in no group; each shown whole, up to
      ``_qa.CLIP_MAX_S`` seconds per video, with its annotated description.

    Each thing is an item in every criterion. Then ``attention_items`` items that say which score
    to pick (in the first condition). Raises Invalid for a bad option; MediaError if ffmpeg fails.
    """
    from annotator.studies.models import Condition

    criteria = _criteria(options)
    source = options.get("source") or "qa"
    if source not in ("qa", "records"):
        raise Invalid("source must be qa or records", errors={"source": "unknown"})
    justify_below = options.get("justify_below", 0) or 0
    if isinstance(justify_below, bool) or not isinstance(justify_below, int) or not 0 <= justify_below <= 5:
        raise Invalid("justify_below must be a score from 0 (never) to 5", errors={"justify_below": "out of range"})
    limits = options.get("time_limits") or [None]
    limit = None if limits[0] in (None, 0) else float(limits[0])
    if limit is not None and not 1 <= limit <= 3600:
        raise Invalid("time limits must be between 1 and 3600 seconds", errors={"time_limits": "out of range"})
    conditions = [
        Condition.objects.create(
            study=study,
            number=n,
            label=name.replace("_", " "),
            time_limit_s=limit,
            variables={"criterion": name},
            baseline=n == 1,
        )
        for n, name in enumerate(criteria, start=1)
    ]
    report = BuildReport()
    common = {"justify_below": justify_below}
    things = (
        _qa_things(study, options, report, progress)
        if source == "qa"
        else _record_things(study, options, report, progress)
    )
    for cond in conditions:
        name = cond.variables["criterion"]
        for index, thing in enumerate(things):
            _item(cond, index, thing, {**thing["payload"], **common, "criterion": name, "scale": CRITERIA[name]})
        report.items[cond.number] = len(things)
        progress(f"  condition {cond.number} ({cond.label}): {len(things)} items")
    report.attention = _attention_items(study, conditions[0], len(things), options, common)
    return report


def _item(cond, index: int, thing: dict, payload: dict):
    from annotator.studies.models import Item

    return Item.objects.create(
        condition=cond,
        index=index,
        group=thing["group"],
        subtask=thing["subtask"],
        key=f"{thing['key']}:{cond.variables['criterion']}",
        qa_pair=thing.get("qa_pair"),
        footage_id=thing.get("footage_id"),
        payload=payload,
        truth=None,
    )


def _qa_things(study, options: dict, report: BuildReport, progress) -> list[dict]:
    """The real, random-matched and filtered QA things to rate (see ``build``)."""
    from annotator.qa.models import QAPair

    verified = _qa.qa_pool(study, QAPair.objects.filter(project=study.project, status=QAPair.Status.VERIFIED), options)
    sampled = _qa.sample_pairs(study, verified, options.get("per_type"))
    control = bool(options.get("control_groups", True))
    # (group, pair whose question and clip are shown, answer, id of the verified pair the answer is of)
    things: list[tuple[str, object, str, int | None]] = []
    for pairs in sampled.values():
        things += [("real", p, p.answer, p.pk) for p in pairs]
    if control:
        answers = list(verified.order_by("id").values_list("id", "answer"))
        deleted = _qa.qa_pool(
            study, QAPair.objects.filter(project=study.project, status=QAPair.Status.DELETED), options
        )
        # Every deleted pair, in a seeded order (recorded apart from the real sample's draw).
        deleted_by_type = _qa.sample_pairs(study, deleted, None, record="deleted_per_type")
        for slug, pairs in sampled.items():
            rng = random.Random(f"{study.seed}:random_matched:{slug}")
            for p in pairs:
                others = [(pk, a) for pk, a in answers if pk != p.pk and a.strip().lower() != p.answer.strip().lower()]
                if others:
                    of, answer = rng.choice(others)
                    things.append(("random_matched", p, answer, of))
            things += [("filtered", d, d.answer, None) for d in deleted_by_type.get(slug, [])[: len(pairs)]]
        study.sampling["controls"] = {g: sum(1 for t in things if t[0] == g) for g in ("random_matched", "filtered")}
    kept, shown = _qa.render(list({p.pk: p for _, p, _, _ in things}.values()), report, progress)
    kept_ids = {p.pk for p in kept}
    things = [t for t in things if t[1].pk in kept_ids]
    # Real and control things are interleaved in a seeded order so item indexes say nothing of the group.
    random.Random(f"{study.seed}:likert-order").shuffle(things)
    # Keyed by the pair, whatever the group: nobody rates one question (and clip) both with its own
    # answer and with a random-matched one, which would tell the two apart.
    return [
        {
            "group": group,
            "subtask": p.qa_type.slug,
            "key": f"qa:{p.pk}",
            "qa_pair": p,
            "footage_id": p.video.derived_from_id or p.video_id,
            "payload": {"question": p.question, "answer": answer, "answer_of": of, **shown[p.pk]},
        }
        for group, p, answer, of in things
    ]


def _record_things(study, options: dict, report: BuildReport, progress) -> list[dict]:
    """Records to rate: video groups and ungrouped real, ready videos (see ``build``)."""
    from annotator.media.models import Video, VideoGroup

    records: list[tuple[str, list]] = []
    grouped: set[int] = set()
    for group in VideoGroup.objects.filter(project=study.project).prefetch_related("members__video").order_by("id"):
        videos = [m.video for m in group.members.all() if m.video.status == Video.Status.READY]
        grouped |= {m.video_id for m in group.members.all()}
        if videos:
            records.append((f"group:{group.pk}", videos))
    for video in Video.objects.filter(
        project=study.project, status=Video.Status.READY, source=Video.Source.REAL, derived_from__isnull=True
    ).order_by("id"):
        if video.pk not in grouped:
            records.append((f"video:{video.pk}", [video]))
    per = options.get("per_type")
    available = len(records)
    if per and per < len(records):
        records = random.Random(f"{study.seed}:records").sample(records, per)
    study.sampling["records"] = {"available": available, "taken": len(records)}
    study.sampling["seed"] = study.seed
    ranges = {
        key: [(v, 0.0, round(min(v.duration_s or 0.0, _qa.CLIP_MAX_S), 3)) for v in videos] for key, videos in records
    }
    clips = _qa.cut_clips({r for rs in ranges.values() for r in rs}, report, progress)
    out = []
    for key, videos in records:
        description = " ".join(str((v.annotations or {}).get("description") or "").strip() for v in videos).strip()
        # Stored as a stimulus (``qa.stimulus.to_json``'s shape), so a model rated on the item
        # (``evaluate --study``) is shown the same videos under the same labels.
        media = [
            {
                "name": clips[(v.pk, a, b)],
                "label": f"Video {i}",
                "kind": "video",
                "video_id": v.pk,
                "start_s": a,
                "end_s": b,
                "offset_s": 0.0,
            }
            for i, (v, a, b) in enumerate(ranges[key], start=1)
        ]
        root = videos[0].derived_from_id or videos[0].pk
        out.append(
            {
                "group": "",
                "subtask": "record",
                "key": key,
                "footage_id": root,
                "payload": {
                    "description": description,
                    "media": media,
                    "layout": "single" if len(media) == 1 else "labelled",
                },
            }
        )
    return out


def _attention_items(study, condition, base: int, options: dict, common: dict) -> int:
    """``attention_items`` items (0-20) that tell the rater which score to pick, each with a seeded
    score; the truth is that score."""
    from annotator.studies.models import Item

    n = options.get("attention_items") or 0
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 20:
        raise Invalid("attention_items must be between 0 and 20", errors={"attention_items": "out of range"})
    rng = random.Random(f"{study.seed}:attention")
    name = condition.variables["criterion"]
    for j in range(n):
        pick = rng.randint(1, 5)
        Item.objects.create(
            condition=condition,
            index=base + j,
            role=Item.Role.ATTENTION,
            key=f"attention:{j}",
            truth=pick,
            payload={
                **common,
                "criterion": name,
                "scale": CRITERIA[name],
                "question": "",
                "answer": "",
                "media": [],
                "instruction": f"This item checks that you read carefully: give it the score {pick}."
                + (' Write "attention check" as the justification.' if pick < common["justify_below"] else ""),
            },
        )
    return n


# ------------------------------------------------------------------------------ taking part


def payload(trial) -> dict:
    """``criterion`` (its name, spaces for underscores), ``scale`` (what 1 and 5 mean),
    ``justify_below``, and what is rated: ``question`` and ``answer``, or ``description``, or an
    attention item's ``instruction``; ``videos`` (``[{"label", "url"}]``). Never the group."""
    p = trial.item.payload
    out = {
        "criterion": p["criterion"].replace("_", " "),
        "scale": p["scale"],
        "justify_below": p.get("justify_below", 0),
        "videos": _qa.media_payload(trial.item),
        "video_layout": _qa.video_layout(trial.item),
    }
    for k in ("question", "answer", "description", "instruction"):
        if p.get(k):
            out[k] = p[k]
    return out


def validate(trial, response) -> dict:
    """``response``: ``{"score": 1-5, "justification": str}``. Returns ``{"score", "justification"}``
    (trimmed). Raises Invalid for a score that is not an integer 1-5, a justification that is not a
    text of at most ``JUSTIFICATION_MAX`` characters, or a missing one below ``justify_below``."""
    if not isinstance(response, dict) or set(response) - {"score", "justification"}:
        raise Invalid('the answer must be {"score": 1-5, "justification": "..."}', errors={"response": "an object"})
    score = response.get("score")
    if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 5:
        raise Invalid("the score must be a whole number from 1 to 5", errors={"score": "1 to 5"})
    justification = response.get("justification", "")
    if justification is None:
        justification = ""
    if not isinstance(justification, str) or len(justification) > JUSTIFICATION_MAX:
        raise Invalid(
            f"the justification must be a text of at most {JUSTIFICATION_MAX} characters",
            errors={"justification": "too long"},
        )
    need = trial.item.payload.get("justify_below", 0)
    if score < need and not justification.strip():
        message = f"a score below {need} needs a short justification: say what is wrong"
        raise Invalid(message, errors={"justification": message})
    return {"score": score, "justification": justification.strip()}


def validate_prediction(item, predicted) -> int:
    """A model's score, an integer 1-5. Raises ValueError otherwise."""
    if isinstance(predicted, bool) or not isinstance(predicted, int) or not 1 <= predicted <= 5:
        raise ValueError('"predicted" must be a score, a whole number from 1 to 5')
    return predicted


def score(rows: list[ScoreRow]) -> list[dict]:
    """``score``: the rating (None if the trial timed out or has none); ``instructed``: for items
    with an instructed score (attention checks), 1.0 if it was given in time, else 0.0; None
    otherwise. Vectorised over the rows (a response is ``{"score", ...}`` or, for predictions, the
    score itself)."""
    if not rows:
        return []
    given = np.array(
        [
            np.nan
            if r.response is None or r.timed_out
            else float(r.response["score"] if isinstance(r.response, dict) else r.response)
            for r in rows
        ]
    )
    truth = np.array([np.nan if r.truth is None else float(r.truth) for r in rows])
    instructed = np.where(np.isnan(truth), np.nan, (given == truth).astype(float))
    return [
        {"score": None if np.isnan(g) else float(g), "instructed": None if np.isnan(i) else float(i)}
        for g, i in zip(given, instructed)
    ]


def feedback(trial) -> dict:
    """Likert items have no right answer: nothing to show after a practice rating."""
    return {}


def export(item) -> dict:
    """Researcher fields: ``criterion``, ``group`` (``real``, ``random_matched``, ``filtered``; empty
    for records and attention items), ``question``/``answer`` or ``description``, ``instructed_score``
    (attention items), ``qa_pair_id`` and ``media`` (storage names)."""
    p = item.payload
    return {
        "criterion": p["criterion"],
        "group": item.group,
        "question": p.get("question", ""),
        "answer": p.get("answer", ""),
        "description": p.get("description", ""),
        "instructed_score": item.truth,
        "qa_pair_id": item.qa_pair_id,
        "media": _qa.clip_names(p),
    }


def shows(item) -> list:
    """What a trial of ``item`` puts in front of the person (exposure ledger, issue 19): its clips,
    and the verified answer it shows: its own pair's (a real item) or another verified pair's (a
    random-matched item, ``payload["answer_of"]``; items built before it was recorded: their own
    pair's only if real). A filtered item shows a deleted pair's answer, no verified truth."""
    from annotator.exposure.ledger import ANSWER, Shown

    out = _qa.footage_shown(item.payload)
    of = item.payload.get("answer_of", item.qa_pair_id if item.group == "real" else None)
    if isinstance(of, int) and item.payload.get("answer"):
        out.append(Shown(ANSWER, qa_pair_id=of))
    return out


def needs(item):
    """A rating has no truth to give away."""
    from annotator.exposure.ledger import Needs

    return Needs()


def reveals(item) -> list:
    """Ratings give no feedback: nothing is revealed."""
    return []
