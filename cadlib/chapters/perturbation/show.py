"""Chapter 5's tables and figures: the corpora loaded, the noise model on one case, Table 8
beside the paper's, the endpoint split, the swapped run, and the figures (the trials and the
results numbers: :mod:`.run`)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from cadlib import paper as _paper
from cadlib.cases import EditCase
from cadlib.corpora import CORPUS_LABELS
from cadlib.endpoint_noise import WHICH, case_rng, perturb_program
from cadlib.metrics import equal_stripped
from cadlib.oracle import oracle_program
from cadlib.record.style import finish_axes
from cadlib.resolver import RangeClippedWarning, doc_lines, resolve

__all__ = [
    "corpora_report",
    "noise_demo",
    "table8_table",
    "paper_difference_se",
    "endpoint_table",
    "swap_table",
    "plot_em_vs_noise",
    "plot_endpoints",
]


def corpora_report(loaded: Mapping[str, Sequence[EditCase]], unavailable: Mapping[str, str]) -> str:
    """One line per corpus: its cases and source, or why it could not be loaded."""
    lines = [
        f"{name:>15}: {len(cases):>3} cases from {cases.source.split(':')[0]}"
        for name, cases in loaded.items()
    ]
    lines += [f"{name:>15}: NOT AVAILABLE ({why})" for name, why in unavailable.items()]
    return "\n".join(lines)


def noise_demo(case: EditCase, seed: int, eps_max: int = 1, trials: int = 4) -> str:
    """The noise model on one case: its oracle program, then ``trials`` noisy copies of it
    (the study's own draws, :func:`cadlib.endpoint_noise.case_rng`) with the trimmed EM of
    each (clipped resolver)."""
    program = oracle_program(case.doc, case.gold)
    n_lines = len(doc_lines(case.doc))
    lines = [f"{case.id}: {n_lines} document lines; oracle program:\n  {program}"]
    for trial in range(trials):
        noisy = perturb_program(program, n_lines, eps_max, case_rng(seed, case.id, eps_max, trial))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RangeClippedWarning)
            out = resolve(noisy, case.doc, mode="clipped")
        lines.append(
            f"eps_max={eps_max}, trial {trial}: {' '.join(str(op) for op in noisy.copies)}"
            f"  ->  trimmed EM {equal_stripped(out, case.gold)}"
        )
    return "\n".join(lines)


def _by_eps(both: pd.DataFrame, name: str) -> pd.DataFrame:
    return both[both.corpus == name].set_index("eps_max")


def table8_table(
    both: pd.DataFrame, order: Sequence[str], eps_values: Iterable[int]
) -> pd.DataFrame:
    """Table 8 (rows of :func:`.run.summarize_trials` with ``which == "both"``): per corpus of
    ``order``, our trimmed EM ± one SE, and the paper's figure where it has one."""
    eps_values = list(eps_values)
    rows = {}
    for name in order:
        part = _by_eps(both, name)
        rows[(CORPUS_LABELS[name], "ours")] = {
            e: f"{100 * part.em_trimmed[e]:.2f}% ± {100 * part.em_trimmed_se[e]:.1f}"
            for e in eps_values
        }
        if name in _paper.TABLE8:
            rows[(CORPUS_LABELS[name], "paper")] = {
                e: f"{100 * v:.2f}%" for e, v in _paper.TABLE8[name].items() if e in eps_values
            }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.columns = [f"eps={e}" for e in table.columns]
    return table


def paper_difference_se(
    both: pd.DataFrame, names: Sequence[str], eps_values: Iterable[int]
) -> pd.DataFrame:
    """Ours minus the paper's Table 8 cell, in our standard errors, per corpus of ``names``
    (each needs a paper row) and noisy level (``eps_max > 0`` with a nonzero SE)."""
    eps_values = list(eps_values)
    diff = {}
    for name in names:
        part = _by_eps(both, name)
        diff[CORPUS_LABELS[name]] = {
            f"eps={e}": (part.em_trimmed[e] - v) / part.em_trimmed_se[e]
            for e, v in _paper.TABLE8[name].items()
            if e in eps_values and e > 0 and part.em_trimmed_se[e] > 0
        }
    return pd.DataFrame(diff).T


def endpoint_table(summary: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """Trimmed and byte-exact EM (%) per corpus of ``names`` and noisy endpoint."""
    split = summary[summary.corpus.isin(names)].pivot_table(
        index=["corpus", "which"], columns="eps_max", values=["em_trimmed", "em_exact"], sort=False
    )
    split.columns = [
        f"{'trimmed' if m == 'em_trimmed' else 'byte-exact'} eps={e}" for m, e in split.columns
    ]
    return (100 * split).round(2).rename(index=CORPUS_LABELS, level=0)


def _em_cells(frame: pd.DataFrame) -> pd.Series:
    return frame.set_index(["corpus", "eps_max"]).apply(
        lambda r: f"{100 * r.em_trimmed:.2f} ± {100 * r.em_trimmed_se:.1f}", axis=1
    )


def swap_table(
    both: pd.DataFrame, swapped: pd.DataFrame, names: Sequence[str], eps_values: Iterable[int]
) -> pd.DataFrame:
    """Trimmed EM ± one SE with inverted ranges kept (our protocol, ``both``) and swapped
    (``swapped``, a ``swap_inverted=True`` run summarized), beside the paper, per corpus of
    ``names`` and noisy level."""
    paper = pd.Series(
        {(c, e): f"{100 * v:.2f}" for c, d in _paper.TABLE8.items() for e, v in d.items()}
    )
    table = pd.concat(
        {"kept": _em_cells(both), "swapped": _em_cells(swapped), "paper": paper}, axis=1
    )
    table = table.loc[[(c, e) for c in names for e in eps_values if e > 0]]
    return table.rename(index=CORPUS_LABELS, level=0)


def plot_em_vs_noise(both: pd.DataFrame, order: Sequence[str], paper_set: Sequence[str]):
    """Figure 6: trimmed EM (± 1 SE) against eps_max per corpus of ``order``; byte-exact EM
    dotted for the paper's corpora and the pooled row, the paper's Table 8 as crosses, the
    extension corpora faint. Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib (~1 s to import)

    main = [*paper_set, "pooled"]
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for name in order:
        part = both[both.corpus == name].sort_values("eps_max")
        style = "-" if name in main else (0, (1, 1))
        (line,) = ax.plot(
            part.eps_max,
            100 * part.em_trimmed,
            marker="o",
            ls=style,
            label=CORPUS_LABELS[name],
            alpha=1 if name in main else 0.5,
        )
        ax.fill_between(
            part.eps_max,
            100 * (part.em_trimmed - part.em_trimmed_se),
            100 * (part.em_trimmed + part.em_trimmed_se),
            color=line.get_color(),
            alpha=0.15,
        )
        if name in main:
            ax.plot(part.eps_max, 100 * part.em_exact, ls=":", color=line.get_color(), lw=1)
        if name in _paper.TABLE8:
            eps, em = zip(*_paper.TABLE8[name].items(), strict=True)
            ax.plot(eps, 100 * np.array(em), "x", color=line.get_color(), ms=9, mew=2)
    ax.set_yscale("symlog", linthresh=10)
    ax.set_yticks([0, 1, 2, 5, 10, 20, 50, 100], ["0", "1", "2", "5", "10", "20", "50", "100"])
    return finish_axes(
        fig,
        ax,
        "endpoint noise eps_max (lines)",
        "trimmed EM (%)",
        "Oracle programs under endpoint noise (x: paper Table 8)",
    )


def plot_endpoints(summary: pd.DataFrame, names: Sequence[str]):
    """Trimmed EM against eps_max with both endpoints, the start only or the end only noisy,
    one panel per corpus of ``names``. Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib (~1 s to import)

    fig, axes = plt.subplots(
        1, len(names), figsize=(3.3 * len(names), 3.4), sharey=True, squeeze=False
    )
    for ax, name in zip(axes.flat, names, strict=True):
        for which, color in zip(WHICH, ["k", "tab:blue", "tab:orange"], strict=True):
            part = summary[(summary.corpus == name) & (summary.which == which)]
            part = part.sort_values("eps_max")
            ax.plot(part.eps_max, 100 * part.em_trimmed, marker="o", color=color, label=which)
        ax.set_title(CORPUS_LABELS[name], fontsize=10)
        ax.set_xlabel("eps_max")
    axes[0, 0].set_ylabel("trimmed EM (%)")
    axes[0, 0].legend(title="noisy endpoint", fontsize=8)
    fig.tight_layout()
    return fig
