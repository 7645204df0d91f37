"""Span-selection brittleness: oracle programs under endpoint noise (paper §3, §5, Tables 8, 4).

The noise model and the trial runner are :mod:`cadlib.endpoint_noise` (chapter 1's Table 4
uses them too); this module is chapter 5's: its profiles, the summaries of the trials by
corpus, endpoint and noise level (Table 8), the tables, figures and the chapter's numbers.

EM: trimmed (:func:`cadlib.metrics.equal_stripped`, ``a.strip() == b.strip()``, Table 8's
metric) and byte-exact (:func:`cadlib.metrics.byte_equal`, ``a == b``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from cadlib import paper as _paper
from cadlib.cases import EditCase
from cadlib.corpora import CORPUS_LABELS
from cadlib.endpoint_noise import WHICH, case_rng, perturb_program, perturbation_trials
from cadlib.metrics import equal_stripped
from cadlib.oracle import oracle_program
from cadlib.record.style import finish_axes
from cadlib.resolver import RangeClippedWarning, doc_lines, resolve

__all__ = [
    "PROFILES",
    "summarize_trials",
    "perturbation_em",
    "corpus_trials",
    "corpora_report",
    "noise_demo",
    "table8_table",
    "paper_difference_se",
    "endpoint_table",
    "table4_table",
    "swap_table",
    "plot_em_vs_noise",
    "plot_endpoints",
    "chapter_numbers",
]

PROFILES = {
    "cpu": {
        "corpora": ("probeedit", "heval-fix-py", "heval-fix-js"),
        "extra_corpora": ("heval-fix-java", "heval-fix-go", "heval-fix-cpp", "heval-fix-rust"),
        "eps_values": (0, 1, 2, 3, 5),
        "trials": 5,
        "which": WHICH,
    },
}
PROFILES["paper"] = dict(PROFILES["cpu"])


def summarize_trials(
    trials: pd.DataFrame, pool: Iterable[str] | None = None, pooled_name: str = "pooled"
) -> pd.DataFrame:
    """EM and rejection rates per (corpus, which, eps_max), plus a pooled row over ``pool``
    (default: every corpus present) that weights each case equally, as Table 8's pooled row.

    ``em_trimmed`` is the mean over trials x cases (Table 8's cell); ``em_trimmed_median``
    the median over trials of each trial's EM (Table 1 says "median EM"); ``em_trimmed_se``
    the standard error of ``em_trimmed`` with cases as the independent unit (each case's EM
    averaged over its trials first), to judge differences from the paper's figures.
    """
    pool = list(pool) if pool is not None else list(dict.fromkeys(trials["corpus"]))
    both = trials
    if pool:
        pooled = trials[trials["corpus"].isin(pool)].assign(corpus=pooled_name)
        both = pd.concat([trials, pooled], ignore_index=True)
    keys = ["corpus", "which", "eps_max"]
    per_trial = both.groupby([*keys, "trial"], sort=False)["em_trimmed"].mean()
    out = both.groupby(keys, sort=False).agg(
        cases=("case", "nunique"),
        runs=("case", "size"),
        em_trimmed=("em_trimmed", "mean"),
        em_exact=("em_exact", "mean"),
        strict_rejected=("strict_rejected", "sum"),
        strict_rejection_rate=("strict_rejected", "mean"),
        strict_em_trimmed=("strict_em_trimmed", "mean"),
        out_of_range=("out_of_range", "sum"),
        inverted=("inverted", "sum"),
    )
    out["em_trimmed_median"] = per_trial.groupby(keys, sort=False).median()
    per_case = both.groupby([*keys, "case"], sort=False)["em_trimmed"].mean()
    grouped = per_case.groupby(keys, sort=False)
    out["em_trimmed_se"] = grouped.std(ddof=1) / np.sqrt(grouped.size())
    return out.reset_index()


def perturbation_em(
    cases: Sequence[EditCase],
    eps_values: Iterable[int] = (0, 1, 2, 3, 5),
    trials: int = 5,
    seed: int = 0,
    which: Iterable[str] = ("both",),
    **kwargs,
) -> pd.DataFrame:
    """Table 8 for one corpus: :func:`cadlib.endpoint_noise.perturbation_trials` summarized by
    :func:`summarize_trials` (one row per which x eps_max; no pooled row).

    The ``eps_max = 1`` row also gives Table 4's noisy row: ``strict_rejected`` (runs the
    strict resolver rejects), ``em_exact`` / ``em_trimmed`` (clipped resolver).
    """
    runs = perturbation_trials(cases, eps_values, trials, seed, which, **kwargs)
    return summarize_trials(runs, pool=())


# --- the chapter (notebooks/05_perturbation): its runs, tables, figures and results -----------


def corpus_trials(
    corpora: Mapping[str, Sequence[EditCase]],
    eps_values: Iterable[int],
    trials: int,
    seed: int,
    which: Iterable[str] = ("both",),
    **kwargs,
) -> pd.DataFrame:
    """:func:`cadlib.endpoint_noise.perturbation_trials` of every corpus of ``corpora`` (name
    -> cases), in one frame whose ``corpus`` column is the name; ``kwargs`` (``clamp``,
    ``swap_inverted``) as there."""
    frames = [
        perturbation_trials(
            cases, eps_values, trials, seed, which, corpus=name, progress=False, **kwargs
        )
        for name, cases in corpora.items()
    ]
    return pd.concat(frames, ignore_index=True)


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
    """Table 8 (rows of :func:`summarize_trials` with ``which == "both"``): per corpus of
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


