"""What agreement is measured on: each scope's inputs, read from the tables that hold the judgments.

A scope key names one body of judgments in a project:

- ``verification``: the first pass and the blind overlap passes over the same QA pairs
  (``qa.Verdict``; double-checks are not blind and are left out). Keep, modify and delete are
  nominal decisions per QA pair, for the whole project and per QA type and per illumination of the
  pair's video; subset ``answers`` is the semantic agreement of the answers proposed by people who
  both kept or modified a pair.
- ``study:<name>``: one study's answered, scored trials of participants not excluded (practice and
  attention items left out). Multiple choice: the chosen options, nominal; Likert: the scores per
  criterion and per control group, ordinal and interval; open answers: semantic agreement;
  ordering: Kendall's W across participants and mean pairwise tau-b, per item.
- ``ratings:<name>``: a rating set (external ratings, or a model judge against human re-judges).

Each kind of scope is one module of this package that registers a ``ScopeKind`` (``base``); the
package imports every module in it, so a new kind is one module (docs/extending.md).

Raters are pseudonyms (``qa.selectors.pseudonym``) for people, as in every export; a rating set's
raters are the names it came with. Each scope gives ``Dataset`` objects, one per subset; a
dataset's ``items`` key is the scope's item key (a QA pair id, a study item key, a rating set's item).
"""

from __future__ import annotations

from django.db.models import Count, Max

from annotator.agreement.models import ConsensusItem
from annotator.agreement.scopes.base import SCOPES, Dataset, ScopeKind, register
from annotator.agreement.scopes.ratings import JUDGE_METRICS
from annotator.agreement.scopes.verification import BLIND_PASSES, DECISIONS, VERIFICATION, unit_decisions
from annotator.core import registry
from annotator.projects.models import Project

__all__ = [
    "BLIND_PASSES",
    "DECISIONS",
    "JUDGE_METRICS",
    "SCOPES",
    "VERIFICATION",
    "Dataset",
    "ScopeKind",
    "datasets",
    "discover",
    "exists",
    "register",
    "unit_decisions",
]

registry.import_modules(__name__, __path__)


def discover(project: Project) -> dict[str, dict]:
    """Every scope of ``project`` that has judgments, with its watermark: key -> watermark (a small
    JSON object that changes whenever the scope's inputs may have changed), each kind's in
    registration order, then the consensus rounds decided in them. A few aggregate queries."""
    out: dict[str, dict] = {}
    for kind in SCOPES.values():
        out.update(kind.discover(project))
    decided = (
        ConsensusItem.objects.filter(scope__project=project, status=ConsensusItem.Status.DONE)
        .values("scope__key")
        .annotate(n=Count("id"), last=Max("decided_at"))
    )
    for row in decided:
        if row["scope__key"] in out:
            out[row["scope__key"]]["consensus"] = [row["n"], row["last"].isoformat()]
    return out


def _kind_of(key: str) -> tuple[ScopeKind | None, str]:
    """The kind of scope ``key`` names, and the name after its prefix ("" for an unnamed kind); None
    when no kind has that form (an unnamed kind's prefix with a name, a named one without a colon)."""
    prefix, colon, name = key.partition(":")
    kind = SCOPES.get(prefix)
    if kind is None or kind.named != bool(colon):
        return None, ""
    return kind, name


def exists(project: Project, key: str) -> bool:
    """Whether ``key`` names a scope of ``project`` that can be measured (it may have no data yet)."""
    kind, name = _kind_of(key)
    return kind is not None and kind.exists(project, name)


def datasets(project: Project, key: str) -> list[Dataset]:
    """The scope's datasets, whole scope first. Raises KeyError for a key that names no kind of scope,
    and the model's DoesNotExist for a named scope that is not there."""
    kind, name = _kind_of(key)
    if kind is None:
        raise KeyError(key)
    return kind.datasets(project, name)
