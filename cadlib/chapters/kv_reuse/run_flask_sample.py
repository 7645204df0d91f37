"""The dev-chosen recompute policy on fresh, long RealEdits-Flask edits (issue 32).

RealEdits-Flask is the fifth held-out corpus, and the only one of real commits. So far the
chapter judged the reuse mode on Flask only with prompts of at most 1,000 ids (13 cases: the
``agreement`` run's 5 and the policy search's 8), while the corpus's edit prompts have a median
near 2,800 SmolLM2 ids. Every case is too long a run for 2 cores (about three hours on one
core), so this run judges a fresh sample, declared here before it ran:

* the first :data:`CASES` cases of the seeded order (seed 0) among those whose prompt and
  target fit SmolLM2's 8,192-id context together, no prompt cap otherwise;
* leaving out every Flask case an earlier run of the chapter used (:func:`used_cases`);
* the policy search's chosen policy and ``none``, teacher-forced as in
  :func:`cadlib.chapters.kv_reuse.run.case_agreement`; nothing timed.

Run it with ``python -m cadlib.chapters.kv_reuse.commands flask-sample --out
results/kv_reuse.flask-sample.json`` (about half an hour on one core); chapter 6c shows the
committed run (:func:`cadlib.chapters.kv_reuse.text_flask_sample.sample_markdown`).
"""

from __future__ import annotations

from pathlib import Path

from cadlib.corpora import case_rank
from cadlib.models import SMOLLM2
from cadlib.record.provenance import monitor
from cadlib.record.results import read_results_file, run_report, write_run_report

from .profiles import AGREEMENT_THRESHOLD, PROFILES
from .run import agreement_rows, load_setup, sample_cases
from .run_policy_search import TEST_CASES, committed, search_columns

__all__ = [
    "CORPUS",
    "CASES",
    "SEED",
    "CONTEXT",
    "COMMAND",
    "RESULTS",
    "used_cases",
    "sample_inputs",
    "sample_run",
    "committed_sample",
]

CORPUS = "realedits-flask"
#: Fresh cases judged (declared before the run).
CASES = 24
#: The seed of the order the cases are taken in (the chapter's).
SEED = 0
#: SmolLM2's context: a case's prompt and target ids together must fit it.
CONTEXT = 8192
#: The command that records it (:mod:`cadlib.chapters.kv_reuse.commands`).
COMMAND = "python -m cadlib.chapters.kv_reuse.commands flask-sample"
#: The committed run chapter 6c shows.
RESULTS = "kv_reuse.flask-sample.json"


def used_cases(tokenizer) -> set[str]:
    """The Flask cases an earlier run of the chapter judged: the ``agreement`` profile's and
    the policy search's (both seeded order, seed 0, prompts of at most their cap)."""
    n, cap = (
        PROFILES["agreement"]["agreement_cases"][CORPUS],
        PROFILES["agreement"]["max_prompt"][CORPUS],
    )
    skip, more, search_cap = TEST_CASES[CORPUS]
    used = sample_cases([CORPUS], n, tokenizer, cap)[CORPUS]
    used += sample_cases([CORPUS], skip + more, tokenizer, search_cap)[CORPUS]
    return {x.case.id for x in used}


def sample_inputs(tokenizer, cases: int = CASES) -> dict:
    """``{CORPUS: [CaseInputs]}``: the first ``cases`` of the seeded order among the cases that
    fit :data:`CONTEXT` and no earlier run used."""
    used = used_cases(tokenizer)
    every = sorted(
        sample_cases([CORPUS], None, tokenizer)[CORPUS], key=lambda x: case_rank(SEED, x.case.id)
    )  # the seeded order
    fresh = [
        x for x in every if x.case.id not in used and len(x.edit_prompt) + len(x.target) <= CONTEXT
    ]
    return {CORPUS: fresh[:cases]}


def sample_run(out: str | Path, progress: bool = True) -> dict:
    """The committed search's chosen policy and ``none`` on :func:`sample_inputs`, written with
    its provenance (commit, the load of other processes) to the JSON file ``out``."""
    search = committed()
    if search is None:
        raise FileNotFoundError("results/kv_reuse.policy.json: run the policy search first")
    monitor()
    model, tokenizer, _ = load_setup(dict(model=SMOLLM2, profile="flask-sample"))
    inputs = sample_inputs(tokenizer)
    policies = tuple(dict.fromkeys(("none", search["chosen"])))
    rows = agreement_rows(model, tokenizer, inputs, policies, progress)
    prompts = [len(x.edit_prompt) for x in inputs[CORPUS]]
    protocol = dict(
        model=SMOLLM2,
        corpus=CORPUS,
        cases=CASES,
        context=CONTEXT,
        seed=SEED,
        excluded="the agreement run's and the policy search's Flask cases",
        policies=list(policies),
        threshold=AGREEMENT_THRESHOLD,
        chosen_by="results/kv_reuse.policy.json",
    )
    report = run_report(
        "flask-sample",
        COMMAND,
        protocol=protocol,
        chosen=search["chosen"],
        prompt_ids=prompts,
        test=search_columns(rows),
    )
    return write_run_report(report, out)


def committed_sample() -> dict | None:
    """The committed run (``results/kv_reuse.flask-sample.json``), or ``None``."""
    return read_results_file(RESULTS)
