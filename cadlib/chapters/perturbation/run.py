"""Chapter 5's measurement: oracle programs under endpoint noise (paper §3, §5, Tables 8, 4).

The noise model and the trial runner are :mod:`cadlib.endpoint_noise` (chapter 1's Table 4
uses them too); this module runs the trials of every corpus and summarizes them by corpus,
endpoint and noise level (Table 8), builds Table 4, counts the oracle programs' endpoint
anchors, and :func:`numbers` builds the results dict (tables and figures: :mod:`.show`).

EM: trimmed (:func:`cadlib.metrics.equal_stripped`, ``a.strip() == b.strip()``, Table 8's
metric) and byte-exact (:func:`cadlib.metrics.byte_equal`, ``a == b``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from cadlib.cases import EditCase
from cadlib.corpora import CORPUS_LABELS
from cadlib.endpoint_noise import WHICH, perturbation_trials
from cadlib.oracle import oracle_program
from cadlib.resolver import doc_lines

__all__ = [
    "summarize_trials",
    "perturbation_em",
    "corpus_trials",
    "table4_table",
    "anchor_counts",
    "numbers",
]


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


# --- the chapter (notebooks/05_perturbation): its runs, Table 4, anchors and results ---------


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


def numbers(
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
    (:func:`anchor_counts`) and the corpora that could not be loaded."""
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


def anchor_counts(cases: Sequence[EditCase]) -> dict:
    """Over the oracle programs of ``cases``: cases whose last document line is empty and whose
    last copy ends on it, copy ops, copies starting at line 1, and copies of one empty line."""
    ends_last = empty_last = copies = at_one = empty_copies = 0
    for case in cases:
        lines = doc_lines(case.doc)
        program = oracle_program(case.doc, case.gold)
        empty_last += lines[-1] == ""
        if program.copies and program.copies[-1].end == len(lines):
            ends_last += 1
        for c in program.copies:
            copies += 1
            at_one += c.start == 1
            empty_copies += c.start == c.end and lines[c.start - 1] == ""
    return {
        "cases": len(cases),
        "last_line_empty": empty_last,
        "last_copy_ends_last": ends_last,
        "copies": copies,
        "copies_start_line_1": at_one,
        "single_empty_line_copies": empty_copies,
    }
