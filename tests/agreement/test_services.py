"""Agreement measured where the judgments are: overlap verdicts, every study kind, rating sets, and
the consensus round (X-LeBench seed 002 App. D.3), stored as dated reports with intervals."""

from __future__ import annotations

import threading

import pytest

from annotator.agreement import services
from annotator.agreement.models import ConsensusItem, Report
from annotator.errors import Conflict, Invalid
from annotator.qa.selectors import pseudonym
from annotator.qa.services import Decision
from annotator.studies.handles import handle_of
from annotator.studies.models import Trial
from annotator.studies.services import answer_trial, create_study, current_trial, enroll, mark_shown, start
from tests.agreement.conftest import verify_blind
from tests.studies.conftest import people

R = 40  # bootstrap resamples: enough for an interval, few enough for a quick test


def latest(project, scope, subset="", metric="percent_agreement", level="nominal", round_="first") -> Report:
    return (
        Report.objects.filter(project=project, scope=scope, subset=subset, metric=metric, level=level, round=round_)
        .order_by("-computed_at", "-id")
        .first()
    )


def test_overlap_verdicts_are_measured_per_project_type_and_illumination(project, two_raters, annotator, annotator2):
    comp = services.compute(project, "verification", trigger="api", n_resamples=R)
    # 12 pairs, two raters each; the decisions differ on 3 (a delete against a keep) and the second
    # person's "modify" differs from a "keep" on 3 more: 6 of 12 pairs agree.
    pa = latest(project, "verification")
    assert (pa.value, pa.n_items, pa.n_raters) == (0.5, 12, 2)
    assert pa.ci_low <= pa.value <= pa.ci_high and pa.fingerprint == comp.fingerprint
    assert latest(project, "verification", metric="cohen_kappa") is not None  # exactly two raters
    alpha = latest(project, "verification", metric="krippendorff_alpha")
    assert alpha.value < 0.5 and "krippendorff" in alpha.library_versions
    # Per QA type: the multiple-choice pairs were kept by both; the open ones agree on 3 of 9.
    assert latest(project, "verification", "qa_type=object_recognition").value == 1.0
    assert latest(project, "verification", "qa_type=scene_description").value == pytest.approx(3 / 9)
    assert latest(project, "verification", "illumination=day").n_items == 12
    # The answers both kept or modified (6 open pairs with two answers, and 3 multiple-choice ones):
    # "answer k" against "reply k" is close but not the same.
    sem = latest(project, "verification", "answers", metric="semantic_agreement", level="")
    assert sem.n_items == 9 and 0.5 < sem.value < 1.0 and "all-MiniLM-L6-v2" in sem.method
    # Details: who agreed with whom, the confusion of decisions, the most disputed pairs with links.
    details = comp.details[""]
    names = [pseudonym(annotator.pk), pseudonym(annotator2.pk)]
    assert sorted(details["raters"]["raters"]) == sorted(names)
    confusion = details["confusion"]
    keep, delete = confusion["categories"].index("keep"), confusion["categories"].index("delete")
    assert confusion["counts"][keep][delete] == 3 == confusion["counts"][delete][keep]
    top = details["top"]
    assert len(top) == 6 and top[0]["disagreement"] == 1.0
    assert top[0]["link"] == f"/projects/{project.slug}/qa/{top[0]['item']}/"
    assert sorted(a["value"] for a in top[0]["answers"]) in (["delete", "keep"], ["keep", "modify"])


def test_the_fingerprint_changes_with_the_inputs_and_reports_are_kept(
    project, two_raters, make_unit, annotator, annotator2
):
    first = services.compute(project, "verification", n_resamples=R)
    again = services.compute(project, "verification", n_resamples=R)
    assert again.fingerprint == first.fingerprint and again.pk != first.pk
    make_unit(1)
    verify_blind(
        project, [(annotator, lambda p, i: Decision(p.pk, "keep")), (annotator2, lambda p, i: Decision(p.pk, "keep"))]
    )
    third = services.compute(project, "verification", n_resamples=R)
    assert third.fingerprint != first.fingerprint
    series = Report.objects.filter(
        project=project, scope="verification", subset="", metric="percent_agreement", level="nominal"
    ).order_by("computed_at")
    assert [r.value for r in series] == [0.5, 0.5, pytest.approx(8 / 14)]  # kept over time: a trend


