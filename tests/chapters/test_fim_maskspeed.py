"""Chapter 8's mask-speed run read against its goals (cadlib.chapters.fim_constraint: text's
maskspeed_markdown, show's maskspeed_table)."""

import pytest

from cadlib.chapters import fim_constraint as FX

ARMS = ["lean charts", "previous (full charts)"]


def report(median=1.8, p99=3.3, equal=True, tail="p99"):
    def row(gc, arm, med, p, ratio=None):
        r = dict(
            ballast_millions=0,
            gc=gc,
            arm=arm,
            steps=283,
            median_ms=med,
            p90_ms=p if tail == "p90" else p / 2,
            **({"p99_ms": p} if tail == "p99" else {}),
            mean_ms=med,
            gc_share=0.09,
            max_gc_pause_ms=5.0,
            all_equal=equal,
        )
        return r | ({"median_ratio_to_first": ratio} if ratio else {})

    summary = [
        row("default", ARMS[0], median, p99),
        row("default", ARMS[1], 2.3, 3.7, 1.28),
        row("disabled", ARMS[0], 1.45, 2.1),
        row("disabled", ARMS[1], 1.8, 2.6, 1.25),
    ]
    return dict(
        arms=ARMS,
        goals_ms={"median": 1.0, tail: 5.0},
        params={"problems": 12},
        summary=summary,
        provenance=None,
    )


def test_goals_are_judged_on_the_current_mask_with_the_default_collector():
    text = FX.text.maskspeed_markdown(report())
    assert "median of 1.80 ms: **missed** (goal ≤ 1 ms)" in text
    assert "p99 is 3.30 ms: **met** (≤ 5 ms)" in text and "p90" not in text
    assert "1.28× as fast" in text and "disabled the median is 1.45 ms" in text
    assert "equal masks at every step" in text
    met = FX.text.maskspeed_markdown(report(median=0.9, p99=6.0))
    assert "0.90 ms: **met**" in met and "6.00 ms: **missed**" in met
    # a run recorded before the goal named the p99 is read on the tail it recorded
    older = FX.text.maskspeed_markdown(report(p99=3.3, tail="p90"))
    assert "p90 is 3.30 ms: **met** (≤ 5 ms)" in older
    assert "masks differed" in FX.text.maskspeed_markdown(report(equal=False))


def test_table_names_the_paired_ratio_and_a_missing_row_fails():
    table = FX.show.maskspeed_table(report())
    assert "paired_ratio_to_current" in table.columns and len(table) == 4
    bad = report()
    bad["summary"] = [r for r in bad["summary"] if r["gc"] != "disabled"]
    with pytest.raises(ValueError, match="no row for gc='disabled'"):
        FX.text.maskspeed_markdown(bad)
