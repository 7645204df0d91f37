"""What chapter 6 shows (notebooks/06_decoding.ipynb): the tables and figures of its run
(:mod:`.run`), in the chapter's order. Its sentences are :mod:`.text`'s."""

from __future__ import annotations

import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.costs import accounting as A
from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.methods import TIMED, CaseInputs
from cadlib.record import style

from .run_accounting import EveryCase
from .run_goals import speed_frame
from .run_timing import TimedRun, teacher_forced_agreement

__all__ = [
    "transcript_counts",
    "transcript_runs",
    "timed_cases_table",
    "forwards_table",
    "wall_caption",
    "wall_table",
    "validation_table",
    "plot_validation",
    "plot_speedups",
    "accounting_report",
    "accounting_table",
    "predicted_table",
    "pooled_predicted_table",
    "plot_forwards",
    "plot_forwards_per_case",
    "composition_table",
    "free_run_programs",
    "agreement_line",
    "boundary_percent_table",
    "effect_line",
    "full_run_wall_table",
    "evidence_table",
]


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


def wall_caption(params: dict, label: str = "") -> str:
    """The caption of the wall-clock table (Markdown); ``label`` names the machine, where the
    page has not named it already."""
    where = f"; {label}" if label else ""
    return (
        f"*Decode wall-clock, median over {params['repeats']} repeats [min–max]{where}. "
        "Unlike a forward ratio, a wall-clock ratio also carries what each forward costs "
        "here (its ids, its context).*"
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


def plot_validation(val: pd.DataFrame, title: str | None = None):
    """Predicted vs measured decode seconds per timed case and method (log-log, the diagonal
    drawn) beside the error in % per method. Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    for method, g in val.groupby("method", sort=False):
        color = style.PALETTE.get(method)
        ax.scatter(g.measured_s, g.predicted_s, label=method, s=22, color=color)
        bx.scatter([method] * len(g), g.error_pct, s=22, color=color)
    both = val[["measured_s", "predicted_s"]]
    lo, hi = both.min().min(), both.max().max()
    ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls=":")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="measured decode s (median of repeats)",
        ylabel="predicted s (Σ grid cost of its forwards)",
    )
    ax.legend(fontsize=7)
    bx.axhline(0, color="grey", lw=0.8)
    bx.set(ylabel="error % (predicted − measured) / measured")
    bx.tick_params(axis="x", labelsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


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
    """Three lines: where each corpus came from, the prompt-lookup setting with the fewest
    forwards per corpus, and the one with the fewest predicted seconds on the development
    corpora (the rival of every time comparison)."""
    fastest = ", ".join(dict.fromkeys(every.fastest))
    return (
        f"sources: {every.sources}\nbest prompt-lookup setting per corpus: {every.best.to_dict()}"
        f"\nfastest prompt-lookup setting (predicted seconds, development corpora): {fastest}"
    )


def accounting_table(every: EveryCase) -> pd.DataFrame:
    """The median case's forwards per gold id with its bootstrap interval, ``median [lo–hi]``,
    one row per method and setting, one column per corpus (the pooled forwards per gold id are
    :func:`composition_table`'s; the full summary is in the results file). Prompt lookup's
    row is its setting with the fewest forwards on each corpus (:func:`accounting_report`)."""
    s = every.summary
    best = s.setting.where(s.method != "prompt lookup", "best setting per corpus")
    return _per_corpus(s.assign(setting=best), "median_fpt", "fpt_lo", "fpt_hi", "{:.3f}")


def predicted_table(predicted: pd.DataFrame) -> pd.DataFrame:
    """The median case's predicted speedup over autoregressive decoding with its bootstrap
    interval, ``median× [lo–hi]``, one row per method and setting, one column per corpus."""
    return _per_corpus(predicted, "median_speedup", "lo", "hi", "{:.2f}")


def pooled_predicted_table(predicted: pd.DataFrame) -> pd.DataFrame:
    """Each corpus's predicted speedup as a ratio of sums (its long cases weigh most), one row
    per method and setting, one column per corpus."""
    return predicted.pivot_table(
        index=["method", "setting"], columns="corpus", values="pooled_speedup", sort=False
    ).round(2)


def _per_corpus(frame: pd.DataFrame, mid: str, lo: str, hi: str, fmt: str) -> pd.DataFrame:
    """``mid [lo–hi]`` of ``frame`` in ``fmt``, pivoted to (method, setting) × corpus."""
    cell = frame.assign(
        shown=[
            f"{fmt.format(m)} [{fmt.format(a)}–{fmt.format(b)}]"
            for m, a, b in zip(frame[mid], frame[lo], frame[hi], strict=True)
        ]
    )
    wide = cell.pivot(index=["method", "setting"], columns="corpus", values="shown")
    rows = list(dict.fromkeys(zip(frame.method, frame.setting, strict=True)))
    return wide.reindex(index=rows, columns=list(dict.fromkeys(frame.corpus))).fillna("")


def plot_forwards(every: EveryCase, model: str):
    """:func:`plot_forwards_per_case` of every case, titled with the tokenizer's model. Returns
    the figure."""
    return plot_forwards_per_case(
        every.rows,
        every.best,
        title=f"Forced decoding along the gold, every case; {model} tokenizer",
    )


def plot_forwards_per_case(
    rows: pd.DataFrame, best: pd.Series | None = None, title: str | None = None
):
    """Per case, decode forwards per gold id (log scale) of the headline methods, one box per
    corpus and method with every case drawn as a dot. Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib
    import seaborn as sns

    head = A.headline_rows(rows, best)
    suffix = head.setting.map(lambda s: f" {s}" if s else "")
    suffix = suffix.where(head.method != "prompt lookup", " (best setting per corpus)")
    head = head.assign(
        label=head.method + suffix, corpus=head.corpus.map(lambda c: CORPUS_LABELS.get(c, c))
    )
    fig, ax = plt.subplots(figsize=(11, 4.2))
    kw = dict(data=head, x="corpus", y="forwards_per_token", hue="label", ax=ax)
    sns.boxplot(**kw, showfliers=False, fill=False, linewidth=1)
    sns.stripplot(**kw, dodge=True, size=1.6, alpha=0.45, legend=False)
    ax.set(yscale="log", xlabel="", ylabel="decode forwards per gold id (per case)")
    ax.tick_params(axis="x", labelrotation=25)
    for tick in ax.get_xticklabels():
        tick.set_horizontalalignment("right")
    # beside the axes, not over the boxes: ten methods would hide the lowest corpora's cases
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    fig.tight_layout()
    if title:
        ax.set_title(title, fontsize=9)
    return fig


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


def evidence_table(full: dict | None, params: dict) -> pd.DataFrame | None:
    """The evidence run's table beside a smaller run (:func:`full_run_wall_table`), or ``None``:
    none is committed, or this run (``params["profile"]``) is the evidence run itself (the
    text beside it is :func:`cadlib.chapters.decoding.text.evidence_markdown`)."""
    if full is None or params["profile"] == full["profile"]:
        return None
    return full_run_wall_table(full)
