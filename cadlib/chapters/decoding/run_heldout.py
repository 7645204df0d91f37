"""Chapter 6's held-out speed run: the protocol of :mod:`.profiles_heldout`, measured.

In order: load both engines (one at a time on the whole machine); choose prompt lookup's setting
per engine by measured time on development cases (:func:`choose_rival`); measure the
forward-cost grid on ``transformers``; time every method of both engines on the seeded test
sample, interleaved, autoregressive decoding once per case (:func:`time_heldout`, each row
appended to a log as it is measured, so a long run's progress can be read); measure the grid
again; price every case of every test corpus on the grid (:func:`every_case`); write the rows,
the statistics (:mod:`.run_heldout_stats`), the goals and the provenance (the load of other
processes for the whole run) to one JSON (:func:`heldout_run`).

One engine per run (a part of the protocol, :func:`.profiles_heldout.results_name`): about an
hour and a half to two hours each on 2 quiet cores (the protocol's budget);
:data:`.profiles_heldout.SMOKE` runs the same code on both engines in about a minute, on
development data.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from cadlib.corpora import load_corpus
from cadlib.costs import accounting as A
from cadlib.costs import cost_model as CM
from cadlib.costs.forward_grid import measure_forward_costs
from cadlib.costs.method_timing import best_lookup_setting, interleaved, method_row
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.engines import load_engine
from cadlib.decoding.methods import (
    DRAFTED,
    DRAFTED_SETTING,
    fits,
    make_methods,
    prepare,
    timed_sample,
)
from cadlib.models import load_tokenizer
from cadlib.record.provenance import monitor
from cadlib.record.results import run_report, strict_json, write_run_report

from . import profiles_heldout as P
from .run_accounting import strata
from .run_heldout_stats import case_latency, group_table, judge

__all__ = [
    "sample",
    "load_engines",
    "choose_rival",
    "time_heldout",
    "every_case",
    "heldout_run",
    "rows_path",
    "read_rows",
]


def sample(
    cases: dict[str, int],
    tokenizer,
    max_ids: int | None = None,
    seed: int = P.SEED,
    context: int = P.CONTEXT,
):
    """The timed cases: per corpus of ``cases``, that many length strata among the cases that
    fit ``context`` (and have at most ``max_ids`` gold ids), one seeded case from each
    (:func:`cadlib.decoding.methods.timed_sample`)."""
    return [
        x
        for name, n in cases.items()
        for x in timed_sample(name, load_corpus(name), n, tokenizer, max_ids, seed, context)
    ]


def load_engines(model: str = P.MODEL, kinds=P.ENGINES, threads: int = P.THREADS) -> list:
    """One engine of each of ``kinds`` (:data:`.profiles_heldout.ENGINES`) on the CPU, llama.cpp
    with a cache of :data:`.profiles_heldout.LLAMA_CPP_CONTEXT` ids."""
    sizes = {"llama.cpp": dict(n_ctx=P.LLAMA_CPP_CONTEXT)}
    return [
        load_engine(model, kind, device="cpu", threads=threads, **sizes.get(kind, {}))
        for kind in kinds
    ]


def choose_rival(engines, tokenizer, selection: dict, progress: bool = True):
    """Prompt lookup's setting per engine name, the least pooled decode seconds on the
    development cases of ``selection`` (:func:`cadlib.costs.method_timing.best_lookup_setting`),
    and the grid measured (one row per engine and setting)."""
    if any(c in P.TEST_CORPORA for c in selection["cases"]):
        raise ValueError("the rival's setting is chosen on development corpora only")
    inputs = sample(selection["cases"], tokenizer, selection["max_ids"])
    settings, tables = {}, []
    for engine in engines:
        settings[engine.name], table = best_lookup_setting(
            engine, inputs, selection["grid"], progress
        )
        tables.append(table.assign(engine=engine.name))
    return settings, pd.concat(tables, ignore_index=True), [x.case.id for x in inputs]


def time_heldout(
    engines,
    tokenizer,
    inputs: list,
    settings: dict,
    repeats: int = P.REPEATS,
    log: Path | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Every method of :data:`.profiles_heldout.METHODS` on every engine along every case's
    gold, :func:`~cadlib.costs.method_timing.interleaved` over (engine, method), ``repeats``
    times; autoregressive decoding only in the first :data:`.profiles_heldout.AR_REPEATS`.
    Each row (:func:`~cadlib.costs.method_timing.method_row`) is appended to ``log`` as JSON."""
    jobs = [
        (e, m, settings[e.name])
        for e in engines
        for m in make_methods(e, CopyDecoder(e, tokenizer), settings[e.name], P.METHODS)
    ]
    out = open(log, "a") if log else None

    def run(job, x, repeat):
        engine, method, setting = job
        if method.name == "autoregressive" and repeat is not None and repeat >= P.AR_REPEATS:
            return None
        row = method_row(engine, method, x, repeat, setting)
        if out and repeat is not None:
            out.write(json.dumps(strict_json(row)) + "\n")
            out.flush()
        return row

    try:
        rows = interleaved(jobs, inputs, run, repeats, P.WARMUP, "held-out timing", progress)
    finally:
        if out:
            out.close()
    return pd.DataFrame([r for r in rows if r is not None])


