"""``{{ seconds|hms }}`` and ``{{ start|span:end }}``: times within a video as ``h:mm:ss.f``
(``annotator.core.clock``), the format every page uses."""

from django import template

from annotator.core import clock

register = template.Library()


def _seconds(value) -> float | None:
    """A template value as seconds: None for no value (None or "")."""
    return None if value in (None, "") else float(value)


@register.filter
def hms(seconds) -> str:
    """``seconds`` (a number, or "" / None) as ``h:mm:ss.f``; "" for no value."""
    value = _seconds(seconds)
    return "" if value is None else clock.hms(value)


@register.filter
def span(start, end) -> str:
    """``start`` to ``end`` (seconds) as ``h:mm:ss.f – h:mm:ss.f`` (no value reads as 0, as ``clock.span``)."""
    return clock.span(_seconds(start), _seconds(end))
