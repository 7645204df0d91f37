"""Chapter 6c's speed: the reuse mode timed beside the exact splice, ``+drafts``,
autoregressive and prompt lookup (a quiet machine only), and issue 32's speed goals judged on
the committed timed run (its sentences: :mod:`cadlib.chapters.kv_reuse.text_speed`)."""

from __future__ import annotations

import pandas as pd
from tqdm import tqdm

from cadlib.corpora import CORPUS_LABELS
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.kv_select import copy_decoder
from cadlib.decoding.methods import (
    METHODS,
    TIMED,
    CopyAsDecode,
    make_methods,
)
from cadlib.decoding.prompt_lookup import TIMED_PLD
from cadlib.record.results import read_results_file

from .profiles import TEST

__all__ = [
    "timed_methods",
    "time_modes",
    "load_timing_run",
    "SPEED_GOALS",
    "judged_policy",
    "speed_goals",
]


def timed_methods(
    model, tokenizer, policies=("none",), lookup_setting=TIMED_PLD, names=TIMED
) -> tuple:
    """The methods :func:`time_modes` interleaves (:class:`cadlib.decoding.methods.DecodingMethod`):
    chapter 6's methods called ``names`` (default its four: autoregressive, prompt lookup at
    ``lookup_setting``, the exact splice, ``+drafts``), then the reuse copy at each policy or
    selection rule (:func:`cadlib.decoding.kv_select.copy_decoder`), named ``reuse <policy>``."""
    exact = CopyDecoder(model, tokenizer)
    reuse = tuple(
        CopyAsDecode(copy_decoder(model, tokenizer, copy_kv="reuse", recompute=p), f"reuse {p}")
        for p in policies
    )
    return (*make_methods(model, exact, lookup_setting, names), *reuse)


def time_modes(
    model,
    tokenizer,
    inputs: dict,
    policies=("none",),
    repeats: int = 3,
    lookup_setting=TIMED_PLD,
    progress: bool = True,
    names=TIMED,
) -> pd.DataFrame:
    """Every method of :func:`timed_methods` along each case (the baselines along the gold
    after the regen prompt, Copy-as-Decode along the oracle program), interleaved per case and
    repeat after one warm-up run each. One row per run: forwards after the prefill, ids
    computed after it, decode seconds (after the prompt prefill) and gold ids per decode
    second. Timings: run it on a quiet machine only (the ``full`` profile)."""
    methods = timed_methods(model, tokenizer, policies, lookup_setting, names)
    rows = []
    for name, xs in inputs.items():
        for x in tqdm(xs, desc=f"timing {name}", disable=not progress):
            for m in methods:
                m.run(x)  # warm-up
            for rep in range(repeats):
                for m in methods:
                    run = m.run(x)
                    tr, gold = run.trace, len(x.target) - 1
                    rows.append(
                        dict(
                            corpus=name,
                            case=x.case.id,
                            method=m.name,
                            repeat=rep,
                            reproduced=run.reproduced,
                            forwards=tr.n_forwards - 1,
                            ids_computed=sum(f.n_tokens for f in tr.forwards[1:]),
                            decode_s=tr.decode_s,
                            gold_ids_per_s=gold / max(tr.decode_s, 1e-9),
                        )
                    )
    return pd.DataFrame(rows)


def load_timing_run(profile: str = "timing") -> dict | None:
    """The committed timed run (``kv_reuse.<profile>.json``), or ``None``."""
    return read_results_file(f"kv_reuse.{profile}.json")


#: Issue 32's speed goals, declared before the timed run: (goal, corpora, target). Ratios are
#: of median decode seconds measured side by side in one run; the moonshot is gold ids per
#: decode second.
SPEED_GOALS = (
    ("≥ 3× the exact splice", ("probeedit", "realedits-flask"), 3.0),
    ("≥ 2× prompt lookup", TEST, 2.0),
    ("moonshot: ≥ 1,000 output ids/s", ("probeedit",), 1000.0),
)


def judged_policy(numbers: dict) -> str:
    """The policy the speed goals are judged at when no every-case verdict is given: the one
    the run's own threshold verdict accepted, else (none met it) the one with the highest
    held-out agreement, fewest recomputed ids on a tie."""
    if numbers["verdict"]["best"]:
        return numbers["verdict"]["best"]
    test = numbers["agreement"]["test"]
    return max(test, key=lambda p: (test[p]["rate"], -test[p]["recomputed"]))


def speed_goals(record: dict, policy: str | None = None) -> pd.DataFrame:
    """Each speed goal per corpus of the timed run: the measured value at ``policy`` (default
    :func:`judged_policy`) and at ``none`` (reuses the most: the mode's ceiling), the target,
    and whether ``policy`` meets it."""
    numbers, rows = record["numbers"], []
    policy = policy or judged_policy(numbers)
    for goal, corpora, target in SPEED_GOALS:
        for corpus in corpora:
            methods = numbers["timing"].get(corpus)
            if not methods:
                continue

            def value(name, methods=methods, goal=goal):
                run = methods[f"reuse {name}"]
                if goal.startswith("moonshot"):
                    return run["gold_ids_per_s"]
                if "lookup" in goal:
                    return methods[METHODS[1]]["decode_s"] / run["decode_s"]
                return run["vs_exact_splice"]

            at = value(policy)
            rows.append(
                {
                    "goal": goal,
                    "corpus": CORPUS_LABELS.get(corpus, corpus),
                    f"at {policy}": at,
                    "at none": value("none"),
                    "target": target,
                    "met": bool(at >= target),
                }
            )
    return pd.DataFrame(rows)
