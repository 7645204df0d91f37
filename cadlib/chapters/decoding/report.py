"""Chapter 6's run as the notebook shows it (notebooks/06_decoding.ipynb): its setup, the
timed sample and what the forward-cost grid predicts for it, the accounting of every case,
the tables and figures, and the numbers of ``results/decoding.json``.

The measurements themselves live in :mod:`cadlib.chapters.decoding.measure` (timing the
methods, the free run, fixed and mask costs), :mod:`cadlib.decoding.token_boundaries`,
:mod:`cadlib.costs.accounting` and :mod:`cadlib.costs.cost_model`; this module strings them
together in the chapter's order and shapes their results for display. Two records carry what
the notebook passes from cell to cell: :class:`TimedRun` (§1 and the cost model's check against
the clock) and :class:`EveryCase` (§2's exact accounting of every case);
:func:`decoding_numbers` builds the results file's ``numbers`` from them and the later
measurements.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import torch

from cadlib.book import plotting
from cadlib.book.replay import Recorder, with_record
from cadlib.book.results import hardware_info, load_results, setting_label, write_results
from cadlib.chapters.decoding import measure as D
from cadlib.corpora import load_corpus, seeded_subset
from cadlib.costs import accounting as A
from cadlib.costs import cost_model as CM
from cadlib.costs.forward_grid import measure_forward_costs
from cadlib.decoding import token_boundaries
from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.methods import (
    DRAFTED,
    DRAFTED_SETTING,
    TIMED,
    CaseInputs,
    prepare,
    timed_sample,
)
from cadlib.models import (
    load_model,
    load_tokenizer,
    model_info,
    model_vocab_size,
    quiet_transformers,
    resolve_device,
    set_threads,
)
from cadlib.tokenizers import qwen25_tokenizer

__all__ = [
    "FULL",
    "load_full",
    "full_run_markdown",
    "full_run_wall_table",
    "Setup",
    "TimedRun",
    "EveryCase",
    "measurement_label",
    "load_setup",
    "load_cases",
    "timed_cases_table",
    "transcript_counts",
    "transcript_runs",
    "timed_setting",
    "measure_timing",
    "time_methods",
    "timed_run",
    "forwards_table",
    "wall_caption",
    "wall_table",
    "account_every_case",
    "accounting_report",
    "accounting_table",
    "validation_table",
    "plot_speedups",
    "plot_forwards",
    "composition_table",
    "free_run_summary",
    "free_run_programs",
    "teacher_forced_agreement",
    "agreement_line",
    "mask_costs",
    "boundary_table",
    "boundary_percent_table",
    "effect_line",
    "boundary_effect_numbers",
    "speed_numbers",
    "goals",
    "model_error",
    "goals_from_numbers",
    "dominance_markdown",
    "speed_gaps_markdown",
    "forward_gaps_markdown",
    "case_records",
    "decoding_numbers",
    "write_decoding_results",
]

# --------------------------------------------------------------------------------------------
# Setup and the cases
# --------------------------------------------------------------------------------------------


class Setup(NamedTuple):
    """The model under test, its tokenizer, the torch device and the label every timing of
    the chapter carries (:func:`measurement_label`)."""

    model: object
    tokenizer: object
    device: torch.device
    label: str


def measurement_label(model_name: str, info: dict, hw: dict, device_type: str, threads: int,
                      profile: str) -> str:  # fmt: skip
    """The chapter's :func:`cadlib.book.results.setting_label`: the model with its dtype, attention
    and device type, the profile, then the machine (on CUDA the GPU's name, on CPU the CPU's
    with the torch threads)."""
    model = (f"model {model_name} ({info['dtype']}, {info['attn_implementation']} attention, "
             f"{device_type})")  # fmt: skip
    return setting_label(model, profile=profile, hw=hw,
                         threads=None if device_type == "cuda" else threads)  # fmt: skip


def load_setup(params: dict, device: str = "auto", profile: str = "cpu") -> Setup:
    """The chapter's first steps: the book's plot style, quiet ``transformers``, the profile's
    torch threads, then the model (``params``: ``model``, ``dtype``, ``attn_implementation``,
    ``threads``) and its tokenizer on ``device`` (``"auto"``: CUDA when present)."""
    plotting.setup()
    quiet_transformers()
    dev = resolve_device(device)
    if params["threads"]:
        set_threads(params["threads"])
    net = load_model(params["model"], device=str(dev), dtype=params["dtype"],
                     attn_implementation=params["attn_implementation"])  # fmt: skip
    tok = load_tokenizer(params["model"])
    label = measurement_label(params["model"], model_info(net), hardware_info(str(dev)),
                              dev.type, torch.get_num_threads(), profile)  # fmt: skip
    return Setup(net, tok, dev, label)


def load_cases(params: dict, corpora, tokenizer, seed: int = 0):
    """``(corpus, timed, free)``: the chapter's corpora (``corpora``, or ``None``: those of
    the profile's ``timing_cases``) by name, the stratified timed sample of each
    (:func:`cadlib.decoding.methods.timed_sample`) and the seeded free-run subset, both
    prepared (:func:`cadlib.decoding.methods.prepare`), corpus by corpus."""
    names = corpora or list(params["timing_cases"])
    corpus = {name: load_corpus(name) for name in names}
    max_ids = params["timing_max_ids"] or {}
    timed = [x for name in names for x in timed_sample(
        name, corpus[name], params["timing_cases"].get(name), tokenizer, max_ids.get(name), seed)]
    free = [prepare(name, case, tokenizer) for name in names
            for case in seeded_subset(corpus[name], params["free_run_cases"].get(name), seed)]
    return corpus, timed, free


def timed_cases_table(timed: list[CaseInputs], tokenizer) -> pd.DataFrame:
    """One row per timed case: its document's lines, gold ids, the oracle program's ops and
    copies, and the length of its transcript."""
    return pd.DataFrame([dict(
        corpus=x.corpus, case=x.case.id, doc_lines=len(x.case.doc.split("\n")),
        gold_ids=len(x.target) - 1, ops=len(x.program), copies=len(x.program.copies),
        transcript_ids=len(transcript(x.program, x.case.doc, tokenizer)), timed=True,
    ) for x in timed])  # fmt: skip


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


# --------------------------------------------------------------------------------------------
# §1: the timed sample, and the cost model against its clock
# --------------------------------------------------------------------------------------------


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


def time_methods(model, tokenizer, inputs: list[CaseInputs], params: dict,
                 record: Recorder | None = None) -> TimedRun:  # fmt: skip
    """Time the three methods on ``inputs`` (:func:`cadlib.chapters.decoding.measure.time_on_gold`)
    between two halves of the forward-cost grid's trials (``grid_contexts``, ``grid_trials``), then
    price the timed runs on that grid (:func:`timed_run`). With a ``record``
    (:class:`cadlib.book.replay.Recorder`), the measurements (:func:`measure_timing`) are recorded
    as ``timing``, or replayed from the committed record without timing anything."""
    raw = with_record(record, "timing", lambda: measure_timing(model, tokenizer, inputs, params))
    return timed_run(inputs, raw["rows"], raw["forced"], CM.CostGrid(raw["grid"]), tokenizer,
                     params)  # fmt: skip


def measure_timing(model, tokenizer, inputs: list[CaseInputs], params: dict) -> dict:
    """What :func:`time_methods` measures: ``rows`` and ``forced`` of
    :func:`cadlib.chapters.decoding.measure.time_on_gold`, and ``grid``, the forward-cost grid's
    table, half of its trials before the timed runs and half after."""
    trials = max(1, params["grid_trials"] // 2)
    grid_runs = [measure_forward_costs(model, params["grid_contexts"], trials=trials)]
    rows, forced = D.time_on_gold(model, tokenizer, inputs, params)
    grid_runs.append(measure_forward_costs(model, params["grid_contexts"], trials=trials,
                                           warmup=0))  # fmt: skip
    return dict(rows=rows, forced=forced, grid=pd.concat(grid_runs, ignore_index=True))


def timed_run(inputs: list[CaseInputs], rows: pd.DataFrame, forced: dict, grid: CM.CostGrid,
              tokenizer, params: dict) -> TimedRun:  # fmt: skip
    """A :class:`TimedRun` from measured ``rows`` and ``grid`` (deterministic): the speed
    table, the timed cases' accounting priced on the grid, the validation of the timed
    methods (autoregressive, Copy-as-Decode m=0, prompt lookup at :func:`timed_setting`)
    and the bounds from the same grid."""
    names = dict.fromkeys(x.corpus for x in inputs)
    acc = A.corpus_forwards({c: [x.case for x in inputs if x.corpus == c] for c in names},
                            tokenizer, cost=grid.predict, progress=False)  # fmt: skip
    return TimedRun(inputs=inputs, rows=rows, forced=forced, grid=grid,
                    speed=D.speed_table(rows), accounting=acc,
                    validation=CM.validation(rows, timed_accounting(acc, params)),
                    bounds=CM.timed_bounds(rows, acc))  # fmt: skip


def timed_accounting(acc: pd.DataFrame, params: dict) -> pd.DataFrame:
    """The accounting rows of the timed methods, under the timed methods' names:
    autoregressive, prompt lookup at :func:`timed_setting`, Copy-as-Decode m=0, and its
    :data:`cadlib.decoding.methods.DRAFTED_SETTING` composition as
    :data:`cadlib.decoding.methods.DRAFTED`."""
    drafted = (acc.method == "Copy-as-Decode") & (acc.setting == DRAFTED_SETTING)
    keep = (acc.setting.isin(["", "m=0", timed_setting(params)]) | drafted) & (
        acc.method != A.BOUND)  # fmt: skip
    return acc.assign(method=acc.method.where(~drafted, DRAFTED))[keep]


def forwards_table(speed: pd.DataFrame) -> pd.DataFrame:
    """The deterministic columns of the speed table: timed cases, forwards, forwards per gold
    id, the forward ratio and the share of ids without a decode step of their own."""
    return speed[["corpus", "method", "cases", "T", "forwards", "forwards_per_token",
                  "forward_ratio", "free_share"]].round(3)  # fmt: skip


def wall_caption(params: dict, label: str) -> str:
    """The caption of the wall-clock table (Markdown)."""
    return (f"*Decode wall-clock, median over {params['repeats']} repeats [min–max]; {label}. "
            "Read these ratios beside the forward ratios above: a wall-clock ratio also "
            "carries what each forward costs on this machine (its ids, its context).*")


def wall_table(speed: pd.DataFrame) -> pd.DataFrame:
    """Decode seconds and wall-clock speedup per corpus and method, as ``median [min–max]``."""
    wall = speed.assign(
        decode_s=speed.apply(
            lambda r: f"{r.decode_s:.2f} [{r.decode_s_min:.2f}–{r.decode_s_max:.2f}]", axis=1),
        speedup=speed.apply(
            lambda r: f"{r.speedup:.2f}× [{r.speedup_min:.2f}–{r.speedup_max:.2f}]", axis=1))
    return wall[["corpus", "method", *(["cases"] if "cases" in wall else []), "decode_s",
                 "speedup"]]


def validation_table(val: pd.DataFrame) -> pd.DataFrame:
    """The cost model's check per timed case and method (rounded for display)."""
    return val[["corpus", "case", "method", "T", "forwards", "measured_s", "forward_s",
                "predicted_s", "error_pct", "overhead_ms_per_forward"]].round(3)  # fmt: skip


