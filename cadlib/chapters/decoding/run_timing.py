"""Chapter 6's timed sample: the methods timed on the same outputs, and the timed run priced on
the forward-cost grid measured around it.

Three methods (:mod:`cadlib.decoding.methods`) produce the same gold output of each case and are
timed in one process: forced-oracle Copy-as-Decode (:class:`cadlib.decoding.decoder.CopyDecoder`
driven along the oracle program: the mechanism under perfect span selection), without and with
its drafts, autoregressive decoding of the gold (:func:`~cadlib.decoding.methods.ar_along`) and
prompt-lookup decoding along the gold (:func:`~cadlib.decoding.methods.prompt_lookup_along`,
drafts from ``transformers``' ``PromptLookupCandidateGenerator``). :class:`TimedRun` carries
the measurements with what :mod:`cadlib.costs.cost_model` makes of them (the validation against
the clock, the bounds from the same grid).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from tqdm import tqdm

from cadlib.costs import accounting as A
from cadlib.costs import cost_model as CM
from cadlib.costs.forward_grid import measure_forward_costs
from cadlib.decoding.decoder import CopyDecoder, Trace
from cadlib.decoding.methods import (
    DRAFTED,
    DRAFTED_SETTING,
    TIMED,
    CaseInputs,
    make_methods,
)
from cadlib.record.replay import Recorder, with_record

__all__ = [
    "TimedRun",
    "time_on_gold",
    "speed_table",
    "timed_setting",
    "time_methods",
    "measure_timing",
    "timed_run",
    "timed_accounting",
    "teacher_forced_agreement",
]


def time_on_gold(model, tokenizer, inputs: list, params: dict, progress: bool = True):
    """Time the methods of :data:`cadlib.decoding.methods.TIMED` on the same outputs:
    forced-oracle Copy-as-Decode (perfect span selection), without and with its drafts,
    autoregressive and prompt lookup along the gold.

    ``params``: ``repeats``, ``warmup``, ``min_span``, ``pld_num_tokens``, ``pld_max_ngram``.
    Runs are interleaved (for each repeat, each case, the methods in rotating order) so a
    noisy neighbour hurts all methods alike. Returns ``(rows, results)``: a DataFrame with
    one row per (case, method, repeat) and the last Copy-as-Decode :class:`DecodeResult` of
    each case (for the fixed-cost analysis).
    """
    decoder = CopyDecoder(model, tokenizer, min_span=params["min_span"])
    methods = make_methods(
        model, decoder, (params["pld_num_tokens"], params["pld_max_ngram"]), TIMED
    )
    for _ in range(params["warmup"]):  # the first calls are several times slower
        for method in methods:
            method.run(inputs[0])
    rows, results = [], {}
    jobs = [(r, k) for r in range(params["repeats"]) for k in range(len(inputs))]
    for r, k in tqdm(jobs, desc="timing", disable=not progress):
        x = inputs[k]
        for m in range(len(methods)):
            method = methods[(m + r + k) % len(methods)]
            run = method.run(x)
            if not run.reproduced:
                raise RuntimeError(f"{method.name} did not reproduce the gold of {x.case.id}")
            if method.name == "Copy-as-Decode":
                results[x.case.id] = run.result
            rows.append(_row(x, method.name, r, run.trace, run.result))
    return pd.DataFrame(rows), results


def _row(x: CaseInputs, method: str, repeat: int, trace: Trace, res) -> dict:
    return dict(
        corpus=x.corpus,
        case=x.case.id,
        method=method,
        repeat=repeat,
        T=len(x.target) - 1,
        wall_s=trace.wall_s,
        prefill_s=trace.prefill_s,
        decode_s=trace.decode_s,
        forwards=trace.n_forwards - 1,
        forward_s=sum(f.seconds for f in trace.forwards if f.kind != "prefill"),
        spliced=res.n_spliced if res else 0,
        **trace.info,
    )


def speed_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per corpus (and pooled) and method: gold tokens ``T``, decode forwards per gold token,
    decode seconds (median over repeats of the corpus total, with min-max), speedup over
    autoregressive decoding in wall-clock (median [min-max] over repeats) and in forwards, and
    the share of output ids that came without a decode step of their own (spliced copy ids
    for Copy-as-Decode, plus accepted body drafts with drafts on; accepted draft ids for
    prompt lookup)."""
    rows = pd.concat([rows, rows.assign(corpus="pooled")])
    free = rows["spliced"].astype(float)
    for col in ("accepted", "draft_accepted_gen"):  # accepted draft ids of output (body) text
        if col in rows:
            free = free + rows[col].fillna(0)
    rows = rows.assign(free=free)
    per = rows.groupby(["corpus", "method", "repeat"]).agg(
        cases=("case", "nunique"),
        T=("T", "sum"),
        forwards=("forwards", "sum"),
        decode_s=("decode_s", "sum"),
        free=("free", "sum"),
    )
    ar = per.xs("autoregressive", level="method")
    speed = per["decode_s"].rdiv(ar["decode_s"].reindex(per.index.droplevel("method")).values)
    per = per.assign(speedup=speed.values)
    out = per.groupby(["corpus", "method"]).agg(
        cases=("cases", "first"),
        T=("T", "first"),
        forwards=("forwards", "first"),
        free=("free", "first"),
        decode_s=("decode_s", "median"),
        decode_s_min=("decode_s", "min"),
        decode_s_max=("decode_s", "max"),
        speedup=("speedup", "median"),
        speedup_min=("speedup", "min"),
        speedup_max=("speedup", "max"),
    )
    out["forwards_per_token"] = out["forwards"] / out["T"]
    ar_fw = out.xs("autoregressive", level="method")["forwards"]
    corpora = out.index.get_level_values("corpus")
    out["forward_ratio"] = ar_fw.reindex(corpora).values / out["forwards"]
    out["free_share"] = out.pop("free") / out["T"]
    return out.reset_index()


