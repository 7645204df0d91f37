"""Where do the paper's p50 / p95 span lengths come from? (Table 2's percentile columns)

:func:`percentile_variants` recomputes p50 / p95 under every percentile definition numpy
offers, other span populations and other ways of forming the span list
(:data:`SPAN_VARIANTS`); :func:`.show.percentile_table` lays them out beside the paper's row
and :func:`.show.percentile_matches` names the variants that give the paper's figures.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from cadlib.cases import EditCase
from cadlib.costs.spans import as_tokenizer as _tok
from cadlib.models.tokenizer import Tokenizer
from cadlib.resolver import doc_lines

__all__ = ["SPAN_VARIANTS", "percentile_variants"]


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
    "linear",
    "lower",
    "higher",
    "nearest",
    "midpoint",
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "median_unbiased",
    "normal_unbiased",
)


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
                dict(
                    corpus=name,
                    family=family,
                    variant=variant,
                    method=method,
                    values=len(values),
                    K=len(spans),
                    mean=float(np.mean(spans)),
                    p50=p50,
                    p95=p95,
                )
            )

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
