"""Copy ceilings and speedup bounds (paper §3 "Copy ceiling", §4.2, Table 2, Appendices D/N).

Two covers of each gold output by its input document, both data properties (no model run):

* **line level** (the ``<copy lines="i-j"/>`` primitive): the oracle program of
  :func:`cadlib.oracle.oracle_program`; a copy span's length ``N_k`` is the number of Qwen2.5
  tokens of its lines joined by newlines, ``T`` the tokens of the gold, ``T_copy = sum N_k``
  and ``T_gen = T - T_copy`` (this absorbs the joining newlines and tokenization seams, and
  is how the paper's Table 2 columns add up: 8,872 = 6,577 + 2,295);
* **token level** (aspirational ``<copy tokens="a-b"/>``): the greedy left-to-right
  longest-match cover with minimum span ``m`` of :func:`cadlib.oracle.token_cover` over the
  Qwen2.5 ids of document and gold.

The cost model (paper §2.1, §4.2) turns a cover into a wall-clock bound: a gen token costs one
decode step, a copy span of ``N`` tokens ``N / s(N)`` steps, where ``s(N)`` is the measured
parallel-prefill speedup (the kernel chapter's curve). Three bounds:

* ``bnd_m8    = T / (T_gen + T_copy / s(8))``       (every span charged at s(m=8));
* ``bnd_mean  = T / (T_gen + T_copy / s(N_mean))``   (Amdahl summary at the mean span);
* ``bnd_exact = T / (T_gen + sum_k N_k / s(N_k))``   (the paper's primary claim),

with ``s`` interpolated linearly in ``log N`` between measured points and held at the end
values outside them. A zero-token span (a copied empty line) adds nothing to the sum.
Curves are plain arrays ``(N, s)`` here, so a curve measured anywhere (our CPU run, a GPU
run, or the paper's published points) can be passed in; :mod:`cadlib.speedup_curve` reads
them from ``results/kernel.json`` and does the interpolation.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from . import speedup_curve
from .cases import EditCase
from .corpora import load_corpus
from .oracle import greedy_cover, longest_matches
from .resolver import doc_lines
from .spans import CaseSpans, line_cover, line_spans, summarize_line_cover
from .spans import as_tokenizer as _tok
from .tokenizers import Tokenizer

__all__ = [
    "PROFILES",
    "PAPER_TABLE2",
    "PAPER_TOKEN_LEVEL",
    "PAPER_SHORT_SPANS",
    "PAPER_7B_POINTS",
    "PAPER_7B_ASSUMED",
    "CORPUS_LABELS",
    "CaseSpans",
    "load_corpora",
    "line_spans",
    "line_cover",
    "summarize_line_cover",
    "short_span_share",
    "token_cover_table",
    "interpolate_loglinear",
    "bound_uniform",
    "bound_exact",
    "line_bounds",
    "bounds_vs_m",
    "curve_coverage",
    "side_by_side",
    "implied_speedup",
    "paper_reference_curve",
    "percentile_variants",
    "SPAN_VARIANTS",
]

#: Everything here is a data property, so both profiles do the same (full) work.
PROFILES = {
    "cpu": {
        "corpora": ("probeedit", "heval-fix-py", "heval-fix-js"),
        "extra_corpora": ("heval-fix-java", "heval-fix-go", "heval-fix-cpp", "heval-fix-rust"),
        "min_spans": (1, 2, 4, 8, 16, 32),
        "tokenizer": "qwen2.5",
        "kernel_curve": "results/kernel.json",
        "kernel_model": None,
    },
}
# the paper profile reads the s(N) curve the kernel chapter measured in its paper profile
PROFILES["paper"] = dict(PROFILES["cpu"], kernel_curve="results/kernel.paper.json")

CORPUS_LABELS = {
    "probeedit": "ProbeEdit",
    "heval-fix-py": "HEvalFix-Py",
    "heval-fix-js": "HEvalFix-JS",
    "heval-fix-java": "HEvalFix-Java",
    "heval-fix-go": "HEvalFix-Go",
    "heval-fix-cpp": "HEvalFix-C++",
    "heval-fix-rust": "HEvalFix-Rust",
    "pooled": "Pooled",
}

#: Table 2 of the paper (Qwen2.5 BPE; s and bounds from the paper's Qwen2.5-7B A100 curve).
PAPER_TABLE2 = {
    "probeedit": dict(n=154, T=101_113, T_copy=98_844, T_gen=2_269, f_line=0.978, K=321,
                      mean=307.9, p50=266, p95=543, s_m8=6.79, bnd_m8=6.01, bnd_mean=29.1,
                      bnd_exact=29.02),
    "heval-fix-py": dict(n=164, T=8_872, T_copy=6_577, T_gen=2_295, f_line=0.741, K=295,
                         mean=22.3, p50=19, p95=56, s_m8=6.79, bnd_m8=2.72, bnd_mean=3.30,
                         bnd_exact=3.45),
    "heval-fix-js": dict(n=164, T=14_876, T_copy=11_725, T_gen=3_151, f_line=0.788, K=311,
                         mean=37.7, p50=25, p95=102, s_m8=6.79, bnd_m8=3.05, bnd_mean=4.15,
                         bnd_exact=4.18),
    "pooled": dict(n=482, T=124_861, T_copy=117_146, T_gen=7_715, f_line=0.938, K=927,
                   mean=126.4, p50=34, p95=537, s_m8=6.79, bnd_m8=5.00, bnd_mean=13.6,
                   bnd_exact=13.01),
}  # fmt: skip

#: Token-level copy fractions the paper quotes. §4.2 "Token-level" / §4.6 give m = 8 with
#: conservative bounds; §5 "Token-level extension" gives a second set (m not stated);
#: Appendix J (Table 17 text) gives m = 4 on HEvalFix-Py.
PAPER_TOKEN_LEVEL = {
    "m8": {"probeedit": 0.993, "heval-fix-py": 0.910, "heval-fix-js": 0.933},
    "m8_bnd": {"probeedit": 6.4, "heval-fix-py": 4.5, "heval-fix-js": 5.4},
    "extension_sec5": {"probeedit": 0.986, "heval-fix-py": 0.927, "heval-fix-js": 0.945},
    "m4": {"heval-fix-py": 0.945},
}

#: §4.2: "on HEvalFix-Py, 34.6% of spans have N<8 but account for only 2.65% of copied tokens".
PAPER_SHORT_SPANS = {"heval-fix-py": {"threshold": 8, "spans": 0.346, "tokens": 0.0265}}

#: The points of the paper's Qwen2.5-7B (A100, bf16) s(N) curve quoted in its text (§4.1);
#: its full Table 11 is not in our copy of the paper.
PAPER_7B_POINTS = {8: 6.79, 512: 90.5}
#: Assumed small-N points of that curve (§4.1 "within about 1.1-1.3x"; Table 17: s(1) <= 1).
PAPER_7B_ASSUMED = {1: 1.0, 2: 1.2}


def load_corpora(names: Iterable[str], **kwargs) -> tuple[dict[str, list[EditCase]], dict]:
    """Load each named corpus; return ``(loaded, unavailable)`` where ``unavailable`` maps a
    name to the reason it could not be loaded (shown by the notebooks, never dropped silently).
    """
    loaded, unavailable = {}, {}
    for name in names:
        try:
            loaded[name] = load_corpus(name, **kwargs)
        except Exception as err:  # not written yet, no data, ...: reported, not dropped silently
            unavailable[name] = f"{type(err).__name__}: {err}"
    return loaded, unavailable


def short_span_share(spans: Sequence[int], threshold: int = 8) -> dict:
    """Share of spans with ``N < threshold`` and the share of copied tokens they hold (§4.2)."""
    spans = np.asarray(spans, dtype=float)
    short = spans < threshold
    return {
        "threshold": threshold,
        "spans": float(short.mean()),
        "tokens": float(spans[short].sum() / spans.sum()),
        "zero_token_spans": int((spans == 0).sum()),
    }


def token_cover_table(
    cases: Sequence[EditCase],
    min_spans: Sequence[int] = (1, 2, 4, 8, 16, 32),
    tokenizer: Tokenizer | str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Token-level greedy cover for every ``m`` in ``min_spans``: one row per m with T,
    T_copy, T_gen, f_tok, K, mean span and the list of span lengths (for the exact bound)."""
    tok = _tok(tokenizer)
    tables = [
        longest_matches(tok.encode(c.doc), tok.encode(c.gold))
        for c in tqdm(cases, desc="token cover", disable=not progress)
    ]
    rows = []
    for m in min_spans:
        spans = [n for table in tables for n in greedy_cover(*table, m).span_lengths]
        T = sum(len(table[0]) for table in tables)
        rows.append(
            {
                "m": m,
                "T": T,
                "T_copy": sum(spans),
                "T_gen": T - sum(spans),
                "f_tok": sum(spans) / T if T else float("nan"),
                "K": len(spans),
                "mean": float(np.mean(spans)) if spans else float("nan"),
                "spans": spans,
            }
        )
    return pd.DataFrame(rows)


