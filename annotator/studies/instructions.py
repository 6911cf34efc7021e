"""What a participant reads before a study's first item: the study's own text, or one made from its
settings (issue 21: instructions per study, not per kind).

The made text says what this study does, never what its kind does in general: practice items only
when the participant gets some, clips only when some item plays one, time limits as the study's
conditions set them. Each kind writes its own text from the facts (``kinds.<kind>.instructions``);
this module reads the facts once. Researchers and admins may replace the text per study
(``set_text``, the study's instructions page); an empty text goes back to the made one. No paper
or preset is named: a participant reads plain words.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotator.errors import Invalid
from annotator.studies.kinds import kind_module

TEXT_MAX = 100_000  # characters of a study's own instructions (annotator.core.validators.MARKDOWN_MAX)


@dataclass(frozen=True)
class Facts:
    """What a study gives a participant, read from its rows.

    ``practice``: practice items each participant gets first (0: none). ``clips``: some item a
    participant may get plays a clip (or a life log). ``frames``/``texts``: ordering items of frames,
    of short texts. ``pinned``: some ordering condition pins hints in place. ``limits_s``: the
    distinct time limits of the conditions, seconds, ascending. ``untimed``: some condition has no
    limit. ``attention``: the study has items that say what to answer. ``justify_below``: a Likert
    score below this needs a written justification (0: never)."""

    practice: int = 0
    clips: bool = False
    frames: bool = False
    texts: bool = False
    pinned: bool = False
    limits_s: tuple[float, ...] = ()
    untimed: bool = True
    attention: bool = False
    justify_below: int = 0


def facts(study) -> Facts:
    """The ``Facts`` of ``study``, in three queries (conditions, item roles, items with media)."""
    from annotator.studies.models import Condition, Item

    conditions = list(Condition.objects.filter(study=study).values("time_limit_s", "variables"))
    items = Item.objects.filter(condition__study=study)
    roles = set(items.values_list("role", flat=True).distinct())
    practice = (
        min(study.practice_items, items.filter(role=Item.Role.PRACTICE).count()) if Item.Role.PRACTICE in roles else 0
    )
    kinds = {(c["variables"] or {}).get("item_kind") for c in conditions}
    justify = items.values_list("payload__justify_below", flat=True).first() if study.kind == "likert" else 0
    return Facts(
        practice=practice,
        clips=items.filter(payload__has_key="media").exclude(payload__media=[]).exists(),
        frames="frames" in kinds,
        texts="texts" in kinds,
        pinned=any((c["variables"] or {}).get("hints") for c in conditions),
        limits_s=tuple(sorted({c["time_limit_s"] for c in conditions if c["time_limit_s"]})),
        untimed=not conditions or any(not c["time_limit_s"] for c in conditions),
        attention=Item.Role.ATTENTION in roles,
        justify_below=justify if isinstance(justify, int) else 0,
    )


def made(study) -> str:
    """The Markdown made from the study's settings by its kind (``kinds.<kind>.instructions``)."""
    return kind_module(study.kind).instructions(facts(study))


def text(study) -> str:
    """What the participant reads (Markdown): the study's own instructions, else ``made``."""
    return study.instructions.strip() or made(study)


def set_text(study, markdown: str) -> None:
    """Keep ``markdown`` as the study's own instructions (an empty or blank text: use the made
    one again). Raises Invalid for a text longer than ``TEXT_MAX`` characters or not a string."""
    if not isinstance(markdown, str) or len(markdown) > TEXT_MAX:
        raise Invalid(
            f"instructions are a text of at most {TEXT_MAX:,} characters", errors={"instructions": "too long"}
        )
    study.instructions = markdown.strip()
    study.save(update_fields=["instructions"])


def duration(seconds: float) -> str:
    """A time limit in words: ``45 seconds``, ``1 minute``, ``3 minutes``, ``1 min 30 s``."""
    s = round(seconds)
    if s < 60:
        return f"{s} second{'s' if s != 1 else ''}"
    m, rest = divmod(s, 60)
    if rest:
        return f"{m} min {rest} s"
    return f"{m} minute{'s' if m != 1 else ''}"


def time_limit_line(f: Facts, what: str = "question") -> str:
    """A Markdown bullet on the study's time limits, or '' for a study without any. ``what``: the
    word for one item ("question", "item")."""
    if not f.limits_s:
        return ""
    limits = " or ".join(duration(s) for s in f.limits_s)
    ends = "When it ends, the page moves on and the {w} counts as not answered.".format(w=what)
    if f.untimed:
        return f"- Some {what}s have a **time limit** of {limits}: a countdown shows the time left. {ends}\n"
    if len(f.limits_s) == 1:
        return f"- You have **{limits}** for each {what}: a countdown shows the time left. {ends}\n"
    return f"- You have **{limits}** for each {what}, depending on the part of the study: a countdown shows the time left. {ends}\n"


def practice_line(f: Facts, shown: str, what: str = "question") -> str:
    """A Markdown bullet on the practice items (``shown``: what the feedback shows), or one saying
    that every item counts."""
    if f.practice == 1:
        return f"- The first {what} is practice: afterwards you see {shown}. It does not count.\n"
    if f.practice > 1:
        return f"- The first {f.practice} {what}s are practice: afterwards you see {shown}. They do not count.\n"
    return f"- There is no practice: every {what} counts.\n"
