"""The rule chosen on development data, run once on the test corpora (issue 51 §3).

The selection rules and the margin-gated fallback were compared on development corpora only
(:mod:`.run_rules`); the declared choice there is
:data:`~cadlib.chapters.kv_reuse.profiles.TEST_RULE`. This run judges it once on the test
corpora, with the protocol fixed here before it ran:

* the four HumanEvalFix test languages (one family: they translate one task set) and the two
  real-edit test corpora, RealEdits-Requests and -Cobra (:data:`CASES` per corpus);
* per corpus, the first cases of the seeded order (seed 0) among those whose prompt and target
  fit SmolLM2's 8,192-id context together, no other prompt cap (:func:`sample_inputs`);
* ``none``, the rule alone (:data:`~cadlib.chapters.kv_reuse.profiles.RULE_CHOSEN`) and the
  chosen gated setting, teacher-forced along the oracle program and compared with the exact
  splice decision by decision (:func:`cadlib.chapters.kv_reuse.run.case_agreement`), cases
  round-robin over the corpora and written after each (``complete`` says whether it ran to its
  end);
* the goal (:func:`test_verdict`): agreement on the cases that reuse anything of at least the
  threshold, pooled and in every corpus, spending at most 30 % of the copied ids (recomputed
  at the copy plus fed again by the fallbacks).

Nothing is timed. Run it with ``python -m cadlib.chapters.kv_reuse.commands rules-test --out
results/kv_reuse.rules-test.json``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from cadlib.corpora import case_rank
from cadlib.decoding.kv_select import SelectingDecoder
from cadlib.models import SMOLLM2
from cadlib.record.provenance import monitor
from cadlib.record.results import read_results_file, run_report, write_run_report

from .profiles import AGREEMENT_THRESHOLD, RULE_CHOSEN, RULE_MAX_RECOMPUTE, TEST_RULE
from .run import case_agreement, load_setup, sample_cases
from .run_rules import curve_table, decision_columns, interleave

__all__ = [
    "CASES",
    "CONTEXT",
    "SEED",
    "POLICIES",
    "PROTOCOL",
    "COMMAND",
    "RESULTS",
    "sample_inputs",
    "rules_test_run",
    "committed_rules_test",
    "corpus_table",
    "test_verdict",
]

#: Cases per test corpus (declared before the run): four each, as on development data, sized
#: for about half an hour of one core (a long real edit takes about two minutes for the exact
#: splice and three reuse decodes, the fallbacks' feeds included).
CASES = {
    "heval-fix-java": 4,
    "heval-fix-go": 4,
    "heval-fix-cpp": 4,
    "heval-fix-rust": 4,
    "realedits-requests": 4,
    "realedits-cobra": 4,
}
#: SmolLM2's context: a case's prompt and target ids together must fit it.
CONTEXT = 8192
#: The seed of the order the cases are taken in (the chapter's).
SEED = 0
#: ``none`` (the zero point), the rule alone and the chosen gated setting.
POLICIES = tuple(dict.fromkeys(("none", RULE_CHOSEN, TEST_RULE)))
#: Everything the run fixes before it measures (recorded with it).
PROTOCOL = dict(
    model=SMOLLM2,
    corpora=list(CASES),
    cases=CASES,
    context=CONTEXT,
    seed=SEED,
    policies=list(POLICIES),
    judged=TEST_RULE,
    threshold=AGREEMENT_THRESHOLD,
    max_recompute=RULE_MAX_RECOMPUTE,
    chosen_by="results/kv_reuse.gated.json (development cases only)",
    timed=False,
)
#: The command that records it (:mod:`cadlib.chapters.kv_reuse.commands`).
COMMAND = "python -m cadlib.chapters.kv_reuse.commands rules-test"
#: The committed run chapter 6c shows.
RESULTS = "kv_reuse.rules-test.json"


def sample_inputs(tokenizer, cases: dict = CASES) -> dict:
    """``{corpus: [CaseInputs]}``: per corpus the first ``cases[corpus]`` of the seeded order
    among the cases whose prompt and target fit :data:`CONTEXT`."""
    out = {}
    for name, n in cases.items():
        every = sample_cases([name], None, tokenizer)[name]
        every = sorted(every, key=lambda x: case_rank(SEED, x.case.id))
        out[name] = [x for x in every if len(x.edit_prompt) + len(x.target) <= CONTEXT][:n]
    return out


def rules_test_run(out: str | Path, progress: bool = True) -> dict:
    """:data:`POLICIES` on :func:`sample_inputs`, round-robin over the corpora, written with
    its provenance to the JSON file ``out`` after each case (``complete`` false until the
    last), with the verdict on :data:`~cadlib.chapters.kv_reuse.profiles.TEST_RULE`."""
    monitor()
    model, tokenizer, _ = load_setup(dict(model=SMOLLM2, profile="rules-test"))
    inputs = sample_inputs(tokenizer)
    order = interleave(list(inputs.values()))
    layers = int(model.config.num_hidden_layers)
    prompts = {f"{x.corpus}/{x.case.id}": len(x.edit_prompt) for x in order}
    frames, report = [], {}
    for k, x in enumerate(order):
        frames.append(case_agreement(model, tokenizer, x, POLICIES, SelectingDecoder))
        if progress:
            print(f"{x.corpus} {x.case.id}: done ({k + 1}/{len(order)})", flush=True)
        columns = decision_columns(pd.concat(frames, ignore_index=True))
        report = run_report(
            "rules-test",
            COMMAND,
            protocol=PROTOCOL,
            layers=layers,
            complete=k == len(order) - 1,
            prompt_ids=prompts,
            verdict=test_verdict(columns, layers),
            rows=columns,
        )
        write_run_report(report, out)
    return report


def committed_rules_test() -> dict | None:
    """The committed run (``results/kv_reuse.rules-test.json``), or ``None``."""
    return read_results_file(RESULTS)


def corpus_table(columns: dict, layers: int) -> pd.DataFrame:
    """:func:`cadlib.chapters.kv_reuse.run_rules.curve_table` per corpus (a ``corpus`` column),
    then the HumanEvalFix test family pooled (``corpus`` ``heval-fix``) and every corpus
    pooled (``all``)."""
    rows = pd.DataFrame(columns)
    groups = {c: rows[rows.corpus == c] for c in dict.fromkeys(rows.corpus)}
    groups["heval-fix"] = rows[rows.corpus.str.startswith("heval-fix")]
    groups["all"] = rows
    frames = [
        curve_table(g.to_dict("list"), layers).assign(corpus=name)
        for name, g in groups.items()
        if len(g)
    ]
    return pd.concat(frames, ignore_index=True)


def test_verdict(
    columns: dict,
    layers: int,
    policy: str = TEST_RULE,
    threshold: float = AGREEMENT_THRESHOLD,
    max_recompute: float = RULE_MAX_RECOMPUTE,
) -> dict:
    """The goal on ``policy``: ``agrees`` (some case reuses an id, and the pooled agreement on
    the reusing cases and every corpus's reach ``threshold``), ``within`` (it spends at most
    ``max_recompute`` of the copied ids), ``met`` (both); the pooled ``rate``, its lower bound
    ``lo``, ``spent``, reusing ``cases`` and ``flipped`` ones, and the corpora ``below``."""
    t = corpus_table(columns, layers)
    if "rate" not in t:  # no case of any corpus reuses an id
        t = t.assign(rate=float("nan"), lo=float("nan"))
    t = t[t.policy == policy]
    pooled = t[t.corpus == "all"].iloc[0]
    per = t[~t.corpus.isin(("all", "heval-fix")) & (t.cases > 0)]
    below = [str(c) for c, r in zip(per.corpus, per.rate, strict=True) if r < threshold]
    agrees = bool(pooled.cases > 0 and pooled.rate >= threshold and not below)
    within = bool(pooled.spent <= max_recompute)
    return dict(
        policy=policy,
        agrees=agrees,
        within=within,
        met=agrees and within,
        rate=None if pooled.cases == 0 else round(float(pooled.rate), 6),
        lo=None if pooled.cases == 0 else round(float(pooled.lo), 6),
        spent=round(float(pooled.spent), 6),
        cases=int(pooled.cases),
        flipped=int(pooled.flipped),
        below=below,
    )