def plot_speedups(timing: TimedRun, label: str):
    """Measured decode speedup over autoregressive decoding per corpus (and pooled), one bar
    per method with its min–max range, and ``bnd_exact`` from the same grid as a tick.
    Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib

    speed, bounds = timing.speed, timing.bounds.set_index("corpus")
    fig, ax = plt.subplots(figsize=(8, 3.6))
    order = [c for c in [*timing.corpora, "pooled"] if c in set(speed.corpus)]
    methods = [m for m in TIMED if m in set(speed.method)]
    width = 0.8 / len(methods)
    for k, method in enumerate(methods):
        part = speed[speed.method == method].set_index("corpus").loc[order]
        xs = [i + (k - (len(methods) - 1) / 2) * width for i in range(len(order))]
        ax.bar(xs, part.speedup, width, label=method, color=plotting.PALETTE.get(method),
               yerr=[part.speedup - part.speedup_min, part.speedup_max - part.speedup],
               capsize=3)  # fmt: skip
    ax.scatter(range(len(order)), bounds.loc[order, "bnd_exact_grid"], marker="_", s=600,
               color="k", label="bnd_exact (same grid)", zorder=5)  # fmt: skip
    ax.set_xticks(range(len(order)), order)
    ax.set_ylabel("decode speedup over AR (wall)")
    ax.set_title(f"Same output, {len(methods)} decoders\n{label}", fontsize=9)
    ax.legend(fontsize=8)
    return fig


# --------------------------------------------------------------------------------------------
# §2: every case, no model
# --------------------------------------------------------------------------------------------


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


def account_every_case(params: dict, tokenizer, grid: CM.CostGrid, seed: int = 0,
                       corpora: dict | None = None,
                       progress: bool = True) -> EveryCase:  # fmt: skip
    """Count the forwards of every method on every case of ``params["accounting_corpora"]``
    (``corpora``: those corpora already loaded, by name), price them on ``grid``, pick the
    rival's best setting per corpus and summarize (seeded bootstrap intervals)."""
    if corpora is None:
        corpora = {name: load_corpus(name) for name in params["accounting_corpora"]}
    rows = A.corpus_forwards(corpora, tokenizer, cost=grid.predict, progress=progress)
    best = A.best_prompt_lookup(rows)
    return EveryCase(
        sources={name: getattr(c, "source", "").split(":")[0] for name, c in corpora.items()},
        rows=rows, best=best, summary=A.forwards_summary(rows, best, seed),
        predicted=CM.predicted_speedups(rows, best, seed),
    )  # fmt: skip


