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

from . import paper as _paper
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
    "percentile_finding",
    "short_span_finding",
    "token_level_finding",
    "reference_curve_finding",
    "token_bound_finding",
    "conclusion",
]

#: Everything here is a data property, so both profiles do the same (full) work.
PROFILES = {
    "cpu": {
        "corpora": ("probeedit", "heval-fix-py", "heval-fix-js"),
        # extensions: the other HumanEvalPack languages and real Flask commits (ch. 3 only)
        "extra_corpora": (
            "heval-fix-java",
            "heval-fix-go",
            "heval-fix-cpp",
            "heval-fix-rust",
            "realedits-flask",
        ),
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
    "realedits-flask": "RealEdits-Flask",
    "pooled": "Pooled",
}

#: The paper's Table 2, token-level fractions and s(N) points (their home is :mod:`cadlib.paper`).
PAPER_TABLE2 = _paper.TABLE2
PAPER_TOKEN_LEVEL = _paper.TOKEN_LEVEL
PAPER_SHORT_SPANS = _paper.SHORT_SPANS
PAPER_7B_POINTS = _paper.S_7B_POINTS
PAPER_7B_ASSUMED = _paper.S_7B_ASSUMED


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


# ----- prose generated from this chapter's results ----------------------------------------------
# Every number the chapter's text states about its own results comes from these functions, so
# the markdown types none (tests/test_prose_numbers.py). Each takes fields as written to
# ``results/ceiling.json``.


def _fmt(x: float) -> str:
    """A number as prose prints it: an integer without decimals, else up to two decimals."""
    x = float(x)
    return f"{x:.0f}" if x.is_integer() else f"{x:.2f}".rstrip("0")


def _span(values) -> str:
    """``lo–hi`` of some numbers, or the one value when they are all equal."""
    lo, hi = min(values), max(values)
    return _fmt(lo) if lo == hi else f"{_fmt(lo)}–{_fmt(hi)}"


def _pc(x: float, places: int = 1) -> str:
    return f"{100 * x:.{places}f}%"


def _and(items: Sequence[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _short(name: str) -> str:
    return CORPUS_LABELS.get(name, name).removeprefix("HEvalFix-")


def percentile_finding(variants, paper: Mapping = PAPER_TABLE2) -> str:
    """The finding of the p50 / p95 investigation, from :func:`percentile_variants`'s rows
    (a frame or its records): which span formations give our percentiles, what the others and
    the other definitions give, and the one partial match with the paper's p95."""
    v = pd.DataFrame(variants)
    corpora = list(dict.fromkeys(v.corpus))
    first = corpora[0]
    formation = v[v.family == "3 span formation"].set_index(["variant", "corpus"])
    ours_name = next(iter(SPAN_VARIANTS))
    ours = {c: formation.loc[(ours_name, c)] for c in corpora}
    names = [x for x in dict.fromkeys(formation.index.get_level_values(0)) if x != ours_name]

    def row(x, c):
        return formation.loc[(x, c)]

    keep = [x for x in names if all(row(x, c).K == ours[c].K for c in corpora)]
    same = [x for x in keep if all((row(x, c).p50, row(x, c).p95) == (ours[c].p50, ours[c].p95)
                                   for c in corpora)]  # fmt: skip
    other = [x for x in keep if x not in same]
    change = [x for x in names if row(x, first).K != ours[first].K]
    code = lambda xs: ", ".join(f"`{x}`" for x in xs)  # noqa: E731
    pairs = " and ".join(
        f"{_fmt(ours[c].p50)} / {_fmt(ours[c].p95)} ({_short(c)})" for c in corpora
    )
    out = [f"**Finding.** No definition reproduces both percentiles. Our spans give p50 / p95 = "
           f"{pairs}; {len(same)} of the {len(keep)} other ways of forming the span list that keep "
           f"our $K$ give exactly the same ({code(same)})"]  # fmt: skip
    if other:
        out[-1] += "; " + "; ".join(
            f"`{x}` gives " + " and ".join(f"{_fmt(row(x, c).p50)} / {_fmt(row(x, c).p95)} "
                                           f"({_short(c)})" for c in corpora)
            for x in other)  # fmt: skip
    out[-1] += "."
    if change:
        lost = [ours[first].K - row(x, first).K for x in change]
        out.append(
            f"The formations that change $K$ on {_short(first)} ({code(change)}) lose "
            f"{_span(lost)} of its spans (empty-line copies at a document's end), so they no "
            f"longer match the paper's $K$ = {paper[first]['K']} and mean, and give p50 "
            f"{_span([row(x, first).p50 for x in change])} / p95 "
            f"{_span([row(x, first).p95 for x in change])} there."
        )
    defs = v[(v.family == "1 percentile definition") & (v.corpus == first)]
    out.append(
        f"Over our spans, numpy's percentile definitions give p50 {_span(defs.p50)} and p95 "
        f"{_span(defs.p95)} on {_short(first)}, against the paper's {paper[first]['p50']} / "
        f"{paper[first]['p95']}."
    )
    pop = v[(v.family == "2 population") & (v.method == "nearest")].set_index(["variant", "corpus"])
    mean95 = {c: pop.loc[("per-case mean span", c)].p95 for c in corpora}
    median95 = {c: pop.loc[("per-case median span", c)].p95 for c in corpora}
    per_case = v[(v.family == "2 population") & v.variant.str.startswith("per-case")]
    p50s = " / ".join(_span(per_case[per_case.corpus == c].p50) for c in corpora)
    paper50 = " / ".join(str(paper[c]["p50"]) for c in corpora)
    if all(round(mean95[c]) == paper[c]["p95"] for c in corpora):
        out.append(
            "The only match is partial: taking **one value per case, the case's mean span**, and "
            "its nearest-rank 95th percentile gives "
            + " and ".join(f"{_fmt(mean95[c])} ({_short(c)})" for c in corpora)
            + ", the paper's p95 (the per-case median span gives "
            + " / ".join(_fmt(median95[c]) for c in corpora)
            + f"); but the medians of the same populations are {p50s}, not {paper50}. So the "
            "paper's p95 may have been computed over per-case mean span lengths, which the "
            "heading does not say; but this is one hit among all the variants in the table "
            "above, found by trying them, so it is a guess, not a finding; its p50 we could not "
            "reproduce by any of the variants above."
        )
    else:
        out.append("Not even one value per case (its mean or median span) gives the paper's p95.")
    out.append(
        "We report ours (numpy's default over all spans, the definition the column heading "
        "states) and keep the paper's beside it. The mean, $K$ and token totals, which the "
        "bounds use, match exactly."
    )
    return " ".join(out)


def short_span_finding(short: Mapping, line: Mapping, corpus: str = "heval-fix-py",
                       paper: Mapping = PAPER_SHORT_SPANS) -> str:  # fmt: skip
    """The short-span claim (§4.2) on one corpus, ours beside the paper's, from the results'
    ``short_spans_below_8`` and ``line`` fields."""
    ours, p = short[corpus], paper[corpus]
    same = round(ours["spans"], 3) == p["spans"] and round(ours["tokens"], 4) == p["tokens"]
    return (
        f"{'Reproduced' if same else 'Not reproduced'}: on {CORPUS_LABELS[corpus]} "
        f"{_pc(ours['spans'])} of the {line[corpus]['K']} spans are shorter than "
        f"{ours['threshold']} tokens and they hold {_pc(ours['tokens'], 2)} of the copied tokens "
        f"(the paper: {_pc(p['spans'])} and {_pc(p['tokens'], 2)}). {ours['zero_token_spans']} "
        "of them are empty lines, which cost nothing to copy; most copy the final empty line of "
        "a document that ends with a newline (the spans `splitlines()` loses in the percentile "
        "table above). Note that this contradicts the Table 2 caption's \"every span on these "
        'corpora is $\\ge m$": $\\mathrm{bnd}_{m8}$ is a floor only because short spans carry so '
        "few tokens, not because there are none."
    )


def token_level_finding(token_f: Mapping, line: Mapping, paper: Mapping = PAPER_TOKEN_LEVEL,
                        realedits: str = "realedits-flask") -> str:  # fmt: skip
    """The token-level ceiling against the paper's §4.2, §5 and Appendix J figures, from the
    results' ``token_level_f`` (corpus -> m -> f_tok; m may be a string key) and ``line``."""
    f = {c: {int(m): v for m, v in ms.items()} for c, ms in token_f.items()}
    py, js, pe = "heval-fix-py", "heval-fix-js", "probeedit"

    def agree(m, key, corpora=(py, js)):
        same = [round(f[c][m], 3) == paper[key][c] for c in corpora]
        return "exactly" if all(same) else "not exactly" if not any(same) else "in part"

    def between(c):  # the m's whose f_tok bracket the §5 figure
        target, ms = paper["extension_sec5"][c], sorted(f[c])
        for lo, hi in zip(ms, ms[1:], strict=False):
            if f[c][lo] >= target >= f[c][hi]:
                return f"between $m = {lo}$ and $m = {hi}$"
        return "outside the $m$ we ran"

    out = (
        f"At $m = 8$ the token-level ceiling is {_pc(f[py][8])} (Py) and {_pc(f[js][8])} (JS), "
        f"the paper's §4.2 figures {agree(8, 'm8')} (our ProbeEdit, a "
        f"different corpus, gives {_pc(f[pe][8])} against the paper's {_pc(paper['m8'][pe])}), "
        f"and {_pc(f[py][4])} at $m = 4$ on Py (Appendix J: {_pc(paper['m4'][py])}). The second "
        f'set the paper gives in §5 ("Token-level extension": {_pc(paper["extension_sec5"][py])}'
        f" / {_pc(paper['extension_sec5'][js])} for Py / JS) matches no single $m$ of this cover "
        f"(Py's lies {between(py)}, JS's {between(js)}); it may come from a different pipeline "
        "that the paper does not describe. Within-line bug fixes are what the line primitive "
        f"loses: on Py the ceiling rises from {_pc(line[py]['f_line'])} to {_pc(f[py][8])} at "
        "$m = 8$."
    )
    if realedits in f and realedits in line:
        out += (
            f" Real Flask commits ({CORPUS_LABELS[realedits]}) are small edits of long files: "
            f"the line level already copies {_pc(line[realedits]['f_line'])} of the output, and "
            f"the token level at $m = 8$ {_pc(f[realedits][8])}."
        )
    return out


def reference_curve_finding(ours: Mapping, without_s2: Mapping,
                            paper: Mapping = PAPER_TABLE2) -> str:  # fmt: skip
    """Our spans under the paper's reconstructed curve against its bnd_exact, with and without
    the assumed s(2) point (``ours`` / ``without_s2``: corpus -> :func:`line_bounds`)."""
    py, js = "heval-fix-py", "heval-fix-js"

    def b(d, c):
        return f"{d[c]['bnd_exact']:.2f}×"

    return (
        f"With our HEvalFix span histograms, the reconstructed curve gives "
        f"$\\mathrm{{bnd}}_\\mathrm{{exact}}$ = {b(ours, py)} on Py (paper "
        f"{paper[py]['bnd_exact']:.2f}×) and {b(ours, js)} on JS (paper "
        f"{paper[js]['bnd_exact']:.2f}×): our spans and the paper's composition are consistent, "
        "to what a curve of eight points, partly read off rounded bounds, allows (without the "
        "assumed $s(2)$ point, i.e. interpolating from $s(1)$ to $s(8)$, the two are "
        f"{b(without_s2, py)} and {b(without_s2, js)}: the unpublished small-$N$ part of the curve "
        "moves the bound in the third digit). $\\mathrm{bnd}_{m8}$ and "
        "$\\mathrm{bnd}_{\\bar N}$ on Py/JS agree by construction (the $T$'s agree and the curve "
        "was read off these bounds). ProbeEdit and pooled differ because our ProbeEdit is a "
        "different corpus."
    )


def token_bound_finding(bounds_vs_m, curve: str = "paper 7B (reconstructed)",
                        paper: Mapping = PAPER_TOKEN_LEVEL, s8: float = PAPER_7B_POINTS[8],
                        m: int = 8) -> str:  # fmt: skip
    """The conservative token-level bound at ``m`` against the paper's, and what the paper's
    own copy fraction implies (from the results' ``bounds_vs_m`` records)."""
    b = pd.DataFrame(bounds_vs_m)
    b = b[(b.curve == curve) & (b.m == m)].set_index("corpus")
    py, js = "heval-fix-py", "heval-fix-js"
    f_js, bnd_js = paper["m8"][js], paper["m8_bnd"][js]
    implied = bound_uniform(1.0, 1 - f_js, f_js, s8)
    needed = (1 - 1 / bnd_js) / (1 - 1 / s8)  # the f with T / (T(1-f) + T f / s8) = bnd_js
    ratio = [b.loc[c, "token_exact"] / b.loc[c, "line_exact"] for c in (py, js)]
    return (
        f"The token-level conservative bound at $m = {m}$ is {b.loc[py, 'token_m']:.2f}× on Py, "
        f"the paper's {paper['m8_bnd'][py]}×. On JS the paper's {bnd_js}× does not follow from its "
        f"own {_pc(f_js)} and $s(8) = {s8}$: $1 / ({1 - f_js:.3f} + {f_js:.3f}/{s8}) = "
        f"{implied:.1f}$×, against ours {b.loc[js, 'token_m']:.2f}×; {bnd_js}× would need a "
        f"{_pc(needed)} copy fraction. Regenerating short line spans (line_exact for growing $m$) "
        "lowers the line-level bound on HEvalFix slowly until $m = 8$ and steeply after, while "
        f"the token-level exact bound at $m = {m}$ is {_span([round(r, 1) for r in ratio])}× the "
        "line-level one on Py / JS: within-line copies are where most of the remaining speedup "
        "sits."
    )


def conclusion(numbers: Mapping, paper: Mapping = PAPER_TABLE2,
               extensions: Sequence[str] = ("heval-fix-java", "heval-fix-go", "heval-fix-cpp",
                                            "heval-fix-rust"),
               realedits: str = "realedits-flask") -> str:  # fmt: skip
    """The chapter's conclusion, every figure of ours read from its results (``numbers`` as
    written to ``results/ceiling.json``)."""
    line, tf = numbers["line"], {c: {int(m): v for m, v in ms.items()}
                                 for c, ms in numbers["token_level_f"].items()}  # fmt: skip
    ref = numbers["bounds_paper_reference_curve"]["line"]
    py, js = "heval-fix-py", "heval-fix-js"
    keys = ("T", "T_copy", "T_gen", "K")
    exact = all(line[c][k] == paper[c][k] for c in (py, js) for k in keys)
    short = numbers["short_spans_below_8"][py]
    p_short = PAPER_SHORT_SPANS[py]
    same_short = (round(short["spans"], 3), round(short["tokens"], 4)) == (
        p_short["spans"],
        p_short["tokens"],
    )
    ext = [c for c in extensions if c in line]
    higher = [c for c in ext if line[c]["f_line"] > line[js]["f_line"] and tf[c][8] > tf[js][8]]
    out = [
        "The line-level copy ceiling reproduces "
        + ("exactly" if exact else "only in part")
        + " where the data are the paper's: on HEvalFix-Py and HEvalFix-JS, $T$, "
        "$T_\\mathrm{copy}$, $T_\\mathrm{gen}$ and $K$ "
        + ("match Table 2 to the token" if exact else "do not all match Table 2")
        + f", with $f_\\mathrm{{line}}$ {_pc(line[py]['f_line'])} / {_pc(line[js]['f_line'])} and "
        f"mean span {line[py]['mean']:.1f} / {line[js]['mean']:.1f} tokens (paper "
        f"{_pc(paper[py]['f_line'])} / {_pc(paper[js]['f_line'])}, {paper[py]['mean']} / "
        f"{paper[js]['mean']}); {'so does' if same_short else 'unlike'} the short-span claim "
        f"({_pc(short['spans'])} of Py spans "
        f"are under 8 tokens and hold {_pc(short['tokens'], 2)} of copied tokens) and the "
        f"token-level ceiling at $m = 8$ ({_pc(tf[py][8])} / {_pc(tf[js][8])}) and $m = 4$ "
        f"({_pc(tf[py][4])} on Py).",
        "The paper's p50 / p95 columns do not follow from the same spans under any percentile "
        "definition we tried; its p95 equals the nearest-rank p95 of per-case mean spans (one hit "
        "among many variants tried), its p50 we could not explain, and its second set of "
        "token-level figures (§5) matches no single $m$. Where the two disagree, ours is the "
        "figure to use: a recount of the very spans whose number, mean and token totals match "
        "the paper's exactly, under the definition its column heading states.",
        "Composing our span histograms with the paper's partly reconstructed 7B curve gives back "
        f"its $\\mathrm{{bnd}}_\\mathrm{{exact}}$ ({ref[py]['bnd_exact']:.2f}× vs "
        f"{paper[py]['bnd_exact']:.2f}× on Py, {ref[js]['bnd_exact']:.2f}× vs "
        f"{paper[js]['bnd_exact']:.2f}× on JS), and its $\\mathrm{{bnd}}_{{m8}}$ follows from its "
        "own columns exactly.",
    ]
    if ext:
        out.append(
            "Of the other HumanEvalPack languages, "
            f"{_and([_short(c) for c in higher]) or 'none'} have higher line-level and "
            "token-level ceilings than JavaScript at $m = 8$ (the tables above)."
        )
    if realedits in line:
        r, rb = line[realedits], ref[realedits]
        n_max = max(numbers["bounds_paper_reference_curve"]["curve"]["N"])
        out.append(
            f"On {r['n']} files changed by real Flask commits ({CORPUS_LABELS[realedits]}), the "
            "closest the book "
            f"comes to what users edit, the copy primitive would emit {_pc(r['f_line'])} of the "
            f"output at line level ({_pc(tf[realedits][8])} at token level, $m = 8$), in spans of "
            f"{r['mean']:.0f} tokens on average (median {_fmt(r['p50'])}, p95 {r['p95']:.0f}), and "
            f"the paper's curve would bound the speedup at {rb['bnd_exact']:.1f}× (line level, "
            "exact): real edits of whole files sit nearer ProbeEdit's ceiling than HEvalFix's, and "
            f"{'their long spans lean' if r['p95'] > n_max else 'their spans do not lean'} on the "
            f"curve beyond its last point ($N = {n_max:.0f}$), where $s$ is held, not measured."
        )
    out.append(
        "Bounds under a measured curve are only as good as the curve: a CPU curve of a small "
        "model is a different machine, and its bounds are labelled as such."
    )
    return " ".join(out)
