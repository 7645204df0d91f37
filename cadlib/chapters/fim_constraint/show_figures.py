"""Chapter 8's figures (the standard library's cost figure is :mod:`.show_stdlib`'):

* :func:`plot_validity` — the primary metric (the model ended it and it parses) with and
  without the FIM constraint, ``<gen>`` bodies and FIM completion side by side (section 3);
* :func:`plot_costs` — per-step recognition (ours vs re-parsing) and mask vs forward in
  constrained generation, against the middle's length (section 4).

Each returns its figure (the notebook shows it); the tables behind them are :mod:`.run`'s and
:mod:`.run_costs`'.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import NullFormatter

from .run import validity_table
from .run_costs import generation_steps

__all__ = ["plot_validity", "plot_costs"]


def plot_validity(
    edit_rows: pd.DataFrame,
    fim_rows: pd.DataFrame,
    n_cases: int,
    n_problems: int,
    params: dict,
):
    """Bars of the primary metric, "the model ended it and it parses" (``k/n`` above; outline:
    ``ast.parse`` with the budget-closed outputs included; hatched: tests pass) per system and
    arm of the localized edits (``n_cases``) and per arm of FIM completion (``n_problems``); the
    title names ``params``' model and profile."""
    edit_table = validity_table(edit_rows, ["system", "arm"])
    fim_table = validity_table(fim_rows, ["arm"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    panels = [
        (
            axes[0],
            edit_table.assign(label=edit_table.system + "\n" + edit_table.arm),
            f"<gen> bodies, localized edits ({n_cases} cases)",
        ),
        (
            axes[1],
            fim_table.assign(label=fim_table.arm.str.replace(" + ", "\n+ ")),
            f"FIM completion ({n_problems} problems)",
        ),
    ]
    for ax, t, title in panels:
        colors = ["#2ca02c" if "FIM" in a else "#7f7f7f" for a in t.arm]
        ax.bar(range(len(t)), 100 * t.parse_rate, color="none", edgecolor="k", lw=0.8, ls="--")
        bars = ax.bar(range(len(t)), 100 * t.ended_rate, color=colors)
        ax.bar(range(len(t)), 100 * t.pass_rate, color="none", edgecolor="k", hatch="//", lw=0.5)
        for b, k, n in zip(bars, t.ended_and_parses, t.n, strict=True):
            ax.text(
                b.get_x() + b.get_width() / 2,
                b.get_height() + 1,
                f"{k}/{n}",
                ha="center",
                fontsize=8,
            )
        ax.set_xticks(range(len(t)), t.label, fontsize=6.5)
        ax.set_title(title, fontsize=10)
    axes[0].set_ylabel("model ended & ast.parse accepts (%)")
    axes[0].set_ylim(0, 110)
    fig.suptitle(
        f"Finished and valid with and without the FIM constraint (dashed: parses, "
        f"budget-closed included; hatched: tests pass); {params['model']}, "
        f"{params['profile']} profile",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


_METHOD_COLORS = {
    "incremental": "#2ca02c",
    "checked_unconstrained": "#d62728",
    "from_scratch": "#ff7f0e",
}


def plot_costs(
    steps: pd.DataFrame, edit_rows: pd.DataFrame, fim_rows: pd.DataFrame, params: dict, cpu: str
):
    """Left: median time per token of each recognition method of
    :func:`cadlib.fim.per_step_cost` (``steps``) per 25-character bin of the middle, up to
    ``params["cost_middle_chars"]``. Right: median mask and model-step time per generated token
    of the constrained runs (:func:`.run_costs.generation_steps`) against
    the middle's length so far; the title names ``params``' model and profile."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for method, g in steps.groupby("method"):
        bins = range(0, params["cost_middle_chars"] + 25, 25)
        med = g.groupby(pd.cut(g.middle_chars, bins=bins), observed=True).seconds.median()
        axes[0].plot(
            [iv.mid for iv in med.index],
            1e6 * med.values,
            marker="o",
            color=_METHOD_COLORS[method],
            label=method.replace("_", " "),
        )
    axes[0].set_yscale("log")
    axes[0].set_xlabel("middle length (characters)")
    axes[0].set_ylabel("time per token (us, median)")
    axes[0].set_title("per-step recognition: ours vs re-parsing", fontsize=10)
    axes[0].legend(fontsize=8)
    long = generation_steps(edit_rows, fim_rows)
    for method, g in long.dropna(subset=["seconds"]).groupby("method"):
        med = g.groupby(
            pd.cut(g.middle_chars, bins=[0, 10, 25, 50, 100, 200, 400, 800], right=False),
            observed=True,
        ).seconds.median()
        axes[1].plot([iv.mid for iv in med.index], 1e3 * med.values, marker="o", label=method)
    axes[1].set_yscale("log")
    axes[1].set_yticks([2, 5, 10, 20, 50, 100], ["2", "5", "10", "20", "50", "100"])
    axes[1].yaxis.set_minor_formatter(NullFormatter())
    axes[1].set_xlabel("middle length so far (characters)")
    axes[1].set_ylabel("ms per generated token (median)")
    axes[1].set_title("mask vs forward in constrained generation", fontsize=10)
    axes[1].legend(fontsize=8)
    fig.suptitle(
        f"Cost vs generated length; {params['model']}, {cpu}, {params['profile']} profile",
        fontsize=10,
    )
    fig.tight_layout()
    return fig
