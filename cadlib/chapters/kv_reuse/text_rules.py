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
from .run_rules_timing import case_medians
from .text_policy_search import untimed_caption

__all__ = [
    "sample_clause",
    "rules_markdown",
    "gated_markdown",
    "test_markdown",
    "timing_markdown",
    "answer_sentence",
    "timing_answer_sentence",
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
        f"{within}. {verdict[0].upper()}{verdict[1:]}." + untimed_caption(report)
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
        f"Once on {sample_clause(report, 'test')}: {agreement}, spending "
        f"{_spending(report, per_corpus=True)}; {verdict}. {_ungated(report)}"
        + untimed_caption(report)
    )


def _pooled(report: dict, policy: str) -> pd.Series:
    t = corpus_table(report["rows"], report["layers"])
    return t[(t.corpus == "all") & (t.policy == policy)].iloc[0]


def _spending(report: dict, per_corpus: bool = False) -> str:
    """What the judged rule spends of the copied ids: recomputed at the copy, plus what its
    fallbacks feed again (the part a gate adds); with ``per_corpus``, its lowest and highest
    corpus too."""
    policy = report["verdict"]["policy"]
    row = _pooled(report, policy)
    parts = []
    if row.get("fallback", 0.0):
        parts.append(
            f"{row.recomputed:.0%} recomputed at the copy, {row.fallback:.0%} fed again by "
            "fallbacks"
        )
    t = corpus_table(report["rows"], report["layers"])
    each = t[(t.policy == policy) & ~t.corpus.isin(("all", "heval-fix"))].sort_values("spent")
    if per_corpus and len(each) > 1:
        low, high = each.iloc[0], each.iloc[-1]
        parts.append(
            f"per corpus from {low.spent:.0%} on {CORPUS_LABELS.get(low.corpus, low.corpus)} "
            f"to {high.spent:.0%} on {CORPUS_LABELS.get(high.corpus, high.corpus)}"
        )
    detail = f" ({'; '.join(parts)})" if parts else ""
    return f"{row.spent:.0%} of the copied ids{detail}"


def _ungated(report: dict) -> str:
    """The same rule without its gate (the run's second policy), read on its reusing cases."""
    alone = _pooled(report, report["protocol"]["policies"][1])
    if not alone.cases or pd.isna(alone.get("rate")):
        return f"Without its gate, `{alone.policy}` reuses no prompt entry."
    return (
        f"Without its gate, `{alone.policy}` agrees on {alone.rate:.2%} ({alone.flipped} of "
        f"{alone.cases} reusing cases flipped), spending {alone.spent:.0%}."
    )


def answer_sentence(report: dict) -> str:
    """The test run in the chapter's Answer: the goal's verdict with what carries it (the
    agreement, the spending and its fallback part), and the ungated rule's flips beside it."""
    v, p = report["verdict"], report["protocol"]
    if v["cases"] == 0:
        return f"On the test corpora `{v['policy']}` reuses no prompt entry."
    goal = "and meets its goal" if v["met"] else "but misses its goal"
    why = [] if v["agrees"] else [f"agreement {v['rate']:.2%}"]
    why += [] if v["within"] else [f"it spends {_spending(report)}"]
    return (
        f"Chosen on development cases and run once on {v['cases']} test cases that reuse "
        f"prompt entries, `{v['policy']}` agrees on {v['rate']:.2%} of decisions "
        f"({v['flipped']} cases flipped) {goal} (at least {p['threshold']:.1%} within "
        f"{p['max_recompute']:.0%} spent)"
        + (f": {' and '.join(why)}" if why else "")
        + f". {_ungated(report)}"
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
    cut = "" if report.get("complete", True) else " (cut short of its declared sample)"
    return (
        f"Median case{cut}, decode seconds after the prefill, `{v['policy']}`: {each}; {moonshot}. "
        f"{load_caption(report)}"
    )


def timing_answer_sentence(report: dict) -> str:
    """The timed run in the chapter's Answer: per real-edit test corpus the median case's
    speedup over the exact splice against the goal, and on how many timed cases the setting is
    slower than the exact splice (where it loses)."""
    v, p = report["verdict"], report["protocol"]
    t = case_medians(report["rows"])
    real = t[t.corpus.isin(list(v["per"]))]
    slower = int((real[f"reuse {v['policy']}"] > real["Copy-as-Decode"]).sum())
    each = ", ".join(
        f"{r['vs_exact']:.2f}× on {CORPUS_LABELS.get(c, c)}" for c, r in v["per"].items()
    )
    return (
        f"On the clock (long real-edit test cases, a quiet machine), its median case decodes "
        f"{each} as fast as the exact splice: it {'meets' if v['met'] else '**misses**'} the "
        f"{p['goal']:g}× goal, and is slower than the exact splice on {slower} of {len(real)} "
        "timed cases."
    )
