"""The chosen rule timed on long real-edit test cases (issue 51 §5), declared before it runs.

Agreement is judged by :mod:`.run_rules_test`; this run asks what the chosen setting
(:data:`~cadlib.chapters.kv_reuse.profiles.TEST_RULE`) is worth on the clock. The protocol,
fixed here before it ran:

* the first :data:`TIMED_CASES` cases of each real-edit test corpus in the test run's sample
  (:func:`cadlib.chapters.kv_reuse.run_rules_test.sample_inputs`: seeded order, prompt and
  target within SmolLM2's context, prompts otherwise uncapped), and one ProbeEdit case for the
  moonshot (a development corpus: nothing is chosen on this run);
* SmolLM2-135M-Instruct on ``transformers`` (fp32, one torch thread), forced along the gold
  (autoregressive) or the oracle program (Copy-as-Decode): autoregressive, the exact splice,
  and the reuse copy at ``none`` and at the chosen setting, each after one warm-up run,
  interleaved per case and repeat (:func:`cadlib.chapters.kv_reuse.run_speed.time_modes`,
  :data:`REPEATS` repeats);
* per case, each method's median decode seconds (after the prompt prefill); the goal
  (:func:`speed_verdict`): the chosen setting at least :data:`GOAL` times faster than the exact
  splice on the median case of each real-edit test corpus; the moonshot, at least
  :data:`MOONSHOT` gold ids per decode second on ProbeEdit;
* a quiet machine only: the load of other processes is recorded with the run.

Run it with ``python -m cadlib.chapters.kv_reuse.commands rules-timing --out
results/kv_reuse.rules-timing.json``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from cadlib.corpora import REALEDITS_TEST
from cadlib.models import SMOLLM2
from cadlib.record.provenance import monitor
from cadlib.record.results import read_results_file, run_report, write_run_report

from .profiles import TEST_RULE
from .run import load_setup, sample_cases
from .run_rules import interleave
from .run_rules_test import sample_inputs
from .run_speed import time_modes

__all__ = [
    "TIMED_CASES",
    "MOONSHOT_CORPUS",
    "METHOD_NAMES",
    "POLICIES",
    "REPEATS",
    "GOAL",
    "MOONSHOT",
    "PROTOCOL",
    "COMMAND",
    "RESULTS",
    "timed_inputs",
    "rules_timing_run",
    "committed_rules_timing",
    "case_medians",
    "speed_verdict",
]

#: Timed cases per real-edit test corpus (the first of the test run's sample).
TIMED_CASES = 3
#: The moonshot's corpus (one case, the first of the seeded order that fits the context).
MOONSHOT_CORPUS = "probeedit"
#: Chapter 6's methods timed beside the reuse copy: autoregressive and the exact splice.
METHOD_NAMES = ("autoregressive", "Copy-as-Decode")
#: The reuse copy's settings timed: ``none`` (reuses the most: the mode's ceiling) and the choice.
POLICIES = ("none", TEST_RULE)
#: Timed repeats per method and case, after one warm-up run each.
REPEATS = 3
#: The goal: the chosen setting's decode time at least this many times below the exact splice's.
GOAL = 2.0
#: The moonshot: gold ids per decode second on ProbeEdit.
MOONSHOT = 1000.0
#: Everything the run fixes before it measures (recorded with it).
PROTOCOL = dict(
    model=SMOLLM2,
    corpora=[*REALEDITS_TEST, MOONSHOT_CORPUS],
    cases=TIMED_CASES,
    methods=list(METHOD_NAMES),
    policies=list(POLICIES),
    repeats=REPEATS,
    goal=GOAL,
    moonshot=MOONSHOT,
    threads=1,
    timed=True,
)
#: The command that records it (:mod:`cadlib.chapters.kv_reuse.commands`).
COMMAND = "python -m cadlib.chapters.kv_reuse.commands rules-timing"
#: The committed run chapter 6c shows.
RESULTS = "kv_reuse.rules-timing.json"


def timed_inputs(tokenizer) -> dict:
    """``{corpus: [CaseInputs]}``: the first :data:`TIMED_CASES` of each real-edit test
    corpus's test-run sample, then one ProbeEdit case."""
    sample = sample_inputs(tokenizer, {c: TIMED_CASES for c in REALEDITS_TEST})
    sample[MOONSHOT_CORPUS] = sample_cases([MOONSHOT_CORPUS], 1, tokenizer)[MOONSHOT_CORPUS]
    return sample


