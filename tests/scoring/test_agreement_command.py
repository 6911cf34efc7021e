"""``manage.py agreement``: a ratings file in, one JSON object (or a table) out, reasons on stderr,
exit status 2 and nothing on stdout for a malformed line. No database: the subprocesses point
Postgres at port 1, and the in-process tests run without pytest-django's database access."""

import json
import os
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.scoring.agreement import METRICS, Ratings, agreement

REPO = Path(__file__).resolve().parent.parent.parent

# Krippendorff (2011)'s worked example, as a ratings file: 4 observers x 12 units with missing data.
KRIPPENDORFF = [
    [1, 1, None, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [None, 5, 5, 5],
    [None, None, 1, 1],
    [None, 3, None, None],
]


def lines_of(rows, raters="ABCD"):
    out = []
    for i, row in enumerate(rows, start=1):
        for rater, value in zip(raters, row):
            if value is not None or rater == "A":  # a missing rating: a null value, or no line at all
                out.append(json.dumps({"item": f"unit{i:02d}", "rater": rater, "value": value}))
    return out


@pytest.fixture
def ratings_file(tmp_path):
    def write(lines, name="ratings.jsonl"):
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return write


def run(*args):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "POSTGRES_PORT": "1"}  # no database there
    return subprocess.run(
        [str(REPO / ".venv/bin/python"), "manage.py", "agreement", *map(str, args)],
        cwd=REPO,
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def command(*args):
    out, err = StringIO(), StringIO()
    call_command("agreement", *map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_prints_every_applicable_metric_as_one_json_object_and_the_reasons_on_stderr(ratings_file):
    lines = lines_of(KRIPPENDORFF)
    path = ratings_file(lines[:5] + ["", "   "] + lines[5:])  # blank lines are ignored
    done = run("--ratings", path, "--level", "ordinal", "--json", "--resamples", "300", "--seed", "4")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {k: out[k] for k in ("n_items", "n_raters", "level", "resamples", "seed")} == {
        "n_items": 12,
        "n_raters": 4,
        "level": "ordinal",
        "resamples": 300,
        "seed": 4,
    }
    assert list(out["metrics"]) == ["krippendorff_alpha", "percent_agreement", "fleiss_kappa", "kendall_w", "gwet_ac1"]
    triples = [(r["item"], r["rater"], r["value"]) for r in map(json.loads, lines)]
    expected, _ = agreement(Ratings.from_triples(triples, "ordinal"), n_resamples=300, seed=4)
    for name, metric in out["metrics"].items():
        assert metric == {
            "value": expected[name].value,
            "ci": list(expected[name].ci),
            "n_items": expected[name].n_items,
            "n_raters": expected[name].n_raters,
            "method": expected[name].method,
        }
    assert round(out["metrics"]["krippendorff_alpha"]["value"], 3) == 0.815
    assert done.stderr.splitlines() == [
        "cohen_kappa: not computed: Cohen's kappa compares exactly 2 raters; these ratings have 4",
        "icc: not computed: the ICC needs interval or ratio ratings (differences that mean something); these are ordinal",
    ]


def test_two_raters_get_cohens_kappa_and_interval_data_the_icc(ratings_file):
    rows = [[9, 2], [6, 1], [8, 4], [7, 1], [10, 5], [6, 2]]
    out, err = command(
        "--ratings", ratings_file(lines_of(rows, "AB")), "--level", "interval", "--json", "--resamples", "0"
    )
    metrics = json.loads(out)["metrics"]
    assert set(metrics) == set(METRICS)
    assert all(m["ci"] is None for m in metrics.values())
    assert err == ""


def test_the_seed_moves_the_intervals_and_not_the_values(ratings_file):
    path = ratings_file(lines_of(KRIPPENDORFF))
    one = json.loads(command("--ratings", path, "--level", "nominal", "--json", "--resamples", "200")[0])
    two = json.loads(command("--ratings", path, "--level", "nominal", "--json", "--resamples", "200", "--seed", "9")[0])
    assert (one["seed"], two["seed"]) == (0, 9)
    assert {k: m["value"] for k, m in one["metrics"].items()} == {k: m["value"] for k, m in two["metrics"].items()}
    assert {k: m["ci"] for k, m in one["metrics"].items()} != {k: m["ci"] for k, m in two["metrics"].items()}


def test_without_json_it_prints_a_table(ratings_file):
    out, _ = command("--ratings", ratings_file(lines_of(KRIPPENDORFF)), "--level", "interval", "--resamples", "100")
    lines = out.splitlines()
    assert lines[0] == "12 items, 4 raters, interval level; 100 resamples, seed 0"
    assert lines[1].split() == ["metric", "value", "95%", "interval", "items", "raters"]
    alpha = next(line for line in lines if line.startswith("krippendorff_alpha "))
    assert alpha.split()[1] == "0.849" and alpha.split()[-2:] == ["11", "4"]
    assert any(line.startswith("  icc: pingouin.intraclass_corr") for line in lines)


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("{not json", "line 3: not valid JSON"),
        ('{"item": "u9", "rater": "A", "value": NaN}', "line 3: not valid JSON (NaN is not a number JSON allows)"),
        ('{"item": "u9", "rater": "A", "value": Infinity}', "line 3: not valid JSON (Infinity is not a number"),
        ('{"item": "u9", "rater": "A", "value": 1e999}', "line 3: the value is not a finite number"),
        ('["u9", "A", 1]', "line 3: expected a JSON object with item, rater and value"),
        ('{"item": "", "rater": "A", "value": 1}', "line 3: item must be a non-empty text"),
        ('{"item": "u9", "rater": 7, "value": 1}', "line 3: rater must be a non-empty text"),
        ('{"item": "u9", "rater": "A", "value": true}', "line 3: the value true is a yes/no, not a rating"),
        ('{"item": "u9", "rater": "A", "value": [1]}', "line 3: the value must be a number, a text or null, got list"),
        ('{"item": "u9", "rater": "A", "value": "high"}', "line 3: the value 'high' is a text, but ordinal ratings"),
        ('{"item": "u1", "rater": "A", "value": 2}', "line 3: rater 'A' already rated item 'u1' on line 1"),
    ],
)
def test_a_malformed_line_exits_2_with_its_line_number_and_nothing_on_stdout(ratings_file, bad_line, message):
    good = ['{"item": "u1", "rater": "A", "value": 1}', '{"item": "u1", "rater": "B", "value": 1}']
    path = ratings_file(good + [bad_line] + ['{"item": "u2", "rater": "A", "value": 2}'])
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("agreement", "--ratings", str(path), "--level", "ordinal", "--json", stdout=out, stderr=err)
    assert exit_.value.code == 2
    assert out.getvalue() == ""
    assert err.getvalue().startswith(f"{path}: ") and message in err.getvalue()