def accounting_report(every: EveryCase) -> str:
    """Two lines: where each corpus came from, and the best prompt-lookup setting per corpus."""
    return (f"sources: {every.sources}\n"
            f"best prompt-lookup setting per corpus: {every.best.to_dict()}")  # fmt: skip


def accounting_table(every: EveryCase) -> pd.DataFrame:
    """The forwards summary without the ratio columns, rounded for display."""
    return every.summary.drop(columns=["median_ratio", "ratio_lo", "ratio_hi"]).round(3)


def plot_forwards(every: EveryCase, model: str):
    """:func:`cadlib.costs.accounting.plot_forwards` of every case, titled with the tokenizer's
    model. Returns the figure."""
    return A.plot_forwards(every.rows, every.best,
                           title=f"Forced decoding along the gold, every case; {model} tokenizer")


def composition_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Pooled forwards per gold id of autoregressive decoding, prompt lookup at its best
    setting per corpus and every Copy-as-Decode variant (the compositions of §2b), one
    column per corpus."""
    comp = summary[summary.method.isin(["Copy-as-Decode", "prompt lookup", "autoregressive"])]
    comp = comp.assign(setting=comp.setting.where(comp.method != "prompt lookup",
                                                  "best setting per corpus"))  # fmt: skip
    return comp.pivot_table(index=["method", "setting"], columns="corpus", values="pooled_fpt",
                            sort=False).round(3)  # fmt: skip


# --------------------------------------------------------------------------------------------
# §3–§5: free run, fixed costs, boundaries
# --------------------------------------------------------------------------------------------


def free_run_summary(fr: pd.DataFrame) -> pd.DataFrame:
    """Per corpus and pooled: cases, parse and strict-resolve rates, EM (byte-exact and
    trimmed), realized copy fraction and the share closed by the budget. Raises
    ``AssertionError`` if any program failed to parse or resolve strictly, which the FSM
    rules out."""
    by = fr.groupby("corpus")
    summary = pd.DataFrame({
        "cases": by.size(),
        "parse rate": by.parsed.mean(),
        "strict-resolve rate": by.strict_resolved.mean(),
        "EM (byte-exact)": by.em.mean(),
        "EM (trimmed)": by.em_trimmed.mean(),
        "realized copy fraction": by.copy_fraction.mean(),
        "budget closed": by.budget_closed.mean(),
    })  # fmt: skip
    summary.loc["pooled"] = [len(fr), fr.parsed.mean(), fr.strict_resolved.mean(), fr.em.mean(),
                             fr.em_trimmed.mean(), fr.copy_fraction.mean(),
                             fr.budget_closed.mean()]  # fmt: skip
    if not (summary["parse rate"].min() == 1.0 and summary["strict-resolve rate"].min() == 1.0):
        raise AssertionError("a free-run program failed to parse or resolve strictly:\n"
                             f"{summary[['parse rate', 'strict-resolve rate']]}")
    return summary


def free_run_programs(fr: pd.DataFrame, width: int = 90) -> pd.DataFrame:
    """The free runs with their programs on one line (newlines as ⏎, cut at ``width``)."""
    show = fr[["corpus", "case", "ops", "copies", "decisions", "em", "program"]].copy()
    show["program"] = show.program.str.replace("\n", "⏎").str.slice(0, width)
    return show


def teacher_forced_agreement(forced: dict) -> dict:
    """Per timed case id, the share of decisions where the model's masked argmax was the
    oracle program's id (forced runs of §1)."""
    return {cid: r.agreement for cid, r in forced.items()}


