"""The dev-chosen recompute policy on every case of the held-out HumanEvalFix corpora (issue 32).

:mod:`cadlib.chapters.kv_reuse.run_policy_search` judges its chosen policy on a sample of eight
fresh cases per held-out corpus. This run judges it, with ``none`` beside it, on **every** case
of each held-out HumanEvalFix corpus (:data:`CORPORA`, no prompt cap), teacher-forced as in
:func:`cadlib.chapters.kv_reuse.run.case_agreement`; one results file per corpus
(:func:`results_name`), so that corpora can run in separate processes. Nothing is timed.
The four corpora translate the same 164 HumanEval tasks: one family, not four independent
samples (:func:`tasks`).

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
from .run import agreement_rows, judge, load_setup, reusing_table, sample_cases
from .run_policy_search import _frame, committed, search_columns

__all__ = [
    "CORPORA",
    "COMMAND",
    "results_name",
    "every_case_run",
    "committed_runs",
    "pooled_report",
    "every_table",
    "tasks",
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
        test=search_columns(rows),
    )
    return write_run_report(report, out)


def committed_runs() -> list[dict]:
    """The committed runs of :data:`CORPORA`, in that order (those not yet recorded left out)."""
    runs = (read_results_file(results_name(c)) for c in CORPORA)
    return [r for r in runs if r is not None]


def pooled_report(runs: list[dict]) -> dict:
    """The runs as one report (their rows concatenated)."""
    columns = {k: [v for r in runs for v in r["test"][k]] for k in runs[0]["test"]}
    return dict(runs[0], test=columns)


def every_table(runs: list[dict], pooled: bool = True) -> pd.DataFrame:
    """Per corpus and policy, then (``pooled``) pooled over the corpora (``corpus`` =
    ``all``), on the cases that reuse prompt entries
    (:func:`cadlib.chapters.kv_reuse.run.reusing_table`: cases, those that reuse none, those
    with a flipped decision, agreement with its interval, KL, the share of copied ids
    recomputed). A display of one corpus passes ``pooled=False``: its pooled rows repeat it."""
    rows = _frame(pooled_report(runs)["test"])
    per = reusing_table(rows, by=("corpus", "policy"))
    per["corpus"] = per.corpus.map(lambda c: CORPUS_LABELS.get(c, c))
    if not pooled:
        return per
    both = reusing_table(rows, by=("policy",)).assign(corpus="all")
    return pd.concat([per, both], ignore_index=True)


def tasks(runs: list[dict]) -> int:
    """How many distinct tasks the runs' cases translate (``Go/12`` and ``Java/12`` are one
    HumanEval task in two languages)."""
    return len({c.rsplit("/", 1)[-1] for r in runs for c in r["test"]["case"]})


def _verdict(runs: list[dict]) -> dict:
    """What the sentences say: the chosen policy read where it reuses prompt entries
    (:func:`cadlib.chapters.kv_reuse.run.judge`: ``r`` pooled, ``per`` corpus, the corpora
    ``below`` the threshold, whether it ``meets`` it), ``none``'s pooled row beside it."""
    report = pooled_report(runs)
    chosen, thr = report["chosen"], report["protocol"]["threshold"]
    rows = _frame(report["test"])
    v = judge(rows, chosen, thr)
    base = judge(rows, "none", thr)["pooled"]
    return dict(chosen=chosen, thr=thr, r=v["pooled"], base=base, **v)


def accepted_policy(runs: list[dict]) -> str | None:
    """The chosen policy when every corpus of :data:`CORPORA` is recorded and it meets the
    threshold where it reuses prompt entries, pooled and in every corpus (cases that reuse
    nothing agree by construction and never count), else ``None``."""
    recorded = {x["protocol"]["corpus"] for x in runs}
    if not runs or recorded != set(CORPORA):
        return None
    v = _verdict(runs)
    return v["chosen"] if v["meets"] else None