@dataclass
class TimedRun:
    """The timed sample, measured and priced on the grid measured around it.

    Attributes
    ----------
    inputs : the timed cases (:class:`cadlib.decoding.methods.CaseInputs`)
    rows : one row per (case, method, repeat)
        (:func:`time_on_gold`)
    forced : the last forced-oracle :class:`cadlib.decoding.decoder.DecodeResult` per case id
    grid : the forward-cost grid (:class:`cadlib.costs.cost_model.CostGrid`)
    speed : :func:`speed_table` of ``rows``
    accounting : forward accounting of the timed cases, priced on ``grid``
    validation : :func:`cadlib.costs.cost_model.validation` of the timed runs' methods and settings
    bounds : :func:`cadlib.costs.cost_model.timed_bounds`
    """

    inputs: list
    rows: pd.DataFrame
    forced: dict
    grid: CM.CostGrid
    speed: pd.DataFrame
    accounting: pd.DataFrame
    validation: pd.DataFrame
    bounds: pd.DataFrame

    @property
    def corpora(self) -> list[str]:
        """The timed corpora, in the order of the sample."""
        return list(dict.fromkeys(x.corpus for x in self.inputs))


def timed_setting(params: dict) -> str:
    """The prompt-lookup setting of the timed runs, as the accounting names it."""
    return f"K={params['pld_num_tokens']} n={params['pld_max_ngram']}"


def time_methods(
    model, tokenizer, inputs: list[CaseInputs], params: dict, record: Recorder | None = None
) -> TimedRun:
    """Time the three methods on ``inputs`` (:func:`time_on_gold`)
    between two halves of the forward-cost grid's trials (``grid_contexts``, ``grid_trials``), then
    price the timed runs on that grid (:func:`timed_run`). With a ``record``
    (:class:`cadlib.record.replay.Recorder`), the measurements (:func:`measure_timing`) are recorded
    as ``timing``, or replayed from the committed record without timing anything."""
    raw = with_record(record, "timing", lambda: measure_timing(model, tokenizer, inputs, params))
    return timed_run(
        inputs, raw["rows"], raw["forced"], CM.CostGrid(raw["grid"]), tokenizer, params
    )


def measure_timing(model, tokenizer, inputs: list[CaseInputs], params: dict) -> dict:
    """What :func:`time_methods` measures: ``rows`` and ``forced`` of
    :func:`time_on_gold`, and ``grid``, the forward-cost grid's
    table, half of its trials before the timed runs and half after."""
    trials = max(1, params["grid_trials"] // 2)
    grid_runs = [measure_forward_costs(model, params["grid_contexts"], trials=trials)]
    rows, forced = time_on_gold(model, tokenizer, inputs, params)
    grid_runs.append(measure_forward_costs(model, params["grid_contexts"], trials=trials, warmup=0))
    return dict(rows=rows, forced=forced, grid=pd.concat(grid_runs, ignore_index=True))


def timed_run(
    inputs: list[CaseInputs],
    rows: pd.DataFrame,
    forced: dict,
    grid: CM.CostGrid,
    tokenizer,
    params: dict,
) -> TimedRun:
    """A :class:`TimedRun` from measured ``rows`` and ``grid`` (deterministic): the speed
    table, the timed cases' accounting priced on the grid, the validation of the timed
    methods (autoregressive, Copy-as-Decode m=0, prompt lookup at :func:`timed_setting`)
    and the bounds from the same grid."""
    names = dict.fromkeys(x.corpus for x in inputs)
    acc = A.corpus_forwards(
        {c: [x.case for x in inputs if x.corpus == c] for c in names},
        tokenizer,
        cost=grid.predict,
        progress=False,
    )
    return TimedRun(
        inputs=inputs,
        rows=rows,
        forced=forced,
        grid=grid,
        speed=speed_table(rows),
        accounting=acc,
        validation=CM.validation(rows, timed_accounting(acc, params)),
        bounds=CM.timed_bounds(rows, acc),
    )


def timed_accounting(acc: pd.DataFrame, params: dict) -> pd.DataFrame:
    """The accounting rows of the timed methods, under the timed methods' names:
    autoregressive, prompt lookup at :func:`timed_setting`, Copy-as-Decode m=0, and its
    :data:`cadlib.decoding.methods.DRAFTED_SETTING` composition as
    :data:`cadlib.decoding.methods.DRAFTED`."""
    drafted = (acc.method == "Copy-as-Decode") & (acc.setting == DRAFTED_SETTING)
    keep = (acc.setting.isin(["", "m=0", timed_setting(params)]) | drafted) & (
        acc.method != A.BOUND
    )
    return acc.assign(method=acc.method.where(~drafted, DRAFTED))[keep]


def teacher_forced_agreement(forced: dict) -> dict:
    """Per timed case id, the share of decisions where the model's masked argmax was the
    oracle program's id (forced runs of §1)."""
    return {cid: r.agreement for cid, r in forced.items()}