def agreement_line(forced: dict) -> str:
    """:func:`teacher_forced_agreement`, rounded, as one line."""
    agreement = {cid: round(a, 3) for cid, a in teacher_forced_agreement(forced).items()}
    return f"teacher-forced agreement of the model with the oracle decisions: {agreement}"


def mask_costs(model, tokenizer, params: dict) -> pd.DataFrame:
    """:func:`cadlib.chapters.decoding.measure.mask_costs` at the model's logit width,
    ``mask_reps`` reps."""
    return D.mask_costs(tokenizer, model_vocab_size(model), reps=params["mask_reps"])


def boundary_table(corpus: dict, tokenizer) -> pd.DataFrame:
    """:func:`cadlib.decoding.token_boundaries.boundary_table` of every case of ``corpus`` under the
    model's tokenizer (labelled SmolLM2, the cpu profile's) and Qwen2.5's."""
    tokenizers = {"SmolLM2": tokenizer, "Qwen2.5 BPE": qwen25_tokenizer()}
    return token_boundaries.boundary_table(dict(corpus), tokenizers)


def boundary_percent_table(bt: pd.DataFrame) -> pd.DataFrame:
    """The boundary counts as percentages canonical, naive vs ours, per window kind."""

    def pct(a, b):
        return (100 * a / b).round(1)

    return pd.DataFrame({
        "tokenizer": bt.tokenizer, "corpus": bt.corpus, "cases": bt.cases,
        "copy windows canonical, naive %": pct(bt.copy_naive, bt.copies),
        "copy windows canonical, ours %": pct(bt.copy_ours, bt.copies),
        "gen windows canonical, naive %": pct(bt.gen_naive, bt.gens),
        "gen windows canonical, ours %": pct(bt.gen_ours, bt.gens),
        "whole transcript canonical, naive %": pct(bt.whole_naive, bt.cases),
        "whole transcript canonical, ours %": pct(bt.whole_ours, bt.cases),
    })  # fmt: skip


