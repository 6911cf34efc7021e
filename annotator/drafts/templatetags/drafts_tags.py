"""The runs pages' words for a pipeline stage (issue 21: "the runs page shows stage names, not stage
keys"). The keys (``drafts.pipelines.stage_names``) stay in the API, the CLI and the page's ids."""

from django import template

register = template.Library()

STAGE_WORDS = {
    "llm": "Drafting (one model call per clip)",
    "caption": "Captioning the clip",
    "questions": "Writing questions",
    "answer": "Answering them",
    "vudg_open": "Open questions",
    "vudg_distractors": "Wrong options",
    "vudg_review": "Reviewing the drafts",
    "consistency_check": "Consistency check",
    "text_only": "Text-only check (answerable without the video?)",
    "judge": "Judging answers",
}


@register.filter
def stage_words(key: str) -> str:
    """The words for stage ``key``; the key itself for a stage without words (a new one)."""
    return STAGE_WORDS.get(key, key)
