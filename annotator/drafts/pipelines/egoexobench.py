"""EgoExoBench quality assurance over a project's draft QA pairs (seed 001 Sec. 3.2 "Quality
Assurance and Filtering" and App. A.4), one job per video that has QA pairs in draft status.

Every check reads text only (the paper prompts a text LLM, Qwen2.5-32B): no frames are sampled
and no request carries an image. Per draft QA pair of the video, in this order:

1. **Consistency check** (stage ``consistency_check``, Sec. 3.2 (1) "Consistency Verification"):
   the model reads the pair (question, lettered options and the keyed answer, or the open answer)
   beside the video's source annotations (``Video.annotations``: description, objects, actions with
   their times, counts) and labels it ``consistent`` or ``inconsistent`` with a reason, listing in
   ``also_correct`` any other option that is also right ("admit multiple plausible answers"). An
   inconsistent pair becomes a model flag (served first in the review queue, with the reason) and
   skips the checks below: new distractors or a text-only verdict around a wrong key mean nothing.
   A video without annotations skips this check (counted as ``no_annotations``).
2. **Hard-negative distractors** (multiple choice only; App. A.2 "Action Relation" ranks candidates
   with SentenceTransformer, App. A.4 "Action Prediction" has a model confirm the distractors do not
   include the correct answer): candidates are the correct answers of the project's other QA pairs
   (not deleted) of the same QA type whose videos share this video's scenario (``Video.domain``;
   a blank domain is no scenario, so its pairs keep their options, counted as ``no_scenario``),
   at most ``MAX_CANDIDATES`` distinct answers per QA type, the most recent first. They are ranked
   by the cosine similarity of their all-MiniLM-L6-v2 embeddings (``scoring.agreement.load_encoder``)
   to the correct answer; candidates at or above ``near_identical`` (default ``NEAR_IDENTICAL`` =
   0.90) to the answer are paraphrases of it ("a red bike" is 0.94 to "a red bicycle", "a blue
   bicycle" 0.65) and never used, nor one that close to a distractor already chosen. The top
   ``len(options) - 1`` replace the distractors (the count is kept) and the options are shuffled
   uniformly from a recorded seed. Then the distractor check (stage ``consistency_check`` with its
   own prompt, ``DISTRACTOR_CHECK``: the same schema, so one server and one place for a model's
   verdict on an item, but a prompt about the distractors alone) lists the options that are also
   correct; those candidates are rejected and the next ones take their place, for at most
   ``MAX_ROUNDS`` checks. A set that passes is written as a model revision of the pair
   (``qa.services.set_options_by_model``, with the seed, similarities and rejected candidates);
   when candidates run out the drafted options are kept and the pair is flagged. Fewer candidates
   than distractors from the start leaves the pair as it is (``hard_negatives_too_few``).
3. **Text-only check** (stage ``text_only``, multiple choice only; Sec. 3.2 (2) "Vision-Grounded
   Filtering" with the prompt of Fig. 11, and App. A.4 "remove any QA pairs that can be answered
   correctly using text alone"): the model answers the question from its options alone, ``k``
   times, the options reshuffled each time (``text_only_shuffles``: seeded, every order distinct,
   the correct option in a new position each time until all positions were used, so a model that
   favours one letter cannot be right every time). Its letter is mapped back to the original
   option. A pair answered right every time is "answerable without the video": flagged
   (``text_only=flag``, the default) or dropped (``text_only=drop``, the paper's "discard";
   ``qa.services.drop_by_model``, no longer served). A pair with fewer distinct orders than ``k``
   (2 options have 2) is asked once per order: asking the same prompt again would only repeat
   (and, from the cache, copy) the answer.

Writes: nothing until every check of the video has its answer; then flags, new options and drops
land in the job's save transaction (``Result.commit``), all or nothing. A pair a person decided,
or that changed, since it was read fails the video with Conflict (nothing written); resuming the
run checks the rest again, paying only for new prompts (the cache). A rerun over unchanged pairs
makes no request and writes nothing new.

Parameters (``--param KEY=VALUE``): ``consistency`` (bool, default true), ``hard_negatives`` (bool,
default true), ``text_only`` (``flag`` | ``drop`` | ``off``, default ``flag``), ``k`` (text-only
tries, 1-10, default 3), ``near_identical`` (cosine in (0, 1], default 0.90), ``qa_type`` (only
pairs of this type), ``cache`` (bool). At least one check must be on.

Summary per video (``DraftJob.summary``): counts ``checked``, ``inconsistent``,
``text_only_flagged``, ``dropped``, ``hard_negatives_set``, ``hard_negatives_failed`` (flagged),
``hard_negatives_too_few``, ``no_annotations``, ``no_scenario``; and ``pairs``: per QA pair id its
outcomes: ``consistency`` {label, reason, also_correct}, ``hard_negatives`` {status, seed, rounds,
distractors [{text, similarity}], rejected}, ``text_only`` {tries [{seed, order, letter, picked,
correct}], right, of, outcome}. ``order`` lists the original option indices in the order shown.
"""

