"""Chapter 6's goals in words: each goal of issue 17 met, missed or undecided on this run
(:func:`goals_markdown`, from :func:`.run_goals.goals`), and, where a goal was missed, what the
numbers say about why (:func:`speed_gaps_markdown`, :func:`forward_gaps_markdown`)."""

from __future__ import annotations

import pandas as pd

from cadlib.costs import cost_model as CM

from .run_accounting import EveryCase
from .run_goals import MET, MISSED, UNDECIDED

__all__ = [
    "goals_markdown",
    "goal_frames",
    "outcome_line",
    "speed_gaps_markdown",
    "forward_gaps_markdown",
]


def goals_markdown(table: pd.DataFrame, label: str = "") -> str:
    """The goals as one Markdown table per set, development set first: each goal met, missed
    or undecided and by how much (ours / rival), then the count per outcome and set."""
    where = f" ({label})" if label else ""
    lines = [f"*The chapter's goals, this run{where}:*", ""]
    for caption, frame in goal_frames(table).items():
        lines += [caption, "", "| " + " | ".join(_COLUMNS) + " |"]
        lines += ["|---|---|---|---:|---:|---:|---|---|"]
        for r in frame.itertuples(index=False):
            lines.append(
                f"| {r.goal} | {r.corpus} | **{r.outcome}** | {r.ours:.3f} | {r.rival:.3f} "
                f"| {r.ratio:.2f} | {r.target} | {r.note} |"
            )
        lines.append("")
    lines.append(outcome_line(table))
    return "\n".join(lines)


_COLUMNS = ("goal", "corpus", "outcome", "ours", "rival", "ratio", "target", "note")


def goal_frames(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The goals as one table per set, development set first, each under its caption (what the
    set is): goal, corpus, outcome, ours, rival, their ratio, the target and a note."""
    out = {}
    for part in ("development", "test"):
        sub = table[table.set == part]
        if len(sub):
            ratio = (sub.ours / sub.rival.where(sub.rival != 0)).astype(float)
            frame = sub.assign(ratio=ratio)[list(_COLUMNS)].reset_index(drop=True)
            out[f"*{part.capitalize()} set* ({_SET_NOTE[part]}):"] = frame
    return out


_SET_NOTE = {
    "development": "the drafts and the timed setting were designed on it, with Flask a goal "
    "corpus meanwhile; only its first three corpora are timed",
    "test": "the four other HumanEvalFix languages: nothing chosen on them, but they translate "
    "the same 164 tasks (one family, a weak test); priced, not timed",
}


def outcome_line(table: pd.DataFrame) -> str:
    """How many goals are met, missed and undecided, per set."""
    parts = []
    for part in ("development", "test"):
        sub = table[table.set == part]
        if len(sub):
            counts = ", ".join(
                f"{int((sub.outcome == o).sum())} {o}" for o in (MET, MISSED, UNDECIDED)
            )
            parts.append(f"{part} set: {counts} (of {len(sub)})")
    return "Goals, " + "; ".join(parts) + "."


def speed_gaps_markdown(
    goal_table: pd.DataFrame, every: EveryCase, grid: CM.CostGrid, n: int = 40, context: int = 1024
) -> str:
    """Why a speed goal was missed (``""`` when none was): per corpus of a missed speed goal,
    the forwards and the ids fed (after the prompt) per gold id of the best Copy-as-Decode
    variant (:func:`cadlib.costs.cost_model.best_copy_as_decode`) and of the fastest prompt
    lookup (:func:`.run_accounting.fastest_prompt_lookup`), counted on every case, and the
    share of each one's time that its ids fed account for.

    The shares price a forward of ``k`` ids at ``context`` on the line through this run's
    grid costs of 1 and ``n`` ids (a fixed cost per forward plus a cost per id); the verdict
    on what weighs more is drawn from those shares, for both methods, not assumed."""
    missed = goal_table[(goal_table.outcome == MISSED) & goal_table.goal.str.startswith("faster")]
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
        for method, how in (("Copy-as-Decode", setting), ("prompt lookup", every.fastest[corpus])):
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
        (goal_table.outcome == MISSED)
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
