"""Chapter 6c's figures and the tables it shows beside them (no sentences: those are
:mod:`cadlib.chapters.kv_reuse.text`): the agreement trade-off per policy, the committed timed
run, and where the policy search's development decisions flip."""

from __future__ import annotations

import pandas as pd

from cadlib.corpora import CORPUS_LABELS

from .profiles import AGREEMENT_THRESHOLD, RULE_MAX_RECOMPUTE
from .run_flips import flip_table
from .run_policy_search import _frame
from .run_speed import SPEED_GOALS

__all__ = [
    "plot_tradeoff",
    "timing_run_table",
    "plot_timing_run",
    "dev_flips",
    "plot_rules",
]


def plot_tradeoff(table: pd.DataFrame, threshold: float = AGREEMENT_THRESHOLD, title: str = ""):
    """Agreement (with its interval) against the share of spliced ids recomputed, one point
    per policy, one panel per split; the declared threshold as a line. Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib

    splits = list(dict.fromkeys(table.split))
    fig, axes = plt.subplots(1, len(splits), figsize=(4.5 * len(splits), 3.6), squeeze=False)
    for ax, split in zip(axes[0], splits, strict=True):
        t = table[table.split == split]
        ax.errorbar(t.recomputed, t.rate, yerr=[t.rate - t.lo, t.hi - t.rate], fmt="o", capsize=3)
        for k, (_, r) in enumerate(t.sort_values("recomputed", kind="stable").iterrows()):
            ax.annotate(
                r.policy,
                (r.recomputed, r.rate),
                fontsize=7,
                textcoords="offset points",
                xytext=(4, -10 if k % 2 == 0 else 6),
            )  # alternate: neighbours apart
        ax.axhline(threshold, ls="--", lw=1, color="grey", label=f"threshold {threshold:.1%}")
        ax.legend(loc="lower right", fontsize=7)
        ax.set(
            xlabel="share of spliced ids recomputed",
            ylabel="decision agreement",
            title=f"{split} ({t.cases.max()} cases)",
        )
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def timing_run_table(record: dict) -> pd.DataFrame:
    """The timed run's medians per corpus and method
    (:func:`cadlib.chapters.kv_reuse.run.timing_table`, as committed)."""
    return pd.DataFrame(
        [
            dict(corpus=CORPUS_LABELS.get(c, c), method=m, **v)
            for c, methods in record["numbers"]["timing"].items()
            for m, v in methods.items()
        ]
    )


def plot_timing_run(record: dict, policy: str | None = None):
    """The timed run at a glance: per corpus (rows), each method's speed over the exact splice
    (median decode seconds, log axis), the reuse policies in shades of one colour with
    ``policy`` (the one the goals are judged at) ringed; lines at 1× (the exact splice) and at
    the 3× goal. Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib

    from cadlib.record.style import PALETTE

    table = timing_run_table(record)
    methods = list(dict.fromkeys(table.method))
    reuse = [m for m in methods if m.startswith("reuse ")]
    shades = plt.get_cmap("Purples")(
        [0.45 + 0.5 * k / max(1, len(reuse) - 1) for k in range(len(reuse))]
    )
    colour = {**PALETTE, **dict(zip(reuse, shades, strict=True))}
    corpora = list(dict.fromkeys(table.corpus))
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(corpora) + 1.6))
    for k, m in enumerate(methods):
        t = table[table.method == m]
        y = [corpora.index(c) + (k - len(methods) / 2) * 0.06 for c in t.corpus]
        ringed = m == f"reuse {policy}"
        ax.scatter(
            t.vs_exact_splice,
            y,
            s=28,
            color=colour.get(m, "black"),
            label=m,
            zorder=3,
            edgecolors="black" if ringed else "none",
            linewidths=1.5 if ringed else 0,
        )
    ax.axvline(1.0, color="grey", lw=1)
    ax.axvline(SPEED_GOALS[0][2], color="grey", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_yticks(range(len(corpora)), corpora)
    ax.invert_yaxis()
    ax.set_xlabel("speed over the exact splice (median decode s; dashed: the 3× goal)")
    ax.set_title(
        f"timed run, {record['params']['timing_cases']} case(s) per corpus"
        + (f"; ringed: reuse {policy}" if policy else ""),
        fontsize=10,
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def dev_flips(report: dict) -> pd.DataFrame:
    """Where the development decisions flip, per policy (:func:`flip_table` of the dev rows)."""
    return flip_table(_frame(report["dev"]), split="dev")


def plot_rules(
    table: pd.DataFrame,
    threshold: float = AGREEMENT_THRESHOLD,
    cap: float = RULE_MAX_RECOMPUTE,
    title: str = "",
    test: pd.DataFrame | None = None,
):
    """Issue 51's curves: agreement on the cases that reuse anything against the share of
    copied ids recomputed, one line per rule family (:func:`.run_rules.curve_table`), each
    family from ``none``, each point labelled by its setting (``K``, ``R``, ``K+R``); the
    threshold as a line. ``test``: the test-corpus run pooled (the ``all`` rows of
    :func:`.run_rules_test.corpus_table`), one open marker per policy at what it spends
    (a gate's fallbacks counted). Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib

    fig, ax = plt.subplots(figsize=(6, 3.8))
    zero = table[table.family == "none"]
    for name in dict.fromkeys(table.family):
        if name == "none":
            continue
        t = pd.concat([zero, table[table.family == name]]).sort_values("recomputed")
        ax.plot(t.recomputed, t.rate, "o-", label=name, ms=4)
        for _, r in t[t.family == name].iterrows():
            label = r.policy.replace("seams=", "").replace("deviation=", "").replace(",", "+")
            ax.annotate(
                label,
                (r.recomputed, r.rate),
                fontsize=6,
                xytext=(3, 3),
                textcoords="offset points",
            )
    ax.plot(zero.recomputed, zero.rate, "ks", label="none", ms=5)
    if test is not None:
        ax.plot(test.spent, test.rate, "D", mfc="none", mec="C3", ms=6, label="test run")
        for _, r in test.iterrows():
            ax.annotate(  # left of its marker: the gated point sits at the right edge
                r.policy,
                (r.spent, r.rate),
                fontsize=6,
                xytext=(-5, -9),
                textcoords="offset points",
                ha="right",
            )
    ax.axhline(threshold, ls="--", lw=1, color="grey", label=f"threshold {threshold:.1%}")
    ax.axvline(cap, ls=":", lw=1, color="grey", label=f"{cap:.0%} recomputed")
    ax.set(
        xlabel="share of copied ids recomputed"
        + ("" if test is None else " (test run: spent, fallbacks counted)"),
        ylabel="agreement (cases that reuse)",
        title=title,
    )
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    return fig
