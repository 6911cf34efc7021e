"""Reads of the study engine that pages, the API and commands share: the participant's trial
payload, timing, footage rules, and the score table (humans beside models)."""

from __future__ import annotations

from collections import defaultdict

from django.utils import timezone

from annotator.scoring.ordering import mean_ci
from annotator.scoring.report import clip
from annotator.studies.kinds import kind_module, metrics_of
from annotator.studies.models import Condition, Item, Participant, Prediction, Study, Trial


def limit_ms(trial: Trial) -> float | None:
    """The trial's time limit in ms (its condition's ``time_limit_s``), or None for no limit."""
    limit = trial.item.condition.time_limit_s
    return None if limit is None else limit * 1000.0


def elapsed_ms(trial: Trial, now=None) -> float | None:
    """Server time (ms) since the trial was reported shown, or None if it has not been."""
    if trial.shown_at is None:
        return None
    return ((now or timezone.now()) - trial.shown_at).total_seconds() * 1000.0


def trial_payload(trial: Trial) -> dict:
    """What the participant's page gets for a trial, in every kind:

    ``trial_id``; ``kind``; ``practice``; ``number`` and ``of`` (where the person is in the
    practice or main sequence); ``time_limit_ms`` (null: none); ``elapsed_ms`` (server time since
    the page first reported it visible, null before: a reload resumes the countdown from here);
    ``shown``: whether it was reported visible; and ``content``, the kind's payload
    (``kinds.<kind>.payload``). Never the truth, the item's id, its group or subtask, or any time
    stamp (issue 8, Integrity).
    """
    kind = trial.item.condition.study.kind
    same = Trial.objects.filter(participant_id=trial.participant_id, practice=trial.practice)
    spent = elapsed_ms(trial, timezone.now())
    return {
        "trial_id": trial.pk,
        "kind": kind,
        "practice": trial.practice,
        "number": trial.position + 1,
        "of": getattr(trial, "of", None) or same.count(),  # ``services._first_open`` counts it with the trial
        "time_limit_ms": limit_ms(trial),
        "elapsed_ms": None if spent is None else round(spent, 1),
        "shown": trial.shown_at is not None,
        "content": kind_module(kind).payload(trial),
    }


def server_rt_ms(trial: Trial) -> float | None:
    """The server's response time of an answered trial in ms: from the page's "shown" report
    (``shown_at``) to the answer (``answered_at``); None if either is missing."""
    if trial.shown_at is None or trial.answered_at is None:
        return None
    return round((trial.answered_at - trial.shown_at).total_seconds() * 1000, 1)


def unscored(study: Study) -> int:
    """Answered trials and predictions still waiting for the scoring worker."""
    return (
        Trial.objects.filter(participant__study=study, answered_at__isnull=False, scored_at__isnull=True).count()
        + Prediction.objects.filter(study=study, scored_at__isnull=True).count()
    )


def score_table(study: Study, *, include_excluded: bool = False, per_subtask: bool = True) -> list[dict]:
    """For each condition, subtask (QA type; "" for none), Likert group and respondent (``human`` or
    a model name), the mean of every metric of the kind with its 95% confidence interval (Student's
    t, ``scoring.ordering.mean_ci``) and n. Humans are the scored trials (not practice, not
    attention) of participants not flagged for exclusion (all with ``include_excluded``). Rows
    ordered by condition, subtask, group, then humans first, then models by name. Without
    ``per_subtask``, all subtasks are pooled (``subtask`` None; EgoExoBench reports accuracy per
    subtask and overall)."""
    return score_tables(study, [(include_excluded, per_subtask)])[(include_excluded, per_subtask)]


def _clipped(stat: dict, metric: str) -> dict:
    """``stat`` (``mean_ci``) with its interval clipped to the metric's range (``scoring.report.clip``:
    tau-b within [-1, 1], a Likert score within [1, 5]): with few answers Student's t reaches past
    the scale, which no mean can."""
    ci = clip((stat["ci_low"], stat["ci_high"]), metric) if stat["ci_low"] is not None else None
    return {**stat, "ci_low": ci[0], "ci_high": ci[1]} if ci else stat


