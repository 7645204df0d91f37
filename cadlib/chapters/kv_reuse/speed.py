"""Chapter 6c's speed: the reuse mode timed beside the exact splice, ``+drafts``,
autoregressive and prompt lookup (a quiet machine only), and issue 32's speed goals judged on
the committed timed run."""

from __future__ import annotations

import pandas as pd
from tqdm import tqdm

from cadlib.corpora import CORPUS_LABELS
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.methods import (
    METHODS,
    TIMED,
    TIMED_PLD,
    CopyAsDecode,
    make_methods,
)
from cadlib.record.provenance import evidence_caption
from cadlib.record.results import read_results_file

from .chapter import TEST

__all__ = [
    "timed_methods",
    "time_modes",
    "TIMING_COMMAND",
    "load_timing_run",
    "timing_run_table",
    "timing_run_markdown",
    "plot_timing_run",
    "SPEED_GOALS",
    "judged_policy",
    "speed_policy",
    "speed_goals",
    "speed_goals_markdown",
    "speed_answer",
]


# --------------------------------------------------------------------------------------------
# Speed (quiet machine only)
# --------------------------------------------------------------------------------------------


def timed_methods(model, tokenizer, policies=("none",), lookup_setting=TIMED_PLD) -> tuple:
    """The methods :func:`time_modes` interleaves (:class:`cadlib.decoding.methods.DecodingMethod`):
    chapter 6's four (autoregressive, prompt lookup at ``lookup_setting``, the exact splice,
    ``+drafts``), then the reuse copy at each policy, named ``reuse <policy>``."""
    exact = CopyDecoder(model, tokenizer)
    reuse = tuple(
        CopyAsDecode(CopyDecoder(model, tokenizer, copy_kv="reuse", recompute=p), f"reuse {p}")
        for p in policies
    )
    return (*make_methods(model, exact, lookup_setting, TIMED), *reuse)


def time_modes(
    model,
    tokenizer,
    inputs: dict,
    policies=("none",),
    repeats: int = 3,
    lookup_setting=TIMED_PLD,
    progress: bool = True,
) -> pd.DataFrame:
    """Every method of :func:`timed_methods` along each case (the baselines along the gold
    after the regen prompt, Copy-as-Decode along the oracle program), interleaved per case and
    repeat after one warm-up run each. One row per run: forwards after the prefill, ids
    computed after it, decode seconds (after the prompt prefill) and gold ids per decode
    second. Timings: run it on a quiet machine only (the ``full`` profile)."""
    methods = timed_methods(model, tokenizer, policies, lookup_setting)
    rows = []
    for name, xs in inputs.items():
        for x in tqdm(xs, desc=f"timing {name}", disable=not progress):
            for m in methods:
                m.run(x)  # warm-up
            for rep in range(repeats):
                for m in methods:
                    run = m.run(x)
                    tr, gold = run.trace, len(x.target) - 1
                    rows.append(
                        dict(
                            corpus=name,
                            case=x.case.id,
                            method=m.name,
                            repeat=rep,
                            reproduced=run.reproduced,
                            forwards=tr.n_forwards - 1,
                            ids_computed=sum(f.n_tokens for f in tr.forwards[1:]),
                            decode_s=tr.decode_s,
                            gold_ids_per_s=gold / max(tr.decode_s, 1e-9),
                        )
                    )
    return pd.DataFrame(rows)


#: The command that records the chapter's timed run (a quiet machine; ``results/
#: kv_reuse.timing.json``, its records under ``results/records/kv_reuse.timing/``).
TIMING_COMMAND = "make record CHAPTER=06c_kv_reuse PROFILE=timing"


def load_timing_run(profile: str = "timing") -> dict | None:
    """The committed timed run (``kv_reuse.<profile>.json``), or ``None``."""
    return read_results_file(f"kv_reuse.{profile}.json")


def timing_run_table(record: dict) -> pd.DataFrame:
    """The timed run's medians per corpus and method (:func:`timing_table`, as committed)."""
    return pd.DataFrame(
        [
            dict(corpus=CORPUS_LABELS.get(c, c), method=m, **v)
            for c, methods in record["numbers"]["timing"].items()
            for m, v in methods.items()
        ]
    )


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