def table4_table(both: pd.DataFrame, unclamped: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """Table 4, strict vs clipped resolution, per corpus of ``names``: oracle programs
    (``eps_max = 0``), ``eps_max = 1`` clamped (the paper's protocol, from ``both``) and
    unclamped (from ``unclamped``, :func:`summarize_trials` of a ``clamp=False`` run)."""
    rows = {}
    for label, frame, eps in [
        ("oracle programs (eps=0)", both, 0),
        ("eps=1, clamped (paper)", both, 1),
        ("eps=1, unclamped", unclamped, 1),
    ]:
        for name in names:
            r = frame[(frame.corpus == name) & (frame.eps_max == eps)].iloc[0]
            rows[(label, CORPUS_LABELS[name])] = {
                "runs": int(r.runs),
                "out of range": int(r.out_of_range),
                "inverted": int(r.inverted),
                "strict rejected": int(r.strict_rejected),
                "strict EM (trimmed)": r.strict_em_trimmed,
                "clipped EM (byte-exact)": r.em_exact,
                "clipped EM (trimmed)": r.em_trimmed,
            }
    return pd.DataFrame.from_dict(rows, orient="index")


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


_CELL_FIELDS = (
    "em_trimmed",
    "em_trimmed_se",
    "em_trimmed_median",
    "em_exact",
    "strict_rejected",
    "strict_em_trimmed",
    "out_of_range",
    "inverted",
    "runs",
)


def _cells(frame: pd.DataFrame) -> dict:
    """Rows of :func:`summarize_trials` as ``{corpus: {eps_max: {field: value}}}`` (JSON)."""
    return {
        name: {
            int(r.eps_max): {k: round(float(getattr(r, k)), 6) for k in _CELL_FIELDS}
            for r in frame[frame.corpus == name].itertuples()
        }
        for name in dict.fromkeys(frame.corpus)
    }


def chapter_numbers(
    summary: pd.DataFrame,
    table4: pd.DataFrame,
    swapped: pd.DataFrame,
    anchors: Mapping,
    unavailable: Mapping[str, str],
    which: Iterable[str] = WHICH,
) -> dict:
    """The chapter's ``numbers`` for ``results/perturbation.json``: Table 8 (``summary``'s
    both-endpoints rows), every endpoint choice of ``which``, Table 4 (:func:`table4_table`),
    the swapped run (``swapped``, summarized), the endpoint anchors
    (:func:`cadlib.chapters.perturbation.prose.anchor_counts`) and the corpora that could not be
    loaded."""
    return {
        "corpora_unavailable": dict(unavailable),
        "table8": _cells(summary[summary.which == "both"]),
        "by_endpoint": {w: _cells(summary[summary.which == w]) for w in which},
        "table4": {
            f"{a} / {b}": {k: round(float(v), 6) for k, v in row.items()}
            for (a, b), row in table4.to_dict(orient="index").items()
        },
        "swap_inverted": _cells(swapped),
        "endpoint_anchors": dict(anchors),
    }