def score_tables(study: Study, views=((False, True), (True, True), (False, False), (True, False))) -> dict:
    """Several ``score_table`` views at once, from one read of the study's scored trials and
    predictions (the dashboard and the results API show four; each read of 100,000 trials takes
    about a second): ``views`` is a list of (include_excluded, per_subtask); returns view -> rows."""
    metrics = metrics_of(study.kind)
    values = {view: defaultdict(lambda: defaultdict(list)) for view in views}
    # A preview (an admin or researcher taking the study as a participant would) is never counted.
    trials = Trial.objects.filter(
        participant__study=study, practice=False, item__role=Item.Role.SCORED, scored_at__isnull=False
    ).exclude(participant__kind=Participant.Kind.PREVIEW)
    if not any(include for include, _ in views):
        trials = trials.filter(participant__excluded=False)
    fields = ("item__condition_id", "item__subtask", "item__group", "scores")
    # A model participant's trials (``evaluate --study``) are that model's column; people's are "human".
    rows = (
        (cond, subtask, group, scores, model or "human", excluded)
        for cond, subtask, group, scores, excluded, model in trials.values_list(
            *fields, "participant__excluded", "participant__model"
        ).iterator(chunk_size=5000)
    )
    predictions = (
        (cond, subtask, group, scores, model, False)
        for cond, subtask, group, scores, model in Prediction.objects.filter(study=study, scored_at__isnull=False)
        .values_list(*fields, "model")
        .iterator(chunk_size=5000)
    )
    for source in (rows, predictions):
        for cond, subtask, group, scores, respondent, excluded in source:
            got = [scores.get(m) for m in metrics]
            for (include, per_subtask), table in values.items():
                if excluded and not include:
                    continue
                cell = table[(cond, subtask if per_subtask else None, group, respondent)]
                for m, v in zip(metrics, got):
                    cell[m].append(v)
    conditions = {c.pk: c for c in Condition.objects.filter(study=study)}
    out = {}
    for view, table in values.items():
        out[view] = [
            {
                "condition": conditions[k[0]].described(),
                "subtask": k[1],
                "group": k[2],
                "respondent": k[3],
                "metrics": {m: _clipped(mean_ci(table[k][m]), m) for m in metrics},
            }
            for k in sorted(table, key=lambda k: (conditions[k[0]].number, k[1] or "", k[2], k[3] != "human", k[3]))
        ]
    return out


def footage_seen_in_queues(user, project_id: int) -> set[int]:
    """Ids of the source footage ``user`` could play in a verification queue of the project: the videos
    of units whose queue item they hold or held (and the other videos of those units' groups, and the
    labelled videos of their QA pairs, ``QAPair.videos``: ``media.file_access.may_see_video`` serves all of
    them), each mapped to the video it was derived from, if any (a night rendition shows the same
    route); and with any part of a life log, every part of it (a summary-ordering item's footage is
    the log's first part, X-LeBench seed 002 App. C.4). A participant is never assigned an item about
    footage they could download (issue 7)."""
    from django.db.models import Q

    from annotator.media.models import Video, VideoGroup, VideoGroupMember
    from annotator.qa.models import QAPair, QueueItem

    units = QueueItem.objects.filter(Q(leased_by=user) | Q(completed_by=user), project_id=project_id).values("unit_id")
    labelled = {
        v.get("video_id")
        for videos in QAPair.objects.filter(unit__in=units).exclude(videos=[]).values_list("videos", flat=True)
        for v in (videos or [])
        if isinstance(v, dict)
    }
    videos = Video.objects.filter(
        Q(units__in=units)
        | Q(memberships__group__units__in=units)
        | Q(pk__in=[v for v in labelled if isinstance(v, int)])
    ).values_list("id", "derived_from_id")
    seen = {root or vid for vid, root in videos}
    logs = VideoGroupMember.objects.filter(video_id__in=seen, group__kind=VideoGroup.Kind.LIFE_LOG).values("group_id")
    return seen | set(VideoGroupMember.objects.filter(group_id__in=logs).values_list("video_id", flat=True))


