"""The dev-chosen recompute policy on every case of the held-out HumanEvalFix corpora (issue 32).

:mod:`cadlib.chapters.kv_reuse.run_policy_search` judges its chosen policy on a sample of eight
fresh cases per held-out corpus. This run judges it, with ``none`` beside it, on **every** case
of each held-out HumanEvalFix corpus (:data:`CORPORA`, no prompt cap), teacher-forced as in
:func:`cadlib.chapters.kv_reuse.run.case_agreement`; one results file per corpus
(:func:`results_name`), so that corpora can run in separate processes. Nothing is timed.

RealEdits-Flask, the fifth held-out corpus, is left to the search's sample: its edit prompts
are about ten times longer than HumanEvalFix's (a median near 2,800 SmolLM2 ids, some beyond
the model's 8,192-id context), so every case would take many hours on 2 cores.

Run one corpus with ``python -m cadlib.chapters.kv_reuse.commands every-case heval-fix-go --out
results/kv_reuse.every-heval-fix-go.json`` (about 20 minutes on one core); chapter 6c shows the
committed runs (:func:`every_table`,
:func:`cadlib.chapters.kv_reuse.text_every_case.every_markdown`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.models import SMOLLM2
from cadlib.record.provenance import monitor
from cadlib.record.results import read_results_file, run_report, write_run_report

from .profiles import AGREEMENT_THRESHOLD
from .run import agreement_rows, agreement_table, load_setup, sample_cases
from .run_policy_search import _columns, _frame, committed, reusing

__all__ = [
    "CORPORA",
    "COMMAND",
    "results_name",
    "every_case_run",
    "committed_runs",
    "pooled_report",
    "every_table",
    "accepted_policy",
]

#: The held-out corpora judged case by case, declared before any of them ran.
CORPORA = ("heval-fix-go", "heval-fix-java", "heval-fix-cpp", "heval-fix-rust")
#: The command that records one corpus (:mod:`cadlib.chapters.kv_reuse.commands`).
COMMAND = "python -m cadlib.chapters.kv_reuse.commands every-case"


def results_name(corpus: str) -> str:
    """The results file of ``corpus``'s run: ``kv_reuse.every-<corpus>.json``."""
    return f"kv_reuse.every-{corpus}.json"


def every_case_run(out: str | Path, corpus: str, progress: bool = True) -> dict:
    """The committed search's chosen policy and ``none`` on every case of ``corpus``, written
    with its provenance (commit, the load of other processes) to the JSON file ``out``."""
    search = committed()
    if search is None:
        raise FileNotFoundError("results/kv_reuse.policy.json: run the policy search first")
    if corpus not in CORPORA:
        raise ValueError(f"{corpus!r} is not judged case by case; use one of {list(CORPORA)}")
    monitor()
    model, tokenizer, _ = load_setup(dict(model=SMOLLM2, profile="every"))
    policies = tuple(dict.fromkeys(("none", search["chosen"])))
    rows = agreement_rows(
        model, tokenizer, sample_cases([corpus], None, tokenizer), policies, progress
    )
    protocol = dict(
        model=SMOLLM2,
        corpus=corpus,
        cases="every case, no prompt cap",
        policies=list(policies),
        threshold=AGREEMENT_THRESHOLD,
        chosen_by="results/kv_reuse.policy.json",
    )
    report = run_report(
        "every",
        f"{COMMAND} {corpus}",
        protocol=protocol,
        chosen=search["chosen"],
        test=_columns(rows),
    )
    return write_run_report(report, out)


def committed_runs() -> list[dict]:
    """The committed runs of :data:`CORPORA`, in that order (those not yet recorded left out)."""
    runs = (read_results_file(results_name(c)) for c in CORPORA)
    return [r for r in runs if r is not None]


def pooled_report(runs: list[dict]) -> dict:
    """The runs as one report (their rows concatenated), for :func:`.run_policy_search.reusing`."""
    columns = {k: [v for r in runs for v in r["test"][k]] for k in runs[0]["test"]}
    return dict(runs[0], test=columns)


def every_table(runs: list[dict], pooled: bool = True) -> pd.DataFrame:
    """Per corpus and policy, then (``pooled``) pooled over the corpora (``corpus`` =
    ``all``): cases, decisions, agreement with its interval, KL and the share of copied ids
    recomputed. A display of one corpus passes ``pooled=False``: its pooled rows repeat it."""
    rows = _frame(pooled_report(runs)["test"])
    per = agreement_table(rows, by=("corpus", "policy"))
    per["corpus"] = per.corpus.map(lambda c: CORPUS_LABELS.get(c, c))
    if not pooled:
        return per
    both = agreement_table(rows, by=("policy",)).assign(corpus="all")
    return pd.concat([per, both], ignore_index=True)


def _verdict(runs: list[dict]) -> dict:
    """What the sentences say: the chosen policy's pooled row, ``none``'s, the corpora below
    the threshold, the cases that reuse nothing and the agreement on the others, and whether
    the pooled figure meets the threshold only because of the cases that reuse nothing."""
    report = pooled_report(runs)
    chosen, thr = report["chosen"], report["protocol"]["threshold"]
    t = every_table(runs)
    per, pooled = t[t.corpus != "all"], t[t.corpus == "all"].set_index("policy")
    mine = per[per.policy == chosen]
    idle, some = reusing(report, chosen)
    r = pooled.loc[chosen]
    return dict(
        chosen=chosen,
        thr=thr,
        r=r,
        base=pooled.loc["none"],
        per=mine,
        below=[c for c, x in zip(mine.corpus, mine.rate, strict=True) if x < thr],
        idle=idle,
        some=some,
        meets=bool(r.rate >= thr),
        carried=bool(r.rate >= thr and some is not None and some.rate < thr),
    )


def accepted_policy(runs: list[dict]) -> str | None:
    """The chosen policy when every corpus of :data:`CORPORA` is recorded and it meets the
    threshold pooled over them (the policy chapter 6c's speed goals are judged at), else
    ``None``. Pooled is the rule declared before the runs; the per-corpus misses and the cases
    that carry it are :func:`.text_every_case.every_markdown`'s to say."""
    recorded = {x["protocol"]["corpus"] for x in runs}
    if not runs or recorded != set(CORPORA):
        return None
    v = _verdict(runs)
    return v["chosen"] if v["meets"] else None
