"""The dev-chosen recompute policy on every case of the held-out HumanEvalFix corpora (issue 32).

:mod:`cadlib.chapters.kv_reuse.policy_search` judges its chosen policy on a sample of eight
fresh cases per held-out corpus. This run judges it, with ``none`` beside it, on **every** case
of each held-out HumanEvalFix corpus (:data:`CORPORA`, no prompt cap), teacher-forced as in
:func:`cadlib.chapters.kv_reuse.case_agreement`; one results file per corpus
(:func:`results_name`), so that corpora can run in separate processes. Nothing is timed.

RealEdits-Flask, the fifth held-out corpus, is left to the search's sample: its edit prompts
are about ten times longer than HumanEvalFix's (a median near 2,800 SmolLM2 ids, some beyond
the model's 8,192-id context), so every case would take many hours on 2 cores.

Run one corpus with ``python -m cadlib.chapters.kv_reuse.every_case heval-fix-go --out
results/kv_reuse.every-heval-fix-go.json`` (about 20 minutes on one core); chapter 6c shows the
committed runs (:func:`every_markdown`, :func:`every_table`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.models import SMOLLM2
from cadlib.record.provenance import load_caption, monitor
from cadlib.record.results import read_results_file, run_report, write_run_report

from .chapter import AGREEMENT_THRESHOLD, agreement_rows, agreement_table, load_setup, sample_cases
from .policy_search import _columns, _frame, committed, reusing, setting_sentence

__all__ = [
    "CORPORA",
    "COMMAND",
    "results_name",
    "every_case_run",
    "committed_runs",
    "pooled_report",
    "every_table",
    "every_markdown",
    "accepted_policy",
    "answer_sentence",
    "main",
]

#: The held-out corpora judged case by case, declared before any of them ran.
CORPORA = ("heval-fix-go", "heval-fix-java", "heval-fix-cpp", "heval-fix-rust")
#: The command that records one corpus.
COMMAND = "python -m cadlib.chapters.kv_reuse.every_case"


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
    """The runs as one report (their rows concatenated), for :func:`reusing`."""
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


def _load_sentence(runs: list[dict]) -> str:
    """The load the runs were recorded under, in one sentence (a run's own caption when there
    is one run or one lacks provenance)."""
    if len(runs) == 1 or not all(x.get("provenance") for x in runs):
        return " ".join(dict.fromkeys(load_caption(x) for x in runs))
    means = [x["provenance"]["load"]["other_cores"]["mean"] for x in runs]
    busy = sum(bool(x["provenance"]["busy"]) for x in runs)
    return (
        f"Other processes kept {min(means):.2f}–{max(means):.2f} of a core busy on average "
        f"while the {len(runs)} runs recorded ({busy} of them on a busy machine)."
    )


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
    that carry it are :func:`every_markdown`'s to say."""
    recorded = {x["protocol"]["corpus"] for x in runs}
    if not runs or recorded != set(CORPORA):
        return None
    v = _verdict(runs)
    return v["chosen"] if v["meets"] else None


def every_markdown(runs: list[dict]) -> str:
    """The verdict over every case of the corpora run: the chosen policy's pooled agreement
    against the threshold, the per-corpus range and the corpora below it, the cases that reuse
    nothing (which agree by construction) and the agreement on the others, ``none`` beside it;
    the corpora not yet recorded named. Rates near the threshold get two decimals, so that a
    miss never reads as the threshold itself."""
    v = _verdict(runs)
    r, some, thr = v["r"], v["some"], v["thr"]
    labels = ", ".join(CORPUS_LABELS.get(x["protocol"]["corpus"], "?") for x in runs)
    missing = [
        CORPUS_LABELS.get(c, c) for c in CORPORA if c not in {x["protocol"]["corpus"] for x in runs}
    ]
    if not v["meets"]:
        verdict = f"it **does not meet** the {thr:.1%} threshold"
    else:
        verdict = f"it meets the {thr:.1%} threshold pooled"
        if v["below"]:
            verdict += f", but not on {', '.join(v['below'])}"
    if v["carried"]:
        verdict += (
            f". That is carried by the {v['idle']} cases that reuse nothing (short "
            "copies: every id recomputed, so they agree by construction): on the "
            f"{int(some.cases)} that reuse any id it agrees on {some.rate:.2%} of "
            f"{int(some.decisions)} decisions, below the threshold"
        )
    elif some is not None:
        verdict += (
            f" ({v['idle']} cases reuse nothing; on the {int(some.cases)} that reuse "
            f"any id, {some.rate:.2%} of {int(some.decisions)} decisions)"
        )
    return (
        f"On every case of {labels} ({int(r.cases)} cases, {int(r.decisions)} decisions), "
        f"`{v['chosen']}` agrees with the exact splice on {r.rate:.2%} (95% interval "
        f"{r.lo:.2%}–{r.hi:.2%}; per corpus {v['per'].rate.min():.2%}–"
        f"{v['per'].rate.max():.2%}), recomputing {r.recomputed:.0%} of the copied ids: "
        f"{verdict}. `none` agrees on {v['base'].rate:.1%}, recomputing "
        f"{v['base'].recomputed:.0%}."
        + (f" Not yet recorded: {', '.join(missing)}." if missing else "")
        + f" Nothing here is timed. {_load_sentence(runs)} {setting_sentence(runs[0])}"
    )


def answer_sentence(runs: list[dict]) -> str:
    """One sentence for the chapter's **Answer.**: the chosen policy over every case of the
    corpora recorded, against the threshold, and on the cases where it reuses anything when
    those carry the verdict."""
    v = _verdict(runs)
    r, some = v["r"], v["some"]
    n = len(runs)
    head = (
        f"On every case of {n} held-out HumanEvalFix {'corpus' if n == 1 else 'corpora'} "
        f"({int(r.cases)} cases) it agrees on {r.rate:.2%}, recomputing "
        f"{r.recomputed:.0%} of the copied ids"
    )
    if not v["meets"]:
        return f"{head}: still short of the threshold."
    if v["carried"]:
        return (
            f"{head}: at the threshold pooled, but only because {v['idle']} of those cases "
            f"reuse nothing; where it reuses any id, {some.rate:.2%}."
        )
    return f"{head}: meeting the threshold."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("corpus", choices=CORPORA, help="the held-out corpus to run")
    parser.add_argument("--out", default=None, help="the JSON written (default: _build/...)")
    args = parser.parse_args(argv)
    out = args.out or f"_build/{results_name(args.corpus)}"
    report = every_case_run(out, args.corpus)
    print(f"wrote {out}; policy {report['chosen']} and none on every case of {args.corpus}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