def effect_line(eff: pd.DataFrame) -> str:
    """One line on :func:`cadlib.decoding.token_boundaries.boundary_effect`: boundaries, how many
    with different preceding ids, and how often the FSM's choice and the top-1 agree."""
    differ = eff[~eff.same_prefix]
    return (f"{len(eff)} boundaries, {len(differ)} with different preceding ids; "
            f"FSM choice agrees at {int(eff.fsm_choice_agree.sum())}/{len(eff)}, "
            f"top-1 agrees at {int(eff.top1_agree.sum())}/{len(eff)}")  # fmt: skip


# --------------------------------------------------------------------------------------------
# Goals, per-case records and the results file
# --------------------------------------------------------------------------------------------


def goals(timing: TimedRun, every: EveryCase) -> pd.DataFrame:
    """:func:`cadlib.costs.cost_model.goals` of this run: forwards and predicted speedups of every
    case, measured speedups and plain Copy-as-Decode's pooled realized / ``bnd_exact`` of the
    timed sample; a predicted goal within the cost model's largest error against the clock on
    this run is undecided."""
    pooled = timing.bounds.set_index("corpus").loc["pooled"]
    return CM.goals(every.summary, every.predicted, timing.speed, pooled,
                    model_error(CM.validation_summary(timing.validation)))  # fmt: skip


def model_error(validation_summary: pd.DataFrame) -> float:
    """The cost model's largest absolute error against the clock, in % (all methods): the
    band within which a predicted goal is undecided."""
    return float(validation_summary.set_index("method").loc["all", "max_abs_error_pct"])


def goals_from_numbers(numbers: dict) -> pd.DataFrame:
    """:func:`goals` re-judged from a results file's ``numbers`` (e.g. the committed full
    run's), under the rules of this code, not those in force when the file was written."""
    cm = numbers["cost_model"]
    bounds = pd.DataFrame(cm["timed_bounds"]).set_index("corpus").loc["pooled"]
    return CM.goals(pd.DataFrame(numbers["accounting"]["summary"]),
                    pd.DataFrame(cm["predicted_speedups"]), _speed_frame(numbers), bounds,
                    model_error(pd.DataFrame(cm["validation_summary"])))  # fmt: skip


def _speed_frame(numbers: dict) -> pd.DataFrame:
    """A results file's ``speed`` (keyed ``corpus/method``) as the speed table's rows."""
    return pd.DataFrame([{"corpus": k.split("/")[0], "method": k.split("/", 1)[1], **v}
                         for k, v in numbers["speed"].items()])  # fmt: skip