# ----- bounds ------------------------------------------------------------------------------


def interpolate_loglinear(N: Sequence[float], s: Sequence[float], n) -> np.ndarray:
    """``s(n)`` from measured points ``(N, s)``: linear in ``log N`` between points, the end
    values outside them (no extrapolation beyond what was measured); ``n <= 0`` reads the
    first point. :func:`cadlib.speedup_curve.interpolate_loglinear`, which does the work."""
    return speedup_curve.interpolate_loglinear(N, s, n, clamp_nonpositive=True)


def bound_uniform(T: float, T_gen: float, T_copy: float, s: float) -> float:
    """``T / (T_gen + T_copy / s)``: every copied token at one speedup ``s`` (bnd_m8, bnd_mean)."""
    return T / (T_gen + T_copy / s)


def bound_exact(
    T: float,
    T_gen: float,
    spans: Sequence[int],
    N: Sequence[float],
    s: Sequence[float],
    min_span: int = 1,
) -> float:
    """``T / (T_gen + sum_k N_k / s(N_k))`` over the actual spans (paper §4.2).

    ``min_span`` applies a minimum-span policy (Appendix J): spans shorter than it are
    regenerated instead (cost ``N_k``). ``T_gen`` is the gen-token count *before* that policy.
    """
    spans = np.asarray(spans, dtype=float)
    spliced = spans[(spans >= min_span) & (spans > 0)]
    regenerated = spans[spans < min_span].sum()
    cost = T_gen + regenerated + float(np.sum(spliced / interpolate_loglinear(N, s, spliced)))
    return float(T / cost)


