"""``{{ row_id|handle:"unit" }}``: a row id as an annotator's page names it (``core.handles``, issue 20)."""

from django import template

from annotator.core import handles

register = template.Library()


@register.filter
def handle(pk, kind: str) -> str:
    """The ``kind`` handle of ``pk`` ("" for no id)."""
    return handles.encode(kind, int(pk)) if pk else ""
