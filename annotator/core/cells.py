"""Spreadsheet-safe CSV cells, for every CSV the platform writes (OWASP "CSV injection")."""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def guard_cell(value):
    """``value`` as a CSV cell a spreadsheet shows as text: a string starting with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return gets a leading ``'``, so ``=HYPERLINK(...)`` or
    ``+cmd|...`` typed by a participant is not run as a formula. Other values are returned as they are."""
    if isinstance(value, str) and value[:1] in FORMULA_STARTS:
        return "'" + value
    return value
