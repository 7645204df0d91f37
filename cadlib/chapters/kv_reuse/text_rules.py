"""The sentences on issue 51's selection rules, generated from their committed runs: the
development curves and the gated fallback (:mod:`cadlib.chapters.kv_reuse.run_rules`: the sample,
the declared choice, whether it reaches the threshold at most 30 % spent), the chosen setting's
one test-corpus run (:mod:`~cadlib.chapters.kv_reuse.run_rules_test`) and its timing
(:mod:`~cadlib.chapters.kv_reuse.run_rules_timing`)."""

from __future__ import annotations

import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.record.provenance import load_caption

from .run_rules import curve_table
from .run_rules_test import corpus_table
from .text_policy_search import setting_sentence

__all__ = [
    "sample_clause",
    "rules_markdown",
    "gated_markdown",
    "test_markdown",
    "timing_markdown",
]


def sample_clause(report: dict, split: str = "development") -> str:
    """How many ``split`` cases per corpus the run holds (and whether it ran to its end)."""
    rows = pd.DataFrame(report["rows"]).drop_duplicates(["corpus", "case"])
    counts = rows.groupby("corpus", sort=False).size()
    each = ", ".join(f"{CORPUS_LABELS.get(c, c)} {n}" for c, n in counts.items())
    cut = "" if report.get("complete") else " (cut short of its declared sample)"
    return f"{len(rows)} {split} cases ({each}){cut}"


def rules_markdown(report: dict) -> str:
    """Per rule family its best setting within 30 % recomputed, then the declared choice and
    its verdict against the threshold, read on the cases that reuse anything."""
    t = curve_table(report["rows"], report["layers"])
    thr, cap = report["protocol"]["threshold"], report["protocol"]["max_recompute"]
    zero = t[t.policy == "none"].iloc[0]
    best = []
    for name in dict.fromkeys(t.family[t.family != "none"]):
        f = t[(t.family == name) & (t.recomputed <= cap) & (t.cases > 0)]
        if not f.empty:
            r = f.sort_values(["rate", "recomputed"], ascending=[False, True]).iloc[0]
            best.append(f"{name} `{r.policy}` {r.rate:.2%} at {r.recomputed:.0%}")
    within = "; ".join(best) if best else "none of the rules stays within it"
    chosen = report["chosen"]
    if chosen["policy"] is None:
        verdict = f"no setting reuses anything at most {cap:.0%} recomputed"
    elif chosen["met"]:
        verdict = (
            f"the declared choice is `{chosen['policy']}`: it **meets** the {thr:.1%} "
            f"threshold there, recomputing {chosen['recomputed']:.0%}"
        )
    else:
        verdict = (
            f"no setting **reaches** the {thr:.1%} threshold there, so the declared choice is "
            f"the most agreeing within {cap:.0%}: `{chosen['policy']}`, "
            f"{chosen['rate']:.2%} at {chosen['recomputed']:.0%}"
        )
    return (
        f"On {sample_clause(report)}, `none` recomputes {zero.recomputed:.0%} of the copied ids "
        f"(unmatched ids and each copy's last) and agrees on {zero.rate:.2%} of the decisions "
        f"of the cases that reuse anything. Best per rule at most {cap:.0%} recomputed: "
        f"{within}. {verdict[0].upper()}{verdict[1:]}. Nothing here is timed. "
        f"{load_caption(report)} {setting_sentence(report)}"
    )


def gated_markdown(report: dict) -> str:
    """The margin-gated run: its sample, each gated setting's agreement on the cases that reuse
    anything and what it spends (recomputed at the copy plus fed again by its fallbacks, per
    copied id), then the declared choice against the threshold and the recompute budget."""
    t = curve_table(report["rows"], report["layers"])
    thr, cap = report["protocol"]["threshold"], report["protocol"]["max_recompute"]
    gated = t[t.family == "gated"]
    each = "; ".join(
        f"`{r.policy.split(',')[-1]}` {r.rate:.2%} spending {r.spent:.0%}"
        for r in gated.itertuples()
    )
    chosen = report["chosen"]
    row = t[t.policy == chosen["policy"]]
    if row.empty:
        verdict = f"No setting reuses anything at most {cap:.0%} recomputed."
    else:
        r = row.iloc[0]
        reached = "**meets**" if chosen["met"] else "misses"
        budget = "within" if r.spent <= cap else "**over**"
        verdict = (
            f"The declared choice, `{r.policy}`, {reached} the {thr:.1%} threshold there and "
            f"spends {r.spent:.0%} of the copied ids, {budget} the {cap:.0%} budget."
        )
    return f"On {sample_clause(report)}, with the gate: {each}. {verdict}"


def test_markdown(report: dict) -> str:
    """The chosen rule's one test-corpus run: its agreement on the cases that reuse anything
    (pooled, lower bound, flipped cases, the corpora below the threshold), what it spends, and
    the goal's verdict with the part that fails; the rule without its gate beside it."""
    v, p = report["verdict"], report["protocol"]
    thr, cap = p["threshold"], p["max_recompute"]
    t = corpus_table(report["rows"], report["layers"])
    alone = t[(t.corpus == "all") & (t.policy == p["policies"][1])].iloc[0]
    if v["cases"] == 0:
        agreement = f"`{v['policy']}` reuses no prompt entry on any case"
    else:
        below = ", ".join(CORPUS_LABELS.get(c, c) for c in v["below"]) or "none"
        agreement = (
            f"`{v['policy']}` agrees on {v['rate']:.2%} of the decisions of the {v['cases']} "
            f"cases that reuse anything (lower bound {v['lo']:.2%}; {v['flipped']} cases with "
            f"a flipped decision; corpora below {thr:.1%}: {below})"
        )
    if v["met"]:
        verdict = f"the goal (at least {thr:.1%} in every corpus within {cap:.0%}) is **met**"
    else:
        missed = [
            *([] if v["agrees"] else [f"agreement below {thr:.1%}"]),
            *([] if v["within"] else [f"spending over {cap:.0%}"]),
        ]
        verdict = f"the goal is **missed**: {' and '.join(missed)}"
    return (
        f"Once on {sample_clause(report, 'test')}, nothing timed: {agreement}, spending "
        f"{v['spent']:.0%} of the copied ids; {verdict}. Without its gate, "
        f"`{alone.policy}` agrees on {alone.rate:.2%} ({alone.flipped} of {alone.cases} "
        f"reusing cases flipped), spending {alone.spent:.0%}. {load_caption(report)}"
    )


def timing_markdown(report: dict) -> str:
    """The chosen rule on the clock: per real-edit test corpus its median case's speedup over
    the exact splice and over autoregressive decoding against the goal, and the moonshot."""
    v, p = report["verdict"], report["protocol"]
    each = "; ".join(
        f"{CORPUS_LABELS.get(c, c)} ({r['cases']} cases) {r['vs_exact']:.2f}× the exact splice "
        f"({'meets' if r['met'] else '**misses**'} {p['goal']:g}×), {r['vs_ar']:.2f}× "
        "autoregressive"
        for c, r in v["per"].items()
    )
    moon = v["moonshot_ids_per_s"]
    moonshot = (
        "no ProbeEdit case was timed"
        if moon is None
        else f"ProbeEdit {moon:,.0f} gold ids per decode second "
        f"({'reaches' if v['moonshot_met'] else 'short of'} the {p['moonshot']:,.0f} moonshot)"
    )
    return (
        f"Median case, decode seconds after the prefill, `{v['policy']}`: {each}; {moonshot}. "
        f"{load_caption(report)}"
    )
