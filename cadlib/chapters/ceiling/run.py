"""Chapter 3's run (notebooks/03_ceiling.ipynb): every cover and bound of every corpus, and
``results/ceiling.json``.

:func:`analyse` loads the corpora and computes, once, everything the chapter shows: the
line-level covers (Table 2), the percentile investigation (:mod:`.run_percentiles`), the
token-level covers for every minimum span (:mod:`.run_covers`), the bounds under the paper's
reconstructed 7B curve and under a measured curve from a kernel results file, the bounds as a
function of ``m``, and the Appendix L / M estimates (:mod:`.run_estimates`). The notebook only
displays parts of the returned :class:`CeilingRun` (:mod:`.show`, :mod:`.show_figures`,
:mod:`.text`); :func:`numbers` is the ``numbers`` of its results file, which the chapter's
generated prose reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from cadlib import paper as _paper
from cadlib.cases import EditCase
from cadlib.corpora import load_corpora
from cadlib.costs.bounds import bounds_vs_m, line_bounds, paper_reference_curve
from cadlib.costs.spans import line_cover, summarize_line_cover
from cadlib.costs.speedup_curve import curve_label, load_curve
from cadlib.models.tokenizer import Tokenizer
from cadlib.paths import repo_root

from . import run_estimates as _estimates
from .run_covers import pool_token_tables, short_span_share, token_cover_table
from .run_percentiles import percentile_variants

__all__ = [
    "REFERENCE_CURVE",
    "CeilingRun",
    "analyse",
    "measured_curve",
    "short_spans",
    "token_level_f",
    "numbers",
    "paper_figures",
]

#: The name of the paper's reconstructed 7B curve in :attr:`CeilingRun.curves`.
REFERENCE_CURVE = "paper 7B (reconstructed)"

#: The two corpora whose Table 2 rows are the paper's own data (the percentile investigation).
_CODE_CORPORA = ("heval-fix-py", "heval-fix-js")


@dataclass
class CeilingRun:
    """Everything :func:`analyse` computed, per corpus name (and ``"pooled"``).

    Attributes
    ----------
    params : dict
        The chosen profile (:func:`cadlib.record.params.choose` of :data:`.profiles.PROFILES`).
    tokenizer : Tokenizer
        Counts every token of the chapter.
    corpora, unavailable : dict
        The loaded corpora; the ones that could not be loaded, with the reason.
    paper_set, order : list of str
        The paper's corpora that loaded; the row order of every table (paper corpora,
        ``"pooled"``, extensions).
    covers, summary, spans : dict
        Line-level covers (:func:`cadlib.costs.spans.line_cover`), their Table 2 summaries and the
        flat list of copy-span lengths.
    variants : pandas.DataFrame
        :func:`.run_percentiles.percentile_variants` of HEvalFix-Py / JS.
    token_tables : dict of pandas.DataFrame
        :func:`.run_covers.token_cover_table` per corpus, in ``order``.
    reference, reference_bounds, reference_bounds_without_s2
        The paper's reconstructed 7B curve and the line-level bounds under it, with and
        without its assumed ``s(2)`` point.
    measured, measured_bounds, measured_unavailable
        The measured curve (``{"N", "s", "label"}``, or ``None`` with the reason) and the
        line-level bounds under it.
    curves : dict
        Name -> ``(N, s)`` arrays: the reconstructed curve, and the measured one if any.
    bounds_vs_m, pointer, composition : pandas.DataFrame
        :func:`~cadlib.costs.bounds.bounds_vs_m` for every corpus and curve; Appendix L and M
        (:mod:`.run_estimates`) on the paper's corpora.
    """

    params: dict
    tokenizer: Tokenizer
    corpora: dict[str, list[EditCase]]
    unavailable: dict[str, str]
    paper_set: list[str]
    order: list[str]
    covers: dict
    summary: dict
    spans: dict
    variants: pd.DataFrame
    token_tables: dict
    reference: pd.DataFrame
    reference_bounds: dict
    reference_bounds_without_s2: dict
    measured: dict | None
    measured_unavailable: str | None
    measured_bounds: dict
    curves: dict
    bounds_vs_m: pd.DataFrame
    pointer: pd.DataFrame
    composition: pd.DataFrame


def measured_curve(path: str | Path, model: str | None = None) -> tuple[dict | None, str | None]:
    """The s(N) curve ``model`` of a kernel results file (relative paths: to the repository
    root) as ``({"N", "s", "label"}, None)``, or ``(None, why)`` when there is none."""
    full = Path(path) if Path(path).is_absolute() else repo_root() / path
    try:
        N, s, meta = load_curve(full, model)
    except FileNotFoundError:
        why = f"{path} does not exist (notebooks/02_kernel.ipynb writes it)"
        return None, f"no measured curve: {why}"
    except (OSError, KeyError, ValueError) as err:
        return None, f"no measured curve: {type(err).__name__}: {err}"
    return {"N": N.tolist(), "s": s.tolist(), "label": curve_label(meta)}, None


def _bounds(summary: Mapping, spans: Mapping, names, N, s) -> dict:
    return {name: line_bounds(summary[name], spans[name], N, s) for name in names}


def analyse(params: Mapping, tokenizer: Tokenizer) -> CeilingRun:
    """Load the corpora of ``params`` (``corpora`` then ``extra_corpora``) and compute every
    cover, bound and estimate of the chapter (see the module docstring)."""
    p, tok = dict(params), tokenizer
    loaded, unavailable = load_corpora([*p["corpora"], *p["extra_corpora"]])
    paper_set = [c for c in p["corpora"] if c in loaded]
    order = [*paper_set, "pooled", *[c for c in loaded if c not in paper_set]]
    covers = {name: line_cover(corpus, tok, progress=False) for name, corpus in loaded.items()}
    covers["pooled"] = [c for name in paper_set for c in covers[name]]
    summary = {name: summarize_line_cover(cv) for name, cv in covers.items()}
    spans = {name: [n for c in cv for n in c.spans] for name, cv in covers.items()}
    variants = percentile_variants({n: loaded[n] for n in _CODE_CORPORA if n in loaded}, tok)
    tables = {
        name: token_cover_table(corpus, p["min_spans"], tok, progress=False)
        for name, corpus in loaded.items()
    }
    tables["pooled"] = pool_token_tables([tables[n] for n in paper_set])
    ref = paper_reference_curve()
    no_s2 = paper_reference_curve(assumed={1: 1.0})  # s(1) to s(8) interpolated directly
    measured, why = measured_curve(p["kernel_curve"], p["kernel_model"])
    curves = {REFERENCE_CURVE: (ref.N.to_numpy(), ref.s.to_numpy())}
    if measured:
        curves["measured"] = (np.asarray(measured["N"]), np.asarray(measured["s"]))
    bvm = pd.concat(
        [
            bounds_vs_m(summary[name], spans[name], tables[name], N, s).assign(
                corpus=name, curve=curve_name
            )
            for name in order
            for curve_name, (N, s) in curves.items()
        ],
        ignore_index=True,
    )
    op_stats = {name: _estimates.op_stats(loaded[name], covers[name]) for name in paper_set}
    op_stats["pooled"] = _estimates.pool([op_stats[name] for name in paper_set])
    return CeilingRun(
        params=p,
        tokenizer=tok,
        corpora=loaded,
        unavailable=unavailable,
        paper_set=paper_set,
        order=order,
        covers=covers,
        summary=summary,
        spans=spans,
        variants=variants,
        token_tables={name: tables[name] for name in order},
        reference=ref,
        reference_bounds=_bounds(summary, spans, order, ref.N, ref.s),
        reference_bounds_without_s2=_bounds(
            summary, spans, [n for n in _CODE_CORPORA if n in loaded], no_s2.N, no_s2.s
        ),
        measured=measured,
        measured_unavailable=why,
        measured_bounds=_bounds(summary, spans, order, measured["N"], measured["s"])
        if measured
        else {},
        curves=curves,
        bounds_vs_m=bvm,
        pointer=_estimates.pointer_table(op_stats, curves),
        composition=_estimates.composition_table(op_stats, curves),
    )


def _rounded(d: Mapping) -> dict:
    return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in d.items()}


def numbers(run: CeilingRun, percentile_finding: str) -> dict:
    """The ``numbers`` of ``results/ceiling.json`` (floats rounded to 6 places), which the
    summary page and the chapter's generated prose (:mod:`.text`) read;
    ``percentile_finding`` is the finding of the percentile investigation
    (:func:`.text.percentile_finding` of ``run.variants``), kept with the numbers it reads.
    """
    order, m = run.order, run.measured
    return {
        "corpora_unavailable": run.unavailable,
        "line": {name: _rounded(run.summary[name]) for name in order},
        "percentile_variants": run.variants.round(4).to_dict(orient="records"),
        "percentile_finding": percentile_finding,  # the chapter's generated text
        "short_spans_below_8": {name: _rounded(short) for name, short in short_spans(run).items()},
        "token_level_f": {
            name: {int(r.m): round(r.f_tok, 6) for r in table.itertuples()}
            for name, table in run.token_tables.items()
        },
        "bounds_paper_reference_curve": {
            "curve": run.reference[["N", "s", "source"]].to_dict(orient="list"),
            "line": {name: _rounded(b) for name, b in run.reference_bounds.items()},
        },
        "bounds_measured_curve": (
            {"curve": m, "line": {n: _rounded(b) for n, b in run.measured_bounds.items()}}
            if m
            else None
        ),
        "bounds_vs_m": run.bounds_vs_m.round(6).to_dict(orient="records"),
        "appendix_l": run.pointer.round(6).to_dict(orient="records"),
        "appendix_m": run.composition.round(6).to_dict(orient="records"),
    }


def short_spans(run: CeilingRun, threshold: int = 8) -> dict:
    """:func:`.run_covers.short_span_share` of every corpus, in table order."""
    return {name: short_span_share(run.spans[name], threshold) for name in run.order}


def token_level_f(run: CeilingRun) -> dict:
    """Corpus -> ``{m: f_tok}`` of the token-level covers (as :func:`.text.token_level_finding`
    reads them)."""
    return {name: dict(zip(t.m, t.f_tok, strict=True)) for name, t in run.token_tables.items()}


def paper_figures() -> dict:
    """The ``paper`` of ``results/ceiling.json``: the published figures the chapter checks."""
    return {
        "table2": _paper.TABLE2,
        "token_level": _paper.TOKEN_LEVEL,
        "short_spans": _paper.SHORT_SPANS,
        "s_7b_points": _paper.S_7B_POINTS,
        "appendix_l": _paper.APPENDIX_L,
        "appendix_m": _paper.APPENDIX_M,
    }
