"""Per-trial handles: what a participant's page calls the elements of a trial instead of their ids.

Element ids are given out in true order when an item is built (frames are cut in time order, a
video's actions in start order), so a page that saw them could sort by them and score tau-b 1.000
(issue 7). The page gets instead, for each element, a handle of 16 hex digits that is an HMAC of
(trial id, element id) under the server's key: unpredictable, carrying no order, different on every
trial (one element has unrelated handles in two people's trials), and the same for a trial on every
load, so a reload and a resent answer still agree. The server maps handles back to element ids; the
researcher's exports keep element ids.
"""

from __future__ import annotations

from django.utils.crypto import salted_hmac

from annotator.errors import Invalid

_SALT = "annotator.studies.handles"


def handle_of(trial_id: int, element_id: int) -> str:
    """The handle (16 lowercase hex digits, 64 bits) of element ``element_id`` in trial ``trial_id``."""
    return salted_hmac(_SALT, f"{trial_id}:{element_id}", algorithm="sha256").hexdigest()[:16]


def handles_of(trial_id: int, element_ids: list[int]) -> dict[int, str]:
    """Element id -> handle for the elements of one trial."""
    return {eid: handle_of(trial_id, eid) for eid in element_ids}


def element_ids(trial_id: int, item_elements: list[int], handles: list[str]) -> list[int]:
    """The element ids named by ``handles`` (in the given order) among ``item_elements``, the
    trial's item's elements. Raises Invalid for a handle that names none of them; the caller checks
    that the result is a whole ordering."""
    by_handle = {h: eid for eid, h in handles_of(trial_id, item_elements).items()}
    out = []
    for i, h in enumerate(handles):
        if h not in by_handle:
            raise Invalid(
                f"order[{i}] is not one of this trial's elements",
                errors={f"order[{i}]": "not one of this trial's elements"},
            )
        out.append(by_handle[h])
    return out
