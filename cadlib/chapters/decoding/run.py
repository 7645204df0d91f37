"""Chapter 6's run (notebooks/06_decoding.ipynb): its setup and cases, the numbers of
``results/decoding.json`` and the per-case records beside them.

The measurements live in the run's topics: :mod:`.run_timing` (the timed sample, priced on the
forward-cost grid measured around it: :class:`~.run_timing.TimedRun`), :mod:`.run_accounting`
(the exact forwards of every case: :class:`~.run_accounting.EveryCase`), :mod:`.run_free` (the
untrained model decoding freely), :mod:`.run_costs` (Appendix H's fixed costs and the FSM's
mask cost) and :mod:`.run_goals` (issue 17's goals, judged on the run); tokenization at splice
boundaries is :mod:`cadlib.decoding.token_boundaries`. :func:`numbers` builds the results
file's ``numbers`` from them, :func:`write_results` and ``ch.write_cases`` write the file and
its case records.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pandas as pd
import torch

from cadlib import paper as _paper
from cadlib.corpora import load_corpus, seeded_subset
from cadlib.costs import accounting as A
from cadlib.costs import cost_model as CM
from cadlib.decoding import token_boundaries
from cadlib.decoding.methods import (
    DRAFTED,
    DRAFTED_SETTING,
    prepare,
    timed_sample,
)
from cadlib.decoding.prompt_lookup import TIMED_PLD
from cadlib.models import (
    load_model,
    load_tokenizer,
    model_info,
    quiet_transformers,
    resolve_device,
    set_threads,
)
from cadlib.models.tokenizer import qwen25_tokenizer
from cadlib.record import style
from cadlib.record.results import hardware_info, load_committed, setting_label
from cadlib.record.session import Chapter

from .run_accounting import EveryCase, strata
from .run_costs import fixed_costs
from .run_free import free_run_summary
from .run_goals import goals
from .run_timing import TimedRun, teacher_forced_agreement, timed_setting

__all__ = [
    "Setup",
    "measurement_label",
    "load_setup",
    "load_cases",
    "boundary_table",
    "paper_numbers",
    "speed_numbers",
    "boundary_effect_numbers",
    "numbers",
    "write_results",
    "FULL",
    "load_full",
    "UNRECORDED",
    "records_from_rows",
    "case_records",
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


def boundary_table(corpus: dict, tokenizer) -> pd.DataFrame:
    """:func:`cadlib.decoding.token_boundaries.boundary_table` of every case of ``corpus`` under the
    model's tokenizer (labelled SmolLM2, the cpu profile's) and Qwen2.5's."""
    tokenizers = {"SmolLM2": tokenizer, "Qwen2.5 BPE": qwen25_tokenizer()}
    return token_boundaries.boundary_table(dict(corpus), tokenizers)


def paper_numbers() -> dict:
    """The paper's figures this chapter sets beside its own (from :mod:`cadlib.paper`)."""
    fixed = _paper.FIXED_COSTS
    return {
        "bnd_exact": {name: row["bnd_exact"] for name, row in _paper.TABLE2.items()},
        "fixed_costs_ms": {
            "c_mask": fixed["c_mask_ms"][0],
            "c_sync": fixed["c_sync_ms"][0],
            "c_forced": fixed["c_forced_ms"][0],
            "tau_7b": fixed["tau_ms"][0],
        },
        "free_run_untrained": "0/33 EM, 33/33 parse (Table 6, FSM-constrained untrained, "
        "Qwen2.5-Coder-1.5B)",
    }


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


def numbers(
    timing: TimedRun,
    every: EveryCase | None = None,
    fr: pd.DataFrame | None = None,
    masks: pd.DataFrame | None = None,
    boundaries: pd.DataFrame | None = None,
    effect: pd.DataFrame | None = None,
    runtime_s: float | None = None,
) -> dict:
    """The ``numbers`` of ``results/decoding.json``: speeds of the timed sample, the cost
    model (grid, validation, bounds, predicted speedups), the goals, the free run, the
    teacher-forced agreement, fixed and mask costs, the boundary counts and their effect, and
    the accounting of every case (with its :func:`~.run_accounting.strata`: where plain
    Copy-as-Decode loses, per corpus).

    Given ``timing`` alone (the GPU check, :mod:`cadlib.cli.gpu_check`, which neither accounts
    every case nor decodes freely): the timed sample's speeds and cases, the cost model's grid,
    validation and bounds, and the fixed costs."""
    out = {
        "speed": speed_numbers(timing.speed),
        "timed_cases": {x.case.id: x.corpus for x in timing.inputs},
        "cost_model": {
            "grid": _records(timing.grid.table),
            "validation": _records(timing.validation),
            "validation_summary": _records(CM.validation_summary(timing.validation)),
            "timed_bounds": _records(timing.bounds),
        },
    }
    if every is None:
        return {**out, "fixed_costs": _records(fixed_costs(timing.forced))}
    out["cost_model"]["predicted_speedups"] = _records(every.predicted)
    return {
        **out,
        "goals": _records(goals(timing, every)),
        "free_run": _records(free_run_summary(fr).reset_index(names="corpus")),
        "teacher_forced_agreement": teacher_forced_agreement(timing.forced),
        "fixed_costs": _records(fixed_costs(timing.forced)),
        "mask_costs": _records(masks),
        "boundaries": _records(boundaries),
        "free_run_closed_by_budget": int(fr.budget_closed.sum()),
        "free_run_ended_by_model": int((~fr.budget_closed).sum()),
        "boundary_effect": boundary_effect_numbers(effect),
        "accounting": {
            "summary": _records(every.summary),
            "best_prompt_lookup": every.best.to_dict(),
            "setting_grid": {s: row.to_dict() for s, row in A.setting_grid(every.rows).iterrows()},
            "strata": _records(strata(every.rows)),
        },
        "runtime_s": runtime_s,
    }


