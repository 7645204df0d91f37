"""The statistics and goals of chapter 6's held-out speed run (:mod:`.profiles_heldout`), from its
timed rows alone (deterministic, so the book re-derives them from the committed rows).

Per engine, per group of cases (each test corpus, the HumanEvalFix test family, all test cases)
and per method: the median-case speedup over autoregressive decoding with a bootstrap interval
by case, how many cases are slower than autoregressive decoding, and for each Copy-as-Decode
variant the median-case ratio of the best rival's latency to its own. The best rival of a group
on an engine is the rival method (:data:`.profiles_heldout.RIVALS`) with the lower median-case
latency there: the one a user of that engine would pick for those edits.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.costs.accounting import bootstrap_median
from cadlib.decoding.method_names import COPY_AS_DECODE
from cadlib.record.replay import decode, record_path

from .profiles_heldout import (
    ALL_TEST,
    BOOTSTRAP,
    FAMILY,
    GOALS,
    HUMANEVALFIX_TEST,
    QUANTITY,
    RIVALS,
    committed_parts,
)

__all__ = [
    "FAMILY",
    "ALL_TEST",
    "case_latency",
    "groups",
    "group_table",
    "judge",
    "combine",
    "committed_parts",
    "development_groups",
    "development_rows",
    "ALL_DEVELOPMENT",
]

#: The pooled group of :func:`development_groups`.
ALL_DEVELOPMENT = "all development cases"


def case_latency(rows: pd.DataFrame, quantity: str = QUANTITY) -> pd.DataFrame:
    """One row per (engine, corpus, case, method): the median over repeats of ``quantity``
    (``latency``) and of ``decode_s``, the output ids ``T`` and the forwards."""
    return (
        rows.groupby(["engine", "corpus", "case", "method"], sort=False)
        .agg(
            latency=(quantity, "median"),
            decode_s=("decode_s", "median"),
            T=("T", "first"),
            forwards=("forwards", "first"),
            repeats=("repeat", "nunique"),
        )
        .reset_index()
    )


def groups(corpora) -> list[tuple[str, list[str]]]:
    """``(name, corpora)`` of every group reported: each corpus, then the HumanEvalFix test
    family (when its languages are there) and all test cases."""
    corpora = list(dict.fromkeys(corpora))
    out = [(c, [c]) for c in corpora]
    family = [c for c in corpora if c in HUMANEVALFIX_TEST]
    if len(family) > 1:
        out.append((FAMILY, family))
    if len(corpora) > 1:
        out.append((ALL_TEST, corpora))
    return out


def _wide(lat: pd.DataFrame) -> pd.DataFrame:
    """Latency per (engine, corpus, case) with one column per method."""
    return lat.pivot_table(
        index=["engine", "corpus", "case"], columns="method", values="latency", sort=False
    )


def _median_ci(values, seed: int) -> tuple[float, float, float]:
    return bootstrap_median(values, seed, BOOTSTRAP["resamples"])


def group_table(lat: pd.DataFrame) -> pd.DataFrame:
    """Per engine, group and method: cases, median-case speedup over autoregressive decoding
    with its interval (``lo``, ``hi``), the cases slower than autoregressive decoding, and for
    Copy-as-Decode variants the best rival and the median-case ratio rival / method with its
    interval (> 1: Copy-as-Decode is faster)."""
    wide, seed, out = _wide(lat), BOOTSTRAP["seed"], []
    for engine, per_engine in wide.groupby(level="engine", sort=False):
        for group, corpora in groups(per_engine.index.get_level_values("corpus")):
            g = per_engine[per_engine.index.get_level_values("corpus").isin(corpora)]
            best = min(RIVALS, key=lambda m: float(np.median(g[m])))
            for method in g.columns:
                speedup = g["autoregressive"] / g[method]
                row = dict(engine=engine, group=group, method=method, cases=len(g))
                row.update(zip(("speedup", "lo", "hi"), _median_ci(speedup, seed), strict=True))
                row["slower_than_ar"] = int((g[method] > g["autoregressive"]).sum())
                if method in COPY_AS_DECODE:
                    ratio = g[best] / g[method]
                    row["best_rival"] = best
                    row.update(
                        zip(
                            ("vs_rival", "vs_rival_lo", "vs_rival_hi"),
                            _median_ci(ratio, seed),
                            strict=True,
                        )
                    )
                    row["slower_than_rival"] = int((ratio < 1).sum())
                out.append(row)
    return pd.DataFrame(out)


def _label(group: str) -> str:
    return CORPUS_LABELS.get(group, group)


def judge(table: pd.DataFrame) -> pd.DataFrame:
    """Every goal of :data:`.profiles_heldout.GOALS` on each engine: the figure, its interval
    where it has one, the target and whether it is met (a point estimate against the target,
    the interval shown beside it)."""
    out = []
    for goal in GOALS:
        for engine, t in table.groupby("engine", sort=False):
            t = t[t.method == goal["method"]].set_index("group")
            if "max_share_slower" in goal:
                row = t.loc[ALL_TEST] if ALL_TEST in t.index else t.iloc[0]
                share = row.slower_than_ar / row.cases
                out.append(
                    dict(
                        goal=goal["key"],
                        text=goal["text"],
                        engine=engine,
                        group=_label(ALL_TEST),
                        figure=share,
                        lo=np.nan,
                        hi=np.nan,
                        target=f"≤ {goal['max_share_slower']:.0%} of cases",
                        met=bool(share <= goal["max_share_slower"]),
                        cases=int(row.cases),
                        count=int(row.slower_than_ar),
                    )
                )
                continue
            names = goal["corpora"] if goal["each"] else [FAMILY]
            for group in [g for g in names if g in t.index]:
                row = t.loc[group]
                out.append(
                    dict(
                        goal=goal["key"],
                        text=goal["text"],
                        engine=engine,
                        group=_label(group),
                        figure=row.vs_rival,
                        lo=row.vs_rival_lo,
                        hi=row.vs_rival_hi,
                        target=f"≥ {goal['ratio']:g}× {row.best_rival}",
                        met=bool(row.vs_rival >= goal["ratio"])
                        if goal["ratio"] > 1
                        else bool(row.vs_rival > 1),
                        cases=int(row.cases),
                        count=int(row.slower_than_rival),
                    )
                )
    return pd.DataFrame(out)


def combine(parts: list[dict]) -> dict:
    """The engines' parts as one report for the chapter: their groups and goals, in order."""
    return dict(
        groups=[g for p in parts for g in p["groups"]],
        goals=[g for p in parts for g in p["goals"]],
    )


def development_groups(rows: pd.DataFrame, engine: str = "transformers") -> pd.DataFrame:
    """:func:`group_table` of timed rows on development corpora (chapter 6's own timed sample,
    the same columns as a part's rows less ``engine``), its pooled group named
    :data:`ALL_DEVELOPMENT`: the development side of the headline figure, on the same quantity."""
    table = group_table(case_latency(rows.assign(engine=engine)))
    return table.assign(group=table.group.replace({ALL_TEST: ALL_DEVELOPMENT}))


def development_rows(profile: str = "full") -> pd.DataFrame | None:
    """The timed rows of chapter 6's committed run at ``profile`` (its ``timing`` record, on the
    development corpora), or ``None`` when that record is not committed."""
    path = record_path("decoding", profile, "timing", replay=True)
    return decode(json.loads(path.read_text()))["rows"] if path.exists() else None