def dominance_markdown(validation: pd.DataFrame, label: str) -> str:
    """How much of the timed sample's autoregressive time its longest case and its heaviest
    corpus take, and the pooled wall-clock speedup of each timed method with and without that
    corpus, from the per-case measurements (:func:`cadlib.costs.cost_model.validation`). The pooled
    speedup is a ratio of sums, so long cases weigh in it by their length; this says how
    much, rather than assuming the stratified sample keeps it small."""
    ar = validation[validation.method == "autoregressive"].set_index("case")
    total = ar.measured_s.sum()
    top = ar.measured_s.idxmax()
    by_corpus = ar.groupby("corpus").measured_s.sum().sort_values(ascending=False)
    corpus, share = by_corpus.index[0], by_corpus.iloc[0] / total
    n_in = int((ar.corpus == corpus).sum())
    rest = ar.index[ar.corpus != corpus]
    per = []
    for method in [m for m in ("Copy-as-Decode", "Copy-as-Decode +drafts", "prompt lookup")
                   if m in set(validation.method)]:  # fmt: skip
        m = validation[validation.method == method].set_index("case").measured_s
        with_all = total / m.reindex(ar.index).sum()
        without = ar.measured_s[rest].sum() / m.reindex(rest).sum() if len(rest) else float("nan")
        per.append(f"{method} {with_all:.2f}× with it, {without:.2f}× without it")
    verb = "dominates" if share > 0.5 else "does not dominate"
    return (f"*Does one corpus or one long case dominate the pooled wall clock? ({label})* Of "
            f"the sample's autoregressive decode time, the longest timed case ({top}) takes "
            f"{ar.measured_s[top] / total:.0%}, and {corpus} ({n_in} of {ar.index.size} "
            f"timed cases) {share:.0%}, so {corpus} {verb} the pooled ratio of sums. Pooled "
            f"wall-clock speedup over autoregressive decoding, per-case measurements, with and "
            f"without {corpus}: " + "; ".join(per) + ". The per-corpus rows (with their case "
            "counts) are the figures to quote; the every-case accounting of §2 prices every "
            "case of every corpus.")


def speed_gaps_markdown(goal_table: pd.DataFrame, every: EveryCase, grid: CM.CostGrid,
                        n: int = 40, context: int = 1024) -> str:  # fmt: skip
    """Why a speed goal was missed (``""`` when none was): per corpus of a missed speed goal,
    the forwards and the ids fed (after the prompt) per gold id of the best Copy-as-Decode
    variant (:func:`cadlib.costs.cost_model.best_copy_as_decode`) and of the best prompt lookup,
    counted on every case, and the share of each one's time that its ids fed account for.

    The shares price a forward of ``k`` ids at ``context`` on the line through this run's
    grid costs of 1 and ``n`` ids (a fixed cost per forward plus a cost per id); the verdict
    on what weighs more is drawn from those shares, for both methods, not assumed."""
    missed = goal_table[(goal_table.outcome == CM.MISSED)
                        & goal_table.goal.str.startswith("faster")]  # fmt: skip
    if missed.empty:
        return ""
    one, many = (float(grid.seconds(k, context)) for k in (1, n))
    per_id = (many - one) / (n - 1)
    per_forward = one - per_id
    lines = ["*Where a speed goal was missed, what the time is made of:*", ""]
    id_shares = []
    for corpus in dict.fromkeys(missed.corpus):
        rows = every.rows[every.rows.corpus == corpus]
        setting = CM.best_copy_as_decode(every.summary, corpus).setting
        per = {}
        for method, how in (("Copy-as-Decode", setting), ("prompt lookup", every.best[corpus])):
            r = rows[(rows.method == method) & (rows.setting == how)]
            T = r["T"].sum()
            fw, ids = r.forwards.sum() / T, (r.ids_fed - r.prompt).sum() / T
            share = ids * per_id / (ids * per_id + fw * per_forward)
            per[method] = (how, fw, ids, share)
            id_shares.append(share)
        (cs, cf, ci, csh), (ps, pf, pi, psh) = per["Copy-as-Decode"], per["prompt lookup"]
        lines.append(f"* {corpus}: Copy-as-Decode ({cs}) runs {cf:.3f} forwards and feeds "
                     f"{ci:.2f} ids per gold id, prompt lookup ({ps}) {pf:.3f} forwards and "
                     f"{pi:.2f} ids: {pf / cf:.1f}x the forwards, {pi / ci:.2f}x the ids. The "
                     f"ids fed make {csh:.0%} of Copy-as-Decode's time and {psh:.0%} of prompt "
                     "lookup's.")  # fmt: skip
    if min(id_shares) > 0.5:
        verdict = ("the ids fed, which both methods pay for every output id at least once, "
                   "weigh more than the count of forwards for both")  # fmt: skip
    elif max(id_shares) < 0.5:
        verdict = "the count of forwards weighs more than the ids fed for both"
    else:
        verdict = "neither the ids fed nor the count of forwards dominates for both"
    lines.append(f"* On this run's grid a forward of {n} ids at context {context} costs "
                 f"{many / one:.1f}x one of a single id: a fixed {per_forward * 1e3:.1f} ms per "
                 f"forward plus {per_id * 1e3:.2f} ms per id. Priced so, {verdict}.")
    return "\n".join(lines)


