"""What chapter 6 shows (notebooks/06_decoding.ipynb): the tables, figures and generated text
of its run (:mod:`cadlib.chapters.decoding.chapter`), in the chapter's order.
"""

from __future__ import annotations

import pandas as pd

from cadlib.chapters.decoding import measure as D
from cadlib.costs import accounting as A
from cadlib.costs import cost_model as CM
from cadlib.decoding import token_boundaries
from cadlib.decoding.fsm import transcript
from cadlib.decoding.methods import (
    TIMED,
    CaseInputs,
)
from cadlib.models import (
    model_vocab_size,
)
from cadlib.models.tokenizer import qwen25_tokenizer
from cadlib.record import style
from cadlib.record.provenance import evidence_caption
from cadlib.record.replay import replayed_run_note

from .chapter import (
    FULL,
    EveryCase,
    TimedRun,
    goals_from_numbers,
    speed_frame,
    teacher_forced_agreement,
)

__all__ = [
    "evidence_outputs",
    "full_run_markdown",
    "full_run_wall_table",
    "timed_cases_table",
    "forwards_table",
    "wall_caption",
    "wall_table",
    "accounting_report",
    "accounting_table",
    "validation_table",
    "plot_speedups",
    "plot_forwards",
    "composition_table",
    "free_run_programs",
    "agreement_line",
    "mask_costs",
    "boundary_table",
    "boundary_percent_table",
    "effect_line",
    "dominance_markdown",
    "speed_gaps_markdown",
    "forward_gaps_markdown",
]


def timed_cases_table(timed: list[CaseInputs], tokenizer) -> pd.DataFrame:
    """One row per timed case: its document's lines, gold ids, the oracle program's ops and
    copies, and the length of its transcript."""
    return pd.DataFrame(
        [
            dict(
                corpus=x.corpus,
                case=x.case.id,
                doc_lines=len(x.case.doc.split("\n")),
                gold_ids=len(x.target) - 1,
                ops=len(x.program),
                copies=len(x.program.copies),
                transcript_ids=len(transcript(x.program, x.case.doc, tokenizer)),
                timed=True,
            )
            for x in timed
        ]
    )


def forwards_table(speed: pd.DataFrame) -> pd.DataFrame:
    """The deterministic columns of the speed table: timed cases, forwards, forwards per gold
    id, the forward ratio and the share of ids without a decode step of their own."""
    return speed[
        [
            "corpus",
            "method",
            "cases",
            "T",
            "forwards",
            "forwards_per_token",
            "forward_ratio",
            "free_share",
        ]
    ].round(3)


def wall_caption(params: dict, label: str) -> str:
    """The caption of the wall-clock table (Markdown)."""
    return (
        f"*Decode wall-clock, median over {params['repeats']} repeats [min–max]; {label}. "
        "Read these ratios beside the forward ratios above: a wall-clock ratio also "
        "carries what each forward costs on this machine (its ids, its context).*"
    )


def wall_table(speed: pd.DataFrame) -> pd.DataFrame:
    """Decode seconds and wall-clock speedup per corpus and method, as ``median [min–max]``."""
    wall = speed.assign(
        decode_s=speed.apply(
            lambda r: f"{r.decode_s:.2f} [{r.decode_s_min:.2f}–{r.decode_s_max:.2f}]", axis=1
        ),
        speedup=speed.apply(
            lambda r: f"{r.speedup:.2f}× [{r.speedup_min:.2f}–{r.speedup_max:.2f}]", axis=1
        ),
    )
    return wall[
        ["corpus", "method", *(["cases"] if "cases" in wall else []), "decode_s", "speedup"]
    ]


def validation_table(val: pd.DataFrame) -> pd.DataFrame:
    """The cost model's check per timed case and method (rounded for display)."""
    return val[
        [
            "corpus",
            "case",
            "method",
            "T",
            "forwards",
            "measured_s",
            "forward_s",
            "predicted_s",
            "error_pct",
            "overhead_ms_per_forward",
        ]
    ].round(3)


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
        ax.bar(
            xs,
            part.speedup,
            width,
            label=method,
            color=style.PALETTE.get(method),
            yerr=[part.speedup - part.speedup_min, part.speedup_max - part.speedup],
            capsize=3,
        )
    ax.scatter(
        range(len(order)),
        bounds.loc[order, "bnd_exact_grid"],
        marker="_",
        s=600,
        color="k",
        label="bnd_exact (same grid)",
        zorder=5,
    )
    ax.set_xticks(range(len(order)), order)
    ax.set_ylabel("decode speedup over AR (wall)")
    ax.set_title(f"Same output, {len(methods)} decoders\n{label}", fontsize=9)
    ax.legend(fontsize=8)
    return fig


def accounting_report(every: EveryCase) -> str:
    """Two lines: where each corpus came from, and the best prompt-lookup setting per corpus."""
    return (
        f"sources: {every.sources}\nbest prompt-lookup setting per corpus: {every.best.to_dict()}"
    )


