"""python manage.py qualification / gold_set: the set made from N verified units, the threshold and
gate set; bad input refused in plain words with nothing made."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.gold.models import Known, Policy, Source


def _run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_qualification_makes_the_set_and_gates_the_queue(project, make_verified):
    units = make_verified(3)
    out = _run("qualification", "--project", project.slug, "--from-verified", "2", "--threshold", "0.75")
    sources = list(Source.objects.filter(role="qualification").order_by("position"))
    assert len(sources) == 2 and {s.unit_id for s in sources} < {u.pk for u in units}
    assert [s.position for s in sources] == [1, 2]
    # Known decisions from the verified outcome: keep, modify, delete (vague), keep.
    for s in sources:
        assert list(Known.objects.filter(source=s).order_by("qa_pair_id").values_list("action", "reason")) == [
            ("keep", ""),
            ("modify", ""),
            ("delete", "vague"),
            ("keep", ""),
        ]
    policy = Policy.objects.get(project=project)
    assert (policy.threshold, policy.tries, policy.qualification_required) == (0.75, 3, True)
    assert out.splitlines()[0] == (
        f"qualification set of proj: 2 units (2 new: units "
        f"{sources[0].unit_id}, {sources[1].unit_id}), 8 known decisions"
    )
    assert out.splitlines()[1] == "pass at 75% of decisions agreeing, 3 tries; annotators get real units once they pass"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--project", "nope", "--from-verified", "1"], "no project 'nope'"),
        (["--project", "proj", "--from-verified", "0"], "--from-verified must be from 1 to 500, not 0"),
        (
            ["--project", "proj", "--from-verified", "1", "--threshold", "80"],
            "--threshold must be a share from 0 to 1 (0.8 is 80%), not 80",
        ),
        (
            ["--project", "proj", "--from-verified", "5"],
            "proj has 3 verified units left to make qualification units from, "
            "fewer than the 5 asked; nothing was made.",
        ),
        (
            ["--project", "proj", "--from-verified", "1", "--tries", "0"],
            "the policy has errors; nothing was saved (tries: tries must be a number from 1 to 20)",
        ),
    ],
)
def test_qualification_refuses_bad_input_and_makes_nothing(project, make_verified, args, message):
    make_verified(3)
    with pytest.raises(CommandError) as refused:
        _run("qualification", *args)
    assert str(refused.value).startswith(message)
    assert not Source.objects.exists() and not Policy.objects.filter(qualification_required=True).exists()


def test_a_unit_not_verified_is_never_taken(project, make_verified, make_unit):
    make_verified(1)
    make_unit()  # drafts undecided
    with pytest.raises(CommandError, match="has 1 verified unit left"):
        _run("qualification", "--project", project.slug, "--from-verified", "2")


def test_gold_set_adds_gold_units_and_the_pause_rule(project, make_verified):
    make_verified(3)
    _run("qualification", "--project", project.slug, "--from-verified", "1")
    out = _run("gold_set", "--project", project.slug, "--from-verified", "2", "--rate", "0.1", "--window", "5")
    assert Source.objects.filter(role="gold").count() == 2
    assert not set(Source.objects.filter(role="gold").values_list("unit_id", flat=True)) & set(
        Source.objects.filter(role="qualification").values_list("unit_id", flat=True)
    )
    assert out.strip().endswith("served at 10% of claims; pause below 80% over the last 5 gold units")
    with pytest.raises(CommandError, match="fewer than the 1 asked"):
        _run("gold_set", "--project", project.slug, "--from-verified", "1")
    with pytest.raises(CommandError, match="gold_rate must be a number from 0 to 0.5"):
        _run("gold_set", "--project", project.slug, "--from-verified", "1", "--rate", "0.9")


def test_exempt_current_counts_annotators_who_already_worked_as_qualified(
    project, make_verified, make_unit, annotator, annotator2
):
    from annotator.gold.models import Standing
    from annotator.qa.queue import claim_next
    from annotator.qa.services import Decision, submit_unit

    make_verified(2)
    unit = make_unit()
    assert claim_next(project, annotator).unit_id == unit.pk
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="w",
        time_spent_ms=10,
        additions=[],
        decisions=[Decision(p.pk, "keep") for p in unit.qa_pairs.all()],
    )
    out = _run("qualification", "--project", project.slug, "--from-verified", "1", "--exempt-current")
    assert out.splitlines()[-1] == "1 annotators who had already worked count as qualified"
    assert Standing.objects.get(project=project, user=annotator).qualified_at is not None
    assert not Standing.objects.filter(project=project, user=annotator2, qualified_at__isnull=False).exists()
    make_unit()
    assert claim_next(project, annotator).kind == "first_pass"
    assert claim_next(project, annotator2).kind == "qualification"