def forward_gaps_markdown(goal_table: pd.DataFrame, every: EveryCase) -> str:
    """Why a forwards goal was missed (``""`` when none was): per corpus of a missed
    "fewer forwards" goal, case by case, where the best Copy-as-Decode variant
    (:func:`cadlib.costs.cost_model.best_copy_as_decode`) needs fewer forwards than the best prompt
    lookup and where more, by how many in all, and how many ids of structure (op headers,
    ranges, closers: transcript ids beyond the gold's) its programs spend per gold id on each
    side; structure is named as the difference only when the numbers show it."""
    missed = goal_table[(goal_table.outcome == CM.MISSED)
                        & (goal_table.goal == "fewer forwards than best prompt lookup")]
    if missed.empty:
        return ""
    lines = ["*Where a forwards goal was missed, case by case:*", ""]
    for corpus in dict.fromkeys(missed.corpus):
        rows = every.rows[every.rows.corpus == corpus]
        setting = CM.best_copy_as_decode(every.summary, corpus).setting
        cad = rows[(rows.method == "Copy-as-Decode") & (rows.setting == setting)].set_index("case")
        pld = rows[(rows.method == "prompt lookup") & (rows.setting == every.best[corpus])]
        diff = cad.forwards - pld.set_index("case").forwards.reindex(cad.index)
        more, fewer = diff > 0, diff < 0
        structure = cad.output - cad["T"]  # transcript ids beyond the gold's
        s_more, s_fewer = (structure[m].sum() / max(cad["T"][m].sum(), 1) for m in (more, fewer))
        reading = ("the cases it loses carry more structure per gold id, ids that "
                   "prompt lookup never has to produce" if s_more > s_fewer else
                   "structure does not separate the cases it loses from those it wins")  # fmt: skip
        lines.append(
            f"* {corpus}: Copy-as-Decode ({setting}) needs fewer forwards than prompt lookup "
            f"({every.best[corpus]}) on {int(fewer.sum())} of {len(diff)} cases "
            f"({int(-diff[fewer].sum())} fewer in all), more on {int(more.sum())} "
            f"({int(diff[more].sum())} more), as many on {int((diff == 0).sum())}: net "
            f"{int(diff.sum()):+d}. Its programs spend {s_more:.2f} ids of structure (op "
            f"headers, ranges, closers) per gold id on the cases where it needs more forwards "
            f"and {s_fewer:.2f} on those where it needs fewer: {reading}.")
    return "\n".join(lines)


def case_records(every: EveryCase, timing: TimedRun, fr: pd.DataFrame | None,
                 params: dict) -> list[dict]:  # fmt: skip
    """:func:`cadlib.chapters.decoding.measure.case_records` of this run (timed runs at
    :func:`timed_setting`)."""
    return D.case_records(every.rows, every.best, timing.rows, fr, timed_setting(params))


def _records(df: pd.DataFrame) -> list[dict]:
    return df.astype(object).where(df.notna(), None).to_dict(orient="records")


_SPEED_KEYS = ("cases", "T", "forwards", "forwards_per_token", "forward_ratio", "decode_s",
               "decode_s_min", "decode_s_max", "speedup", "speedup_min", "speedup_max")  # fmt: skip


def boundary_effect_numbers(effect: pd.DataFrame) -> dict:
    """``numbers.boundary_effect`` of ``results/decoding.json``: the counts of
    :func:`cadlib.decoding.token_boundaries.boundary_effect`'s table and its KL divergences (model
    floats, compared within :data:`cadlib.book.rerun_check.MODEL_FLOAT`)."""
    differ = effect[~effect.same_prefix]
    return {
        "boundaries": len(effect), "different_prefix": len(differ),
        "fsm_choice_agree": int(effect.fsm_choice_agree.sum()),
        "top1_agree": int(effect.top1_agree.sum()),
        "max_kl": float(effect.kl.max()) if len(effect) else None,
        "kl_differing": [float(k) for k in differ.kl],
    }  # fmt: skip


