"""Chapter 6's accounting of every case: the exact forwards of every method on every case of the
accounted corpora (:mod:`cadlib.costs.accounting`, no model), priced on the timed run's
forward-cost grid (:class:`cadlib.costs.cost_model.CostGrid`)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from cadlib.corpora import load_corpus
from cadlib.costs import accounting as A
from cadlib.costs import cost_model as CM

__all__ = ["EveryCase", "account_every_case"]


@dataclass
class EveryCase:
    """The exact forward accounting of every case of the accounted corpora.

    Attributes
    ----------
    sources : where each corpus came from (``local``, ``generated``, ...)
    rows : :func:`cadlib.costs.accounting.corpus_forwards`, priced on the grid (``predicted_s``)
    best : the best prompt-lookup setting per corpus
    summary : :func:`cadlib.costs.accounting.forwards_summary`
    predicted : :func:`cadlib.costs.cost_model.predicted_speedups`
    """

    sources: dict
    rows: pd.DataFrame
    best: pd.Series
    summary: pd.DataFrame
    predicted: pd.DataFrame


def account_every_case(
    params: dict,
    tokenizer,
    grid: CM.CostGrid,
    seed: int = 0,
    corpora: dict | None = None,
    progress: bool = True,
) -> EveryCase:
    """Count the forwards of every method on every case of ``params["accounting_corpora"]``
    (``corpora``: those corpora already loaded, by name), price them on ``grid``, pick the
    rival's best setting per corpus and summarize (seeded bootstrap intervals)."""
    if corpora is None:
        corpora = {name: load_corpus(name) for name in params["accounting_corpora"]}
    rows = A.corpus_forwards(corpora, tokenizer, cost=grid.predict, progress=progress)
    best = A.best_prompt_lookup(rows)
    return EveryCase(
        sources={name: getattr(c, "source", "").split(":")[0] for name, c in corpora.items()},
        rows=rows,
        best=best,
        summary=A.forwards_summary(rows, best, seed),
        predicted=CM.predicted_speedups(rows, best, seed),
    )