def every_case(corpora, tokenizer, grid: CM.CostGrid, setting: tuple[int, int], progress=True):
    """Every case of ``corpora`` that fits the context, in exact forward accounting priced on
    ``grid`` (``transformers``' decode seconds): autoregressive, prompt lookup at ``setting``,
    Copy-as-Decode plain (m=0) and with its drafts. Returns the per-case rows and, per corpus
    and method, the median-case predicted speedup over autoregressive decoding with its
    interval and the cases predicted slower than it."""
    cases = {}
    for name in corpora:
        every = load_corpus(name)
        cases[name] = [c for c in every if fits(prepare(name, c, tokenizer), P.CONTEXT)]
    rows = A.corpus_forwards(
        cases,
        tokenizer,
        grid=(setting,),
        min_spans=(0,),
        compositions=(DRAFTED_SETTING,),
        cost=grid.predict,
        progress=progress,
    )
    rows = rows[rows.method != A.BOUND]
    best = pd.Series(f"K={setting[0]} n={setting[1]}", index=list(cases), name="setting")
    predicted = CM.predicted_speedups(rows, best, P.SEED)
    slower = pd.concat([strata(rows, "m=0"), strata(rows, DRAFTED_SETTING)])
    return rows, predicted, slower.drop(columns=["slower_cases"])


def _validation(rows: pd.DataFrame, timed_acc: pd.DataFrame, setting) -> pd.DataFrame:
    """The cost model against the clock on the timed test cases (``transformers`` rows)."""
    name = f"K={setting[0]} n={setting[1]}"
    drafted = (timed_acc.method == "Copy-as-Decode") & (timed_acc.setting == DRAFTED_SETTING)
    keep = timed_acc.setting.isin(["", "m=0", name]) | drafted
    acc = timed_acc.assign(method=timed_acc.method.where(~drafted, DRAFTED))[keep]
    return CM.validation(rows[rows.engine == "transformers"], acc)


def rows_path(out: str | Path) -> Path:
    """The timed rows beside a report ``out``: ``<out stem>.rows.jsonl``, one compact JSON row per
    timed run, written as each is measured (the report's statistics re-derive from it)."""
    out = Path(out)
    return out.with_name(f"{out.stem}.rows.jsonl")


def read_rows(out: str | Path) -> pd.DataFrame:
    """The timed rows of the report ``out`` (:func:`rows_path`)."""
    return pd.read_json(rows_path(out), lines=True)