def test_a_malformed_file_exits_2_in_a_real_process_with_every_bad_line_listed(ratings_file):
    path = ratings_file(
        ['{"item": "u1", "rater": "A", "value": 1}', "oops", '{"item": "u2", "rater": "A", "value": "x"}']
    )
    done = run("--ratings", path, "--level", "interval", "--json")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"{path}: line 2: not valid JSON (Expecting value: line 1 column 1 (char 0))",
        f"{path}: line 3: the value 'x' is a text, but interval ratings must be numbers",
    ]


def test_text_values_are_categories_at_the_nominal_level(ratings_file):
    rows = [["cat", "cat"], ["dog", "cat"], ["dog", "dog"], ["bird", None]]
    out, err = command(
        "--ratings", ratings_file(lines_of(rows, "AB")), "--level", "nominal", "--json", "--resamples", "0"
    )
    metrics = json.loads(out)["metrics"]
    # 3 items both rated: p_o = 2/3; A: cat 1/3, dog 2/3; B: cat 2/3, dog 1/3; p_e = 2/9 + 2/9 = 4/9.
    assert metrics["cohen_kappa"]["value"] == pytest.approx((2 / 3 - 4 / 9) / (1 - 4 / 9))
    assert "kendall_w: not computed: Kendall's W ranks the items" in err


def test_a_missing_file_exits_2(tmp_path):
    done = run("--ratings", tmp_path / "nope.jsonl", "--level", "nominal")
    assert done.returncode == 2 and done.stdout == ""
    assert f"cannot read {tmp_path / 'nope.jsonl'}" in done.stderr


def test_resamples_outside_0_to_10000_are_refused(ratings_file):
    path = ratings_file(lines_of(KRIPPENDORFF))
    with pytest.raises(CommandError, match="expected a whole number from 0 to 10000, got 10001"):
        command("--ratings", path, "--level", "nominal", "--resamples", "10001")
    done = run("--ratings", path, "--level", "nominal", "--resamples", "-1")
    assert done.returncode == 2 and done.stdout == ""
    assert "expected a whole number from 0 to 10000, got -1" in done.stderr
