"""The copy covers of the chapter's corpora (paper §3 "Copy ceiling", §4.2, Table 2, App. D).

The token-level
greedy cover for every minimum span ``m`` (:func:`token_cover_table`) and its pooled row
(:func:`pool_token_tables`), and the short-span share of §4.2 (:func:`short_span_share`). The
line-level cover of one case lives in :mod:`cadlib.costs.spans`, shared with the other chapters.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from cadlib.cases import EditCase
from cadlib.costs.spans import as_tokenizer as _tok
from cadlib.models.tokenizer import Tokenizer
from cadlib.oracle import greedy_cover, longest_matches

__all__ = [
    "short_span_share",
    "token_cover_table",
    "pool_token_tables",
]


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


def pool_token_tables(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The pooled row of several :func:`token_cover_table` results: per ``m``, the sums of
    ``T``, ``T_copy``, ``T_gen`` and ``K``, all span lengths, and ``f_tok`` and the mean span
    recomputed from the sums (not averaged over corpora)."""
    pooled = (
        pd.concat(tables)
        .groupby("m", sort=True)
        .agg(
            T=("T", "sum"),
            T_copy=("T_copy", "sum"),
            T_gen=("T_gen", "sum"),
            K=("K", "sum"),
            spans=("spans", lambda col: [n for spans in col for n in spans]),
        )
    )
    pooled["f_tok"] = pooled.T_copy / pooled["T"]
    pooled["mean"] = pooled.T_copy / pooled.K
    return pooled.reset_index()
