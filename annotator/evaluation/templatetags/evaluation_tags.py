"""Template filters of the evaluation pages: shares as percentages and 95% intervals in brackets."""

from django import template

register = template.Library()


@register.filter
def pct(value, digits: int = 1) -> str:
    """0.9 -> "90.0%"; None -> "–"."""
    if value is None or value == "":
        return "–"
    return f"{100 * float(value):.{int(digits)}f}%"


@register.filter
def ci_pct(ci, digits: int = 1) -> str:
    """[0.59, 0.98] -> "[59.6%, 98.2%]"; None -> ""."""
    if not ci or ci[0] is None:
        return ""
    return f"[{pct(ci[0], digits)}, {pct(ci[1], digits)}]"


@register.filter
def num(value, digits: int = 2) -> str:
    """3.456 -> "3.46"; None -> "–"."""
    if value is None or value == "":
        return "–"
    return f"{float(value):.{int(digits)}f}"


@register.filter
def ci_num(ci, digits: int = 2) -> str:
    """[2.1, 3.9] -> "[2.10, 3.90]"; None -> ""."""
    if not ci or ci[0] is None:
        return ""
    return f"[{num(ci[0], digits)}, {num(ci[1], digits)}]"