def speed_numbers(speed: pd.DataFrame) -> dict:
    """``numbers.speed`` of a decoding results file: per ``corpus/method``, the speed table's
    counts, forward ratios and times (cell by cell, so counts stay integers)."""
    by = speed.set_index(["corpus", "method"])
    return {f"{c}/{m}": {k: by.loc[(c, m), k] for k in _SPEED_KEYS} for c, m in by.index}


def decoding_numbers(timing: TimedRun, every: EveryCase, fr: pd.DataFrame, masks: pd.DataFrame,
                     boundaries: pd.DataFrame, effect: pd.DataFrame,
                     runtime_s: float) -> dict:  # fmt: skip
    """The ``numbers`` of ``results/decoding.json``: speeds of the timed sample, the cost
    model (grid, validation, bounds, predicted speedups), the goals, the free run, the
    teacher-forced agreement, fixed and mask costs, the boundary counts and their effect, and
    the accounting of every case."""
    return {
        "speed": speed_numbers(timing.speed),
        "timed_cases": {x.case.id: x.corpus for x in timing.inputs},
        "cost_model": {
            "grid": _records(timing.grid.table), "validation": _records(timing.validation),
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
            "summary": _records(every.summary), "best_prompt_lookup": every.best.to_dict(),
            "setting_grid": {s: row.to_dict() for s, row in A.setting_grid(every.rows).iterrows()},
        },
        "runtime_s": runtime_s,
    }  # fmt: skip


def write_decoding_results(numbers: dict, params: dict, profile: str, label: str,
                           device) -> Path:  # fmt: skip
    """Write ``results/decoding.json`` (``decoding.<profile>.json`` for another profile) with
    the paper's figures beside ``numbers`` and the run's parameters and label; return the
    path."""
    return write_results("decoding", numbers, D.paper_numbers(), profile=profile,
                         model=params["model"], tokenizer=params["model"],
                         params={**params, "label": label}, device=str(device))  # fmt: skip


# --------------------------------------------------------------------------------------------
# The full profile: a larger timed sample, run once and shown by the cpu chapter
# --------------------------------------------------------------------------------------------

#: The command that regenerates ``results/decoding.full.json``.
FULL = ("papermill --cwd notebooks notebooks/06_decoding.ipynb _build/06_decoding.full.ipynb "
        "-p profile full")


def load_full() -> dict | None:
    """The committed ``full`` run's results (``results/decoding.full.json``, through
    :func:`cadlib.book.results.load_results`), or ``None``."""
    try:
        return load_results("decoding", "full")
    except FileNotFoundError:
        return None


def full_run_markdown(full: dict) -> str:
    """What the full run timed and its goals (:func:`cadlib.costs.cost_model.goals_markdown`),
    generated from its results."""
    n = full["numbers"]
    per = pd.Series(n["timed_cases"]).value_counts().to_dict()
    head = (f"**The `full` run** ({full['params']['label']}; {sum(per.values())} timed cases: "
            + ", ".join(f"{c} {k}" for c, k in per.items())
            + f"; {full['params']['repeats']} interleaved repeats; "
            f"{n['runtime_s'] / 60:.0f} minutes). Regenerate with `{FULL}`.")
    label = full["params"]["label"]
    return "\n\n".join([
        head,
        dominance_markdown(pd.DataFrame(n["cost_model"]["validation"]), "full run"),
        "Its goals, re-judged from its numbers under this chapter's rules (development and "
        "test sets; plain Copy-as-Decode against the bound; undecided within the cost model's "
        "error on that run):",
        CM.goals_markdown(goals_from_numbers(n), label),
    ])  # fmt: skip


def full_run_wall_table(full: dict) -> pd.DataFrame:
    """The full run's :func:`wall_table` with the timed cases per corpus (pooled: all) and
    forwards per gold id beside it."""
    n = full["numbers"]
    speed = _speed_frame(n)
    per = pd.Series(n["timed_cases"]).value_counts()
    speed = speed.assign(cases=speed.corpus.map(
        lambda c: int(per.sum() if c == "pooled" else per.get(c, 0))))
    return wall_table(speed).assign(forwards_per_token=speed.forwards_per_token.round(3))
