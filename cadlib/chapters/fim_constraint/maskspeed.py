"""The mask-speed evidence run (``results/fim.maskspeed.json``), as chapter 8 shows it.

``python -m cadlib.fim.benchmark --compare`` times the whole FIM mask (SmolLM2's vocabulary,
along true middles of HumanEvalFix-Py) beside its previous implementation, alternating on the
same states, under three garbage-collector settings and two heap sizes, on a quiet machine,
with its provenance. :func:`maskspeed_table` lays out its summary; :func:`maskspeed_markdown`
reads it against the goals the run records (``goals_ms``: median and p90 per mask), for the
default collector on the run's own heap, and says what the other settings change.
"""

from __future__ import annotations

import pandas as pd

from cadlib.record.provenance import load_caption
from cadlib.record.results import read_results_file

__all__ = ["MASKSPEED_FILE", "load_maskspeed", "maskspeed_markdown", "maskspeed_table"]

MASKSPEED_FILE = "fim.maskspeed.json"


def load_maskspeed() -> dict | None:
    """The committed mask-speed run, or ``None`` when none is committed."""
    return read_results_file(MASKSPEED_FILE)


def maskspeed_table(report: dict) -> pd.DataFrame:
    """One row per heap size, collector setting and arm: masks timed, median / p90 / mean ms,
    the collector's share, its largest pause in one mask, whether the two arms' masks were
    equal at every step, and (previous arm) the paired median ratio of its time to the current
    mask's."""
    table = pd.DataFrame(report["summary"])
    table = table.rename(columns={"median_ratio_to_first": "paired_ratio_to_current"})
    return table.set_index(["ballast_millions", "gc", "arm"])


def _row(report: dict, gc: str, arm: str) -> dict:
    rows = [
        r
        for r in report["summary"]
        if r["gc"] == gc and r["arm"] == arm and r["ballast_millions"] == 0
    ]
    if not rows:
        raise ValueError(f"{MASKSPEED_FILE} has no row for gc={gc!r}, arm={arm!r} at heap 0")
    return rows[0]


def _met(value: float, goal: float) -> str:
    return f"**met** (≤ {goal:g} ms)" if value <= goal else f"**missed** (goal ≤ {goal:g} ms)"


def maskspeed_markdown(report: dict) -> str:
    """The run against its ``goals_ms`` (median and p90 of the current mask, default
    collector, the benchmark's own heap), its speed-up over the previous mask (paired), what
    the collector costs, whether the two arms' masks were equal, and the load it ran under."""
    current, previous = report["arms"][0], report["arms"][1]  # MASK_ARMS: current first
    goals = report["goals_ms"]
    now, before = _row(report, "default", current), _row(report, "default", previous)
    off = _row(report, "disabled", current)
    equal = all(r["all_equal"] for r in report["summary"])
    ratio = before.get("median_ratio_to_first")  # previous over current, step by step
    return " ".join(
        [
            f"Along true middles ({now['steps']} masks per setting, SmolLM2's vocabulary, "
            f"{report['params']['problems']} problems), the current mask takes a median of "
            f"{now['median_ms']:.2f} ms: {_met(now['median_ms'], goals['median'])}; its p90 is "
            f"{now['p90_ms']:.2f} ms: {_met(now['p90_ms'], goals['p90'])}.",
            f"The previous implementation took {before['median_ms']:.2f} / "
            f"{before['p90_ms']:.2f} ms on the same states"
            + (
                f": the current mask is {ratio:.2f}× as fast (median over "
                f"steps of the paired ratio)."
                if ratio
                else "."
            ),
            f"The garbage collector takes {now['gc_share']:.0%} of the current mask's time; "
            f"with it disabled the median is {off['median_ms']:.2f} ms.",
            "Both implementations gave equal masks at every step."
            if equal
            else "**The two implementations' masks differed at some step.**",
            load_caption(report),
        ]
    )