def accounting_table(every: EveryCase) -> pd.DataFrame:
    """The forwards summary without the ratio columns, rounded for display."""
    return every.summary.drop(columns=["median_ratio", "ratio_lo", "ratio_hi"]).round(3)


def plot_forwards(every: EveryCase, model: str):
    """:func:`cadlib.costs.accounting.plot_forwards` of every case, titled with the tokenizer's
    model. Returns the figure."""
    return A.plot_forwards(
        every.rows,
        every.best,
        title=f"Forced decoding along the gold, every case; {model} tokenizer",
    )


def composition_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Pooled forwards per gold id of autoregressive decoding, prompt lookup at its best
    setting per corpus and every Copy-as-Decode variant (the compositions of §2b), one
    column per corpus."""
    comp = summary[summary.method.isin(["Copy-as-Decode", "prompt lookup", "autoregressive"])]
    comp = comp.assign(
        setting=comp.setting.where(comp.method != "prompt lookup", "best setting per corpus")
    )
    return comp.pivot_table(
        index=["method", "setting"], columns="corpus", values="pooled_fpt", sort=False
    ).round(3)


def free_run_programs(fr: pd.DataFrame, width: int = 90) -> pd.DataFrame:
    """The free runs with their programs on one line (newlines as ⏎, cut at ``width``)."""
    show = fr[["corpus", "case", "ops", "copies", "decisions", "em", "program"]].copy()
    show["program"] = show.program.str.replace("\n", "⏎").str.slice(0, width)
    return show


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

    return pd.DataFrame(
        {
            "tokenizer": bt.tokenizer,
            "corpus": bt.corpus,
            "cases": bt.cases,
            "copy windows canonical, naive %": pct(bt.copy_naive, bt.copies),
            "copy windows canonical, ours %": pct(bt.copy_ours, bt.copies),
            "gen windows canonical, naive %": pct(bt.gen_naive, bt.gens),
            "gen windows canonical, ours %": pct(bt.gen_ours, bt.gens),
            "whole transcript canonical, naive %": pct(bt.whole_naive, bt.cases),
            "whole transcript canonical, ours %": pct(bt.whole_ours, bt.cases),
        }
    )


def effect_line(eff: pd.DataFrame) -> str:
    """One line on :func:`cadlib.decoding.token_boundaries.boundary_effect`: boundaries, how many
    with different preceding ids, and how often the FSM's choice and the top-1 agree."""
    differ = eff[~eff.same_prefix]
    return (
        f"{len(eff)} boundaries, {len(differ)} with different preceding ids; "
        f"FSM choice agrees at {int(eff.fsm_choice_agree.sum())}/{len(eff)}, "
        f"top-1 agrees at {int(eff.top1_agree.sum())}/{len(eff)}"
    )


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
    for method in [
        m
        for m in ("Copy-as-Decode", "Copy-as-Decode +drafts", "prompt lookup")
        if m in set(validation.method)
    ]:
        m = validation[validation.method == method].set_index("case").measured_s
        with_all = total / m.reindex(ar.index).sum()
        without = ar.measured_s[rest].sum() / m.reindex(rest).sum() if len(rest) else float("nan")
        per.append(f"{method} {with_all:.2f}× with it, {without:.2f}× without it")
    verb = "dominates" if share > 0.5 else "does not dominate"
    return (
        f"*Does one corpus or one long case dominate the pooled wall clock? ({label})* Of "
        f"the sample's autoregressive decode time, the longest timed case ({top}) takes "
        f"{ar.measured_s[top] / total:.0%}, and {corpus} ({n_in} of {ar.index.size} "
        f"timed cases) {share:.0%}, so {corpus} {verb} the pooled ratio of sums. Pooled "
        f"wall-clock speedup over autoregressive decoding, per-case measurements, with and "
        f"without {corpus}: " + "; ".join(per) + ". The per-corpus rows (with their case "
        "counts) are the figures to quote; the every-case accounting of §2 prices every "
        "case of every corpus."
    )


def speed_gaps_markdown(
    goal_table: pd.DataFrame, every: EveryCase, grid: CM.CostGrid, n: int = 40, context: int = 1024
) -> str:
    """Why a speed goal was missed (``""`` when none was): per corpus of a missed speed goal,
    the forwards and the ids fed (after the prompt) per gold id of the best Copy-as-Decode
    variant (:func:`cadlib.costs.cost_model.best_copy_as_decode`) and of the best prompt lookup,
    counted on every case, and the share of each one's time that its ids fed account for.

    The shares price a forward of ``k`` ids at ``context`` on the line through this run's
    grid costs of 1 and ``n`` ids (a fixed cost per forward plus a cost per id); the verdict
    on what weighs more is drawn from those shares, for both methods, not assumed."""
    missed = goal_table[
        (goal_table.outcome == CM.MISSED) & goal_table.goal.str.startswith("faster")
    ]
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
        lines.append(
            f"* {corpus}: Copy-as-Decode ({cs}) runs {cf:.3f} forwards and feeds "
            f"{ci:.2f} ids per gold id, prompt lookup ({ps}) {pf:.3f} forwards and "
            f"{pi:.2f} ids: {pf / cf:.1f}x the forwards, {pi / ci:.2f}x the ids. The "
            f"ids fed make {csh:.0%} of Copy-as-Decode's time and {psh:.0%} of prompt "
            "lookup's."
        )
    if min(id_shares) > 0.5:
        verdict = (
            "the ids fed, which both methods pay for every output id at least once, "
            "weigh more than the count of forwards for both"
        )
    elif max(id_shares) < 0.5:
        verdict = "the count of forwards weighs more than the ids fed for both"
    else:
        verdict = "neither the ids fed nor the count of forwards dominates for both"
    lines.append(
        f"* On this run's grid a forward of {n} ids at context {context} costs "
        f"{many / one:.1f}x one of a single id: a fixed {per_forward * 1e3:.1f} ms per "
        f"forward plus {per_id * 1e3:.2f} ms per id. Priced so, {verdict}."
    )
    return "\n".join(lines)


