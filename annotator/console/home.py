"""The home page's rows: each project of the user with its pages grouped by task (issue 20, section 7:
"grouped by task, not a wall of buttons")."""

from __future__ import annotations

from django.urls import reverse

from annotator import access
from annotator.projects.models import Membership, Project, Role
from annotator.qa import selectors
from annotator.studies import links as study_links
from annotator.studies.models import Participant, Study


def _link(label: str, name: str, *args, primary: bool = False, download: bool = False, hint: str = "") -> dict:
    return {"label": label, "href": reverse(name, args=args), "primary": primary, "download": download, "hint": hint}


def rows_for(user) -> list[dict]:
    """``[{"project", "role", "counts", "groups": [{"name", "links": [...]}]}]``, a few queries
    whatever the number of projects. Only what the role may open is listed; ``counts`` (the queue's)
    is None for annotators."""
    if user.is_superuser:
        projects = [(p, "admin") for p in Project.objects.all()]
    else:
        projects = [(m.project, m.role) for m in Membership.objects.filter(user=user).select_related("project")]
    counts = selectors.queue_counts([p for p, _ in projects])
    all_studies = list(Study.objects.filter(project__in=[p for p, _ in projects]).order_by("name"))
    mine = set(Participant.objects.filter(user=user, study__in=all_studies).values_list("study_id", flat=True))
    out = []
    for project, role in projects:
        slug = project.slug
        annotate, oversee = role in access.ANNOTATE_ROLES, role in access.OVERSEE_ROLES
        manage, export = role in access.MANAGE_ROLES, role in access.EXPORT_ROLES
        review = role in access.EDIT_QA_ROLES
        # Only annotators take part in studies (studies.services.require_participant_role, issue 7):
        # anyone else who could read the truth gets a 403 there, so the link is not offered (issue 21).
        participate = role == Role.ANNOTATOR and not user.is_superuser
        studies = [s for s in all_studies if s.project_id == project.pk]
        groups = []
        if annotate:
            groups.append(
                {
                    "name": "Verify",
                    "links": [
                        _link(
                            "Verify QA pairs", "verify", slug, primary=True, hint="keyboard: V keep, E modify, X delete"
                        ),
                        _link("Tutorial", "gold-tutorial", slug),
                        _link("My work", "my-work", slug),
                        _link("QA types and guidelines", "qa-types", slug),
                    ],
                }
            )
        study_rows = []  # one line per study: its name, then what the role may do with it
        for s in studies:
            actions = []
            if participate:
                if s.pk not in mine and study_links.is_full(s):
                    actions.append({"label": "full", "href": "", "disabled": True, "aria": f"{s.name}: full"})
                else:
                    actions.append(_link("Take part", "study-take", slug, s.name) | {"aria": f"Take part: {s.name}"})
            if oversee:
                actions.append(_link("Results", "study-results", slug, s.name) | {"aria": f"Results: {s.name}"})
            if actions:
                study_rows.append({"name": s.name, "actions": actions})
        if study_rows:
            groups.append({"name": "Studies", "links": [], "studies": study_rows})
        if oversee:
            groups.append(
                {
                    "name": "Models",
                    "links": [
                        _link("Drafting runs", "draft-runs", slug),
                        _link("Evaluation", "evaluation-leaderboard", slug),
                    ],
                }
            )
            groups.append(
                {
                    "name": "Results",
                    "links": [
                        _link("Progress", "progress", slug),
                        _link("QA pairs", "qa-list", slug),
                        _link("Agreement", "agreement-dashboard", slug),
                        _link("Benchmark report", "report", slug),
                        _link("Videos", "video-list", slug),
                        _link("Life logs", "lifelog-list", slug),
                    ],
                }
            )
        elif role in access.VIEW_VIDEOS_ROLES and groups:
            groups[0]["links"].append(_link("Videos", "video-list", slug))
        if export:
            groups.append(
                {
                    "name": "Export",
                    "links": [
                        _link(
                            "Export QA pairs",
                            "export-page",
                            slug,
                            hint="JSONL, Parquet, VLMEvalKit, lmms-eval; filters; clips",
                        ),
                        _link("Export verified QA (JSONL)", "export-download", slug, download=True),
                    ],
                }
            )
        team = []
        if review:
            team.append(_link("Review", "review-page", slug))
        if manage:
            team += [
                _link("Units", "unit-list", slug),
                _link("Team figures and pay", "team-page", slug),
                _link("Qualification and gold", "gold-admin", slug),
            ]
        if team:
            groups.append({"name": "Team", "links": team})
        # The queue's counts are for the people who run the project: an annotator could read a gold
        # copy in them (made at their claim, left out of "done" at their submit; issue 20).
        out.append(
            {
                "project": project,
                "role": role,
                "groups": groups,
                "counts": counts[project.pk] if role in access.OVERSEE_ROLES else None,
            }
        )
    return out
