"""Every method on every case of a corpus: the per-case table, the best prompt-lookup setting
per corpus, medians with bootstrap intervals and the setting grid."""

from __future__ import annotations

import numpy as np
import pandas as pd
from tqdm import tqdm

from cadlib.decoding.fsm import transcript
from cadlib.decoding.methods import prepare
from cadlib.decoding.prompt_lookup import ngram_index

from .forwards import (
    BOUND,
    COMPOSITIONS,
    M_STAR,
    PLD_GRID,
    Accounting,
    autoregressive,
    bound_forwards,
    composed,
    copy_as_decode,
    prompt_lookup,
)

__all__ = [
    "case_forwards",
    "corpus_forwards",
    "best_prompt_lookup",
    "headline_rows",
    "forwards_summary",
    "bootstrap_median",
    "setting_grid",
]


# --------------------------------------------------------------------------------------------
# Cases and corpora
# --------------------------------------------------------------------------------------------


def case_forwards(
    x, tokenizer, grid=PLD_GRID, min_spans=(0, M_STAR), compositions=COMPOSITIONS
) -> list[Accounting]:
    """Every method on one case made ready by :func:`cadlib.decoding.methods.prepare` (same
    prompts, oracle program and gold ids as chapter 6): autoregressive, prompt lookup at each
    ``(K, n)`` of ``grid``, Copy-as-Decode at each minimum span of ``min_spans`` and each
    composition of ``compositions`` (:func:`composed`), and last the charge of ``bnd_exact``
    (method :data:`BOUND`, not a decoder: :func:`bound_forwards`)."""
    T = len(x.target) - 1
    out = [autoregressive(len(x.regen_prompt), x.target, T)]
    index = ngram_index([*x.regen_prompt, *x.target], max((n for _, n in grid), default=0))
    out += [prompt_lookup(x.regen_prompt, x.target, K, n, T, index=index) for K, n in grid]
    tr = transcript(x.program, x.case.doc, tokenizer)
    out += [copy_as_decode(len(x.edit_prompt), tr, m, T) for m in min_spans]
    out += [
        composed(x.edit_prompt, tr, x.program, x.case.doc, tokenizer, c, T=T) for c in compositions
    ]
    n = len(x.edit_prompt)
    out.append(Accounting(BOUND, "", bound_forwards(n, tr), T, n, len(tr)))
    return out


def corpus_forwards(
    corpora: dict,
    tokenizer,
    grid=PLD_GRID,
    min_spans=(0, M_STAR),
    compositions=COMPOSITIONS,
    cost=None,
    progress: bool = True,
) -> pd.DataFrame:
    """One row per (corpus, case, method, setting): ``T`` (gold ids), ``prompt``,
    ``output``, ``forwards`` (after the prefill), ``ids_fed`` (all, prompt included),
    ``forwards_per_token`` and, given ``cost`` (an :class:`Accounting` -> predicted decode
    seconds, e.g. :meth:`cadlib.costs.cost_model.CostGrid.predict`), ``predicted_s``. ``corpora``
    maps a corpus name to its cases."""
    rows = []
    for name, cases in corpora.items():
        for case in tqdm(cases, desc=f"forwards {name}", disable=not progress):
            x = prepare(name, case, tokenizer)
            for a in case_forwards(x, tokenizer, grid, min_spans, compositions):
                row = dict(
                    corpus=name,
                    case=case.id,
                    method=a.method,
                    setting=a.setting,
                    T=a.T,
                    prompt=a.prompt,
                    output=a.output,
                    forwards=a.decode_forwards,
                    ids_fed=a.ids_fed,
                    forwards_per_token=a.forwards_per_token,
                )
                if cost is not None:
                    row["predicted_s"] = cost(a)
                rows.append(row)
    return pd.DataFrame(rows)


