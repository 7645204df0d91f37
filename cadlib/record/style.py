"""One plot style for the book, and quiet, reproducible output.

Call :func:`setup` in a chapter's first code cell after the parameters; chapters colour
methods from :data:`PALETTE` and finish one-panel plots with :func:`finish_axes`. The one figure
several chapters draw, s(N) on log-log axes (chapters 2 and 6b), is :func:`plot_speedup`. A
table longer than :data:`TABLE_ROWS` rows is shown folded (:func:`collapsed_table`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

from tqdm import TqdmExperimentalWarning, TqdmWarning

from cadlib import paper as _paper
from cadlib.costs.speedup_curve import curve_label

__all__ = ["setup", "PALETTE", "finish_axes", "plot_speedup", "collapsed_table", "TABLE_ROWS"]

#: Colours of the four edit formats / methods, used across chapters.
PALETTE = {
    "full regeneration": "#7f7f7f",
    "search/replace": "#d62728",
    "unified diff": "#ff7f0e",
    "Copy-as-Decode": "#2ca02c",
    "Copy-as-Decode +drafts": "#98df8a",
    "autoregressive": "#7f7f7f",
    "prompt lookup": "#1f77b4",
}


#: The most rows a table shows open on a page (tests/book/test_reader_budget.py checks it).
TABLE_ROWS = 25


def collapsed_table(frame, summary: str, rows: int = TABLE_ROWS):
    """``frame`` as it is when it has at most ``rows`` rows, else folded in a ``<details>``
    element headed ``summary`` and its row count, so a long table does not scroll the page
    (the reader opens it; the full table is still there)."""
    if len(frame) <= rows:
        return frame
    from IPython.display import HTML  # lazy: only notebooks display

    head = f"<summary>{summary} ({len(frame)} rows)</summary>"
    return HTML(f"<details>{head}\n{frame.to_html()}\n</details>")


def setup() -> None:
    """Seaborn's whitegrid style at a readable size; silence tqdm's missing-ipywidgets warning
    (progress bars print as text, which the book hides and nbval sanitizes)."""
    import matplotlib  # lazy: matplotlib and seaborn take ~1 s; only figures need them
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    matplotlib.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight"})
    warnings.filterwarnings("ignore", category=TqdmWarning)
    warnings.filterwarnings("ignore", category=TqdmExperimentalWarning)


def finish_axes(fig, ax, xlabel: str, ylabel: str, title: str):
    """Label ``ax``, title it (11 pt) and add a small two-column legend, then tighten ``fig``;
    return ``fig``. The one finish of the book's one-panel plots of many corpora's curves."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    return fig


def plot_speedup(curves: Mapping, paper: Mapping | None = None, ax=None, title: str | None = None):
    """``s(N)`` on log-log axes, one line per measured curve, the paper's points marked.

    ``curves`` maps names to ``{"N", "s", "s_lo", "s_hi", "s_best", "meta"}``
    (chapter 2's ``numbers["curves"]``): the median ratio as a line, the per-trial min–max as a
    band, the best-of-trials ratio dashed; ``paper`` maps names to ``{"N", "s", "meta"}``
    (default: :data:`cadlib.paper.KERNEL_CURVES`). Returns the figure.
    """
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib (~1 s to import)

    paper = _paper.KERNEL_CURVES if paper is None else paper
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
    else:
        fig = ax.figure
    for c in curves.values():
        line = ax.plot(c["N"], c["s"], marker="o", label=curve_label(c["meta"]))[0]
        if "s_lo" in c:
            ax.fill_between(c["N"], c["s_lo"], c["s_hi"], color=line.get_color(), alpha=0.15)
        if "s_best" in c:
            best = f"{c['meta']['model']}: best of trials (min T_AR / min T_PP)"
            ax.plot(c["N"], c["s_best"], ls="--", lw=1, color=line.get_color(), label=best)
    for i, (name, c) in enumerate(paper.items()):
        ax.scatter(
            c["N"],
            c["s"],
            marker="s^Dv"[i % 4],
            s=70,
            zorder=3,
            edgecolor="k",
            label=f"{curve_label(c['meta'])}: A100 figures",
        )
        for n, v in zip(c["N"], c["s"], strict=True):
            ax.annotate(
                f"{v:.1f}× ({name.removeprefix('paper:')}, A100)",
                (n, v),
                textcoords="offset points",
                xytext=(-8, 8 if i % 2 == 0 else -14),
                ha="right",
                fontsize=7,
            )
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted({int(n) for c in [*curves.values(), *paper.values()] for n in c["N"]})
    ax.set_xticks(ticks, [str(n) for n in ticks])
    ax.set_xlabel("span length N (tokens)")
    ax.set_ylabel("s(N) = T_AR / T_PP")
    ax.set_title(title or "Parallel-prefill speedup over N decode steps")
    ax.legend(fontsize=6.5, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig
