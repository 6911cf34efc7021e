"""The benchmark report from studies and evaluations (annotator/reports): records, splits, presets,
writers and the command, on the hand-made world of tests/reports/conftest.py."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotator.errors import Invalid
from annotator.reports import presets, selectors, writers
from annotator.reports.records import read
from annotator.scoring import report as stats

pytestmark = pytest.mark.django_db


def _row(report, **split):
    return next(r for r in report["rows"] if r["split"] == split)


def test_records_hold_people_models_and_the_evaluation(world):
    answers = read([world["study"]], [world["evaluation"]])
    # people: 3 + 3 + 2 kept trials (excluded person and practice trial left out); mp 4, imp 4, ev 4 done.
    assert len(answers) == 20
    assert sorted(set(answers.respondent)) == ["ev", "human", "imp", "mp"]
    assert answers.respondent.count("human") == 8 and answers.respondent.count("ev") == 4
    q1 = world["pairs"][1]
    i = answers.key.index(f"qa:{q1.pk}")
    assert {
        name: answers.fields[name][i]
        for name in (
            "qa_type",
            "condition",
            "time_limit",
            "illumination",
            "source",
            "difficulty",
            "domain",
            "scenario",
            "clip_length",
        )
    } == {
        "qa_type": "obj",
        "condition": "1. quick",
        "time_limit": 60.0,
        "illumination": "day",
        "source": "real",
        "difficulty": "easy",
        "domain": "kitchen",
        "scenario": "cooking",
        "clip_length": "short",
    }
    j = answers.respondent.index("ev")
    assert answers.fields["condition"][j] is None and answers.fields["illumination"][j] == "day"
    assert set(answers.metrics) == {"accuracy"}


def test_report_by_illumination_hand_checked(world):
    report = selectors.build(
        world["study"].project, studies=["timed"], evaluations=[world["evaluation"].pk], by="illumination"
    )
    assert report["metric"] == "accuracy" and report["metric_words"] == "Accuracy" and report["by"] == ["illumination"]
    assert report["columns"] == ["human", "ev", "imp", "mp"]
    assert [r["split"] for r in report["rows"]] == [
        {"illumination": "day"},
        {"illumination": "night"},
        {"illumination": "all"},
    ]
    day = _row(report, illumination="day")
    # day trials of people: q1 1, 1, 0; q2 1, 0 -> 3/5.
    assert day["cells"]["human"] == {"value": 0.6, "ci": stats.wilson(3, 5), "n": 5}
    assert day["cells"]["mp"]["value"] == 1.0 and day["cells"]["imp"]["value"] == 0.0
    assert day["cells"]["ev"]["value"] == 0.5 and day["cells"]["ev"]["n"] == 2
    # paired with ev: per-key human means q1 2/3, q2 1/2; ev 1, 0 -> d = -1/3, +1/2 -> mean 1/12;
    # two keys: four sign vectors, means 1/12, 5/12, -1/12, -5/12 -> p = 2 * min(3/4, 2/4) = 1.
    assert day["paired"]["ev"]["diff"] == pytest.approx(1 / 12)
    assert day["paired"]["ev"]["n"] == 2 and day["paired"]["ev"]["p"] == 1.0
    night = _row(report, illumination="night")
    # night: q3 0, 1; q4 0 -> 1/3; paired with ev: q3 1/2 - 0, q4 0 - 1 -> mean -1/4.
    assert night["cells"]["human"]["value"] == pytest.approx(1 / 3) and night["cells"]["human"]["n"] == 3
    assert night["paired"]["ev"]["diff"] == pytest.approx(-0.25)
    everything = _row(report, illumination="all")
    # all four keys: d = -1/3, 1/2, 1/2, -1 -> -1/12.
    assert everything["paired"]["ev"]["diff"] == pytest.approx(-1 / 12) and everything["paired"]["ev"]["n"] == 4
    assert everything["cells"]["human"]["n"] == 8


def test_report_splits_by_several_fields_and_aliases(world):
    report = selectors.build(world["study"].project, studies=["timed"], by="subtask,condition")
    assert report["by"] == ["qa_type", "condition"] and report["by_words"] == ["QA type", "Condition"]
    cells = {(r["split"]["qa_type"], r["split"]["condition"]): r["cells"]["human"] for r in report["rows"]}
    # count in the 180 s condition: p1 q2 0, q4 0 -> 0 of 2; obj in the 60 s condition: p0 q1 1, q3 0; p2 q1 0, q3 1 -> 2/4.
    assert cells[("count", "2. deliberate")]["value"] == 0.0 and cells[("count", "2. deliberate")]["n"] == 2
    assert cells[("obj", "1. quick")]["value"] == 0.5 and cells[("obj", "1. quick")]["n"] == 4
    assert list(cells)[:4] == [
        ("count", "1. quick"),
        ("count", "2. deliberate"),
        ("obj", "1. quick"),
        ("obj", "2. deliberate"),
    ]
    assert list(cells)[-1] == ("all", "all")
    # Manifest and clip-length fields: q3, q4 have 30 s clips (long), q1, q2 5 s (short).
    by_clip = selectors.build(world["study"].project, studies=["timed"], by="domain,clip_length", metric="accuracy")
    assert [r["split"] for r in by_clip["rows"]] == [
        {"domain": "kitchen", "clip_length": "short"},
        {"domain": "sports", "clip_length": "long"},
        {"domain": "all", "clip_length": "all"},
    ]


def test_a_model_interval_never_leaves_the_metric_range(world):
    report = selectors.build(
        world["study"].project, studies=["timed"], evaluations=[world["evaluation"].pk], by="qa_type,illumination"
    )
    for row in report["rows"]:
        for cell in row["cells"].values():
            if cell["ci"]:
                assert 0.0 <= cell["ci"][0] <= cell["ci"][1] <= 1.0
        for p in row["paired"].values():
            if p["ci"]:
                assert -1.0 <= p["ci"][0] <= p["ci"][1] <= 1.0


def test_egoexobench_preset_puts_people_at_each_limit_beside_models(world):
    report = selectors.build(
        world["study"].project, studies=["timed"], evaluations=[world["evaluation"].pk], preset="egoexobench"
    )
    assert report["preset"] == "egoexobench" and report["by"] == ["qa_type"]
    assert report["columns"] == ["human · 60 s", "human · 180 s", "ev", "imp", "mp"]
    obj = _row(report, qa_type="obj")
    # obj at 60 s: p0 q1 1, q3 0; p2 q1 0, q3 1 -> 2/4; at 180 s: p1 q1 1 -> 1/1.
    assert obj["cells"]["human · 60 s"]["value"] == 0.5 and obj["cells"]["human · 60 s"]["n"] == 4
    assert obj["cells"]["human · 180 s"] == {"value": 1.0, "ci": stats.wilson(1, 1), "n": 1}
    assert "ev vs human · 60 s" in obj["paired"]


def test_every_preset_is_registered_and_runs(world):
    assert presets.choices() == ["ego-flight-table1", "egoexobench", "egonight-table1", "vudg", "xlebench"]
    for name in presets.choices():
        report = selectors.build(
            world["study"].project, studies=["timed"], evaluations=[world["evaluation"].pk], preset=name
        )
        assert report["tables"] and all(t["metric_words"] for t in report["tables"])
    egonight = selectors.build(world["study"].project, evaluations=[world["evaluation"].pk], preset="egonight-table1")
    assert [t["by"] for t in egonight["tables"]] == [["qa_type", "illumination"], ["source", "difficulty"]]
    # Synthetic before real, as in EgoNight Table 1.
    assert [r["split"]["source"] for r in egonight["tables"][1]["rows"]] == ["synthetic", "real", "all"]


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"by": "colour"}, "unknown split field 'colour'"),
        ({"preset": "nope"}, "unknown preset 'nope'"),
        ({"studies": ["nope"]}, "no study named 'nope'"),
        ({"evaluations": ["99999"]}, "no evaluation 99999"),
        ({"evaluations": ["x1"]}, "whole number"),
        ({"metric": "colourfulness"}, "unknown metric"),
        ({"by": "qa_type", "preset": "vudg"}, "not both"),
        ({"by": "qa_type,illumination,source,domain,scenario"}, "at most 4"),
        ({"n_resamples": 5}, "resamples"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_input_is_refused_in_words(world, kwargs, words):
    with pytest.raises(Invalid, match=words):
        selectors.build(world["study"].project, **kwargs)


def test_csv_guards_formulas_and_names_metrics_in_words(world):
    report = selectors.build(world["study"].project, studies=["timed"], by="scenario")
    text = writers.to_csv(report)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:3] == ["table", "metric", "Scenario"]
    scenarios = {r[2] for r in rows[1:]}
    assert "'=cmd()" in scenarios and "=cmd()" not in scenarios
    assert all(r[1] == "Accuracy" for r in rows[1:])


def test_markdown_and_latex_tables(world):
    report = selectors.build(
        world["study"].project, studies=["timed"], evaluations=[world["evaluation"].pk], by="illumination"
    )
    md = writers.to_markdown(report)
    assert "| Illumination | human | ev | imp | mp | human − ev | human − imp | human − mp |" in md
    assert "| day | 0.600 [" in md and "n=5" in md
    tex = writers.to_latex(report)
    assert "\\begin{tabular}{lrrrrrrr}" in tex and "human $-$ ev" in tex


def test_the_command_writes_json_of_the_documented_shape(world, capsys):
    call_command(
        "report",
        "--project",
        world["study"].project.slug,
        "--study",
        "timed",
        "--evaluation",
        str(world["evaluation"].pk),
        "--by",
        "illumination",
        "--format",
        "json",
    )
    out = json.loads(capsys.readouterr().out)
    assert {"rows", "metric", "by"} <= set(out)
    row = out["rows"][0]
    assert set(row) == {"split", "cells", "paired"}
    assert set(row["cells"]["human"]) == {"value", "ci", "n"} and set(row["paired"]["ev"]) == {"diff", "ci", "p", "n"}


def test_the_command_refuses_bad_arguments(world):
    with pytest.raises(CommandError, match="unknown split field"):
        call_command("report", "--project", world["study"].project.slug, "--by", "colour")
    with pytest.raises(CommandError, match="no project"):
        call_command("report", "--project", "nope")


def test_a_study_evaluation_is_read_once_from_its_model_participant(world):
    from annotator.evaluation.models import Evaluation
    from annotator.studies.models import Participant

    study = world["study"]
    mp = Participant.objects.get(study=study, model="mp")
    run = Evaluation.objects.create(
        project=study.project,
        model="mp",
        judge_model="j",
        endpoint={},
        judge_endpoint={},
        prompt_version="v1",
        status=Evaluation.Status.DONE,
        study=study,
        participant=mp,
    )
    both = selectors.build(study.project, studies=["timed"], evaluations=[run.pk])
    assert both["rows"][0]["cells"]["mp"]["n"] == 4  # not 8: its trials are the study's
    alone = selectors.build(study.project, evaluations=[run.pk])
    assert alone["columns"] == ["mp"] and alone["rows"][0]["cells"]["mp"] == {
        "value": 1.0,
        "ci": stats.wilson(4, 4),
        "n": 4,
    }
    run.ablation = "text_only"
    run.save()
    assert read([], [run]).respondent == ["mp"] * 4  # the participant's own name
    from annotator.reports.records import model_column

    assert model_column(run) == "mp (text only (no frames))"