def test_one_computation_per_scope_at_a_time(project, two_raters, transactional_db):
    scope = services.scope_for(project, "verification")
    held, release = threading.Event(), threading.Event()

    def hold():
        from django.db import connection as other

        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [services.LOCK_CLASS, scope.pk])
            held.set()
            release.wait(30)
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [services.LOCK_CLASS, scope.pk])
        other.close()

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert held.wait(10)
        assert services.compute(project, "verification", n_resamples=R) is None
    finally:
        release.set()
        t.join()
    assert services.compute(project, "verification", n_resamples=R) is not None


def _answer_all(study, person, respond):
    participant = enroll(study, person)
    start(participant)
    while (trial := current_trial(participant)) is not None:
        mark_shown(participant, trial.pk)
        answer_trial(participant, trial.pk, respond(trial), 1000.0, f"t{trial.pk}")


def test_likert_scores_per_criterion_and_group(project, verified):
    verified(3)
    study, _ = create_study(
        project,
        "realism",
        "likert",
        preset="xlebench-realism",
        options={"attention_items": 0, "questions_per_participant": 20, "raters_per_item": 3},
    )
    raters = people(project, 3)
    # Three raters, three records, two criteria; they agree on the order of the records but not the level.
    for shift, person in enumerate(raters):
        _answer_all(study, person, lambda t, s=shift: {"score": min(5, 1 + (t.item.index + s)), "justification": "low"})
    comp = services.compute(project, "study:realism", n_resamples=R)
    w = latest(project, "study:realism", "criterion=realism", "kendall_w", "ordinal")
    assert w.value == pytest.approx(1.0) and (w.n_items, w.n_raters) == (3, 3)  # same order: W = 1
    icc = latest(project, "study:realism", "criterion=realism", "icc", "interval")
    assert icc is not None and icc.value < 1.0  # absolute agreement is lowered by the shifts
    assert latest(project, "study:realism", "criterion=realism", "krippendorff_alpha", "interval") is not None
    assert latest(project, "study:realism", "criterion=realism", "krippendorff_alpha", "ordinal") is not None
    assert latest(project, "study:realism", "criterion=contextual consistency", "kendall_w", "ordinal") is not None
    assert "criterion=realism" in comp.details


def test_multiple_choice_and_open_answers(project, verified):
    verified(2)
    mcq, _ = create_study(
        project, "choice", "mcq", options={"time_limits": [60], "raters_per_item": 3, "questions_per_participant": 10}
    )
    opened, _ = create_study(
        project, "open", "open_answer", options={"raters_per_item": 3, "questions_per_participant": 10}
    )
    a, b, c = people(project, 3)
    _answer_all(mcq, a, lambda t: t.item.truth)
    _answer_all(mcq, b, lambda t: t.item.truth)
    _answer_all(mcq, c, lambda t: (t.item.truth + 1) % len(t.item.payload["options"]))
    texts = {a: "A red cup on the table.", b: "There is a red cup on the table.", c: "Nobody is in the kitchen."}
    for person in (a, b, c):
        _answer_all(opened, person, lambda t, p=person: texts[p])
    services.compute(project, "study:choice", n_resamples=R)
    services.compute(project, "study:open", n_resamples=R)
    pa = latest(project, "study:choice")
    assert pa.value == pytest.approx(1 / 3) and pa.n_raters == 3  # two of three pairs disagree on every item
    assert latest(project, "study:choice", metric="fleiss_kappa").value < 0.2
    assert latest(project, "study:choice", f"condition={mcq.conditions.get().label}").n_items == pa.n_items
    sem = latest(project, "study:open", metric="semantic_agreement", level="")
    assert sem.n_raters == 3 and 0.5 < sem.value < 0.9


def test_ordering_kendall_w_and_tau_b_across_participants(project, build):
    study = build(60.0, name="order", frame_size=16)
    study.conditions.exclude(number=3).delete()  # 8 frames; both participants get the same items
    a, b = people(project, 2)
    for person, flip in ((a, False), (b, True)):
        # Both give the true order, the second swaps the last two elements.
        def respond(trial, flip=flip):
            order = list(trial.item.truth)
            if flip and not trial.practice:
                order[-2], order[-1] = order[-1], order[-2]
            return [handle_of(trial.pk, e) for e in order]  # the page answers with per-trial handles

        participant = enroll(study, person)
        start(participant)
        while (trial := current_trial(participant)) is not None:
            mark_shown(participant, trial.pk)
            answer_trial(participant, trial.pk, respond(trial), 1000.0, f"o{trial.pk}")
    shared = set(Trial.objects.filter(participant__user=a, practice=False).values_list("item_id", flat=True)) & set(
        Trial.objects.filter(participant__user=b, practice=False).values_list("item_id", flat=True)
    )
    assert shared
    services.compute(project, "study:order", n_resamples=R)
    tau = latest(project, "study:order", metric="tau_b_mean", level="ordinal")
    w = latest(project, "study:order", metric="kendall_w_mean", level="ordinal")
    # Eight frames, one adjacent swap: tau-b = (27 - 1) / 28; for two raters W = (1 + Spearman's rho) / 2,
    # rho = 1 - 6 * 2 / (8 * 63).
    assert tau.n_items == len(shared) and tau.value == pytest.approx(26 / 28)
    assert w.value == pytest.approx((2 - 12 / 504) / 2)