from __future__ import annotations

import hashlib
import math
import random
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from django.db.models import Max

from annotator.drafts.models import DraftJob
from annotator.drafts.pipelines.base import JobContext, PipelineDef, Result, register, require
from annotator.drafts.templates import shuffled_options
from annotator.errors import Conflict
from annotator.inference import engine
from annotator.media.models import Video
from annotator.qa import services as qa_services
from annotator.qa.models import QAPair, QAType

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # option letters; items with more options skip the option checks
NEAR_IDENTICAL = 0.90  # cosine at or above which a candidate is a paraphrase (of the answer or a distractor)
MAX_CANDIDATES = 2000  # distinct candidate answers per QA type and scenario, the most recent first
MAX_ROUNDS = 5  # distractor checks per pair before it is flagged
MAX_K = 10
POLICIES = ("flag", "drop", "off")


def _obj(**props) -> dict:
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


def _check_verdict(out: dict, ctx: dict) -> None:
    """Rules of a consistency verdict beyond its schema. ``ctx``: ``n_options`` (0 for an open
    item), ``answer_index`` (the keyed option) and ``distractors`` (the distractor-check prompt)."""
    n, keyed = ctx.get("n_options", 0), ctx.get("answer_index")
    others = [x for x in out["also_correct"] if keyed is None or x != LETTERS[keyed]]  # the key itself is no news
    if any(x not in LETTERS[:n] for x in others):
        raise engine.MalformedModelOutput(
            f"also_correct may only name options A to {LETTERS[n - 1]}"
            if n
            else "an open-ended item has no options to name"
        )
    if out["label"] == "consistent" and others:
        raise engine.MalformedModelOutput("a consistent item has no other correct option; label it inconsistent")
    if out["label"] == "inconsistent" and not out["reason"].strip():
        raise engine.MalformedModelOutput("an inconsistent item needs a reason")
    if ctx.get("distractors") and out["label"] == "inconsistent" and not others:
        raise engine.MalformedModelOutput("name the distractors that are also correct in also_correct")


def _check_letter(out: dict, ctx: dict) -> None:
    if out["answer"] not in LETTERS[: ctx["n_options"]]:
        raise engine.MalformedModelOutput(f"answer must be one of the letters A to {LETTERS[ctx['n_options'] - 1]}")


VERDICT_SCHEMA = _obj(
    label={"type": "string", "enum": ["consistent", "inconsistent"]},
    reason={"type": "string"},
    also_correct={"type": "array", "items": {"type": "string", "enum": list(LETTERS)}},
)