def forward_gaps_markdown(goal_table: pd.DataFrame, every: EveryCase) -> str:
    """Why a forwards goal was missed (``""`` when none was): per corpus of a missed
    "fewer forwards" goal, case by case, where the best Copy-as-Decode variant
    (:func:`cadlib.costs.cost_model.best_copy_as_decode`) needs fewer forwards than the best prompt
    lookup and where more, by how many in all, and how many ids of structure (op headers,
    ranges, closers: transcript ids beyond the gold's) its programs spend per gold id on each
    side; structure is named as the difference only when the numbers show it."""
    missed = goal_table[
        (goal_table.outcome == CM.MISSED)
        & (goal_table.goal == "fewer forwards than best prompt lookup")
    ]
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
        reading = (
            "the cases it loses carry more structure per gold id, ids that "
            "prompt lookup never has to produce"
            if s_more > s_fewer
            else "structure does not separate the cases it loses from those it wins"
        )
        lines.append(
            f"* {corpus}: Copy-as-Decode ({setting}) needs fewer forwards than prompt lookup "
            f"({every.best[corpus]}) on {int(fewer.sum())} of {len(diff)} cases "
            f"({int(-diff[fewer].sum())} fewer in all), more on {int(more.sum())} "
            f"({int(diff[more].sum())} more), as many on {int((diff == 0).sum())}: net "
            f"{int(diff.sum()):+d}. Its programs spend {s_more:.2f} ids of structure (op "
            f"headers, ranges, closers) per gold id on the cases where it needs more forwards "
            f"and {s_fewer:.2f} on those where it needs fewer: {reading}."
        )
    return "\n".join(lines)


def full_run_markdown(full: dict) -> str:
    """What the full run timed and its goals (:func:`cadlib.costs.cost_model.goals_markdown`),
    generated from its results."""
    n = full["numbers"]
    per = pd.Series(n["timed_cases"]).value_counts().to_dict()
    head = (
        f"**The `full` run** ({full['params']['label']}; {sum(per.values())} timed cases: "
        + ", ".join(f"{c} {k}" for c, k in per.items())
        + f"; {full['params']['repeats']} interleaved repeats; "
        f"{n['runtime_s'] / 60:.0f} minutes). Regenerate with `{FULL}`."
    )
    label = full["params"]["label"]
    return "\n\n".join(
        [
            head,
            dominance_markdown(pd.DataFrame(n["cost_model"]["validation"]), "full run"),
            "Its goals, re-judged from its numbers under this chapter's rules (development and "
            "test sets; plain Copy-as-Decode against the bound; undecided within the cost model's "
            "error on that run):",
            CM.goals_markdown(goals_from_numbers(n), label),
        ]
    )


def evidence_outputs(full: dict | None, profile: str) -> tuple[str, pd.DataFrame | None]:
    """The chapter's section on its evidence run (``results/decoding.full.json``), as
    ``(markdown, table or None)``: at the ``full`` profile (the run the book shows) that this
    chapter *is* that run, with its provenance; at a smaller one the full run's timed sample,
    goals and speed table beside this run's; the command that records it when none is
    committed."""
    if full is None:
        return f"No `full` run is committed; it is recorded by `{FULL}`.", None
    caption = evidence_caption(full, "decoding.full.json")
    if profile == full["profile"]:
        return f"{replayed_run_note('decoding', profile, FULL)}\n\n{caption}", None
    return f"{full_run_markdown(full)}\n\n{caption}", full_run_wall_table(full)


def full_run_wall_table(full: dict) -> pd.DataFrame:
    """The full run's :func:`wall_table` with the timed cases per corpus (pooled: all) and
    forwards per gold id beside it."""
    n = full["numbers"]
    speed = speed_frame(n)
    per = pd.Series(n["timed_cases"]).value_counts()
    speed = speed.assign(
        cases=speed.corpus.map(lambda c: int(per.sum() if c == "pooled" else per.get(c, 0)))
    )
    return wall_table(speed).assign(forwards_per_token=speed.forwards_per_token.round(3))
