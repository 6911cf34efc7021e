"""Writes of annotator.team: a project's pay rate."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from django.db import transaction

from annotator.errors import Invalid
from annotator.team.models import PayRate

AMOUNT_MAX = Decimal("99999999.99")  # the column: 10 digits, 2 of them decimals
CURRENCY = re.compile(r"[A-Z]{3}")


def _amount(value) -> Decimal | None:
    try:
        amount = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    if not amount.is_finite() or amount < 0 or amount > AMOUNT_MAX or amount != amount.quantize(Decimal("0.01")):
        return None
    return amount.quantize(Decimal("0.01"))


@transaction.atomic
def set_rate(
    project,
    *,
    basis: str,
    amount,
    currency: str,
    count_gold: bool = True,
    count_qualification: bool = False,
    count_rework: bool = True,
    user=None,
) -> PayRate:
    """Set (create or replace) ``project``'s pay rate: ``amount`` (a number with at most 2 decimals,
    0 to 99,999,999.99) of ``currency`` (an ISO 4217 code: 3 capital letters) per ``basis``
    (``video``, ``unit`` or ``hour``), and which units count (``pay`` module). Raises Invalid,
    naming each bad field; nothing is saved then."""
    errors = {}
    if basis not in PayRate.Basis.values:
        errors["basis"] = "choose one of: " + ", ".join(PayRate.Basis.values)
    money = _amount(amount)
    if money is None:
        errors["amount"] = "an amount from 0 to 99999999.99 with at most 2 decimals, e.g. 20 or 12.50"
    currency = (currency or "").strip().upper() if isinstance(currency, str) else ""
    if not CURRENCY.fullmatch(currency):
        errors["currency"] = "a currency code of 3 letters, e.g. EUR"
    if errors:
        raise Invalid("the pay rate has errors; nothing was saved", errors=errors)
    rate, _ = PayRate.objects.update_or_create(
        project=project,
        defaults={
            "basis": basis,
            "amount": money,
            "currency": currency,
            "count_gold": bool(count_gold),
            "count_qualification": bool(count_qualification),
            "count_rework": bool(count_rework),
            "updated_by": user,
        },
    )
    return rate
