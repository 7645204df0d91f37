"""Chapter 6's accounting of every case: the exact forwards of every method on every case of the
accounted corpora (:mod:`cadlib.costs.accounting`, no model), priced on the timed run's
forward-cost grid (:class:`cadlib.costs.cost_model.CostGrid`), the rival's settings (fewest
forwards per corpus; fastest on the development corpora) and, per corpus, where plain
Copy-as-Decode loses to autoregressive decoding (:func:`strata`)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from cadlib.corpora import CORPUS_LABELS, load_corpus
from cadlib.costs import accounting as A
from cadlib.costs import cost_model as CM

__all__ = [
    "DEVELOPMENT_CORPORA",
    "DEVELOPMENT_DATA",
    "HUMANEVALFIX",
    "EveryCase",
    "account_every_case",
    "family",
    "fastest_prompt_lookup",
    "strata",
    "task",
]

#: The development set: the corpora the book's choices were made on, so a goal met there is
#: labelled as such. The drafts' rules were designed by looking at HumanEvalFix-Python cases,
#: their body setting was tried on the headline corpora, and the timed setting (sample, caps,
#: grid) was built and run on these three; the rival's fastest setting is chosen on them.
DEVELOPMENT_CORPORA = ("heval-fix-py", "heval-fix-js", "probeedit")
#: Every corpus looked at while those choices were made: the development set and the real
#: Flask commits, a goal corpus while the drafts were designed (development data: the goals
#: judge it with the development set, :func:`.run_goals.corpus_set`).
DEVELOPMENT_DATA = (*DEVELOPMENT_CORPORA, "realedits-flask")
#: HumanEvalFix's six languages translate the same 164 tasks: one family, not six samples.
HUMANEVALFIX = "HumanEvalFix"


def family(corpus: str) -> str:
    """The corpus family a corpus counts in: HumanEvalFix for each of its languages (they
    translate the same tasks), else the corpus itself (its display name)."""
    return HUMANEVALFIX if corpus.startswith("heval-fix-") else CORPUS_LABELS.get(corpus, corpus)


def task(case: str) -> str:
    """The task a case translates (``Python/12`` and ``Go/12`` are both task ``12``)."""
    return case.rsplit("/", 1)[-1]


@dataclass
class EveryCase:
    """The exact forward accounting of every case of the accounted corpora.

    Attributes
    ----------
    sources : where each corpus came from (``local``, ``generated``, ...)
    rows : :func:`cadlib.costs.accounting.corpus_forwards`, priced on the grid (``predicted_s``)
    best : the prompt-lookup setting with the fewest forwards, per corpus (the forwards goal)
    summary : :func:`cadlib.costs.accounting.forwards_summary`
    predicted : :func:`cadlib.costs.cost_model.predicted_speedups`, prompt lookup at
        :attr:`fastest`
    fastest : the one prompt-lookup setting with the fewest predicted seconds on the
        development corpora, per corpus (:func:`fastest_prompt_lookup`; the time goals)
    """

    sources: dict
    rows: pd.DataFrame
    best: pd.Series
    summary: pd.DataFrame
    predicted: pd.DataFrame
    fastest: pd.Series


def fastest_prompt_lookup(
    rows: pd.DataFrame, development: tuple[str, ...] = DEVELOPMENT_CORPORA
) -> pd.Series:
    """The rival for time: the one prompt-lookup setting with the fewest predicted seconds
    summed over the ``development`` corpora among ``rows`` (every corpus when none is there),
    declared there and used on every corpus (a Series by corpus). On a CPU a verify forward of
    K + 1 ids costs several one-id forwards, so the fewest forwards need not be the fastest."""
    pld = rows[rows.method == "prompt lookup"]
    dev = pld[pld.corpus.isin(development)]
    seconds = (dev if len(dev) else pld).groupby("setting", sort=False).predicted_s.sum()
    corpora = list(dict.fromkeys(pld.corpus))
    return pd.Series(seconds.idxmin(), index=pd.Index(corpora, name="corpus"), name="setting")


def strata(rows: pd.DataFrame, setting: str = "m=0") -> pd.DataFrame:
    """Per corpus, where Copy-as-Decode at ``setting`` loses to autoregressive decoding: its
    family (:func:`family`), cases, gold ids ``T`` and predicted autoregressive seconds (each
    corpus's weight in a pooled ratio of sums), the cases predicted slower than autoregressive
    decoding (and their ids, so a family's tasks can be counted) and those that need more
    forwards."""
    key = ["corpus", "case"]
    ar = rows[rows.method == "autoregressive"].set_index(key)
    cad = rows[(rows.method == "Copy-as-Decode") & (rows.setting == setting)].set_index(key)
    cad = cad.reindex(ar.index)
    frame = pd.DataFrame(
        {
            "slower": cad.predicted_s > ar.predicted_s,
            "more": cad.forwards > ar.forwards,
            "T": ar["T"],
            "ar_s": ar.predicted_s,
        }
    ).reset_index()
    out = []
    for corpus, g in frame.groupby("corpus", sort=False):
        out.append(
            dict(
                corpus=corpus,
                family=family(corpus),
                setting=setting,
                cases=len(g),
                T=int(g["T"].sum()),
                ar_predicted_s=float(g.ar_s.sum()),
                slower_than_ar=int(g.slower.sum()),
                more_forwards_than_ar=int(g.more.sum()),
                slower_cases=list(g.case[g.slower]),
            )
        )
    return pd.DataFrame(out)


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
    rival's settings (fewest forwards per corpus; fastest on the development corpora) and
    summarize (seeded bootstrap intervals)."""
    if corpora is None:
        corpora = {name: load_corpus(name) for name in params["accounting_corpora"]}
    rows = A.corpus_forwards(corpora, tokenizer, cost=grid.predict, progress=progress)
    best = A.best_prompt_lookup(rows)
    fastest = fastest_prompt_lookup(rows)
    return EveryCase(
        sources={name: getattr(c, "source", "").split(":")[0] for name, c in corpora.items()},
        rows=rows,
        best=best,
        summary=A.forwards_summary(rows, best, seed),
        predicted=CM.predicted_speedups(rows, fastest, seed),
        fastest=fastest,
    )
