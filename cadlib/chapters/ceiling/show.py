"""Chapter 3's tables, ours beside the paper's (Table 2, §4.2, App. D, J); its figures are
:mod:`.show_figures`.

:func:`side_by_side` is the layout of every comparison: rows ``(corpus, "ours" | "paper")``.
Most other functions take the :class:`.run.CeilingRun` of :func:`.run.analyse` and return the
DataFrame the chapter shows, corpora labelled with :data:`cadlib.corpora.CORPUS_LABELS` and in
the run's row order; :func:`corpora_report` lists the corpora loaded and those that were not,
and :func:`percentile_table` / :func:`percentile_matches` lay out the percentile investigation
(:func:`.run_percentiles.percentile_variants`) beside the paper's row.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from cadlib import paper as _paper
from cadlib.corpora import CORPUS_LABELS
from cadlib.costs.bounds import bound_uniform, curve_coverage

from .run import CeilingRun, short_spans

__all__ = [
    "corpora_report",
    "side_by_side",
    "TABLE2_COLUMNS",
    "BOUND_COLUMNS",
    "table2",
    "short_span_table",
    "token_level_table",
    "paper_bnd_m8_check",
    "bounds_table",
    "measured_curve_table",
    "coverage_table",
    "m8_bounds_table",
    "percentile_table",
    "percentile_matches",
]

#: Table 2's columns, and the bound columns of the bound tables.
TABLE2_COLUMNS = ("n", "T", "T_copy", "T_gen", "f_line", "K", "mean", "p50", "p95")
BOUND_COLUMNS = ("s_m8", "s_mean", "bnd_m8", "bnd_mean", "bnd_exact")


def corpora_report(run: CeilingRun) -> str:
    """One line per corpus: its case count and source, or why it could not be loaded."""
    lines = [
        f"{name:>15}: {len(corpus):>3} cases from {corpus.source.split(':')[0]}"
        for name, corpus in run.corpora.items()
    ]
    lines += [f"{name:>15}: NOT AVAILABLE ({why})" for name, why in run.unavailable.items()]
    return "\n".join(lines)


def side_by_side(
    ours: Mapping[str, Mapping], paper: Mapping[str, Mapping], columns
) -> pd.DataFrame:
    """Rows ``(corpus, "ours" | "paper")``, the given columns; a corpus or figure the paper
    does not report is left empty."""
    rows = {}
    for name, values in ours.items():
        rows[(name, "ours")] = {c: values.get(c) for c in columns}
        if name in paper:
            rows[(name, "paper")] = {c: paper[name].get(c) for c in columns}
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(columns))


def table2(run: CeilingRun) -> pd.DataFrame:
    """Table 2, line level: every corpus's cover summary beside the paper's row."""
    ours = {name: run.summary[name] for name in run.order}
    table = side_by_side(ours, _paper.TABLE2, list(TABLE2_COLUMNS))
    return table.rename(index=CORPUS_LABELS, level=0)


def short_span_table(run: CeilingRun, threshold: int = 8) -> pd.DataFrame:
    """Share of spans shorter than ``threshold`` tokens and of the copied tokens they hold,
    per corpus, beside the paper's §4.2 figures."""
    short = pd.DataFrame(short_spans(run, threshold)).T
    short["paper spans"] = [_paper.SHORT_SPANS.get(n, {}).get("spans") for n in short.index]
    short["paper tokens"] = [_paper.SHORT_SPANS.get(n, {}).get("tokens") for n in short.index]
    return short.rename(index=CORPUS_LABELS).rename(
        columns={"spans": "share of spans N<8", "tokens": "share of copied tokens"}
    )


def token_level_table(run: CeilingRun) -> pd.DataFrame:
    """Token-level copy fraction per minimum span ``m``, the line-level one, and the paper's
    token-level figures (§4.2 at m=8, §5's second set, App. J at m=4)."""
    paper = _paper.TOKEN_LEVEL
    f_tok = pd.DataFrame(
        {name: run.token_tables[name].set_index("m").f_tok for name in run.order}
    ).T
    f_tok.insert(0, "line level", [run.summary[n]["f_line"] for n in f_tok.index])
    f_tok["paper m=8 (§4.2)"] = [paper["m8"].get(n) for n in f_tok.index]
    f_tok["paper §5 ext."] = [paper["extension_sec5"].get(n) for n in f_tok.index]
    f_tok["paper m=4 (App. J)"] = [paper["m4"].get(n) for n in f_tok.index]
    return f_tok.rename(index=CORPUS_LABELS).rename(
        columns=lambda c: f"m={c}" if isinstance(c, int) else c
    )