def line_bounds(summary: Mapping, spans: Sequence[int], N, s, m: int = 8) -> dict:
    """bnd_m8, bnd_mean and bnd_exact of a line-level cover (Table 2), plus the s values used."""
    s_m = float(interpolate_loglinear(N, s, m))
    s_mean = float(interpolate_loglinear(N, s, summary["mean"]))
    T, T_gen, T_copy = summary["T"], summary["T_gen"], summary["T_copy"]
    return {
        "s_m8": s_m,
        "s_mean": s_mean,
        "bnd_m8": bound_uniform(T, T_gen, T_copy, s_m),
        "bnd_mean": bound_uniform(T, T_gen, T_copy, s_mean),
        "bnd_exact": float(bound_exact(T, T_gen, spans, N, s)),
    }


def bounds_vs_m(
    line_summary: Mapping,
    line_span_list: Sequence[int],
    token_table: pd.DataFrame,
    N: Sequence[float],
    s: Sequence[float],
) -> pd.DataFrame:
    """Bounds as a function of the minimum span ``m`` (one row per m of ``token_table``):

    * ``line_exact``: line level, spans shorter than ``m`` regenerated (Appendix J policy);
    * ``token_m``: token level, every span charged at ``s(m)`` (the paper's "conservative"
      token-level bound; every token-level span is at least m long);
    * ``token_exact``: token level, each span at its own ``s(N_k)``.
    """
    rows = []
    for row in token_table.itertuples(index=False):
        s_m = float(interpolate_loglinear(N, s, row.m))
        rows.append(
            {
                "m": row.m,
                "s(m)": s_m,
                "line_exact": bound_exact(
                    line_summary["T"], line_summary["T_gen"], line_span_list, N, s, row.m
                ),
                "token_m": bound_uniform(row.T, row.T_gen, row.T_copy, s_m),
                "token_exact": bound_exact(row.T, row.T_gen, row.spans, N, s),
            }
        )
    return pd.DataFrame(rows)


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


