"""Reads of onboarding and gold checks that the admin pages and the API share."""

from __future__ import annotations

from django.db.models import Count, QuerySet, Sum

from annotator.gold import rules
from annotator.gold.models import Attempt, Known, Pause, Result, Source, Standing
from annotator.projects.models import Membership, Project, Role


def attempts(project: Project) -> QuerySet[Attempt]:
    """Every qualification attempt of the project, newest first, with its person."""
    return Attempt.objects.filter(project=project).select_related("user").order_by("-id")


def pauses(project: Project, state: str = "") -> QuerySet[Pause]:
    """The project's pauses, newest first (``state``: ``open``, ``lifted``, or every one), with the
    person and the admin who lifted it."""
    qs = Pause.objects.filter(project=project).select_related("user", "lifted_by").order_by("-id")
    if state == "open":
        qs = qs.filter(lifted_at__isnull=True)
    elif state == "lifted":
        qs = qs.filter(lifted_at__isnull=False)
    return qs


def people(project: Project) -> list[dict]:
    """Per annotator of the project (and anyone with a gold result): ``{"user_id", "username", "role",
    "qualified_at", "attempts", "tries_left", "paused", "gold": {"value", "ci", "n"}, "gold_units"}``,
    by username. Four queries."""
    from annotator.gold.services import policy_of

    policy = policy_of(project)
    members = dict(Membership.objects.filter(project=project).values_list("user_id", "role"))
    names = dict(Membership.objects.filter(project=project).values_list("user_id", "user__username"))
    standing = {s.user_id: s for s in Standing.objects.filter(project=project)}
    tried = dict(
        Attempt.objects.filter(project=project).values("user_id").annotate(n=Count("id")).values_list("user_id", "n")
    )
    gold = {
        r["user_id"]: r
        for r in Result.objects.filter(project=project, role=Source.Role.GOLD)
        .values("user_id")
        .annotate(agreed=Sum("agreed"), decisions=Sum("decisions"), units=Count("id"))
    }
    out = []
    for uid in sorted(set(members) | set(gold), key=lambda u: names.get(u, "")):
        s = standing.get(uid)
        g = gold.get(uid)
        if members.get(uid) != Role.ANNOTATOR and g is None and uid not in tried:
            continue
        out.append(
            {
                "user_id": uid,
                "username": names.get(uid, f"user {uid}"),
                "role": members.get(uid, ""),
                "qualified_at": s.qualified_at if s else None,
                "attempts": tried.get(uid, 0),
                "tries_left": max(0, policy.tries + (s.extra_tries if s else 0) - tried.get(uid, 0)),
                "paused": bool(s and s.paused),
                "gold": rules.accuracy(g["agreed"], g["decisions"]) if g else rules.accuracy(0, 0),
                "gold_units": g["units"] if g else 0,
            }
        )
    return out


def sets(project: Project) -> dict[str, list[Source]]:
    """The project's active sources by role (``gold``, ``qualification``, ``example``), in order, each
    with ``known_list`` (its known decisions in QA pair order) and ``copy_unit_id`` (the unit an
    example is shown from)."""
    out: dict[str, list[Source]] = {role: [] for role in Source.Role.values}
    sources = list(Source.objects.filter(project=project, active=True).order_by("role", "position", "id"))
    known: dict[int, list[Known]] = {}
    for k in Known.objects.filter(source__in=sources).select_related("qa_pair__qa_type").order_by("qa_pair_id"):
        known.setdefault(k.source_id, []).append(k)
    examples = dict(
        Source.objects.filter(pk__in=[s.pk for s in sources if s.role == Source.Role.EXAMPLE]).values_list(
            "id", "copies__unit_id"
        )
    )
    for s in sources:
        s.known_list = known.get(s.pk, [])
        s.copy_unit_id = examples.get(s.pk)
        out[s.role].append(s)
    return out


def shows_example(user, video) -> bool:
    """Whether ``video`` (its source footage) is shown by an active tutorial example of its project:
    every member may play it on the tutorial page (registered with ``access.files.grant_video``; the
    caller has checked membership and open trials). One query."""
    return Source.objects.filter(
        project_id=video.project_id,
        role=Source.Role.EXAMPLE,
        active=True,
        footage__contains=[video.derived_from_id or video.pk],
    ).exists()
