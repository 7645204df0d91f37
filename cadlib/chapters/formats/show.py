"""Chapter 4's tables and figures: the paper's Table 3 beside ours, its printed totals, and the
Pareto view (the results numbers: :mod:`.run`; the generated prose: :mod:`.text`)."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from cadlib.record.style import PALETTE

from .run import paper_table3, pareto_front
from .run_formats import FORMATS, TABLE3_FORMATS

__all__ = [
    "compare_with_paper",
    "pareto_plot",
    "printed_totals",
]

# ---------------------------------------------------------------------------------------------
# The paper's Table 3, and the side-by-side view
# ---------------------------------------------------------------------------------------------


def compare_with_paper(summary: pd.DataFrame) -> pd.DataFrame:
    """Our Table 3 beside the paper's: one row per corpus x format, ``ours`` / ``paper``
    sub-columns; the paper's Δ tokens are recomputed from its own totals."""
    cols = ["n", "mean", "median", "p95", "total", "rt_em", "fails", "delta_tok_pct", "delta_em"]
    ours = summary[summary["format"].isin(TABLE3_FORMATS)].set_index(["corpus", "format"])
    paper = paper_table3().set_index(["corpus", "format"])
    both = pd.merge(
        ours[cols],
        paper[cols],
        how="left",
        left_index=True,
        right_index=True,
        suffixes=("", "_paper"),
    )
    both.columns = pd.MultiIndex.from_tuples(
        [
            (c.removesuffix("_paper"), "paper" if c.endswith("_paper") else "ours")
            for c in both.columns
        ]
    )
    return both[[(c, who) for c in cols for who in ("ours", "paper")]]


_EXTENSION_COLORS = ("#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")


def _format_colors(formats: list[str]) -> dict[str, str]:
    """The book's palette for Table 3's formats (:data:`cadlib.record.style.PALETTE`), others
    after it."""
    names = {
        "full": "full regeneration",
        "search-replace": "search/replace",
        "unified-diff": "unified diff",
        "cad": "Copy-as-Decode",
    }
    extra = iter(_EXTENSION_COLORS * 4)
    return {fmt: PALETTE.get(names.get(fmt, ""), None) or next(extra) for fmt in formats}


def _shade_dominated(ax, front: list[tuple[float, float, str]]) -> None:
    """Shade what the Pareto front dominates (more tokens and no better EM)."""
    (x0, x1), (y0, _) = ax.get_xlim(), ax.get_ylim()
    xs = [p[0] for p in front] + [x1]
    ys = [p[1] for p in front] + [front[-1][1]]
    ax.fill_between(xs, y0, ys, step="post", color="grey", alpha=0.12, zorder=0, linewidth=0)
    ax.step(xs, ys, where="post", color="grey", linestyle="--", linewidth=1, zorder=1)
    ax.set_xlim(x0, x1)
    ax.set_ylim(bottom=y0)


def pareto_plot(
    summary: pd.DataFrame, corpora: Iterable[str], formats: Iterable[str], title: str = ""
):
    """One panel per corpus: mean output tokens (log) vs byte-exact RT-EM per format, with the
    Pareto front and the region it dominates shaded (paper §4.4's argument: CaD is on the
    front, at its low-token end)."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib (~1 s to import)
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    corpora, formats = list(corpora), list(formats)
    fig, axes = plt.subplots(
        1, len(corpora), figsize=(4.3 * len(corpora), 3.9), sharey=True, squeeze=False
    )
    colors = _format_colors(formats)
    fronts = []
    for ax, corpus in zip(axes[0], corpora, strict=True):
        rows = summary[(summary["corpus"] == corpus) & summary["format"].isin(formats)]
        points = list(zip(rows["mean"], rows["rt_em"], rows["format"], strict=True))
        fronts.append(pareto_front(points))
        for x, y, fmt in points:
            marker = "o" if fmt in TABLE3_FORMATS else "^"
            ax.scatter(
                x,
                y,
                color=colors[fmt],
                marker=marker,
                s=60,
                edgecolor="black",
                linewidth=0.5,
                zorder=2,
                label=FORMATS[fmt].label,
            )
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1, 2, 3, 5)))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.margins(x=0.08, y=0.08)
        ax.set_title(f"{corpus} (n = {int(rows['n'].iloc[0])})", fontsize=10)
        ax.grid(alpha=0.3)
    for ax, front in zip(axes[0], fronts, strict=True):  # after all points: y is shared
        _shade_dominated(ax, front)
    axes[0][0].set_ylabel("round-trip exact match (byte-exact)")
    fig.supxlabel(
        "mean output tokens per edit (Qwen2.5 BPE, log scale); shaded: dominated", fontsize=10
    )
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, bbox_to_anchor=(0.5, -0.12))
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def printed_totals(paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """The paper's pooled Table 3 rows: its printed Δ beside the Δ recomputed from its printed
    token totals, and its printed mean beside total / n (which the mean should equal)."""
    paper = paper_table3() if paper is None else paper
    pooled = paper[paper["corpus"] == "pooled"].set_index("format")
    n = int(pooled["n"].iloc[0])
    return pd.DataFrame(
        {
            "printed Δ": pooled["delta_printed"],
            "Δ tokens from printed totals (%)": pooled["delta_tok_pct"].round(1),
            "printed mean": pooled["mean"],
            f"total / {n}": (pooled["total"] / n).round(1),
        }
    )
