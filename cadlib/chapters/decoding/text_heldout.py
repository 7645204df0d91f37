"""Chapter 6's sentences about its held-out speed run (:mod:`.run_heldout`): the goal verdicts
and where the mechanism loses, per engine, generated from the run's report because each one
depends on the outcome."""

from __future__ import annotations

import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.decoding.methods import COPY_AS_DECODE

from .run_heldout_stats import ALL_TEST

__all__ = ["goal_lines", "loss_lines"]


def goal_lines(report: dict) -> str:
    """One bullet per goal and engine: met or missed, the figure with its interval and the
    counts behind it."""
    lines = []
    for g in report["goals"]:
        verdict = "**met**" if g["met"] else "**missed**"
        if g["goal"] == "slower-than-ar":
            figure = f"{g['count']} of {g['cases']} cases ({g['figure']:.0%}), target {g['target']}"
        else:
            figure = (
                f"{g['figure']:.2f}× [{g['lo']:.2f}, {g['hi']:.2f}] on {g['cases']} cases, "
                f"target {g['target']}; slower than that rival on {g['count']}"
            )
        lines.append(f"* {g['engine']}, {g['group']}: {verdict}: {figure}.")
    return "\n".join(lines)


def loss_lines(report: dict) -> str:
    """Where each Copy-as-Decode variant loses on the test cases, per engine: cases slower than
    autoregressive decoding and than the best rival, and the groups whose median case is slower
    than the best rival."""
    f = pd.DataFrame(report["groups"])
    lines = []
    for (engine, method), g in f[f.method.isin(COPY_AS_DECODE)].groupby(
        ["engine", "method"], sort=False
    ):
        every = g[g.group == ALL_TEST]
        row = (every if len(every) else g).iloc[0]
        behind = [
            CORPUS_LABELS.get(x, x)
            for x, r in zip(g.group, g.vs_rival, strict=True)
            if r < 1 and x != ALL_TEST
        ]
        where = f"; its median case trails the best rival on {', '.join(behind)}" if behind else ""
        lines.append(
            f"* {method} on {engine}: slower than autoregressive decoding on "
            f"{row.slower_than_ar} of {row.cases} test cases, slower than the best rival on "
            f"{int(row.slower_than_rival)}{where}."
        )
    return "\n".join(lines)
