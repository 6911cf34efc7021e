"""Opaque handles: what an annotator's browser gets instead of row ids (issue 20, section 2).

Gold copies are made when they are served, so their ids are the newest of the project while the
queue serves real units in id order: a raw id would tell a gold unit apart. Every id of what a person
works on in the queue (its unit, queue item, QA pairs, videos, life log) and every media path of a
video therefore goes out as a *handle*: the id put through a keyed pseudorandom permutation of
64-bit integers and written in 13 lowercase base32 letters. Handles of consecutive ids look
unrelated, so neither order nor age can be read from them, and the server turns a handle back into
its id without storing anything.

The permutation is a four-round Feistel network on two 32-bit halves whose round function is
HMAC-SHA256 keyed by ``HANDLE_KEY`` and the kind of id (Luby and Rackoff, "How to construct
pseudorandom permutations from pseudorandom functions", SIAM J. Comput. 17(2), 1988: four rounds
give a strong pseudorandom permutation). One kind's handle of id 7 is unrelated to another kind's.
``HANDLE_KEY`` is its own setting, so rotating ``SECRET_KEY`` renames nothing; media folders do not
depend on it at all (each video stores its folder's name, ``random_key``).

Handles are not authenticated: any 13 letters decode to some id. That id is a uniform draw from
2**63 values without the key, so a guess names an existing row with probability (rows / 2**63).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from functools import lru_cache

from django.conf import settings

KINDS = ("unit", "item", "qa", "video", "group", "review")
ROUNDS = 4
# 13 base32 letters hold 65 bits; the 64-bit block leaves the last letter's low bit 0.
PATTERN = "[a-z2-7]{12}[acegikmoqsuwy246]"
_FULL = re.compile(PATTERN)
_BIGINT_MAX = 2**63 - 1


@lru_cache(maxsize=32)
def _round_keys(secret: str, kind: str) -> tuple[bytes, ...]:
    if kind not in KINDS:
        raise ValueError(f"no handles of kind {kind!r}: one of {', '.join(KINDS)}")
    base = hmac.new(secret.encode(), f"handles:{kind}".encode(), hashlib.sha256).digest()
    return tuple(hmac.new(base, bytes([n]), hashlib.sha256).digest() for n in range(ROUNDS))


def _f(key: bytes, half: int) -> int:
    return int.from_bytes(hmac.new(key, half.to_bytes(4, "big"), hashlib.sha256).digest()[:4], "big")


def _letters(value: int) -> str:
    return base64.b32encode(value.to_bytes(8, "big")).decode().rstrip("=").lower()


def random_key() -> str:
    """13 random letters matching ``PATTERN`` (64 bits from ``secrets``): the name of a video's media
    folder (``media.models.Video.media_key``), which says nothing of the video."""
    return _letters(secrets.randbits(64))


def encode(kind: str, pk: int, *, secret: str | None = None) -> str:
    """The handle of row id ``pk`` (1 .. 2**63 - 1) of ``kind`` (one of ``KINDS``): 13 letters
    matching ``PATTERN``, under ``HANDLE_KEY`` (or ``secret``: a migration naming what an older key
    named). Raises ValueError for another kind or an id out of range."""
    if isinstance(pk, bool) or not isinstance(pk, int) or not 1 <= pk <= _BIGINT_MAX:
        raise ValueError(f"a row id is an integer from 1 to {_BIGINT_MAX}, not {pk!r}")
    left, right = pk >> 32, pk & 0xFFFFFFFF
    for key in _round_keys(secret or settings.HANDLE_KEY, kind):
        left, right = right, left ^ _f(key, right)
    return _letters((left << 32) | right)


def decode(kind: str, handle) -> int | None:
    """The row id whose ``kind`` handle is ``handle``, or None when it is not one (a wrong length,
    letter or kind, a raw id): callers answer None as they answer an unknown id. Raises ValueError
    only for an unknown ``kind``."""
    keys = _round_keys(settings.HANDLE_KEY, kind)
    if not isinstance(handle, str) or not _FULL.fullmatch(handle):
        return None
    try:
        block = base64.b32decode(handle.upper() + "===")
    except (binascii.Error, ValueError):
        return None
    value = int.from_bytes(block, "big")
    left, right = value >> 32, value & 0xFFFFFFFF
    for key in reversed(keys):
        left, right = right ^ _f(key, left), left
    pk = (left << 32) | right
    return pk if 1 <= pk <= _BIGINT_MAX else None


class HandleConverter:
    """A URL converter for handles of one kind (subclasses set ``kind``): the view gets the row id;
    anything else, a raw id included, does not match (404)."""

    kind = ""
    regex = PATTERN

    def to_python(self, value: str) -> int:
        pk = decode(self.kind, value)
        if pk is None:
            raise ValueError("not a handle")
        return pk

    def to_url(self, value) -> str:
        return value if isinstance(value, str) else encode(self.kind, int(value))


class UnitHandleConverter(HandleConverter):
    kind = "unit"


__all__ = ["KINDS", "PATTERN", "HandleConverter", "UnitHandleConverter", "decode", "encode", "random_key"]