def footage_in_open_trials(user) -> set[int]:
    """Ids of the videos whose frames or texts ``user`` still has to order (unanswered trials of
    ordering studies): while such a trial is open, its source video and the videos derived from it
    are not served to them (the video would give the order away). For a life log's summary-ordering
    item (X-LeBench seed 002 App. C.4; ``payload["clip"]["life_log_id"]``) that is every part of the
    log, not only the first one the item names as its footage. One query, two with life logs."""
    from annotator.media.models import VideoGroupMember

    rows = set(
        Trial.objects.filter(participant__user=user, answered_at__isnull=True, participant__study__kind="ordering")
        .values_list("item__footage_id", "item__payload__clip__life_log_id")
        .distinct()
    )
    footage = {video_id for video_id, _ in rows}
    logs = {log_id for _, log_id in rows if isinstance(log_id, int)}
    if logs:
        footage |= set(VideoGroupMember.objects.filter(group_id__in=logs).values_list("video_id", flat=True))
    return footage


def open_trial_shows(user, name: str) -> bool:
    """Whether one of ``user``'s unanswered trials has an item whose page plays the stored clip
    ``name`` (``Item.payload["media"]``: a video's clip, or a clip of a life log's segment)."""
    from django.db.models import Q

    return Trial.objects.filter(
        Q(item__payload__contains={"media": [{"name": name}]})
        | Q(item__payload__contains={"media": [{"segments": [{"name": name}]}]}),
        participant__user=user,
        answered_at__isnull=True,
    ).exists()


def current_trials_show(participant_ids: list[int], name: str) -> bool:
    """Whether the *current* trial (first unanswered, practice first) of one of these link
    participants (``studies.sessions``) plays the stored clip ``name`` or shows the ordering frame
    ``name``: a link's session may fetch only the media of the trial it is on (issue 19), and
    only while the participant is in progress. One query per participant (a session has few)."""
    from annotator.studies.models import Element

    for pid in participant_ids[:20]:
        trial = (
            Trial.objects.filter(
                participant_id=pid,
                answered_at__isnull=True,
                participant__status=Participant.Status.IN_PROGRESS,
                participant__user__isnull=True,
            )
            .select_related("item")
            .order_by("-practice", "position")
            .first()
        )
        if trial is None:
            continue
        payload = trial.item.payload if isinstance(trial.item.payload, dict) else {}
        media = [m for m in payload.get("media") or [] if isinstance(m, dict)]
        names = {m.get("name") for m in media} | {
            s.get("name") for m in media for s in (m.get("segments") or []) if isinstance(s, dict)
        }
        if name in names:
            return True
        shown = [e for e in payload.get("shown") or [] if isinstance(e, int)]
        if name.startswith("frames/") and shown and Element.objects.filter(pk__in=shown, image=name).exists():
            return True
    return False


TRIAL_COLUMNS = (
    "trial_id",
    "item_id",
    "participant",
    "excluded",
    "exclusion_reasons",
    "condition",
    "subtask",
    "group",
    "role",
    "practice",
    "position",
    "response",
    "scores",
    "timed_out",
    "client_rt_ms",
    "server_rt_ms",
    "served_at",
    "shown_at",
    "answered_at",
)


