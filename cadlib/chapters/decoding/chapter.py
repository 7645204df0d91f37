"""Chapter 6's run (notebooks/06_decoding.ipynb): its setup and cases, the timed sample and
what the forward-cost grid predicts for it, the accounting of every case, the goals, and the
numbers of ``results/decoding.json``.

The measurements themselves live in :mod:`cadlib.chapters.decoding.measure` (timing the
methods, the free run, fixed and mask costs), :mod:`cadlib.decoding.token_boundaries`,
:mod:`cadlib.costs.accounting` and :mod:`cadlib.costs.cost_model`; this module strings them
together in the chapter's order. Two records carry what the notebook passes from cell to cell:
:class:`TimedRun` (§1 and the cost model's check against the clock) and :class:`EveryCase`
(§2's exact accounting of every case); :func:`decoding_numbers` builds the results file's
``numbers`` from them and the later measurements. What the notebook shows of them (tables,
figures, generated text) is :mod:`cadlib.chapters.decoding.report`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import torch

from cadlib.chapters.decoding import measure as D
from cadlib.corpora import load_corpus, seeded_subset
from cadlib.costs import accounting as A
from cadlib.costs import cost_model as CM
from cadlib.costs.forward_grid import measure_forward_costs
from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.methods import (
    DRAFTED,
    DRAFTED_SETTING,
    CaseInputs,
    prepare,
    timed_sample,
)
from cadlib.models import (
    load_model,
    load_tokenizer,
    model_info,
    quiet_transformers,
    resolve_device,
    set_threads,
)
from cadlib.record import style
from cadlib.record.replay import Recorder, with_record
from cadlib.record.results import hardware_info, load_committed, setting_label
from cadlib.record.session import Chapter

__all__ = [
    "answer",
    "FULL",
    "load_full",
    "Setup",
    "TimedRun",
    "EveryCase",
    "measurement_label",
    "load_setup",
    "load_cases",
    "transcript_counts",
    "transcript_runs",
    "timed_setting",
    "measure_timing",
    "time_methods",
    "timed_run",
    "account_every_case",
    "free_run_summary",
    "teacher_forced_agreement",
    "boundary_effect_numbers",
    "speed_numbers",
    "goals",
    "model_error",
    "goals_from_numbers",
    "speed_frame",
    "case_records",
    "decoding_numbers",
    "write_decoding_results",
]


class Setup(NamedTuple):
    """The model under test, its tokenizer, the torch device and the label every timing of
    the chapter carries (:func:`measurement_label`)."""

    model: object
    tokenizer: object
    device: torch.device
    label: str


def measurement_label(
    model_name: str, info: dict, hw: dict, device_type: str, threads: int, profile: str
) -> str:
    """The chapter's :func:`cadlib.record.results.setting_label`: the model with its dtype,
    attention and device type, the profile, then the machine (on CUDA the GPU's name, on CPU
    the CPU's with the torch threads)."""
    model = (
        f"model {model_name} ({info['dtype']}, {info['attn_implementation']} attention, "
        f"{device_type})"
    )
    return setting_label(
        model, profile=profile, hw=hw, threads=None if device_type == "cuda" else threads
    )


def load_setup(params: dict, device: str = "auto") -> Setup:
    """The chapter's first steps: the book's plot style, quiet ``transformers``, the profile's
    torch threads, then the model (``params``: ``model``, ``dtype``, ``attn_implementation``,
    ``threads``, and the ``profile`` the label names) and its tokenizer on ``device``
    (``"auto"``: CUDA when present)."""
    style.setup()
    quiet_transformers()
    dev = resolve_device(device)
    if params["threads"]:
        set_threads(params["threads"])
    net = load_model(
        params["model"],
        device=str(dev),
        dtype=params["dtype"],
        attn_implementation=params["attn_implementation"],
    )
    tok = load_tokenizer(params["model"])
    label = measurement_label(
        params["model"],
        model_info(net),
        hardware_info(str(dev)),
        dev.type,
        torch.get_num_threads(),
        params["profile"],
    )
    return Setup(net, tok, dev, label)


def load_cases(params: dict, corpora, tokenizer, seed: int = 0):
    """``(corpus, timed, free)``: the chapter's corpora (``corpora``, or ``None``: those of
    the profile's ``timing_cases``) by name, the stratified timed sample of each
    (:func:`cadlib.decoding.methods.timed_sample`) and the seeded free-run subset, both
    prepared (:func:`cadlib.decoding.methods.prepare`), corpus by corpus."""
    names = corpora or list(params["timing_cases"])
    corpus = {name: load_corpus(name) for name in names}
    max_ids = params["timing_max_ids"] or {}
    timed = [
        x
        for name in names
        for x in timed_sample(
            name, corpus[name], params["timing_cases"].get(name), tokenizer, max_ids.get(name), seed
        )
    ]
    free = [
        prepare(name, case, tokenizer)
        for name in names
        for case in seeded_subset(corpus[name], params["free_run_cases"].get(name), seed)
    ]
    return corpus, timed, free


def transcript_counts(x: CaseInputs, tokenizer) -> str:
    """``<case>: <n> ids: {kind: count}`` of the oracle transcript of ``x``."""
    tr = transcript(x.program, x.case.doc, tokenizer)
    counts = {kind: tr.count(kind) for kind in ("choice", "gen", "forced", "splice")}
    return f"{x.case.id}: {len(tr)} ids: {counts}"


def transcript_runs(x: CaseInputs, tokenizer) -> pd.DataFrame:
    """The oracle transcript of ``x`` as runs of consecutive ids of one kind: kind, ids, text."""
    tr = transcript(x.program, x.case.doc, tokenizer)
    table = token_table(tokenizer)
    runs, k = [], 0
    while k < len(tr.ids):
        j = k
        while j < len(tr.ids) and tr.kinds[j] == tr.kinds[k]:
            j += 1
        text = b"".join(table.token_bytes[i] for i in tr.ids[k:j]).decode(errors="replace")
        runs.append(dict(kind=tr.kinds[k], ids=j - k, text=text))
        k = j
    return pd.DataFrame(runs)


@dataclass
class TimedRun:
    """The timed sample, measured and priced on the grid measured around it.

    Attributes
    ----------
    inputs : the timed cases (:class:`cadlib.decoding.methods.CaseInputs`)
    rows : one row per (case, method, repeat)
        (:func:`cadlib.chapters.decoding.measure.time_on_gold`)
    forced : the last forced-oracle :class:`cadlib.decoding.decoder.DecodeResult` per case id
    grid : the forward-cost grid (:class:`cadlib.costs.cost_model.CostGrid`)
    speed : :func:`cadlib.chapters.decoding.measure.speed_table` of ``rows``
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
    """Time the three methods on ``inputs`` (:func:`cadlib.chapters.decoding.measure.time_on_gold`)
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
    :func:`cadlib.chapters.decoding.measure.time_on_gold`, and ``grid``, the forward-cost grid's
    table, half of its trials before the timed runs and half after."""
    trials = max(1, params["grid_trials"] // 2)
    grid_runs = [measure_forward_costs(model, params["grid_contexts"], trials=trials)]
    rows, forced = D.time_on_gold(model, tokenizer, inputs, params)
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
        speed=D.speed_table(rows),
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


@dataclass
class EveryCase:
    """The exact forward accounting of every case of the accounted corpora.

    Attributes
    ----------
    sources : where each corpus came from (``local``, ``generated``, ...)
    rows : :func:`cadlib.costs.accounting.corpus_forwards`, priced on the grid (``predicted_s``)
    best : the best prompt-lookup setting per corpus
    summary : :func:`cadlib.costs.accounting.forwards_summary`
    predicted : :func:`cadlib.costs.cost_model.predicted_speedups`
    """

    sources: dict
    rows: pd.DataFrame
    best: pd.Series
    summary: pd.DataFrame
    predicted: pd.DataFrame


def account_every_case(
    params: dict,
    tokenizer,
    grid: CM.CostGrid,
    seed: int = 0,
    corpora: dict | None = None,
    progress: bool = True,
) -> EveryCase:
    """Count the forwards of every method on every case of ``params["accounting_corpora"]``
    (``corpora``: those corpora already loaded, by name), price them on ``grid``, pick the
    rival's best setting per corpus and summarize (seeded bootstrap intervals)."""
    if corpora is None:
        corpora = {name: load_corpus(name) for name in params["accounting_corpora"]}
    rows = A.corpus_forwards(corpora, tokenizer, cost=grid.predict, progress=progress)
    best = A.best_prompt_lookup(rows)
    return EveryCase(
        sources={name: getattr(c, "source", "").split(":")[0] for name, c in corpora.items()},
        rows=rows,
        best=best,
        summary=A.forwards_summary(rows, best, seed),
        predicted=CM.predicted_speedups(rows, best, seed),
    )


def free_run_summary(fr: pd.DataFrame) -> pd.DataFrame:
    """Per corpus and pooled: cases, parse and strict-resolve rates, EM (byte-exact and
    trimmed), realized copy fraction and the share closed by the budget. Raises
    ``AssertionError`` if any program failed to parse or resolve strictly, which the FSM
    rules out."""
    by = fr.groupby("corpus")
    summary = pd.DataFrame(
        {
            "cases": by.size(),
            "parse rate": by.parsed.mean(),
            "strict-resolve rate": by.strict_resolved.mean(),
            "EM (byte-exact)": by.em.mean(),
            "EM (trimmed)": by.em_trimmed.mean(),
            "realized copy fraction": by.copy_fraction.mean(),
            "budget closed": by.budget_closed.mean(),
        }
    )
    summary.loc["pooled"] = [
        len(fr),
        fr.parsed.mean(),
        fr.strict_resolved.mean(),
        fr.em.mean(),
        fr.em_trimmed.mean(),
        fr.copy_fraction.mean(),
        fr.budget_closed.mean(),
    ]
    if not (summary["parse rate"].min() == 1.0 and summary["strict-resolve rate"].min() == 1.0):
        raise AssertionError(
            "a free-run program failed to parse or resolve strictly:\n"
            f"{summary[['parse rate', 'strict-resolve rate']]}"
        )
    return summary


def teacher_forced_agreement(forced: dict) -> dict:
    """Per timed case id, the share of decisions where the model's masked argmax was the
    oracle program's id (forced runs of §1)."""
    return {cid: r.agreement for cid, r in forced.items()}


def goals(timing: TimedRun, every: EveryCase) -> pd.DataFrame:
    """:func:`cadlib.costs.cost_model.goals` of this run: forwards and predicted speedups of every
    case, measured speedups and plain Copy-as-Decode's pooled realized / ``bnd_exact`` of the
    timed sample; a predicted goal within the cost model's largest error against the clock on
    this run is undecided."""
    pooled = timing.bounds.set_index("corpus").loc["pooled"]
    return CM.goals(
        every.summary,
        every.predicted,
        timing.speed,
        pooled,
        model_error(CM.validation_summary(timing.validation)),
    )


def model_error(validation_summary: pd.DataFrame) -> float:
    """The cost model's largest absolute error against the clock, in % (all methods): the
    band within which a predicted goal is undecided."""
    return float(validation_summary.set_index("method").loc["all", "max_abs_error_pct"])


def speed_frame(numbers: dict) -> pd.DataFrame:
    """A results file's ``speed`` (keyed ``corpus/method``) as the speed table's rows."""
    return pd.DataFrame(
        [
            {"corpus": k.split("/")[0], "method": k.split("/", 1)[1], **v}
            for k, v in numbers["speed"].items()
        ]
    )


def goals_from_numbers(numbers: dict) -> pd.DataFrame:
    """:func:`goals` re-judged from a results file's ``numbers`` (e.g. the committed full
    run's), under the rules of this code, not those in force when the file was written."""
    cm = numbers["cost_model"]
    bounds = pd.DataFrame(cm["timed_bounds"]).set_index("corpus").loc["pooled"]
    return CM.goals(
        pd.DataFrame(numbers["accounting"]["summary"]),
        pd.DataFrame(cm["predicted_speedups"]),
        speed_frame(numbers),
        bounds,
        model_error(pd.DataFrame(cm["validation_summary"])),
    )


def case_records(
    every: EveryCase, timing: TimedRun, fr: pd.DataFrame | None, params: dict
) -> list[dict]:
    """:func:`cadlib.chapters.decoding.measure.case_records` of this run (timed runs at
    :func:`timed_setting`)."""
    return D.case_records(every.rows, every.best, timing.rows, fr, timed_setting(params))


def _records(df: pd.DataFrame) -> list[dict]:
    return df.astype(object).where(df.notna(), None).to_dict(orient="records")


_SPEED_KEYS = (
    "cases",
    "T",
    "forwards",
    "forwards_per_token",
    "forward_ratio",
    "decode_s",
    "decode_s_min",
    "decode_s_max",
    "speedup",
    "speedup_min",
    "speedup_max",
)


def boundary_effect_numbers(effect: pd.DataFrame) -> dict:
    """``numbers.boundary_effect`` of ``results/decoding.json``: the counts of
    :func:`cadlib.decoding.token_boundaries.boundary_effect`'s table and its KL divergences (model
    floats, compared within :data:`cadlib.book.rerun_check.MODEL_FLOAT`)."""
    differ = effect[~effect.same_prefix]
    return {
        "boundaries": len(effect),
        "different_prefix": len(differ),
        "fsm_choice_agree": int(effect.fsm_choice_agree.sum()),
        "top1_agree": int(effect.top1_agree.sum()),
        "max_kl": float(effect.kl.max()) if len(effect) else None,
        "kl_differing": [float(k) for k in differ.kl],
    }


def speed_numbers(speed: pd.DataFrame) -> dict:
    """``numbers.speed`` of a decoding results file: per ``corpus/method``, the speed table's
    counts, forward ratios and times (cell by cell, so counts stay integers)."""
    by = speed.set_index(["corpus", "method"])
    return {f"{c}/{m}": {k: by.loc[(c, m), k] for k in _SPEED_KEYS} for c, m in by.index}


def decoding_numbers(
    timing: TimedRun,
    every: EveryCase,
    fr: pd.DataFrame,
    masks: pd.DataFrame,
    boundaries: pd.DataFrame,
    effect: pd.DataFrame,
    runtime_s: float,
) -> dict:
    """The ``numbers`` of ``results/decoding.json``: speeds of the timed sample, the cost
    model (grid, validation, bounds, predicted speedups), the goals, the free run, the
    teacher-forced agreement, fixed and mask costs, the boundary counts and their effect, and
    the accounting of every case."""
    return {
        "speed": speed_numbers(timing.speed),
        "timed_cases": {x.case.id: x.corpus for x in timing.inputs},
        "cost_model": {
            "grid": _records(timing.grid.table),
            "validation": _records(timing.validation),
            "validation_summary": _records(CM.validation_summary(timing.validation)),
            "timed_bounds": _records(timing.bounds),
            "predicted_speedups": _records(every.predicted),
        },
        "goals": _records(goals(timing, every)),
        "free_run": _records(free_run_summary(fr).reset_index(names="corpus")),
        "teacher_forced_agreement": teacher_forced_agreement(timing.forced),
        "fixed_costs": _records(D.fixed_costs(timing.forced)),
        "mask_costs": _records(masks),
        "boundaries": _records(boundaries),
        "free_run_closed_by_budget": int(fr.budget_closed.sum()),
        "free_run_ended_by_model": int((~fr.budget_closed).sum()),
        "boundary_effect": boundary_effect_numbers(effect),
        "accounting": {
            "summary": _records(every.summary),
            "best_prompt_lookup": every.best.to_dict(),
            "setting_grid": {s: row.to_dict() for s, row in A.setting_grid(every.rows).iterrows()},
        },
        "runtime_s": runtime_s,
    }


def write_decoding_results(ch: Chapter, numbers: dict, label: str, device) -> Path:
    """Write ``results/decoding.json`` (``decoding.<profile>.json`` for another profile) with
    the paper's figures beside ``numbers`` and the run's parameters and label
    (:meth:`cadlib.record.session.Chapter.write`); return the path."""
    return ch.write(
        numbers,
        D.paper_numbers(),
        model=ch.P["model"],
        tokenizer=ch.P["model"],
        device=str(device),
        extra_params={"label": label},
    )


#: The command that records ``results/decoding.full.json`` (and its per-case records), on a
#: quiet machine; ``make replay CHAPTER=06_decoding PROFILE=full`` then renders it as the chapter.
FULL = "make record CHAPTER=06_decoding PROFILE=full"


def load_full() -> dict | None:
    """The committed ``full`` run's results (``results/decoding.full.json``,
    :func:`cadlib.record.results.load_committed`), or ``None``."""
    return load_committed("decoding", "full")


def answer(numbers: dict, where: str) -> str:
    """The chapter's question answered with its own numbers (the opening's **Answer.**): the
    pooled timed sample's wall-clock speedups over autoregressive decoding, the bound from the
    same forward-cost grid, and the free run (``numbers`` of :func:`decoding_numbers`)."""
    speed = numbers["speed"]
    cad, pld = speed["pooled/Copy-as-Decode"], speed["pooled/prompt lookup"]
    drafted = speed.get(f"pooled/{DRAFTED}")
    bound = next(
        (b for b in numbers["cost_model"]["timed_bounds"] if b["corpus"] == "pooled"), None
    )
    free = next((r for r in numbers["free_run"] if r["corpus"] == "pooled"), None)
    with_drafts = f" ({drafted['speedup']:.2f}× with its drafts)" if drafted else ""
    if cad["speedup"] > pld["speedup"]:
        rank = "faster than prompt lookup even without its drafts"
    elif drafted and drafted["speedup"] > pld["speedup"]:
        rank = "faster than prompt lookup only with its drafts"
    else:
        rank = "slower than prompt lookup"
    out = [
        f"On the timed sample ({cad['cases']} cases, {cad['T']:,} output ids; {where}), "
        f"forced-oracle Copy-as-Decode produces the same output {cad['speedup']:.2f}× faster "
        f"than autoregressive decoding{with_drafts}, against {pld['speedup']:.2f}× for "
        f"prompt lookup: {rank}."
    ]
    if bound is not None:
        out.append(
            f"The paper's bound bnd_exact, from the forward costs of the same run, is "
            f"{bound['bnd_exact_grid']:.2f}×: the plain decoder realizes "
            f"{bound['realized_over_bnd_exact']:.0%} of it, because every op also costs "
            "decision forwards that the bound does not charge."
        )
    if free is not None:
        out.append(
            f"Decoding freely, the untrained model's programs parse in "
            f"{free['parse rate']:.0%} and resolve strictly in "
            f"{free['strict-resolve rate']:.0%} of {free['cases']} runs (by construction "
            f"of the FSM), with exact match in {free['EM (byte-exact)']:.0%}."
        )
    return " ".join(out)
