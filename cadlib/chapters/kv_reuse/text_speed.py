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


def speed_policy(
    record: dict, chosen: str | None = None, accepted: str | None = None
) -> tuple[str, str]:
    """The policy the speed goals are judged at, and why, in words: ``chosen`` (the development
    search's choice) when the run timed it on every corpus, said to meet the agreement
    threshold only when it is ``accepted``
    (:func:`cadlib.chapters.kv_reuse.run_every_case.accepted_policy`); else
    :func:`.run_speed.judged_policy` of the run's own numbers."""
    timed = record["numbers"]["timing"].values()
    if chosen and all(f"reuse {chosen}" in methods for methods in timed):
        met = "meets" if accepted == chosen else "misses"
        return chosen, f"the development search's choice, which {met} the agreement threshold"
    if record["numbers"]["verdict"]["best"]:
        return judged_policy(record["numbers"]), "the policy that meets the agreement threshold"
    return judged_policy(record["numbers"]), (
        "no policy meets the agreement threshold, so the one with the highest held-out agreement"
    )


def _verdict(rows: pd.DataFrame) -> tuple[str, str]:
    """A goal met or missed over its corpora, and the corpora that meet it when only some do
    (named, not counted: four are HumanEvalFix translations of one task set)."""
    if rows.met.all():
        return "met", ""
    return "missed", (
        "" if not rows.met.any() else f", met on {', '.join(rows.corpus[rows.met])} only"
    )


def _goal_lines(table: pd.DataFrame, policy: str) -> list[str]:
    """One line per goal of :func:`.run_speed.speed_goals`: met or missed, the values at
    ``policy`` and, when ``policy`` is not ``none``, at ``none`` (the ceiling)."""
    lines = []
    for goal, rows in table.groupby("goal", sort=False):

        def values(column, rows=rows):
            return ", ".join(f"{r.corpus} {r[column]:.3g}" for _, r in rows.iterrows())

        ceiling = "" if policy == "none" else f"; at `none`: {values('at none')}"
        word, some = _verdict(rows)
        lines.append(f"{goal}: **{word}**{some} (at `{policy}`: {values(f'at {policy}')}{ceiling})")
    return lines


def speed_goals_markdown(
    record: dict, chosen: str | None = None, accepted: str | None = None
) -> str:
    """One line per goal: met or missed at the policy of :func:`speed_policy`, with the values
    there and at ``none``, after why that policy and the run's n (cases per corpus and
    repeats)."""
    policy, why = speed_policy(record, chosen, accepted)
    lines = [
        f"**Speed goals**, judged at `{policy}` ({why}); "
        f"{record['params']['timing_cases']} case(s) per corpus, "
        f"{record['params']['repeats']} repeats:",
        "",
    ]
    return "\n".join(
        [*lines, *(f"- {x}." for x in _goal_lines(speed_goals(record, policy), policy))]
    )


def speed_answer(record: dict, chosen: str | None = None, accepted: str | None = None) -> str:
    """One sentence for the chapter's **Answer.**: the speed goals at the policy of
    :func:`speed_policy`, each met or missed, with the timed run's n and whether its
    machine was quiet (its provenance); then the speed over the exact splice on the corpora of
    its goal, at that policy and at ``none`` (the mode's ceiling)."""
    policy, _ = speed_policy(record, chosen, accepted)
    table = speed_goals(record, policy)
    verdicts = "; ".join(
        f"{goal} {''.join(_verdict(rows))}" for goal, rows in table.groupby("goal", sort=False)
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
