"""Timing decoding methods on engines, interleaved (chapter 6b, the draft policy).

:func:`interleaved` is the loop: every job (a method or decoder on one engine) on every case,
``repeats`` times, in rotating order, after untimed warm-up runs on the shortest case, so that a
noisy neighbour or a slow spell hurts every job alike. :func:`time_methods` runs it over the
methods of :data:`cadlib.decoding.methods.TIMED` on each engine (one row per run);
:func:`best_lookup_setting` picks prompt lookup's setting on an engine from a small grid.
:mod:`cadlib.costs.draft_policy` times its arms with the same loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
from tqdm import tqdm

from cadlib.decoding.decoder import CopyDecoder, Trace
from cadlib.decoding.engines import Engine
from cadlib.decoding.methods import TIMED, DecodingMethod, make_methods, prompt_lookup_along

__all__ = ["interleaved", "method_row", "time_methods", "best_lookup_setting"]


def interleaved(
    jobs: Sequence,
    inputs: list,
    run: Callable,
    repeats: int,
    warmup: int = 1,
    desc: str = "timing",
    progress: bool = True,
) -> list[dict]:
    """``run(job, x, repeat)`` (a row) for every job of ``jobs`` on every case ``x`` of
    ``inputs``, ``repeats`` times: for repeat ``r`` and case ``k`` the jobs in rotating order,
    job ``(j + r + k) mod len(jobs)`` at turn ``j``. First ``warmup`` untimed runs of each job
    on the shortest case (gold and edit prompt; ``repeat=None``): first calls allocate memory
    and pick kernels. Returns the rows in the order they ran."""
    short = min(inputs, key=lambda x: len(x.target) + len(x.edit_prompt))
    for job in jobs:
        for _ in range(warmup):
            run(job, short, None)
    rows = []
    plan = [(r, k) for r in range(repeats) for k in range(len(inputs))]
    for r, k in tqdm(plan, desc=desc, disable=not progress):
        for j in range(len(jobs)):
            rows.append(run(jobs[(j + r + k) % len(jobs)], inputs[k], r))
    return rows


def method_row(engine: Engine, method: DecodingMethod, x, repeat, setting) -> dict:
    """One run of ``method`` on ``engine`` along ``x``'s gold, as a row (raises on a miss):
    wall, prefill and decode seconds, forwards after the prefill and their seconds alone
    (``forward_s``, what the cost model predicts), spliced ids, the prompt-lookup setting, the
    trace's counters and its seconds per forward kind (``s_<kind>``)."""
    run = method.run(x)
    if not run.reproduced:
        raise RuntimeError(f"{method.name} on {engine.name} missed the gold of {x.case.id}")
    trace: Trace = run.trace
    return dict(
        engine=engine.name,
        corpus=x.corpus,
        case=x.case.id,
        method=method.name,
        repeat=repeat,
        T=len(x.target) - 1,
        wall_s=trace.wall_s,
        prefill_s=trace.prefill_s,
        decode_s=trace.decode_s,
        forwards=trace.n_forwards - 1,
        forward_s=sum(f.seconds for f in trace.forwards if f.kind != "prefill"),
        spliced=run.result.n_spliced if run.result else 0,
        setting=f"{setting[0]} draft ids, n-gram <= {setting[1]}"
        if method.name == "prompt lookup"
        else "",
        **trace.info,
        **{f"s_{k}": v for k, v in trace.seconds_by_kind().items()},
    )


def time_methods(
    engines: list,
    tokenizer,
    inputs: list,
    setting,
    repeats: int = 1,
    warmup: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Every method of :data:`~cadlib.decoding.methods.TIMED` on every engine on every case,
    :func:`interleaved` over (engine, method): the baselines on the engine (prompt lookup at
    ``setting`` = ``(num_pred_tokens, max_ngram_size)``, with the engine's own drafter) and a
    :class:`~cadlib.decoding.decoder.CopyDecoder` on the engine for Copy-as-Decode, with and
    without its drafts. One row per run: engine, corpus, case, method, repeat, output tokens
    ``T``, wall, prefill and decode seconds, forwards, spliced ids, the prompt-lookup setting,
    the trace's counters and its seconds per forward kind (``s_<kind>``)."""
    jobs = [
        (e, m) for e in engines for m in make_methods(e, CopyDecoder(e, tokenizer), setting, TIMED)
    ]

    def run(job, x, repeat):
        return method_row(*job, x, repeat, setting)

    return pd.DataFrame(interleaved(jobs, inputs, run, repeats, warmup, progress=progress))


def best_lookup_setting(engine: Engine, inputs: list, grid, progress: bool = True):
    """The prompt-lookup setting of ``grid`` with the least pooled decode time on ``engine``
    (one untimed warm-up, then one run of each setting on every case). Returns ``(best,
    table)``. A grid of one setting is that setting, untimed (the cpu profile's budget: the
    grid costs a full prompt-lookup run per setting)."""
    if len(grid) == 1:
        return tuple(grid[0]), pd.DataFrame(
            [dict(num_pred_tokens=grid[0][0], max_ngram_size=grid[0][1])]
        )
    short = min(inputs, key=lambda x: len(x.target) + len(x.regen_prompt))
    prompt_lookup_along(engine, short.regen_prompt, short.target, *grid[0])  # warm-up
    rows = []
    for setting in tqdm(grid, desc="prompt-lookup grid", disable=not progress):
        tr = [prompt_lookup_along(engine, x.regen_prompt, x.target, *setting) for x in inputs]
        rows.append(
            dict(
                num_pred_tokens=setting[0],
                max_ngram_size=setting[1],
                decode_s=sum(t.decode_s for t in tr),
                accepted=sum(t.info["accepted"] for t in tr),
                drafted=sum(t.info["drafted"] for t in tr),
            )
        )
    table = pd.DataFrame(rows)
    best = table.loc[table["decode_s"].idxmin()]
    return (int(best["num_pred_tokens"]), int(best["max_ngram_size"])), table
