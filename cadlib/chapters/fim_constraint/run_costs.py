"""Chapter 8's costs per token: the constraint's recognition step, the mask's stages and the
mask beside the model's step in constrained generation (section 4).

The rows come from :func:`cadlib.fim.per_step_cost` (ours vs re-parsing, per token of a true
middle), :func:`cadlib.fim.step_cost.mask_stages` (the mask's stages along true middles) and the
constrained runs of :func:`.run_edits.localized_edit` and
:func:`cadlib.fim.completion.fim_completion` (``mask_s``, ``forward_s`` / ``step_s``,
``middle_chars`` per generated token); the tables here reduce them to medians and 90th
percentiles per middle-length bin, as the results file (:func:`.run.numbers`) records them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cadlib.fim.completion import ARMS

__all__ = [
    "step_costs",
    "cost_by_length",
    "edit_cost_table",
    "per_step_table",
    "stage_table",
    "whole_mask_ms",
    "generation_steps",
    "generation_cost",
]


def step_costs(frame, step_col: str):
    """Long table of per-step costs from :func:`localized_edit` / :func:`fim_completion`
    rows: ``middle_chars``, ``mask_s`` and the model step ``step_col`` (``forward_s`` or
    ``step_s``), one row per generated token of a constrained run."""
    rows = []
    for r in frame.itertuples():
        masks, steps, chars = r.mask_s, getattr(r, step_col), r.middle_chars
        for k, (m, c) in enumerate(zip(masks, chars, strict=False)):
            rows.append(
                dict(
                    system=r.system,
                    step=k,
                    middle_chars=c,
                    mask_s=m,
                    model_s=steps[k] if k < len(steps) else float("nan"),
                )
            )
    return pd.DataFrame(rows)


def cost_by_length(frame, bins=(0, 25, 50, 100, 200, 400, 800, 1600), value="seconds", by="method"):
    """Median (and 90th percentile) of ``value`` per ``by`` and middle-length bin."""
    labels = [f"{a}-{b - 1}" for a, b in zip(bins[:-1], bins[1:], strict=True)]
    cut = pd.cut(frame["middle_chars"], bins=list(bins), labels=labels, right=False)
    g = frame.assign(length=cut).groupby([by, "length"], observed=True)[value]
    return g.agg(
        steps="size", median="median", p90=lambda s: float(np.quantile(s, 0.9))
    ).reset_index()


def edit_cost_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (system, arm) of :func:`.run_edits.localized_edit` rows: body forwards, median
    forward and mask milliseconds, mask p90, mask / forward, constraint setup."""

    def one(frame):
        mask = [x for r in frame.mask_s for x in r]
        fw = [x for r in frame.forward_s for x in r]
        setup = [x for x in frame.setup_s if x is not None and not pd.isna(x)]
        return pd.Series(
            {
                "gen forwards": len(fw),
                "forward ms (median)": 1e3 * np.median(fw) if fw else np.nan,
                "mask ms (median)": 1e3 * np.median(mask) if mask else np.nan,
                "mask ms (p90)": 1e3 * np.quantile(mask, 0.9) if mask else np.nan,
                "mask / forward": np.median(mask) / np.median(fw) if mask and fw else np.nan,
                "constraint setup ms (median)": 1e3 * np.median(setup) if setup else np.nan,
            }
        )

    return rows.groupby(["system", "arm"], sort=False)[list(rows.columns)].apply(one)


def per_step_table(steps: pd.DataFrame) -> pd.DataFrame:
    """:func:`cost_by_length` of :func:`cadlib.fim.per_step_cost` rows, in microseconds."""
    table = cost_by_length(steps, value="seconds", by="method")
    table[["median", "p90"]] *= 1e6
    return table


def stage_table(stages: pd.DataFrame) -> pd.DataFrame:
    """Steps, median and p90 milliseconds of each mask stage
    (:func:`cadlib.fim.step_cost.mask_stages`), and of the whole mask (its stages summed per
    step)."""
    table = stages.groupby("stage", sort=False).seconds.agg(
        steps="size", median=lambda s: 1e3 * s.median(), p90=lambda s: 1e3 * s.quantile(0.9)
    )
    total = whole_mask_ms(stages)
    table.loc["whole mask"] = [len(total), total.median(), total.quantile(0.9)]
    return table


def whole_mask_ms(stages: pd.DataFrame) -> pd.Series:
    """Milliseconds of the whole mask at each step of :func:`cadlib.fim.step_cost.mask_stages`
    (its stages summed per problem and step)."""
    return 1e3 * stages.groupby(["problem", "step"]).seconds.sum()


def generation_steps(edit_rows: pd.DataFrame, fim_rows: pd.DataFrame) -> pd.DataFrame:
    """The constrained runs' generated tokens (:func:`step_costs` of the ``<gen>`` bodies and of
    the FIM-constrained arm) in long form: ``method`` (the mask, or the model step) and its
    ``seconds`` per token, with ``middle_chars``."""
    steps = pd.concat(
        [
            step_costs(edit_rows[edit_rows.constrained], "forward_s").assign(where="<gen> bodies"),
            step_costs(fim_rows[fim_rows.arm == ARMS[2]], "step_s").assign(where="FIM"),
        ],
        ignore_index=True,
    )
    return pd.concat(
        [
            steps.assign(method="mask (ours, whole vocabulary)", seconds=steps.mask_s),
            steps.assign(method="model step (forward)", seconds=steps.model_s),
        ]
    )


def generation_cost(edit_rows: pd.DataFrame, fim_rows: pd.DataFrame) -> pd.DataFrame:
    """:func:`cost_by_length` of :func:`generation_steps`, in milliseconds."""
    long = generation_steps(edit_rows, fim_rows)
    table = cost_by_length(long.dropna(subset=["seconds"]), value="seconds", by="method")
    table[["median", "p90"]] *= 1e3
    return table