def curve_coverage(spans: Sequence[int], N: Sequence[float]) -> dict:
    """How much of a cover lies outside the measured span lengths, where ``s`` is held at
    its end values: the share of spans and of copied tokens longer than ``max(N)`` (and
    shorter than ``min(N)``), to say how far a bound leans on clamping."""
    spans = np.asarray(spans, dtype=float)
    lo, hi = float(np.min(N)), float(np.max(N))
    total = spans.sum()
    above, below = spans > hi, (spans > 0) & (spans < lo)
    return {
        "N_min": lo,
        "N_max": hi,
        "spans_above": float(above.mean()) if len(spans) else 0.0,
        "tokens_above": float(spans[above].sum() / total) if total else 0.0,
        "spans_below": float(below.mean()) if len(spans) else 0.0,
        "tokens_below": float(spans[below].sum() / total) if total else 0.0,
    }


def implied_speedup(T: float, T_gen: float, T_copy: float, bound: float) -> float:
    """The ``s`` that makes ``bound_uniform(T, T_gen, T_copy, s) == bound`` (to read the
    paper's curve at its mean span lengths off its published bnd_mean column)."""
    return T_copy / (T / bound - T_gen)


def paper_reference_curve(
    with_implied: bool = True, assumed: Mapping[int, float] | None = None
) -> pd.DataFrame:
    """A partial reconstruction of the paper's Qwen2.5-7B s(N) curve.

    Rows: the two quoted points (s(8) = 6.79, s(512) = 90.5); with ``with_implied``, the
    values s(N_mean) that each corpus's published bnd_mean implies (rounded bounds: about two
    significant digits); and *assumed* small-N points, by default s(1) = 1.0 and s(2) = 1.2
    (§4.1: at N in {1, 2} parallel prefill and AR are "within about 1.1-1.3x"; Table 17: the
    first N with s > 1 is 2); pass ``assumed={}`` for none. The ``source`` column says which
    is which. Good enough to check magnitudes, not to re-derive digits.
    """
    assumed = PAPER_7B_ASSUMED if assumed is None else assumed
    rows = [{"N": n, "s": v, "source": "quoted (§4.1)"} for n, v in PAPER_7B_POINTS.items()]
    if with_implied:
        for name, p in PAPER_TABLE2.items():
            s = implied_speedup(p["T"], p["T_gen"], p["T_copy"], p["bnd_mean"])
            rows.append({"N": p["mean"], "s": s, "source": f"implied by bnd_mean ({name})"})
    for n, v in assumed.items():
        rows.append({"N": float(n), "s": v, "source": "assumed (§4.1, Table 17)"})
    return pd.DataFrame(rows).sort_values("N", ignore_index=True)


# ----- the p50 / p95 investigation -----------------------------------------------------------


def _blocks(a: list[str], b: list[str], autojunk: bool = False):
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=autojunk)
    return [m for m in matcher.get_matching_blocks() if m.size > 0]


def _spans_in_context(doc: str, gold: str, tok: Tokenizer) -> list[int]:
    """Span lengths counted as the gold tokens that start inside each copied line range."""
    d, g = doc_lines(doc), doc_lines(gold)
    _, offsets = tok.hf.decode_with_offsets(tok.encode(gold))
    starts = np.cumsum([0] + [len(line) + 1 for line in g])
    out = []
    for m in _blocks(d, g):
        lo, hi = starts[m.b], starts[m.b + m.size] - 1
        out.append(sum(1 for o in offsets if lo <= o < hi))
    return out


