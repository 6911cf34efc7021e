"""Agreement scopes are one module per kind (issue 23, "one registry style"): the package imports
every module in it, and ``discover``, ``exists`` and ``datasets`` ask the registry, so a new kind of
scope is one module."""

from __future__ import annotations

import pkgutil

import pytest

from annotator.agreement import scopes
from annotator.agreement.scopes import SCOPES, Dataset, ScopeKind, register


def test_the_built_in_kinds_come_from_their_modules_in_position_order():
    assert list(SCOPES) == ["verification", "study", "ratings"]
    modules = {m.name for m in pkgutil.iter_modules(scopes.__path__)} - {"base"}
    assert {k.discover.__module__.rsplit(".", 1)[1] for k in SCOPES.values()} == modules


@pytest.fixture
def captions():
    """A kind registered at run time, as a module of its own would register it; removed after."""
    data = [Dataset("", "ratings", ("nominal",), [("a", "x", 1), ("a", "y", 1)])]
    yield register(
        ScopeKind(
            "captions",
            named=True,
            discover=lambda project: {"captions:first": {"n": 2}},
            exists=lambda project, name: name == "first",
            datasets=lambda project, name: data,
            position=40,
        )
    )
    SCOPES.pop("captions")


@pytest.mark.django_db
def test_a_kind_registered_at_run_time_is_discovered_and_measured(project, captions):
    assert scopes.discover(project) == {"captions:first": {"n": 2}}  # the project has no other judgments
    assert scopes.exists(project, "captions:first") and not scopes.exists(project, "captions:other")
    assert scopes.datasets(project, "captions:first")[0].triples == [("a", "x", 1), ("a", "y", 1)]


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["captions", "verification:x", "study", "nowhere:x", ""])
def test_a_key_of_no_kind_s_form_names_no_scope(project, captions, key):
    assert not scopes.exists(project, key)
    with pytest.raises(KeyError):
        scopes.datasets(project, key)


def test_a_prefix_with_a_colon_or_taken_twice_is_refused(captions):
    with pytest.raises(ValueError, match="without a colon"):
        register(ScopeKind("a:b", named=True, discover=dict, exists=bool, datasets=list))
    with pytest.raises(ValueError, match="two kinds of scope"):
        register(ScopeKind("captions", named=False, discover=dict, exists=bool, datasets=list))