def paper_bnd_m8_check() -> pd.DataFrame:
    """bnd_m8 recomputed from the paper's own T, T_gen, T_copy and s(8), beside its column."""
    return pd.DataFrame(
        {
            CORPUS_LABELS[name]: {
                "T": p["T"],
                "T_gen": p["T_gen"],
                "T_copy": p["T_copy"],
                "bnd_m8 (ours, from paper's columns)": bound_uniform(
                    p["T"], p["T_gen"], p["T_copy"], p["s_m8"]
                ),
                "bnd_m8 (paper)": p["bnd_m8"],
            }
            for name, p in _paper.TABLE2.items()
        }
    ).T


def bounds_table(bounds: Mapping[str, Mapping]) -> pd.DataFrame:
    """Line-level bounds per corpus (:func:`~cadlib.costs.bounds.line_bounds`) beside Table 2's
    (the paper publishes no s(N_mean))."""
    paper = {k: {**v, "s_mean": None} for k, v in _paper.TABLE2.items()}
    return side_by_side(bounds, paper, list(BOUND_COLUMNS)).rename(index=CORPUS_LABELS, level=0)


def measured_curve_table(run: CeilingRun) -> pd.DataFrame:
    """The measured curve as one row: s(N) per measured N."""
    m = run.measured
    return pd.DataFrame({"N": m["N"], "s(N)": m["s"]}).set_index("N").T


def coverage_table(run: CeilingRun) -> pd.DataFrame:
    """Per corpus, the share of spans and copied tokens beyond the measured N (where ``s`` is
    held at its end value; :func:`~cadlib.costs.bounds.curve_coverage`)."""
    N = run.measured["N"]
    coverage = pd.DataFrame(
        {CORPUS_LABELS[n]: curve_coverage(run.spans[n], N) for n in run.order}
    ).T
    return coverage[["spans_above", "tokens_above", "spans_below", "tokens_below"]]


def m8_bounds_table(run: CeilingRun) -> pd.DataFrame:
    """The bounds at minimum span ``m = 8`` per corpus and curve, beside the paper's
    conservative token-level bound (§4.2)."""
    bvm = run.bounds_vs_m
    m8 = bvm[bvm.m == 8].set_index(["corpus", "curve"])[["line_exact", "token_m", "token_exact"]]
    m8["paper token_m (m=8)"] = [_paper.TOKEN_LEVEL["m8_bnd"].get(c) for c, _ in m8.index]
    return m8.rename(index=CORPUS_LABELS, level=0)


_STATS = ("K", "mean", "p50", "p95")


def percentile_table(variants: pd.DataFrame, paper: Mapping = _paper.TABLE2) -> pd.DataFrame:
    """:func:`.run_percentiles.percentile_variants` wide: one row per (family, variant,
    method), columns ``"<corpus> <K|mean|p50|p95>"``, and a last row
    ``("paper", "Table 2", "")``."""
    corpora = list(dict.fromkeys(variants.corpus))
    wide = variants.pivot_table(
        index=["family", "variant", "method"],
        columns="corpus",
        values=["p50", "p95", "K", "mean"],
        sort=False,
    )
    wide.columns = [f"{corpus} {stat}" for stat, corpus in wide.columns]
    wide = wide[[f"{c} {s}" for c in corpora for s in _STATS]]
    paper_row = {f"{c} {s}": paper[c][s] for c in corpora for s in _STATS}
    wide.loc[("paper", "Table 2", ""), :] = pd.Series(paper_row)
    return wide


def percentile_matches(wide: pd.DataFrame, paper: Mapping = _paper.TABLE2) -> str:
    """Two lines: the variants of :func:`percentile_table` whose p50, and whose p95, rounded,
    equal the paper's on every corpus of the table (or ``none``)."""
    corpora = list(dict.fromkeys(c.rsplit(" ", 1)[0] for c in wide.columns))
    hits = wide.drop(index=("paper", "Table 2", ""))

    def matches(row, stat):
        return all(round(row[f"{c} {stat}"]) == paper[c][stat] for c in corpora)

    return "\n".join(
        f"variants matching the paper's {stat} on both corpora: "
        + str([" / ".join(i) for i, r in hits.iterrows() if matches(r, stat)] or "none")
        for stat in ("p50", "p95")
    )
