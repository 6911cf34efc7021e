"""Who may fetch a stored file (``/files/NAME``, ``media.views.serve_media``): one registry, where each
app answers for its own files, so the view that serves them imports none of those apps.

Each app registers its rules in its own module ``annotator/<app>/file_access.py``, imported by the
app's ``AppConfig.ready`` (so every rule is in place before the first request):

- ``register(prefix)``: ``rule(user, name) -> bool`` decides for a logged-in ``user`` and every
  stored ``name`` starting with ``prefix`` (``"frames/"``); the longest registered prefix wins, and
  ``""`` is the rule for names no other prefix claims. A name no rule claims is refused.
- ``register_visitor(prefix)``: ``rule(request, name) -> bool``, the same for an anonymous visitor
  (a study link's participant, who has no account); ``visitor_check(is_visitor)`` says whether a
  request is one (``is_visitor(request) -> bool``). Without a rule for its prefix a visitor is refused.
- A video's own rule (``media.file_access.may_see_video``) asks two more lists after its role
  checks: ``veto_video`` rules (``rule(user, video) -> bool``, true when the person must not play
  it: footage they still have to order in a study) and then ``grant_video`` rules (true when they
  may: a unit they hold, a tutorial's example). Rules run in registration order (the order of
  ``INSTALLED_APPS``).
"""

from __future__ import annotations

from collections.abc import Callable

RULES: dict[str, Callable] = {}
VISITOR_RULES: dict[str, Callable] = {}
VISITOR_CHECKS: list[Callable] = []
VIDEO_VETOES: list[Callable] = []
VIDEO_GRANTS: list[Callable] = []


def _add(table: dict[str, Callable], prefix: str, rule: Callable) -> Callable:
    if table.get(prefix, rule) is not rule:
        raise ValueError(f"files under {prefix!r} already have a rule ({table[prefix].__qualname__})")
    table[prefix] = rule
    return rule


def register(prefix: str) -> Callable[[Callable], Callable]:
    """Decorator: ``rule(user, name) -> bool`` decides for stored names under ``prefix``. Raises
    ValueError when another rule already holds that prefix (two apps cannot own one folder)."""
    return lambda rule: _add(RULES, prefix, rule)


def register_visitor(prefix: str) -> Callable[[Callable], Callable]:
    """Decorator: ``rule(request, name) -> bool`` decides for an anonymous visitor's request of a
    stored name under ``prefix``. Raises ValueError as ``register``."""
    return lambda rule: _add(VISITOR_RULES, prefix, rule)


def _add_to(rules: list[Callable], rule: Callable) -> Callable:
    if rule not in rules:
        rules.append(rule)
    return rule


def visitor_check(is_visitor: Callable) -> Callable:
    """Register ``is_visitor(request) -> bool``: whether an anonymous request is a visitor whom
    ``register_visitor`` rules may serve. Returns it (a decorator)."""
    return _add_to(VISITOR_CHECKS, is_visitor)


def veto_video(rule: Callable) -> Callable:
    """Register ``rule(user, video) -> bool``: true when ``user`` must not play ``video``, whatever
    grants it. Returns it (a decorator)."""
    return _add_to(VIDEO_VETOES, rule)


def grant_video(rule: Callable) -> Callable:
    """Register ``rule(user, video) -> bool``: true when ``user`` (a member who does not oversee the
    project) may play ``video``. Returns it (a decorator)."""
    return _add_to(VIDEO_GRANTS, rule)


def _rule_for(table: dict[str, Callable], name: str) -> Callable | None:
    prefixes = [p for p in table if name.startswith(p)]
    return table[max(prefixes, key=len)] if prefixes else None


def may_fetch(user, name: str) -> bool:
    """Whether logged-in ``user`` may fetch stored file ``name``: the rule of the longest registered
    prefix of ``name`` decides; no rule, no file."""
    rule = _rule_for(RULES, name)
    return rule is not None and bool(rule(user, name))


def is_visitor(request) -> bool:
    """Whether an anonymous ``request`` is a visitor some app serves files to (a study link's participant)."""
    return any(check(request) for check in VISITOR_CHECKS)


def visitor_may_fetch(request, name: str) -> bool:
    """Whether an anonymous visitor's ``request`` may fetch ``name``: as ``may_fetch``, with the
    visitor rules; no rule, no file."""
    rule = _rule_for(VISITOR_RULES, name)
    return rule is not None and bool(rule(request, name))


def video_vetoed(user, video) -> bool:
    """Whether a ``veto_video`` rule refuses ``video`` to ``user``."""
    return any(rule(user, video) for rule in VIDEO_VETOES)


def video_granted(user, video) -> bool:
    """Whether a ``grant_video`` rule lets ``user`` play ``video`` (asked in registration order, the
    first that grants ends the asking)."""
    return any(rule(user, video) for rule in VIDEO_GRANTS)
