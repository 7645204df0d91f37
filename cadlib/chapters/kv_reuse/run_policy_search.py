"""A recompute policy chosen on development cases, judged on fresh held-out ones (issue 32).

Chapter 6c's agreement run found no policy that meets the declared threshold on its held-out
sample. This run asks whether a policy from a wider grid does, without letting the held-out
corpora choose it. The protocol, fixed before measuring (:data:`PROTOCOL`):

* **model**: SmolLM2-135M-Instruct on ``transformers`` (fp32, one torch thread), decisions
  teacher-forced along the oracle program, as in
  :func:`cadlib.chapters.kv_reuse.run.case_agreement`;
* **development** (:data:`DEV_CASES`): HumanEvalFix-Py and -JS (6 cases each, prompts up to
  1,000 ids) and ProbeEdit (4, up to 1,300), the seeded subset; every policy of :data:`GRID`;
* **the rule** (:func:`choose`): the policy that recomputes the least (pooled share of the
  spliced ids) among those whose pooled development agreement meets
  :data:`cadlib.chapters.kv_reuse.profiles.AGREEMENT_THRESHOLD`; if none does, the one with the
  highest development agreement (ties: the one that recomputes less);
* **test** (:data:`TEST_CASES`): per held-out corpus (HumanEvalFix-Java, -Go, -C++, -Rust,
  RealEdits-Flask), the next 8 cases of the seeded order after the 5 that chapter 6c's
  ``agreement`` run used (prompts up to 1,000 ids): cases no policy decision has seen; the
  chosen policy and ``none``. The verdict is the chosen policy's held-out agreement
  against the threshold, read where it reuses prompt entries, pooled and per corpus
  (:func:`judged`). It can fail, and a failure is reported, not re-tuned.

Nothing is timed. Run it with ``python -m cadlib.chapters.kv_reuse.commands policy-search --out
results/kv_reuse.policy.json`` (about 25 minutes on 2 cores); chapter 6c shows the committed run
(:func:`search_table`,
:func:`cadlib.chapters.kv_reuse.text_policy_search.search_markdown`).
Then :mod:`cadlib.chapters.kv_reuse.run_every_case` judges the chosen policy on every case of the
held-out HumanEvalFix corpora.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from cadlib.models import SMOLLM2
from cadlib.record.provenance import monitor
from cadlib.record.results import read_results_file, run_report, write_run_report

from .profiles import AGREEMENT_THRESHOLD
from .run import (
    agreement_rows,
    agreement_table,
    judge,
    load_setup,
    reusing_table,
    sample_cases,
    with_split,
)

__all__ = [
    "COMMITTED",
    "COMMAND",
    "GRID",
    "DEV_CASES",
    "TEST_CASES",
    "PROTOCOL",
    "dev_inputs",
    "test_inputs",
    "choose",
    "search_run",
    "search_columns",
    "committed",
    "search_table",
    "per_corpus",
    "judged",
]

#: The committed run chapter 6c shows.
COMMITTED = "kv_reuse.policy.json"
#: The command that records it (:mod:`cadlib.chapters.kv_reuse.commands`).
COMMAND = "python -m cadlib.chapters.kv_reuse.commands policy-search"
#: The recompute policies tried on the development cases (``all``, the control, is not: it
#: reuses nothing).
GRID = (
    "none",
    "first=2",
    "last=16",
    "last=32",
    "last=64",
    "first=2,last=16",
    "first=2,last=32",
    "first=4,last=32",
    "first=8,last=64",
)
#: ``{corpus: (cases, max prompt ids)}`` of the development sample (seeded order, seed 0).
DEV_CASES = {"heval-fix-py": (6, 1000), "heval-fix-js": (6, 1000), "probeedit": (4, 1300)}
#: ``{corpus: (skip, cases, max prompt ids)}``: the held-out sample, ``cases`` cases after the
#: first ``skip`` of the seeded order (those chapter 6c's ``agreement`` run used).
TEST_CASES = {
    c: (5, 8, 1000)
    for c in (
        "heval-fix-java",
        "heval-fix-go",
        "heval-fix-cpp",
        "heval-fix-rust",
        "realedits-flask",
    )
}
#: Everything the run fixes before it measures (recorded with it).
PROTOCOL = dict(
    model=SMOLLM2,
    grid=list(GRID),
    dev=DEV_CASES,
    test=TEST_CASES,
    threshold=AGREEMENT_THRESHOLD,
    seed=0,
    test_policies="chosen and none",
)


def dev_inputs(tokenizer) -> dict:
    """``{corpus: [CaseInputs]}`` of :data:`DEV_CASES`."""
    out = {}
    for name, (n, cap) in DEV_CASES.items():
        out.update(sample_cases([name], n, tokenizer, cap, PROTOCOL["seed"]))
    return out


def test_inputs(tokenizer) -> dict:
    """``{corpus: [CaseInputs]}`` of :data:`TEST_CASES`: per corpus the cases ranked
    ``skip + 1`` to ``skip + cases`` in the seeded order, among prompts within the cap."""
    out = {}
    for name, (skip, n, cap) in TEST_CASES.items():
        seen = {x.case.id for x in sample_cases([name], skip, tokenizer, cap)[name]}
        more = sample_cases([name], skip + n, tokenizer, cap, PROTOCOL["seed"])[name]
        out[name] = [x for x in more if x.case.id not in seen]
    return out


def choose(dev_table: pd.DataFrame, threshold: float = AGREEMENT_THRESHOLD) -> str:
    """The rule of the module docstring on ``dev_table`` (:func:`agreement_table` of the
    development rows, one row per policy)."""
    t = dev_table[dev_table.policy != "all"]
    ok = t[t.rate >= threshold]
    if not ok.empty:
        return str(ok.sort_values("recomputed", kind="stable").policy.iloc[0])
    best = t.sort_values(["rate", "recomputed"], ascending=[False, True], kind="stable")
    return str(best.policy.iloc[0])


def search_columns(rows: pd.DataFrame) -> dict:
    """Rows as ``{column: [values]}`` (KL to 5 decimals, ``since_copy`` ``None`` before any
    copy): compact for the committed file."""
    keep = [
        "corpus",
        "case",
        "policy",
        "step",
        "kind",
        "since_copy",
        "agree",
        "kl",
        "splice",
        "reused",
    ]
    rows = rows[keep].assign(kl=rows.kl.round(5), agree=rows.agree.astype(bool))
    out = {c: rows[c].tolist() for c in keep}
    out["since_copy"] = [None if pd.isna(v) else int(v) for v in rows.since_copy]
    return out


def _frame(columns: dict) -> pd.DataFrame:
    return with_split(pd.DataFrame(columns))


def search_run(out: str | Path, progress: bool = True) -> dict:
    """The whole protocol: development grid, the chosen policy, the held-out run; written with
    its provenance (commit, the load of other processes) to the JSON file ``out``."""
    monitor()
    model, tokenizer, _ = load_setup(dict(model=SMOLLM2, profile="policy"))
    dev = agreement_rows(model, tokenizer, dev_inputs(tokenizer), GRID, progress)
    chosen = choose(agreement_table(dev, by=("policy",)))
    policies = tuple(dict.fromkeys(("none", chosen)))
    test = agreement_rows(model, tokenizer, test_inputs(tokenizer), policies, progress)
    report = run_report(
        "policy",
        COMMAND,
        protocol=PROTOCOL,
        chosen=chosen,
        dev=search_columns(dev),
        test=search_columns(test),
    )
    return write_run_report(report, out)


def committed() -> dict | None:
    """The committed run (``results/kv_reuse.policy.json``), or ``None``."""
    return read_results_file(COMMITTED)


def search_table(report: dict) -> pd.DataFrame:
    """Per split and policy, on the cases that reuse prompt entries: cases, those that reuse
    none (``idle``) and those with a flipped decision, agreement with its interval, KL and the
    share of spliced ids recomputed (:func:`cadlib.chapters.kv_reuse.run.reusing_table`), the
    chosen policy marked."""
    rows = pd.concat([_frame(report["dev"]), _frame(report["test"])], ignore_index=True)
    table = reusing_table(rows)
    return table.assign(chosen=table.policy == report["chosen"])


def per_corpus(report: dict) -> pd.DataFrame:
    """The held-out agreement per corpus and policy where it reuses prompt entries (so that no
    corpus hides in the pool)."""
    return reusing_table(_frame(report["test"]), by=("corpus", "policy"))


def judged(report: dict, split: str = "test") -> dict:
    """The chosen policy on ``split``, read where it reuses prompt entries
    (:func:`cadlib.chapters.kv_reuse.run.judge`)."""
    rows = _frame(report[split])
    return judge(rows, report["chosen"], report["protocol"]["threshold"])
