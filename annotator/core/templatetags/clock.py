"""``{{ seconds|hms }}`` and ``{{ start|span:end }}``: times within a video as ``h:mm:ss.f``
(``annotator.core.clock``), the format every page uses."""

from django import template

from annotator.core import clock

register = template.Library()


@register.filter
def hms(seconds) -> str:
    """``seconds`` (a number, or "" / None) as ``h:mm:ss.f``; "" for no value."""
    if seconds in (None, ""):
        return ""
    return clock.hms(float(seconds))


@register.filter
def span(start, end) -> str:
    """``start`` to ``end`` (seconds) as ``h:mm:ss.f – h:mm:ss.f``."""
    return clock.span(float(start), float(end))