def trials_export(study: Study):
    """Per-trial rows for the JSONL and CSV exports (``TRIAL_COLUMNS``), one per answered trial:
    ``participant`` is a pseudonym (``participant_label``), ``condition`` the condition's
    number, ``response`` the stored form (element ids, an option index, ``{score, justification}``,
    a text), ``scores`` the kind's metrics (null until scored), times ISO 8601 UTC and ms."""

    rows = (
        Trial.objects.filter(participant__study=study, answered_at__isnull=False)
        .exclude(participant__kind=Participant.Kind.PREVIEW)
        .select_related("participant", "item__condition")
        .order_by("participant_id", "-practice", "position")
    )
    for t in rows.iterator(chunk_size=2000):
        yield {
            "trial_id": t.pk,
            "item_id": t.item_id,
            "participant": participant_label(t.participant),
            "excluded": t.participant.excluded,
            "exclusion_reasons": t.participant.exclusion_reasons,
            "condition": t.item.condition.number,
            "subtask": t.item.subtask,
            "group": t.item.group,
            "role": t.item.role,
            "practice": t.practice,
            "position": t.position + 1,
            "response": t.response,
            "scores": t.scores,
            "timed_out": t.timed_out,
            "client_rt_ms": t.client_rt_ms,
            "server_rt_ms": server_rt_ms(t),
            "served_at": t.served_at.isoformat() if t.served_at else None,
            "shown_at": t.shown_at.isoformat() if t.shown_at else None,
            "answered_at": t.answered_at.isoformat() if t.answered_at else None,
        }


def participant_label(participant: Participant) -> str:
    """How exports name a participant: an account's pseudonym (``qa.selectors.pseudonym``,
    ``ann-`` + 12 hex), a link participant's ``anon-`` + the first 12 hex of their pseudonym, or
    ``model:<name>``."""
    from annotator.qa.selectors import pseudonym

    if participant.user_id:
        return pseudonym(participant.user_id)
    if participant.pseudonym:
        return "anon-" + participant.pseudonym[:12]
    return f"model:{participant.model}"


PARTICIPANT_COLUMNS = (
    "participant",
    "external_id",
    "panel_study_id",
    "panel_session_id",
    "status",
    "completion_code",
    "started",
    "finished",
    "active_time_s",
    "answered",
    "exclusion_reasons",
    "attention_failures",
)


def participants_export(study: Study):
    """One row per person who took part in ``study`` (accounts and link participants; models and
    previews left out), in the order they started, for approving panel payments
    (``PARTICIPANT_COLUMNS``): ``participant`` (``participant_label``); ``external_id``,
    ``panel_study_id``, ``panel_session_id`` as the panel sent them ("" for accounts); ``status``
    (``Participant.export_status``: completed, returned, timed_out, excluded or in_progress);
    ``completion_code``; ``started`` and ``finished`` (ISO 8601 UTC, null while unfinished);
    ``active_time_s``, the sum over answered trials of the server's time from shown to answer
    (seconds, 0.1); ``answered`` trials (practice included); ``exclusion_reasons`` (list of plain
    words); ``attention_failures``, answered attention items not right (the kind's primary metric).
    Three queries."""
    from annotator.studies.kinds import ScoreRow

    module = kind_module(study.kind)
    people = list(Participant.objects.filter(study=study, kind=Participant.Kind.PERSON).order_by("started_at", "pk"))
    active: dict[int, float] = defaultdict(float)
    answered: dict[int, int] = defaultdict(int)
    attention: dict[int, list] = defaultdict(list)
    rows = Trial.objects.filter(
        participant__study=study, participant__kind=Participant.Kind.PERSON, answered_at__isnull=False
    ).values_list(
        "participant_id",
        "shown_at",
        "answered_at",
        "item__role",
        "item__truth",
        "item__payload",
        "response",
        "timed_out",
    )
    for pid, shown, done, role, truth, payload, response, timed_out in rows.iterator(chunk_size=5000):
        answered[pid] += 1
        if shown is not None:
            active[pid] += max((done - shown).total_seconds(), 0.0)
        if role == Item.Role.ATTENTION:
            attention[pid].append(ScoreRow(truth, payload, response, timed_out))
    for p in people:
        checks = attention.get(p.pk, [])
        failures = 0
        if checks and module.PRIMARY is not None:
            failures = sum(1 for sc in module.score(checks) if sc.get(module.PRIMARY) != 1.0)
        yield {
            "participant": participant_label(p),
            "external_id": p.external_id,
            "panel_study_id": p.panel_study_id,
            "panel_session_id": p.panel_session_id,
            "status": p.export_status,
            "completion_code": p.completion_code,
            "started": p.started_at.isoformat(),
            "finished": p.finished_at.isoformat() if p.finished_at else None,
            "active_time_s": round(active.get(p.pk, 0.0), 1),
            "answered": answered.get(p.pk, 0),
            "exclusion_reasons": list(p.exclusion_reasons or []),
            "attention_failures": failures,
        }


