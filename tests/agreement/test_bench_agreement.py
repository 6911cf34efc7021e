"""bench/agreement.py --smoke runs (``make test`` runs it here): the four data sets at 300 items with 50
resamples and semantic agreement on 20 items, every rating sent held, and exactly the metrics that apply
to each level and rater count giving a value with an interval. Timings are printed, not asserted."""

import re

from tests.bench_smoke import run_smoke

NUMBER = r"-?\d+\.\d{4}"


def test_agreement_bench_smoke_mode_holds_every_rating_and_gives_each_applicable_metric():
    out = run_smoke("agreement.py", timeout=300)
    heads = re.findall(r"^([a-z0-9, ]+): (\d+) items x (\d) raters, ([\d,]+) ratings sent, ([\d,]+) held;", out, re.M)
    assert [(label, items, raters) for label, items, raters, _, _ in heads] == [
        ("nominal", "300", "5"),
        ("ordinal", "300", "5"),
        ("nominal, 2 raters", "300", "2"),
        ("interval, 3 decimals", "300", "5"),
    ]
    for label, _, raters, sent, held in heads:
        # about 5% of the cells missing; nothing lost between the triples and the Ratings
        assert sent == held and 0.9 * 300 * int(raters) < int(sent.replace(",", "")) < 300 * int(raters), label
    # Per data set (in order), the metrics with a value: value, interval and items that entered it.
    blocks = out.split("\n\n")
    valued = []
    for block in blocks:
        if " ratings sent, " not in block:
            continue
        rows = re.findall(
            rf"^  (\w+) +\d+\.\d\d +\d+\.\d\d +({NUMBER}) +\[({NUMBER}), ({NUMBER})\] +(\d+)$", block, re.M
        )
        for name, value, low, high, items in rows:
            assert -1 <= float(low) <= float(high) <= 1 and -1 <= float(value) <= 1 and 0 < int(items) <= 300, name
        valued.append(sorted(name for name, *_ in rows))
    assert valued == [
        ["fleiss_kappa", "gwet_ac1", "krippendorff_alpha", "percent_agreement"],
        ["fleiss_kappa", "gwet_ac1", "kendall_w", "krippendorff_alpha", "percent_agreement"],
        ["cohen_kappa", "fleiss_kappa", "gwet_ac1", "krippendorff_alpha", "percent_agreement"],
        ["icc", "kendall_w", "krippendorff_alpha", "percent_agreement"],
    ]
    assert out.count("(does not apply: ") == 4 * 7 - sum(map(len, valued))
    semantic = re.search(
        rf"^semantic agreement: model load \d+\.\d\d s; 20 items x 3 answers \((\d+) distinct texts, "
        rf"one encode call\) with 50 resamples \d+\.\d\d s; value ({NUMBER}) \[({NUMBER}), ({NUMBER})\]$",
        out,
        re.M,
    )
    assert semantic and 20 < int(semantic.group(1)) <= 60
    assert 0 <= float(semantic.group(3)) <= float(semantic.group(4)) <= 1
    assert re.search(
        r"^peak resident memory \(ru_maxrss.*: [\d,]+ MiB after the target data, [\d,]+ MiB after the extra data$",
        out,
        re.M,
    )
    assert out.rstrip().endswith("smoke: ok")