def _spans_split(doc, gold, tok: Tokenizer, split, join: str, autojunk=False, suffix=""):
    d, g = split(doc), split(gold)
    return [tok.count(join.join(d[m.a : m.a + m.size]) + suffix) for m in _blocks(d, g, autojunk)]


#: Ways of forming the span list: the line split, the alignment and the token counting.
SPAN_VARIANTS = {
    "ours: split('\\n'), doc->gold, own tokens": lambda d, g, t: _spans_split(
        d, g, t, lambda x: x.split("\n"), "\n"
    ),
    "autojunk=True": lambda d, g, t: _spans_split(d, g, t, lambda x: x.split("\n"), "\n", True),
    "gold->doc alignment": lambda d, g, t: [
        t.count("\n".join(g.split("\n")[m.a : m.a + m.size]))
        for m in _blocks(g.split("\n"), d.split("\n"))
    ],
    "splitlines()": lambda d, g, t: _spans_split(d, g, t, str.splitlines, "\n"),
    "splitlines(keepends)": lambda d, g, t: _spans_split(d, g, t, lambda x: x.splitlines(True), ""),
    "strip() texts": lambda d, g, t: _spans_split(d, g, t, lambda x: x.strip().split("\n"), "\n"),
    "rstrip() lines": lambda d, g, t: _spans_split(
        d, g, t, lambda x: [s.rstrip() for s in x.split("\n")], "\n"
    ),
    "span + trailing newline": lambda d, g, t: _spans_split(
        d, g, t, lambda x: x.split("\n"), "\n", suffix="\n"
    ),
    "gold tokens in context": lambda d, g, t: _spans_in_context(d, g, t),
}

_SPAN_METHODS = (
    "linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
    "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
    "weibull", "median_unbiased", "normal_unbiased",
)  # fmt: skip


def _percentiles(values, method: str) -> tuple[float, float]:
    p50, p95 = np.percentile(np.asarray(values, dtype=float), [50, 95], method=method)
    return float(p50), float(p95)


def percentile_variants(
    corpora: Mapping[str, Sequence[EditCase]], tokenizer: Tokenizer | str | None = None
) -> pd.DataFrame:
    """p50 / p95 of the copy-span length under many candidate definitions, per corpus.

    Three families: (1) the same K spans under every percentile definition numpy offers;
    (2) other span populations (N > 0 only, N >= 8 only, one value per case: its mean or
    median span); (3) other ways of forming the spans (line split, alignment direction,
    token counting; see :data:`SPAN_VARIANTS`). Each row also reports K and the mean span, so
    a variant that changes the span list itself shows it (the paper's K and mean are matched
    by ours exactly).
    """
    tok = _tok(tokenizer)
    rows = []
    for name, cases in corpora.items():
        per_case = {
            variant: [fn(c.doc, c.gold, tok) for c in cases]
            for variant, fn in SPAN_VARIANTS.items()
        }
        ours = per_case[next(iter(SPAN_VARIANTS))]
        flat = [n for spans in ours for n in spans]

        def add(family, variant, method, values, spans=flat, name=name):
            p50, p95 = _percentiles(values, method)
            rows.append(
                dict(corpus=name, family=family, variant=variant, method=method, values=len(values),
                     K=len(spans), mean=float(np.mean(spans)), p50=p50, p95=p95)
            )  # fmt: skip

        for method in _SPAN_METHODS:
            add("1 percentile definition", "all spans", method, flat)
        for method in ("linear", "nearest"):
            add("2 population", "spans with N > 0", method, [n for n in flat if n > 0])
            add("2 population", "spans with N >= 8", method, [n for n in flat if n >= 8])
            add("2 population", "per-case mean span", method, [np.mean(s) for s in ours if s])
            add("2 population", "per-case median span", method, [np.median(s) for s in ours if s])
        for variant, spans_per_case in per_case.items():
            spans = [n for s in spans_per_case for n in s]
            add("3 span formation", variant, "linear", spans, spans)
    return pd.DataFrame(rows)