def write_results(ch: Chapter, numbers: dict, label: str, device) -> Path:
    """Write ``results/decoding.json`` (``decoding.<profile>.json`` for another profile) with
    the paper's figures beside ``numbers`` and the run's parameters and label
    (:meth:`cadlib.record.session.Chapter.write`); return the path."""
    return ch.write(
        numbers,
        paper_numbers(),
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


#: Compositions the per-case records leave out (:func:`records_from_rows`; the file stays under the
#: project's 2 MB limit): the counterfactual without jump-forward and each body rule without
#: the headers. The chapter's tables count them on every case; the accounting recomputes them
#: in seconds.
UNRECORDED = ("m=0 no-JF", "m=0 +PLD", "m=0 +cursor")


def records_from_rows(
    acc: pd.DataFrame,
    best: pd.Series,
    measured: pd.DataFrame | None = None,
    free: pd.DataFrame | None = None,
    timed_setting: str = f"K={TIMED_PLD[0]} n={TIMED_PLD[1]}",
) -> list[dict]:
    """Compact per-case records (issue 16 "Per-case outputs"): one per accounted case and
    headline method (autoregressive, prompt lookup at the corpus's best setting, every
    Copy-as-Decode variant but those of :data:`UNRECORDED`): forwards, ids fed, predicted
    decode seconds; for a timed case also the measured decode seconds (median of repeats) on
    the rows of the timed runs (autoregressive, Copy-as-Decode m=0 and with its drafts,
    prompt lookup at ``timed_setting``, added if it is not the best); then one record per
    free run with its program, verdict fields and whether the budget closed it."""
    timed = {}
    if measured is not None and len(measured):
        med = measured.groupby(["case", "method"]).decode_s.median()
        timed = {k: round(float(v), 4) for k, v in med.items()}
    cases = {c for c, _ in timed}
    pld = acc.method == "prompt lookup"
    keep = (
        ~pld
        | (acc.setting == acc.corpus.map(best))
        | ((acc.setting == timed_setting) & acc.case.isin(cases))
    )
    out = []
    keep &= (acc.method != "bnd_exact charge") & ~acc.setting.isin(UNRECORDED)
    for r in acc[keep].itertuples():
        rec = dict(
            case=r.case,
            corpus=r.corpus,
            method=r.method,
            setting=r.setting or None,
            T=int(r.T),
            forwards=int(r.forwards),
            ids_fed=int(r.ids_fed),
        )
        if hasattr(r, "predicted_s"):
            rec["predicted_s"] = round(float(r.predicted_s), 4)
        if (r.case, r.method) in timed and r.setting in ("", "m=0", timed_setting):
            rec["measured_s"] = timed[(r.case, r.method)]
        elif r.setting == DRAFTED_SETTING and (r.case, DRAFTED) in timed:
            rec["measured_s"] = timed[(r.case, DRAFTED)]
        out.append(rec)
    for r in free.itertuples() if free is not None else ():
        out.append(
            dict(
                case=r.case,
                corpus=r.corpus,
                method="free run (FSM, greedy)",
                parsed=bool(r.parsed),
                strict_resolved=bool(r.strict_resolved),
                em=bool(r.em),
                em_trimmed=bool(r.em_trimmed),
                ops=int(r.ops),
                decisions=int(r.decisions),
                forwards=int(r.forwards),
                budget_closed=bool(r.budget_closed),
                program=r.program,
            )
        )
    return out


def case_records(
    every: EveryCase, timing: TimedRun, fr: pd.DataFrame | None, params: dict
) -> list[dict]:
    """:func:`records_from_rows` of this run (timed runs at
    :func:`~.run_timing.timed_setting`)."""
    return records_from_rows(every.rows, every.best, timing.rows, fr, timed_setting(params))