def rules_timing_run(out: str | Path, progress: bool = True) -> dict:
    """:func:`cadlib.chapters.kv_reuse.run_speed.time_modes` on :func:`timed_inputs`, one
    case at a time round-robin over the corpora, written with its provenance (commit, the load
    of other processes) and :func:`speed_verdict` to the JSON file ``out`` after each case
    (``complete`` false until the last: a run cut short keeps what it measured, every corpus
    reached). A quiet machine only: a long real-edit case takes about 20 minutes."""
    monitor()
    model, tokenizer, _ = load_setup(dict(model=SMOLLM2, profile="rules-timing"))
    inputs = timed_inputs(tokenizer)
    order = interleave([[(corpus, x) for x in xs] for corpus, xs in inputs.items()])
    frames, report = [], {}
    for k, (corpus, x) in enumerate(order):
        case = {corpus: [x]}
        frames.append(
            time_modes(
                model, tokenizer, case, POLICIES, REPEATS, progress=False, names=METHOD_NAMES
            )
        )
        if progress:
            print(f"{corpus} {x.case.id}: timed ({k + 1}/{len(order)})", flush=True)
        runs = pd.concat(frames, ignore_index=True)
        rows = {c: runs[c].tolist() for c in runs.columns}
        report = run_report(
            "rules-timing",
            COMMAND,
            protocol=PROTOCOL,
            complete=k == len(order) - 1,
            verdict=speed_verdict(rows),
            rows=rows,
        )
        write_run_report(report, out)
    return report


def committed_rules_timing() -> dict | None:
    """The committed run (``results/kv_reuse.rules-timing.json``), or ``None``."""
    return read_results_file(RESULTS)


def case_medians(rows: dict) -> pd.DataFrame:
    """Per corpus and case, each method's median decode seconds (columns: methods), with
    ``gold_ids_per_s`` of the chosen setting (its median run's)."""
    runs = pd.DataFrame(rows)
    seconds = runs.pivot_table(
        index=["corpus", "case"], columns="method", values="decode_s", aggfunc="median", sort=False
    )
    chosen = runs[runs.method == f"reuse {TEST_RULE}"]
    rate = chosen.groupby(["corpus", "case"], sort=False).gold_ids_per_s.median()
    return seconds.assign(gold_ids_per_s=rate).reset_index()


def speed_verdict(rows: dict) -> dict:
    """Per real-edit test corpus the median case's speedup of the chosen setting over the exact
    splice and over autoregressive decoding, and whether it meets :data:`GOAL`; the moonshot's
    gold ids per second on ProbeEdit; ``met`` when every real-edit test corpus meets the goal."""
    t = case_medians(rows)
    chosen = f"reuse {TEST_RULE}"
    t = t.assign(vs_exact=t["Copy-as-Decode"] / t[chosen], vs_ar=t["autoregressive"] / t[chosen])
    per = {}
    for corpus in REALEDITS_TEST:
        g = t[t.corpus == corpus]
        if g.empty:
            continue
        per[corpus] = dict(
            cases=len(g),
            vs_exact=round(float(g.vs_exact.median()), 4),
            vs_ar=round(float(g.vs_ar.median()), 4),
            met=bool(g.vs_exact.median() >= GOAL),
        )
    probe = t[t.corpus == MOONSHOT_CORPUS].gold_ids_per_s
    moon = None if probe.empty else round(float(probe.median()), 1)
    return dict(
        policy=TEST_RULE,
        per=per,
        met=bool(per) and all(v["met"] for v in per.values()),
        moonshot_ids_per_s=moon,
        moonshot_met=moon is not None and moon >= MOONSHOT,
    )