def items_export(study: Study):
    """Every item of ``study`` for researchers (``study_items``, ``GET /api/studies/{id}/items/``), in
    condition and index order: ``item_id``, ``condition`` (number), ``condition_label``, ``role``
    (scored, practice, attention), ``subtask`` (QA type slug), ``group`` (Likert: real,
    random_matched, filtered; else "") and the kind's fields (``kinds.<kind>.export``), truth
    included."""
    module = kind_module(study.kind)
    items = (
        Item.objects.filter(condition__study=study).select_related("condition").order_by("condition__number", "index")
    )
    for i in items.iterator(chunk_size=2000):
        yield {
            "item_id": i.pk,
            "condition": i.condition.number,
            "condition_label": i.condition.label,
            "role": i.role,
            "subtask": i.subtask,
            "group": i.group,
            **module.export(i),
        }


def client_rts(study: Study, *, include_excluded: bool = False) -> list[dict]:
    """The page's response times of the study's answered scored trials (not practice, not attention
    items), per condition in number order, every condition listed even with none: ``condition``
    (``Condition.described``), ``rts_s`` (client RT in seconds, ascending) and ``timed_out`` (trials
    stored timed out: answered after the limit plus grace, or closed by it, the latter without a
    client RT). Trials of participants flagged for exclusion only with ``include_excluded``."""
    trials = Trial.objects.filter(
        participant__study=study,
        practice=False,
        item__role=Item.Role.SCORED,
        answered_at__isnull=False,
        participant__kind=Participant.Kind.PERSON,
    )
    if not include_excluded:
        trials = trials.filter(participant__excluded=False)
    per = {
        c.pk: {"condition": c.described(), "rts_s": [], "timed_out": 0}
        for c in Condition.objects.filter(study=study).order_by("number")
    }
    for cond, rt_ms, timed_out in trials.values_list("item__condition_id", "client_rt_ms", "timed_out").iterator(
        chunk_size=5000
    ):
        if rt_ms is not None:
            per[cond]["rts_s"].append(rt_ms / 1000.0)
        per[cond]["timed_out"] += timed_out
    for entry in per.values():
        entry["rts_s"].sort()
    return list(per.values())


def rt_summary(per_condition: list[dict]) -> list[dict]:
    """Per condition of ``client_rts``: ``condition``, ``n`` (trials with a client RT), ``timed_out``,
    and the client RT's ``mean_s``, ``median_s``, quartiles ``q1_s`` and ``q3_s`` (linear
    interpolation), ``min_s`` and ``max_s`` (all None when n is 0)."""
    import numpy as np

    out = []
    for entry in per_condition:
        xs = np.asarray(entry["rts_s"], dtype=float)
        stats = dict.fromkeys(("mean_s", "median_s", "q1_s", "q3_s", "min_s", "max_s"))
        if xs.size:
            q1, median, q3 = np.percentile(xs, [25, 50, 75])
            stats = {
                "mean_s": float(xs.mean()),
                "median_s": float(median),
                "q1_s": float(q1),
                "q3_s": float(q3),
                "min_s": float(xs.min()),
                "max_s": float(xs.max()),
            }
        out.append({"condition": entry["condition"], "n": int(xs.size), "timed_out": entry["timed_out"], **stats})
    return out