def heldout_run(
    out: str | Path, engine: str | None = None, smoke: bool = False, progress: bool = True
) -> dict:
    """Run the protocol's part of ``engine`` (``None``: every engine in one run) and write its
    report to ``out`` and its timed rows beside it (:func:`rows_path`, as they are measured).
    The ``transformers`` part also measures the forward-cost grid and prices every case of every
    test corpus on it. ``smoke``: :data:`.profiles_heldout.SMOKE` (development data, the tiny
    stand-in model; its numbers mean nothing)."""
    kinds = P.ENGINES if engine is None else (engine,)
    if not set(kinds) <= set(P.ENGINES):
        raise ValueError(f"unknown engine {engine!r}; the protocol's engines: {P.ENGINES}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    log = rows_path(out)
    log.unlink(missing_ok=True)
    monitor()  # the load of other processes, sampled from here to the report
    cfg = _config(smoke)
    tokenizer = load_tokenizer(cfg["model"])
    engines = load_engines(cfg["model"], kinds)
    settings, selection, selection_cases = choose_rival(
        engines, tokenizer, cfg["selection"], progress
    )
    hf = next((e for e in engines if e.name == "transformers"), None)
    grid_kw = dict(contexts=cfg["grid"]["contexts"], trials=max(1, cfg["grid"]["trials"] // 2))
    grids = [measure_forward_costs(hf, **grid_kw, progress=progress)] if hf else []
    inputs = sample(cfg["corpora"], tokenizer)
    rows = time_heldout(engines, tokenizer, inputs, settings, cfg["repeats"], log, progress)
    table = group_table(case_latency(rows))
    report = dict(
        protocol=_protocol(cfg, kinds),
        rival_settings={k: list(v) for k, v in settings.items()},
        rival_selection=dict(cases=selection_cases, grid=selection.to_dict("records")),
        timed_cases={c: [x.case.id for x in inputs if x.corpus == c] for c in cfg["corpora"]},
        groups=table.to_dict("records"),
        goals=judge(table).to_dict("records"),
    )
    if hf:
        grids.append(measure_forward_costs(hf, **grid_kw, warmup=0, progress=progress))
        report.update(
            _priced(cfg, tokenizer, CM.CostGrid(pd.concat(grids)), settings, rows, inputs, progress)
        )
    command = f"{P.COMMAND} --engine {engine}" if engine else P.COMMAND
    report = run_report(
        "smoke" if smoke else "heldout",
        command + (" --smoke" if smoke else ""),
        **report,
        rows_file=log.name,
    )
    return write_run_report(strict_json(report), out)


def _priced(cfg, tokenizer, grid: CM.CostGrid, settings, rows, inputs, progress) -> dict:
    """The cost model's part of a report: every case priced on ``grid`` (the predicted
    speedups and the cases predicted slower than autoregressive decoding) and the model's error
    against the clock on the timed cases."""
    setting = settings["transformers"]
    acc_rows, predicted, slower = every_case(cfg["corpora"], tokenizer, grid, setting, progress)
    timed_ids = {x.case.id for x in inputs}
    validation = _validation(rows, acc_rows[acc_rows.case.isin(timed_ids)], setting)
    return dict(
        every_case=dict(
            predicted=predicted.to_dict("records"),
            slower=slower.to_dict("records"),
            cases={c: int(acc_rows[acc_rows.corpus == c].case.nunique()) for c in cfg["corpora"]},
        ),
        cost_model=dict(
            grid=grid.table.to_dict("records"),
            validation=validation.to_dict("records"),
            validation_summary=CM.validation_summary(validation).to_dict("records"),
        ),
    )


def _config(smoke: bool) -> dict:
    """The run's settings: the declared protocol, or :data:`.profiles_heldout.SMOKE`."""
    if smoke:
        return dict(P.SMOKE)
    return dict(
        model=P.MODEL,
        corpora=P.TIMED_CASES,
        selection=P.RIVAL_SELECTION,
        grid=P.GRID,
        repeats=P.REPEATS,
    )


def _protocol(cfg: dict, engines) -> dict:
    """What the run declared, as written beside its numbers (``engines``: this part's)."""
    return dict(
        model=cfg["model"],
        engines=list(engines),
        threads=P.THREADS,
        llama_cpp_context=P.LLAMA_CPP_CONTEXT,
        methods=list(P.METHODS),
        timed_cases=cfg["corpora"],
        seed=P.SEED,
        context=P.CONTEXT,
        repeats=cfg["repeats"],
        ar_repeats=P.AR_REPEATS,
        warmup=P.WARMUP,
        quantity=P.QUANTITY,
        rivals=list(P.RIVALS),
        selection=cfg["selection"],
        grid=cfg["grid"],
        bootstrap=P.BOOTSTRAP,
        goals=[{k: v for k, v in g.items()} for g in P.GOALS],
    )