def best_prompt_lookup(rows: pd.DataFrame) -> pd.Series:
    """Per corpus, the single prompt-lookup setting with the fewest total forwards over its
    cases (ties: fewest ids fed, then the order of :data:`PLD_GRID`)."""
    pld = rows[rows.method == "prompt lookup"]
    tot = pld.groupby(["corpus", "setting"], sort=False)[["forwards", "ids_fed"]].sum()
    tot = tot.reset_index().sort_values(["corpus", "forwards", "ids_fed"], kind="stable")
    return tot.groupby("corpus", sort=False)["setting"].first()


def headline_rows(rows: pd.DataFrame, best: pd.Series | None = None) -> pd.DataFrame:
    """The rows of the headline methods: autoregressive, prompt lookup at its best setting
    per corpus (``best``, default :func:`best_prompt_lookup`), Copy-as-Decode at each m."""
    best = best_prompt_lookup(rows) if best is None else best
    keep = (rows.method != "prompt lookup") | (rows.setting == rows.corpus.map(best))
    return rows[keep & (rows.method != BOUND)]


def bootstrap_median(x, seed: int = 0, n_resamples: int = 2000) -> tuple[float, float, float]:
    """Median of ``x`` and its 95% percentile-bootstrap interval (``scipy.stats.bootstrap``,
    seeded); a constant sample's interval is the constant itself."""
    from scipy.stats import bootstrap

    x = np.asarray(x, dtype=float)
    med = float(np.median(x))
    if len(x) < 2 or np.ptp(x) == 0:
        return med, med, med
    ci = bootstrap(
        (x,),
        np.median,
        n_resamples=n_resamples,
        method="percentile",
        random_state=np.random.default_rng(seed),
    ).confidence_interval
    return med, float(ci.low), float(ci.high)


def forwards_summary(
    rows: pd.DataFrame, best: pd.Series | None = None, seed: int = 0
) -> pd.DataFrame:
    """Per corpus and pooled, per headline method: cases, gold ids, forwards, the pooled
    ratio forwards / T, and the median per-case forwards per token and per-case forward
    ratio (autoregressive / method) with bootstrap 95% intervals. Pooled prompt lookup uses
    each corpus's best setting."""
    head = headline_rows(rows, best)
    ar = head[head.method == "autoregressive"].set_index(["corpus", "case"])["forwards"]
    head = head.assign(
        ratio=ar.reindex(pd.MultiIndex.from_frame(head[["corpus", "case"]])).values
        / head["forwards"].clip(lower=1)
    )
    pooled = head.assign(setting=head.setting.where(head.method != "prompt lookup", "best"))
    out = []
    for corpus, g in [*head.groupby("corpus", sort=False), ("pooled", pooled)]:
        for (method, setting), m in g.groupby(["method", "setting"], sort=False):
            fpt = bootstrap_median(m.forwards_per_token, seed)
            ratio = bootstrap_median(m.ratio, seed)
            out.append(
                dict(
                    corpus=corpus,
                    method=method,
                    setting=setting,
                    cases=len(m),
                    T=int(m["T"].sum()),
                    forwards=int(m.forwards.sum()),
                    pooled_fpt=m.forwards.sum() / m["T"].sum(),
                    median_fpt=fpt[0],
                    fpt_lo=fpt[1],
                    fpt_hi=fpt[2],
                    median_ratio=ratio[0],
                    ratio_lo=ratio[1],
                    ratio_hi=ratio[2],
                )
            )
    return pd.DataFrame(out)


def setting_grid(rows: pd.DataFrame) -> pd.DataFrame:
    """Pooled decode forwards per gold id of every prompt-lookup setting, per corpus (rows:
    ``K=.. n=..``; the book's timed runs use :data:`cadlib.decoding.prompt_lookup.TIMED_PLD`):
    how much the rival's best depends on its setting."""
    pld = rows[rows.method == "prompt lookup"]
    tot = pld.groupby(["setting", "corpus"], sort=False)[["forwards", "T"]].sum()
    grid = (tot.forwards / tot["T"]).unstack("corpus")
    return grid.loc[[f"K={k} n={n}" for k, n in PLD_GRID if f"K={k} n={n}" in grid.index]]
