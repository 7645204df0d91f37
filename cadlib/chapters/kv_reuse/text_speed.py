"""Chapter 6c's sentences on its committed timed run and issue 32's speed goals (the goals and
their judgement: :mod:`cadlib.chapters.kv_reuse.run_speed`)."""

from __future__ import annotations

import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.decoding.methods import METHODS
from cadlib.record.provenance import evidence_caption

from .run_speed import SPEED_GOALS, judged_policy, speed_goals

__all__ = [
    "timing_run_markdown",
    "speed_policy",
    "speed_goals_markdown",
    "speed_answer",
]


def _prompt_cap(params: dict) -> str:
    """The prompt cap the timed cases were drawn under, in words (``""`` when none): a capped
    case is shorter than its corpus's typical one (Flask's prompts run to thousands of ids)."""
    cap = params.get("max_prompt")
    if not cap:
        return ""
    if isinstance(cap, int):
        return f"; prompts of at most {cap:,} ids"
    counts = pd.Series(cap).value_counts()
    common = counts.index[0]
    others = ", ".join(f"{CORPUS_LABELS.get(c, c)} {n:,}" for c, n in cap.items() if n != common)
    return f"; prompts of at most {common:,} ids" + (f" ({others})" if others else "")


def timing_run_markdown(record: dict) -> str:
    """Per corpus, the fastest reuse policy's median decode time against the exact splice's
    and autoregressive decoding's (both on the same case and repeats), after the run's n and
    the prompt cap its cases were drawn under, then the run's provenance
    (:func:`cadlib.record.provenance.evidence_caption`)."""
    lines = []
    for corpus, methods in record["numbers"]["timing"].items():
        reuse = {m: v for m, v in methods.items() if m.startswith("reuse ")}
        if not reuse:
            continue
        best = max(reuse, key=lambda m: reuse[m]["vs_exact_splice"])
        ar = methods[METHODS[0]]["decode_s"] / reuse[best]["decode_s"]
        lines.append(
            f"- {CORPUS_LABELS.get(corpus, corpus)}: `{best}` decodes in "
            f"{reuse[best]['decode_s']:.2f} s, {reuse[best]['vs_exact_splice']:.2f}× "
            f"as fast as the exact splice and {ar:.1f}× autoregressive decoding."
        )
    cases = record["params"].get("timing_cases")
    head = (
        f"**The timed run** ({cases} case(s) per corpus, {record['params']['repeats']} "
        f"interleaved repeats; medians{_prompt_cap(record['params'])}):"
    )
    caption = evidence_caption(record, f"kv_reuse.{record['profile']}.json")
    return "\n".join([head, "", *lines, "", caption])


def speed_policy(record: dict, accepted: str | None = None) -> tuple[str, str]:
    """The policy the speed goals are judged at, and why, in words: ``accepted`` (the policy
    that meets the agreement threshold pooled over every case of the held-out HumanEvalFix
    corpora, :func:`cadlib.chapters.kv_reuse.run_every_case.accepted_policy`) when the run timed it
    on every corpus, else :func:`.run_speed.judged_policy` of the run's own numbers."""
    timed = record["numbers"]["timing"].values()
    if accepted and all(f"reuse {accepted}" in methods for methods in timed):
        return accepted, (
            "the policy chosen on development cases that meets the agreement "
            "threshold pooled over every case of the held-out HumanEvalFix "
            "corpora; section 2 gives its agreement per corpus"
        )
    if record["numbers"]["verdict"]["best"]:
        return judged_policy(record["numbers"]), "the policy that meets the agreement threshold"
    return judged_policy(record["numbers"]), (
        "no policy meets the agreement threshold, so the one with the highest held-out agreement"
    )


def _goal_lines(table: pd.DataFrame, policy: str) -> list[str]:
    """One line per goal of :func:`.run_speed.speed_goals`: met or missed, on how many
    corpora, the values at ``policy`` and, when ``policy`` is not ``none``, at ``none`` (the
    ceiling)."""
    lines = []
    for goal, rows in table.groupby("goal", sort=False):
        verdict = "met" if rows.met.all() else "missed"

        def values(column, rows=rows):
            return ", ".join(f"{r.corpus} {r[column]:.3g}" for _, r in rows.iterrows())

        ceiling = "" if policy == "none" else f"; at `none`: {values('at none')}"
        lines.append(
            f"{goal}: **{verdict}**, met on {int(rows.met.sum())} of {len(rows)} "
            f"corpora (at `{policy}`: {values(f'at {policy}')}{ceiling})"
        )
    return lines


def speed_goals_markdown(record: dict, accepted: str | None = None) -> str:
    """One line per goal: met or missed at the policy of :func:`speed_policy`, on how many
    corpora, with the values there and at ``none``, after why that policy and the run's n
    (cases per corpus and repeats)."""
    policy, why = speed_policy(record, accepted)
    lines = [
        f"**Speed goals**, judged at `{policy}` ({why}); "
        f"{record['params']['timing_cases']} case(s) per corpus, "
        f"{record['params']['repeats']} repeats:",
        "",
    ]
    return "\n".join(
        [*lines, *(f"- {x}." for x in _goal_lines(speed_goals(record, policy), policy))]
    )


def speed_answer(record: dict, accepted: str | None = None) -> str:
    """One sentence for the chapter's **Answer.**: the speed goals at the policy of
    :func:`speed_policy`, each met or missed, with the timed run's n and whether its
    machine was quiet (its provenance); then the speed over the exact splice on the corpora of
    its goal, at that policy and at ``none`` (the mode's ceiling)."""
    policy, _ = speed_policy(record, accepted)
    table = speed_goals(record, policy)
    verdicts = "; ".join(
        f"{goal} {'met' if rows.met.all() else 'missed'} "
        f"({int(rows.met.sum())} of {len(rows)} corpora)"
        for goal, rows in table.groupby("goal", sort=False)
    )
    prov = record.get("provenance")
    where = (
        "a machine whose load was not recorded"
        if not prov
        else "a busy machine"
        if prov["busy"]
        else "a quiet machine"
    )
    splice = table[table.goal == SPEED_GOALS[0][0]]
    ratios = ", ".join(f"{r.corpus} {r[f'at {policy}']:.2f}×" for _, r in splice.iterrows())
    ceiling = (
        ""
        if policy == "none"
        else (
            " (`none`, which reuses the most: "
            + ", ".join(f"{x:.2f}×" for x in splice["at none"])
            + ")"
        )
    )
    against = f" Against the exact splice: {ratios}{ceiling}." if len(splice) else ""
    return (
        f"Timed at `{policy}` on {where} ({record['params']['timing_cases']} "
        f"case(s) per corpus, {record['params']['repeats']} repeats), the speed goals: "
        f"{verdicts}.{against}"
    )
