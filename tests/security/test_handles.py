"""Opaque handles (annotator.core.handles): what an annotator's browser gets instead of row ids, so a
gold copy made at claim time (the newest ids) cannot be told from a real unit (issue 20, section 2)."""

import random
import re

import pytest
from django.test import override_settings

from annotator.core import handles


def test_a_handle_turns_back_into_its_id_for_every_kind_and_ids_up_to_the_bigint_limit():
    rng = random.Random(4)
    ids = [1, 2, 3, 2**31, 2**32, 2**63 - 1] + [rng.randint(1, 2**63 - 1) for _ in range(500)]
    for kind in handles.KINDS:
        for pk in ids:
            handle = handles.encode(kind, pk)
            assert len(handle) == 13 and handles.decode(kind, handle) == pk


def test_handles_of_consecutive_ids_keep_no_order_and_share_no_prefix():
    """What a claim-time gold copy would give away: being newer than the units around it."""
    run = [handles.encode("unit", pk) for pk in range(1000, 1200)]
    assert len(set(run)) == 200
    # In id order, a sorted run would have 199 ascending steps; a random permutation about half.
    ascending = sum(a < b for a, b in zip(run, run[1:]))
    assert 70 < ascending < 130
    assert len({h[:2] for h in run}) > 100
    # The newest id's handle is not the largest, nor the smallest, of the run (a gold copy's position).
    assert sorted(run).index(run[-1]) not in (0, 199)


def test_one_kind_does_not_decode_another_and_odd_strings_are_no_handle():
    handle = handles.encode("unit", 42)
    assert handles.encode("qa", 42) != handle and handles.decode("qa", handle) != 42
    for odd in ("42", "", None, 42, handle.upper(), handle + "a", handle[:-1], "a" * 12 + "b", "0" * 13):
        assert handles.decode("unit", odd) is None
    with pytest.raises(ValueError):
        handles.encode("unit", 0)
    with pytest.raises(ValueError):
        handles.encode("unit", 2**63)
    with pytest.raises(ValueError):
        handles.encode("nothing", 1)


def test_the_key_is_the_deployments_handle_key_not_its_secret_key():
    handle = handles.encode("unit", 7)
    with override_settings(HANDLE_KEY="another deployment's key, long enough to be a real one"):
        assert handles.encode("unit", 7) != handle
    with override_settings(SECRET_KEY="a rotated secret key, long enough to be a real one"):
        assert handles.encode("unit", 7) == handle  # rotating SECRET_KEY renames nothing
    assert (
        handles.encode("unit", 7, secret="an older key") == handles.encode("unit", 7, secret="an older key") != handle
    )


def test_random_keys_look_like_handles_and_repeat_nothing():
    keys = {handles.random_key() for _ in range(2000)}
    assert len(keys) == 2000 and all(re.fullmatch(handles.PATTERN, k) for k in keys)
