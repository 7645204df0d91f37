"""Chapter 3's figures: span-length histograms, token-level cover against ``m``, and the bounds
against ``m`` (paper §4.2, App. D, J).

Each takes the :class:`.run.CeilingRun` of :func:`.run.analyse` and returns the matplotlib
figure (a notebook shows it at the end of the cell).
"""

from __future__ import annotations

import numpy as np

from cadlib import paper as _paper
from cadlib.corpora import CORPUS_LABELS
from cadlib.record.style import finish_axes

from .run import CeilingRun

__all__ = ["plot_span_histograms", "plot_token_cover", "plot_bounds_vs_m"]

#: Bound columns of :func:`~cadlib.costs.bounds.bounds_vs_m` and their colours.
_BOUND_COLORS = {"line_exact": "tab:blue", "token_m": "tab:orange", "token_exact": "tab:red"}


def _log2_m_axis(ax, min_spans) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(min_spans, [str(m) for m in min_spans])


def plot_span_histograms(run: CeilingRun, m: int = 8):
    """Line-level copy-span lengths per corpus (not pooled), log-spaced bins; zero-token spans
    (copied empty lines) drawn at 0.5, a dashed line at ``m``. Paper corpora green."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib (~1 s to import)

    show = [n for n in run.order if n != "pooled"]
    cols = (len(show) + 1) // 2
    fig, axes = plt.subplots(2, cols, figsize=(3.2 * cols, 5.6), sharey=False, squeeze=False)
    bins = np.logspace(np.log10(0.5), np.log10(2048), 23)
    for ax, name in zip(axes.flat, show, strict=False):
        values = np.maximum(np.asarray(run.spans[name], dtype=float), 0.5)
        ax.hist(values, bins=bins, color="tab:green" if name in run.paper_set else "tab:gray")
        ax.axvline(m, ls="--", c="k", lw=1)
        ax.set_xscale("log")
        ax.set_title(f"{CORPUS_LABELS[name]} (K={len(values)})", fontsize=10)
        ax.set_xlabel("span length N (Qwen2.5 tokens)")
    for ax in axes.flat[len(show) :]:
        ax.set_visible(False)
    axes[0, 0].set_ylabel("copy spans")
    axes[1, 0].set_ylabel("copy spans")
    fig.suptitle("Line-level copy-span lengths (oracle programs, Qwen2.5 BPE)", fontsize=11)
    fig.tight_layout()
    return fig


def plot_token_cover(run: CeilingRun):
    """Token-level copy fraction against the minimum span ``m`` per corpus (solid), its
    line-level ceiling (dotted) and the paper's m=8 figures (crosses)."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib (~1 s to import)

    fig, ax = plt.subplots(figsize=(7.5, 4))
    for name in run.order:
        row = run.token_tables[name]
        (line,) = ax.plot(row.m, 100 * row.f_tok, marker="o", label=CORPUS_LABELS[name])
        ax.axhline(100 * run.summary[name]["f_line"], color=line.get_color(), ls=":", lw=1)
    for name, value in _paper.TOKEN_LEVEL["m8"].items():
        ax.plot(
            8,
            100 * value,
            marker="x",
            color="k",
            ms=8,
            ls="none",
            label="paper, m=8" if name == "probeedit" else None,
        )
    _log2_m_axis(ax, run.params["min_spans"])
    return finish_axes(
        fig,
        ax,
        "minimum span m (tokens)",
        "copy fraction (%)",
        "Token-level cover vs m (solid); line-level ceiling (dotted)",
    )


def plot_bounds_vs_m(run: CeilingRun):
    """Per paper corpus and pooled: line_exact, token_m and token_exact against ``m``, solid
    under the paper's reconstructed curve, dashed under the measured one; the paper's
    token-level bound at m=8 and its bnd_exact marked."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib (~1 s to import)

    show, bvm = [*run.paper_set, "pooled"], run.bounds_vs_m
    fig, axes = plt.subplots(1, len(show), figsize=(3.3 * len(show), 3.6), squeeze=False)
    for ax, name in zip(axes.flat, show, strict=True):
        for curve_name, style in zip(run.curves, ["-", "--"], strict=False):
            part = bvm[(bvm.corpus == name) & (bvm.curve == curve_name)]
            for col, color in _BOUND_COLORS.items():
                ax.plot(
                    part.m,
                    part[col],
                    style,
                    marker="o",
                    ms=3,
                    color=color,
                    label=f"{col}, {curve_name}",
                )
        if name in _paper.TOKEN_LEVEL["m8_bnd"]:
            ax.plot(8, _paper.TOKEN_LEVEL["m8_bnd"][name], "kx", ms=8, label="paper token, m=8")
        if name in _paper.TABLE2:
            ax.plot(1, _paper.TABLE2[name]["bnd_exact"], "k+", ms=9, label="paper bnd_exact")
        _log2_m_axis(ax, run.params["min_spans"])
        ax.set_yscale("log")
        ax.set_title(CORPUS_LABELS[name], fontsize=10)
        ax.set_xlabel("minimum span m")
    axes[0, 0].set_ylabel("speedup bound (x)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7, bbox_to_anchor=(0.5, -0.12))
    fig.tight_layout()
    return fig