def test_rating_sets_external_and_judge(project):
    # Siegel & Castellan-style toy data: three raters, four items, nominal text categories.
    rows = [
        {"item": f"i{i}", "rater": r, "value": v}
        for i, vals in enumerate([("a", "a", "a"), ("b", "b", "a"), ("a", "a", "a"), ("b", "b", "b")])
        for r, v in zip("xyz", vals)
    ]
    services.import_ratings(project, "sheets", "nominal", rows)
    with pytest.raises(Conflict):
        services.import_ratings(project, "sheets", "nominal", rows)
    with pytest.raises(Invalid, match="rating 2"):
        services.import_ratings(
            project,
            "bad",
            "ordinal",
            [{"item": "i", "rater": "x", "value": 1}, {"item": "i", "rater": "y", "value": "high"}],
        )
    services.compute(project, "ratings:sheets", n_resamples=R)
    assert latest(project, "ratings:sheets").value == pytest.approx(10 / 12)
    assert latest(project, "ratings:sheets", metric="fleiss_kappa") is not None
    # A judge against a person re-judging: percent agreement and Cohen's kappa only (EgoNight A.5.1).
    judged = [
        {"item": f"a{i}", "rater": r, "value": s}
        for i, (j, h) in enumerate([(5, 5), (3, 3), (0, 1), (4, 4)])
        for r, s in (("judge", j), ("human", h))
    ]
    services.import_ratings(project, "judge-check", "ordinal", judged, source="judge")
    services.compute(project, "ratings:judge-check", n_resamples=R)
    metrics = set(Report.objects.filter(scope="ratings:judge-check").values_list("metric", flat=True))
    assert metrics == {"percent_agreement", "cohen_kappa"}
    assert latest(project, "ratings:judge-check", level="ordinal").value == 0.75


def test_consensus_round_end_to_end(project, two_raters, admin_user):
    services.compute(project, "verification", n_resamples=R)
    before = latest(project, "verification")
    sent = services.send_to_consensus(project, "verification", threshold=1.0, user=admin_user)
    assert len(sent) == 6 and all(ci.status == "open" and len(ci.answers) == 2 for ci in sent)
    assert services.send_to_consensus(project, "verification", threshold=1.0) == []  # not sent twice
    ci = sent[0]
    with pytest.raises(Invalid, match="keep, modify or delete"):
        services.record_consensus(ci.pk, project, admin_user, consensus="kep", revised={})
    with pytest.raises(Invalid, match="did not rate"):
        services.record_consensus(ci.pk, project, admin_user, consensus="keep", revised={"ann-nobody": "keep"})
    for item in sent:
        # After discussion, the second annotator comes round to keeping the pair.
        services.record_consensus(
            item.pk,
            project,
            admin_user,
            consensus="keep",
            revised={a["rater"]: "keep" for a in item.answers},
            note="discussed",
        )
    with pytest.raises(Conflict):
        services.record_consensus(ci.pk, project, admin_user, consensus="keep", revised={})
    services.compute(project, "verification", n_resamples=R)
    first = latest(project, "verification")
    after = latest(project, "verification", round_="consensus")
    assert first.value == before.value == 0.5  # round 1 is kept as it was
    assert after.value == 1.0 and after.computed_at == first.computed_at
    assert ConsensusItem.objects.filter(status="done").count() == 6


def test_agreement_report_command_prints_stored_reports(project, two_raters, settings):
    settings.AGREEMENT_RESAMPLES = R
    import json
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("agreement_report", "--project", project.slug, "--json", stdout=out)
    assert json.loads(out.getvalue()) == {"project": project.slug, "scopes": []}
    out = StringIO()
    call_command(
        "agreement_report", "--project", project.slug, "--scope", "verification", "--now", "--json", stdout=out
    )
    scopes = json.loads(out.getvalue())["scopes"]
    assert [s["scope"] for s in scopes] == ["verification"]
    row = next(r for r in scopes[0]["reports"] if r["metric"] == "percent_agreement" and r["subset"] == "")
    assert row["value"] == 0.5 and row["n_items"] == 12 and len(row["ci"]) == 2 and row["fingerprint"]


def test_the_agreement_command_stores_external_ratings_as_a_reported_scope(project, tmp_path):
    import json
    from io import StringIO

    from django.core.management import call_command

    path = tmp_path / "sheets.jsonl"
    path.write_text(
        "".join(
            json.dumps({"item": f"r{i}", "rater": r, "value": v}) + "\n"
            for i, vals in enumerate([(4, 4, 5), (2, 2, 2), (5, 4, 5), (1, 2, 1)])
            for r, v in zip("abc", vals)
        )
    )
    out, err = StringIO(), StringIO()
    call_command(
        "agreement",
        "--ratings",
        str(path),
        "--level",
        "ordinal",
        "--json",
        "--resamples",
        "50",
        "--project",
        project.slug,
        "--name",
        "sheets",
        stdout=out,
        stderr=err,
    )
    printed = json.loads(out.getvalue())
    stored = latest(project, "ratings:sheets", metric="kendall_w", level="ordinal")
    assert stored.value == pytest.approx(printed["metrics"]["kendall_w"]["value"])
    assert "stored as rating set 'sheets'" in err.getvalue()
    with pytest.raises(SystemExit) as exit_:  # the name is taken: refused, nothing replaced
        call_command(
            "agreement",
            "--ratings",
            str(path),
            "--level",
            "ordinal",
            "--json",
            "--resamples",
            "0",
            "--project",
            project.slug,
            "--name",
            "sheets",
            stdout=StringIO(),
            stderr=StringIO(),
        )
    assert exit_.value.code == 2


def test_consensus_sends_are_bounded_and_a_replaced_rating_set_drops_its_old_round(project, admin_user, settings):
    from annotator.agreement.models import ConsensusRating

    rows = [{"item": f"i{i}", "rater": r, "value": v} for i in range(5) for r, v in (("x", i % 2), ("y", 0))]
    services.import_ratings(project, "sheets", "nominal", rows)
    # Threshold 0 does not send the items both raters agree on.
    sent = services.send_to_consensus(project, "ratings:sheets", threshold=0.0)
    assert sorted(ci.item for ci in sent) == ["i1", "i3"]
    services.record_consensus(sent[0].pk, project, admin_user, consensus=1, revised={"y": 1})
    services.import_ratings(project, "sheets", "nominal", rows, replace=True)
    assert not ConsensusItem.objects.exists() and not ConsensusRating.objects.exists()
    from annotator.agreement.services import consensus  # where the bound is read

    consensus.CONSENSUS_SEND_MAX, old = 1, consensus.CONSENSUS_SEND_MAX
    try:
        with pytest.raises(Invalid, match="at most 1 at once"):
            services.send_to_consensus(project, "ratings:sheets", threshold=0.5)
    finally:
        consensus.CONSENSUS_SEND_MAX = old


def test_free_text_answers_go_through_the_consensus_round_too(project, two_raters, admin_user):
    # The pairs one person kept and the other reworded ("answer k" / "reply k") are the only answers that differ.
    sent = services.send_to_consensus(project, "verification", subset="answers", threshold=0.01, user=admin_user)
    assert len(sent) == 3 and {ci.level for ci in sent} == {"text"}
    assert all(sorted(a["value"].split()[0] for a in ci.answers) == ["answer", "reply"] for ci in sent)
    with pytest.raises(Invalid, match="a text of 1 to"):
        services.record_consensus(sent[0].pk, project, admin_user, consensus="   ", revised={})
    for ci in sent:
        agreed = next(a["value"] for a in ci.answers if a["value"].startswith("answer"))
        services.record_consensus(
            ci.pk, project, admin_user, consensus=agreed, revised={a["rater"]: agreed for a in ci.answers}
        )
    services.compute(project, "verification", n_resamples=R)
    first = latest(project, "verification", "answers", metric="semantic_agreement", level="")
    after = latest(project, "verification", "answers", metric="semantic_agreement", level="", round_="consensus")
    assert first.value < 0.99 and after.value == pytest.approx(1.0, abs=1e-4) and after.n_items == first.n_items