CONSISTENCY = engine.register(
    engine.Stage(
        name="consistency_check",
        prompt_version="egoexo-consistency-v1",
        system=(
            "You verify question-answer pairs of a video benchmark against the video's original annotations. "
            "Label the pair inconsistent if the question is ambiguous, if the keyed answer contradicts or is not "
            "supported by the annotations, or if it admits more than one plausible answer; otherwise consistent. "
            "Give a short reason. For a multiple-choice item, list in also_correct the letters of the other options "
            "that are also correct (an empty list if none). Reply in JSON."
        ),
        schema=VERDICT_SCHEMA,
        check=_check_verdict,
    )
)
# A prompt variant of the same stage (not registered: the stage's name is the consistency check's).
DISTRACTOR_CHECK = engine.Stage(
    name="consistency_check",
    prompt_version="egoexo-distractors-v1",
    system=(
        "You check the distractors (wrong options) of a multiple-choice item of a video benchmark against the "
        "video's original annotations. A distractor must be clearly wrong: list in also_correct the letters of "
        "the distractors that are also correct or could plausibly be, and label the item inconsistent if there "
        "are any, consistent if none. Give a short reason. Reply in JSON."
    ),
    schema=VERDICT_SCHEMA,
    check=_check_verdict,
)
TEXT_ONLY = engine.register(
    engine.Stage(
        name="text_only",
        prompt_version="egoexo-text-only-v1",
        # EgoExoBench Fig. 11, the prompt of the text-only filter.
        system=(
            "Carefully read the question and all the options, and based on the information provided, select and "
            "provide the most likely correct answer. Reply in JSON with the letter of the option."
        ),
        schema=_obj(answer={"type": "string", "enum": list(LETTERS)}),
        check=_check_letter,
    )
)


# ----------------------------------------------------------------------------- pure helpers