def plot_timing_run(record: dict, policy: str | None = None):
    """The timed run at a glance: per corpus (rows), each method's speed over the exact splice
    (median decode seconds, log axis), the reuse policies in shades of one colour with
    ``policy`` (the one the goals are judged at) ringed; lines at 1× (the exact splice) and at
    the 3× goal. Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib

    from cadlib.record.style import PALETTE

    table = timing_run_table(record)
    methods = list(dict.fromkeys(table.method))
    reuse = [m for m in methods if m.startswith("reuse ")]
    shades = plt.get_cmap("Purples")(
        [0.45 + 0.5 * k / max(1, len(reuse) - 1) for k in range(len(reuse))]
    )
    colour = {**PALETTE, **dict(zip(reuse, shades, strict=True))}
    corpora = list(dict.fromkeys(table.corpus))
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(corpora) + 1.6))
    for k, m in enumerate(methods):
        t = table[table.method == m]
        y = [corpora.index(c) + (k - len(methods) / 2) * 0.06 for c in t.corpus]
        ringed = m == f"reuse {policy}"
        ax.scatter(
            t.vs_exact_splice,
            y,
            s=28,
            color=colour.get(m, "black"),
            label=m,
            zorder=3,
            edgecolors="black" if ringed else "none",
            linewidths=1.5 if ringed else 0,
        )
    ax.axvline(1.0, color="grey", lw=1)
    ax.axvline(SPEED_GOALS[0][2], color="grey", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_yticks(range(len(corpora)), corpora)
    ax.invert_yaxis()
    ax.set_xlabel("speed over the exact splice (median decode s; dashed: the 3× goal)")
    ax.set_title(
        f"timed run, {record['params']['timing_cases']} case(s) per corpus"
        + (f"; ringed: reuse {policy}" if policy else ""),
        fontsize=10,
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


#: Issue 32's speed goals, declared before the timed run: (goal, corpora, target). Ratios are
#: of median decode seconds measured side by side in one run; the moonshot is gold ids per
#: decode second.
SPEED_GOALS = (
    ("≥ 3× the exact splice", ("probeedit", "realedits-flask"), 3.0),
    ("≥ 2× prompt lookup", TEST, 2.0),
    ("moonshot: ≥ 1,000 output ids/s", ("probeedit",), 1000.0),
)


def judged_policy(numbers: dict) -> str:
    """The policy the speed goals are judged at when no every-case verdict is given: the one
    the run's own threshold verdict accepted, else (none met it) the one with the highest
    held-out agreement, fewest recomputed ids on a tie."""
    if numbers["verdict"]["best"]:
        return numbers["verdict"]["best"]
    test = numbers["agreement"]["test"]
    return max(test, key=lambda p: (test[p]["rate"], -test[p]["recomputed"]))


def speed_policy(record: dict, accepted: str | None = None) -> tuple[str, str]:
    """The policy the speed goals are judged at, and why, in words: ``accepted`` (the policy
    that meets the agreement threshold pooled over every case of the held-out HumanEvalFix
    corpora, :func:`cadlib.chapters.kv_reuse.every_case.accepted_policy`) when the run timed it
    on every corpus, else :func:`judged_policy` of the run's own numbers."""
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


def speed_goals(record: dict, policy: str | None = None) -> pd.DataFrame:
    """Each speed goal per corpus of the timed run: the measured value at ``policy`` (default
    :func:`judged_policy`) and at ``none`` (reuses the most: the mode's ceiling), the target,
    and whether ``policy`` meets it."""
    numbers, rows = record["numbers"], []
    policy = policy or judged_policy(numbers)
    for goal, corpora, target in SPEED_GOALS:
        for corpus in corpora:
            methods = numbers["timing"].get(corpus)
            if not methods:
                continue

            def value(name, methods=methods, goal=goal):
                run = methods[f"reuse {name}"]
                if goal.startswith("moonshot"):
                    return run["gold_ids_per_s"]
                if "lookup" in goal:
                    return methods[METHODS[1]]["decode_s"] / run["decode_s"]
                return run["vs_exact_splice"]

            at = value(policy)
            rows.append(
                {
                    "goal": goal,
                    "corpus": CORPUS_LABELS.get(corpus, corpus),
                    f"at {policy}": at,
                    "at none": value("none"),
                    "target": target,
                    "met": bool(at >= target),
                }
            )
    return pd.DataFrame(rows)


def _goal_lines(table: pd.DataFrame, policy: str) -> list[str]:
    """One line per goal of :func:`speed_goals`: met or missed, on how many corpora, the values
    at ``policy`` and, when ``policy`` is not ``none``, at ``none`` (the ceiling)."""
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