def seed_of(*parts) -> int:
    """A 32-bit seed from ``parts`` (stable across processes, unlike ``hash``)."""
    return int(hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def text_only_shuffles(n_options: int, answer_index: int, k: int, base: str) -> list[tuple[int, list[int]]]:
    """The orders of the text-only tries: ``min(k, n_options!)`` pairs (seed, order), where
    ``order[j]`` is the original index of the option shown at position j.

    Try i draws permutations from ``random.Random(seed_of(base, i))`` until one is new and puts the
    correct option in a position not yet used in this round of ``n_options`` tries. Such a
    permutation always exists because tries <= n! (round c has used each position c times, and
    c < (n-1)!), so the loop ends; the same arguments give the same orders.
    """
    tries = min(k, math.factorial(n_options))
    seen: set[tuple[int, ...]] = set()
    out: list[tuple[int, list[int]]] = []
    for i in range(tries):
        seed = seed_of(base, i)
        rng = random.Random(seed)
        used = {o.index(answer_index) for o in (order for _, order in out[i - i % n_options : i])}
        while True:
            order = rng.sample(range(n_options), n_options)
            if tuple(order) not in seen and order.index(answer_index) not in used:
                break
        seen.add(tuple(order))
        out.append((seed, order))
    return out


def lettered(options: list[str]) -> str:
    return "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(options))


def annotations_text(annotations: dict) -> str:
    """The video's source annotations as plain lines (times in seconds); malformed entries are
    left out. '' when there is nothing to check against."""
    if not isinstance(annotations, dict):
        return ""
    lines = []
    description = annotations.get("description")
    if isinstance(description, str) and description.strip():
        lines.append(f"Description: {description.strip()}")
    objects = [o.strip() for o in annotations.get("objects") or [] if isinstance(o, str) and o.strip()]
    if objects:
        lines.append(f"Objects: {', '.join(objects)}")
    actions = [a for a in annotations.get("actions") or [] if isinstance(a, dict) and str(a.get("label") or "").strip()]
    if actions:
        lines.append("Actions:")
        for a in actions:
            start, end = a.get("start_s"), a.get("end_s")
            when = (
                f"{start:.1f}-{end:.1f} s: "
                if isinstance(start, (int, float)) and isinstance(end, (int, float))
                else ""
            )
            lines.append(f"- {when}{str(a['label']).strip()}")
    counts = [
        c
        for c in annotations.get("counts") or []
        if isinstance(c, dict) and str(c.get("what") or "").strip() and isinstance(c.get("count"), int)
    ]
    if counts:
        lines.append("Counts:")
        for c in counts:
            at = c.get("at_s")
            where = f" at {at:.1f} s" if isinstance(at, (int, float)) else " in the whole video"
            lines.append(f"- {c['count']} {str(c['what']).strip()}{where}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Candidate:
    """A hard-negative candidate: its text, cosine similarity to the correct answer, unit vector."""

    text: str
    similarity: float
    vector: np.ndarray = field(repr=False, compare=False)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def rank_candidates(correct: str, pool: list[str], encode, near_identical: float = NEAR_IDENTICAL) -> list[Candidate]:
    """``pool``'s texts that may replace a distractor of an item answered ``correct``, most similar
    first (ties by text). Texts equal to the answer (case and spaces ignored) or with cosine >=
    ``near_identical`` to it are left out; duplicates count once. ``encode(texts)`` returns unit
    vectors, one row per text."""
    texts = list(dict.fromkeys(t.strip() for t in pool if t.strip() and _norm(t) != _norm(correct)))
    if not texts:
        return []
    vectors = encode([correct, *texts])
    sims = vectors[1:] @ vectors[0]
    ranked = [Candidate(t, float(s), v) for t, s, v in zip(texts, sims, vectors[1:]) if s < near_identical]
    return sorted(ranked, key=lambda c: (-c.similarity, c.text))


def pick_distractors(
    ranked: list[Candidate], n: int, rejected: set[str], near_identical: float = NEAR_IDENTICAL
) -> list[Candidate]:
    """The first ``n`` of ``ranked`` not ``rejected`` and not a paraphrase (cosine >=
    ``near_identical``) of one already picked, so the options differ clearly; fewer when they run out."""
    chosen: list[Candidate] = []
    for c in ranked:
        if c.text in rejected or any(float(c.vector @ d.vector) >= near_identical for d in chosen):
            continue
        chosen.append(c)
        if len(chosen) == n:
            break
    return chosen


MAX_CACHED_VECTORS = 20_000  # per process, least recently used out (384 float32 each: about 30 MB)
_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
_encode_lock = threading.Lock()


def encode(texts: list[str]) -> np.ndarray:
    """Unit sentence embeddings (all-MiniLM-L6-v2 on the CPU), one row per text. Vectors are kept
    per process (``MAX_CACHED_VECTORS``), so the jobs of one scenario encode its candidates once;
    one encode at a time, as a run's threads share the model."""
    from annotator.scoring.agreement import load_encoder

    with _encode_lock:
        missing = list(dict.fromkeys(t for t in texts if t not in _vectors))
        if missing:
            new = load_encoder().encode(
                missing, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
            for text, vector in zip(missing, np.asarray(new, dtype=np.float32)):
                _vectors[text] = vector / max(float(np.linalg.norm(vector)), 1e-12)
        for text in texts:
            _vectors.move_to_end(text)
        out = np.stack([_vectors[t] for t in texts]).astype(np.float64)
        while len(_vectors) > MAX_CACHED_VECTORS:
            _vectors.popitem(last=False)
    return out


# ----------------------------------------------------------------------------- the pipeline


@dataclass
class _Change:
    """What the checks decided for one pair, written in the job's transaction."""

    pair_id: int
    version: int
    options: tuple[list[str], int, dict] | None = None  # (options, answer_index, note)
    flags: list[str] = field(default_factory=list)
    drop: str = ""


def _actor(ctx: JobContext) -> str:
    models = "+".join(sorted({e.model for e in ctx.endpoints.values()})) or "no-model"
    return f"{ctx.run.pipeline}/{models}/run-{ctx.run.pk}"[:200]


def _item_text(pair: QAPair, options: list[str] | None, answer_index: int | None, annotations: str) -> str:
    head = (
        f"Source annotations of the video:\n{annotations or '(none)'}\n\n"
        f"QA type: {pair.qa_type.name}. Clip: {pair.clip_start_s:.1f} s to {pair.clip_end_s:.1f} s of the video.\n"
        f"Question: {pair.question}\n"
    )
    if options is None:
        return head + f"Answer: {pair.answer}"
    return head + f"Options:\n{lettered(options)}\nKeyed answer: {LETTERS[answer_index]}"


class _Pool:
    """Hard-negative candidates of one video's scenario, per QA type, read and encoded once a job."""

    def __init__(self, project_id: int, domain: str):
        self.project_id, self.domain = project_id, domain
        self._texts: dict[int, list[str]] = {}

    def texts(self, qa_type_id: int) -> list[str]:
        if qa_type_id not in self._texts:
            rows = (
                QAPair.objects.filter(project_id=self.project_id, qa_type_id=qa_type_id, video__domain=self.domain)
                .exclude(status=QAPair.Status.DELETED)
                .values("answer")
                .annotate(last=Max("id"))
                .order_by("-last")[:MAX_CANDIDATES]
            )
            self._texts[qa_type_id] = [r["answer"] for r in rows]
        return self._texts[qa_type_id]


class EgoExoBenchChecks(PipelineDef):
    name = "egoexobench_checks"
    label = "EgoExoBench checks (consistency, text-only, hard negatives)"
    position = 50
    stages = ("consistency_check", "text_only")

    def clean_params(self, project, params: dict) -> dict:
        consistency = params.get("consistency", True)
        hard = params.get("hard_negatives", True)
        policy = params.get("text_only", "flag")
        k = params.get("k", 3)
        near = params.get("near_identical", NEAR_IDENTICAL)
        require(isinstance(consistency, bool), "consistency must be true or false")
        require(isinstance(hard, bool), "hard_negatives must be true or false")
        require(policy in POLICIES, "text_only must be flag, drop or off")
        require(
            isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= MAX_K,
            f"k must be a whole number from 1 to {MAX_K}",
        )
        require(
            isinstance(near, (int, float)) and not isinstance(near, bool) and 0 < near <= 1,
            "near_identical must be a number above 0 and at most 1",
        )
        require(
            consistency or hard or policy != "off",
            "every check is off: turn on consistency, hard_negatives or text_only",
        )
        wanted = params.get("qa_type", "")
        if wanted:
            require(
                QAType.objects.filter(project=project, slug=wanted).exists(),
                f"project {project.slug} has no QA type {wanted!r}",
                "qa_type",
            )
        return {
            **params,
            "consistency": consistency,
            "hard_negatives": hard,
            "text_only": policy,
            "k": k,
            "near_identical": float(near),
        }

    def _drafts(self, run):
        # Real units' drafts only: a gold, qualification or tutorial copy keeps the drafts it was made with.
        qs = QAPair.objects.filter(project=run.project, status=QAPair.Status.DRAFT, unit__purpose="real")
        if run.params.get("qa_type"):
            qs = qs.filter(qa_type__slug=run.params["qa_type"])
        return qs

    def select(self, run):
        with_drafts = set(self._drafts(run).values_list("video_id", flat=True).distinct())
        videos = list(Video.objects.filter(pk__in=with_drafts).order_by("id"))
        others = Video.objects.filter(project=run.project).exclude(pk__in=with_drafts).count()
        return videos, ({"no QA pairs in draft": others} if others else {})

    def work(self, ctx: JobContext) -> Result:
        p, video = ctx.params, ctx.video
        pairs = list(self._drafts(ctx.run).filter(video=video).select_related("qa_type").order_by("id"))
        annotations = annotations_text(video.annotations or {})
        summary = {
            "checked": 0,
            "inconsistent": 0,
            "text_only_flagged": 0,
            "dropped": 0,
            "hard_negatives_set": 0,
            "hard_negatives_failed": 0,
            "hard_negatives_too_few": 0,
            "no_annotations": 0,
            "no_scenario": 0,
        }
        if p["consistency"] and not annotations:
            summary["no_annotations"] = 1
        if p["hard_negatives"] and not video.domain.strip():
            summary["no_scenario"] = 1
        pool = _Pool(ctx.run.project_id, video.domain) if video.domain.strip() else None
        outcomes: dict[str, dict] = {}
        changes: list[_Change] = []
        for pair in pairs:
            summary["checked"] += 1
            change, outcome = _Change(pair.pk, pair.version), {}
            options, index = pair.options, pair.answer_index
            multiple_choice = options is not None and 2 <= len(options) <= len(LETTERS)
            inconsistent = False
            if p["consistency"] and annotations:
                verdict = self._consistency(ctx, pair, options, index, annotations)
                outcome["consistency"] = verdict
                if verdict["label"] == "inconsistent":
                    inconsistent = True
                    also = "".join(
                        f" (also correct: {x}. {options[LETTERS.index(x)]})" for x in verdict["also_correct"]
                    )
                    change.flags.append(f"inconsistent with the source annotations: {verdict['reason']}{also}")
                    summary["inconsistent"] += 1
            if multiple_choice and not inconsistent and p["hard_negatives"] and pool is not None:
                hard = self._hard_negatives(ctx, pair, pool, annotations)
                outcome["hard_negatives"] = {k: v for k, v in hard.items() if k != "options"}
                if hard["status"] == "set":
                    options, index = hard["options"]
                    change.options = (options, index, {"hard_negatives": outcome["hard_negatives"]})
                    summary["hard_negatives_set"] += 1
                elif hard["status"] == "failed":
                    rejected = ", ".join(f"'{t}'" for t in hard["rejected"])
                    change.flags.append(
                        f"hard-negative distractors: every candidate set had an option that is also "
                        f"correct (rejected {rejected}); the drafted options were kept"
                    )
                    summary["hard_negatives_failed"] += 1
                elif hard["status"] == "too_few":
                    summary["hard_negatives_too_few"] += 1
            if multiple_choice and not inconsistent and p["text_only"] != "off":
                result = self._text_only(ctx, pair, options, index, p["k"])
                outcome["text_only"] = result
                if result["right"] == result["of"]:
                    reason = (
                        f"answerable without the video: a model chose the right option in {result['of']} of "
                        f"{result['of']} text-only tries, the options reshuffled each time"
                    )
                    if p["text_only"] == "drop":
                        change.drop, result["outcome"] = reason, "dropped"
                        summary["dropped"] += 1
                    else:
                        change.flags.append(reason)
                        result["outcome"] = "flagged"
                        summary["text_only_flagged"] += 1
            outcomes[str(pair.pk)] = outcome
            if change.options or change.flags or change.drop:
                changes.append(change)
        summary["pairs"] = outcomes
        actor = _actor(ctx)
        return Result(summary=summary, commit=lambda job: self._commit(job, changes, actor))

    # ------------------------------------------------------------------ the checks

    def _consistency(self, ctx, pair, options, index, annotations) -> dict:
        out = ctx.call(
            "consistency_check",
            engine.StageInput(
                text=_item_text(pair, options, index, annotations) + "\nIs this pair consistent with the annotations?",
                context={"n_options": len(options) if options else 0, "answer_index": index},
                record={"qa_pair": pair.pk, "check": "consistency"},
            ),
        )
        keyed = LETTERS[index] if options else None
        also = sorted({x for x in out["also_correct"] if x != keyed})
        return {"label": out["label"], "reason": out["reason"].strip(), "also_correct": also}

    def _hard_negatives(self, ctx, pair, pool: _Pool, annotations: str) -> dict:
        """Replace the distractors by the nearest candidates that pass the distractor check.
        Returns {status: set | unchanged | failed | too_few, seed, rounds, distractors, rejected,
        options: (options, answer_index) when set}."""
        correct, n = pair.options[pair.answer_index], len(pair.options) - 1
        near = ctx.params["near_identical"]
        ranked = rank_candidates(correct, pool.texts(pair.qa_type_id), encode, near)
        rejected: list[str] = []
        for round_ in range(MAX_ROUNDS):
            chosen = pick_distractors(ranked, n, set(rejected), near)
            if len(chosen) < n:
                return {
                    "status": "failed" if rejected else "too_few",
                    "seed": None,
                    "rounds": round_,
                    "distractors": [],
                    "rejected": rejected,
                }
            seed = seed_of("hard-negatives", pair.pk, round_)
            options, index = shuffled_options(correct, [c.text for c in chosen], seed)
            out = _call_variant(
                ctx,
                DISTRACTOR_CHECK,
                engine.StageInput(
                    text=(
                        _item_text(pair, options, index, annotations)
                        + f"\nDistractors to check: {', '.join(LETTERS[i] for i in range(len(options)) if i != index)}"
                    ),
                    context={"n_options": len(options), "answer_index": index, "distractors": True},
                    record={"qa_pair": pair.pk, "check": "distractors", "seed": seed},
                ),
            )
            bad = [options[LETTERS.index(x)] for x in sorted(set(out["also_correct"])) if x != LETTERS[index]]
            if not bad:
                same = options == pair.options
                return {
                    "status": "unchanged" if same else "set",
                    "seed": seed,
                    "rounds": round_ + 1,
                    "distractors": [{"text": c.text, "similarity": round(c.similarity, 4)} for c in chosen],
                    "rejected": rejected,
                    "options": (options, index),
                }
            rejected += bad
        return {"status": "failed", "seed": None, "rounds": MAX_ROUNDS, "distractors": [], "rejected": rejected}

    def _text_only(self, ctx, pair, options, index, k) -> dict:
        tries = []
        for seed, order in text_only_shuffles(len(options), index, k, f"text-only:{pair.pk}"):
            shown = [options[i] for i in order]
            out = ctx.call(
                "text_only",
                engine.StageInput(
                    text=f"Question: {pair.question}\nOptions:\n{lettered(shown)}\nThe answer is:",
                    context={"n_options": len(shown)},
                    record={"qa_pair": pair.pk, "seed": seed, "order": order},
                ),
            )
            picked = order[LETTERS.index(out["answer"])]
            tries.append(
                {"seed": seed, "order": order, "letter": out["answer"], "picked": picked, "correct": picked == index}
            )
        right = sum(t["correct"] for t in tries)
        return {"tries": tries, "right": right, "of": len(tries), "outcome": "kept"}

    # ------------------------------------------------------------------ writing

    @staticmethod
    def _commit(job: DraftJob, changes: list[_Change], actor: str) -> None:
        """Write every pair's change, or none: runs inside the job's save transaction."""
        current = {p.pk: p for p in QAPair.objects.select_for_update().filter(pk__in=[c.pair_id for c in changes])}
        stale = [
            c
            for c in changes
            if c.pair_id not in current
            or current[c.pair_id].version != c.version
            or current[c.pair_id].status != QAPair.Status.DRAFT
        ]
        if stale:
            raise Conflict(
                f"QA pair {', '.join(str(c.pair_id) for c in stale)} changed since the checks read "
                f"{'it' if len(stale) == 1 else 'them'}; nothing of this video was written: resume the run "
                f"to check again"
            )
        for c in changes:
            version = c.version
            if c.options is not None:
                options, index, note = c.options
                version = qa_services.set_options_by_model(
                    c.pair_id, source=actor, version=version, options=options, answer_index=index, note=note
                ).version
            if c.drop:
                qa_services.drop_by_model(c.pair_id, source=actor, version=version, reason=c.drop)
            elif c.flags:
                reason = "; ".join(c.flags)
                if current[c.pair_id].flag_reason != reason:  # a rerun with the same verdicts writes nothing
                    qa_services.flag_qa_pair(c.pair_id, reason=reason, source=actor)


def _call_variant(ctx: JobContext, stage: engine.Stage, inp: engine.StageInput) -> dict:
    """``ctx.call`` for a prompt variant of a stage: the stage's server, cache and cancellation."""
    if ctx.job.stage != stage.name:
        ctx.job.stage = stage.name
        DraftJob.objects.filter(pk=ctx.job.pk).update(stage=stage.name)
    return engine.call_stage(
        stage,
        ctx.endpoints[stage.name],
        inp,
        project_id=ctx.run.project_id,
        job=ctx.job,
        use_cache=ctx.params.get("cache", True),
        cancelled=ctx.cancelled,
    )


register(EgoExoBenchChecks())
