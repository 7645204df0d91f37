"""Chapter 6c's generated prose about its own run: the opening's answer, the findings the
conclusion cites, the evidence note, where decisions flip and the free runs' identity (the
committed runs' sentences: :mod:`.text_speed`, :mod:`.text_policy_search`,
:mod:`.text_every_case`, :mod:`.text_flask_sample`)."""

from __future__ import annotations

import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.record.replay import replayed_run_note

from .profiles import EVIDENCE_COMMAND, EVIDENCE_PROFILE

__all__ = [
    "answer",
    "run_summary",
    "evidence_note",
    "flip_markdown",
    "identity_markdown",
]


def _lead(numbers: dict, checks: list[tuple[str, bool]]) -> str:
    """The Answer's first sentence: the policies that meet the threshold in every held-out
    check of them (the agreement run's rates, then ``checks``: ``(policy, met)`` of the later
    runs, each read where the policy reuses prompt entries), or that none does."""
    thr = numbers["verdict"]["threshold"]
    met: dict[str, bool] = {}
    rates = numbers["agreement"].get("test", {})
    for policy, ok in [*((p, r["rate"] >= thr) for p, r in rates.items()), *checks]:
        if policy != "all":  # the control reuses nothing
            met[policy] = met.get(policy, True) and ok
    passed = [f"`{p}`" for p, ok in met.items() if ok]
    if not passed:
        return (
            f"No recompute policy meets the {thr:.1%} agreement threshold declared before "
            "measuring on the held-out cases that reuse prompt entries, so the reuse mode "
            "stays opt-in."
        )
    return (
        f"{', '.join(passed)} {'meets' if len(passed) == 1 else 'meet'} the {thr:.1%} "
        "agreement threshold declared before measuring on every held-out check, where it "
        "reuses prompt entries."
    )


def answer(
    numbers: dict,
    search=None,
    every=(),
    flask=None,
    timed=None,
    rules_test=None,
    rules_timing=None,
) -> str:
    """The chapter's question answered (the opening's **Answer.**): first whether any policy
    meets the threshold where it reuses prompt entries (:func:`_lead`), then the reusable
    share of the spliced ids (policy ``none``) as the range over the corpora per tokenizer (a
    pooled share would be carried by the corpora with the longest copies), the agreement
    run's held-out rates (``numbers`` of :func:`cadlib.chapters.kv_reuse.run.numbers`), and
    one sentence per committed run given: the policy ``search``, the ``every``-case runs, the
    ``flask`` sample and the ``timed`` run's speed goals; the selection rule's ``rules_test``
    run (:mod:`.run_rules_test`) right after the lead, its goal's spending half beside it, and
    its ``rules_timing`` run (:mod:`.run_rules_timing`) after that."""
    from . import text_every_case, text_flask_sample, text_policy_search, text_rules, text_speed
    from .run_every_case import _verdict, accepted_policy
    from .run_policy_search import judged

    checks, later = [], []
    if search:
        checks.append((search["chosen"], judged(search)["meets"]))
        later.append(text_policy_search.answer_sentence(search))
    for runs, say in ((every, text_every_case), ([flask] if flask else [], text_flask_sample)):
        if runs:
            checks.append((runs[0]["chosen"], _verdict(runs)["meets"]))
            later.append(say.answer_sentence(runs if say is text_every_case else runs[0]))
    if timed:
        chosen = search["chosen"] if search else None
        later.append(text_speed.speed_answer(timed, chosen, accepted_policy(list(every))))
    rule = []
    if rules_test:
        checks.append((rules_test["verdict"]["policy"], rules_test["verdict"]["agrees"]))
        rule.append(text_rules.answer_sentence(rules_test))
    if rules_timing:
        rule.append(text_rules.timing_answer_sentence(rules_timing))
    shares = []
    for tok, corpora in numbers["shares"].items():
        each = [
            c["none"]["reused"] / c["none"]["splice"]
            for c in corpora.values()
            if "none" in c and c["none"]["splice"]
        ]
        if each:
            shares.append(f"{min(each):.1%}–{max(each):.1%} with {tok}")
    out = [
        _lead(numbers, checks),
        *rule,
        f"Most of each copy is reusable: per corpus, the prompt's entries can stand in for "
        f"{' and '.join(shares)} of the spliced ids.",
    ]
    test = numbers["agreement"].get("test", {})
    if test:
        rates = ", ".join(f"`{p}` {r['rate']:.1%}" for p, r in test.items())
        cases = next(iter(test.values()))["cases"]
        out.append(
            f"On {cases} held-out cases the decisions that follow agree with the exact "
            f"splice's at {rates}."
        )
    return " ".join([*out, *later])


def run_summary(shares: pd.DataFrame, agreement: pd.DataFrame, verdict: dict) -> str:
    """Markdown of the chapter's findings (what the conclusion cites: computed, never typed)."""
    none = shares[shares.policy == "none"]
    share = "; ".join(
        f"{CORPUS_LABELS.get(r.corpus, r.corpus)} ({r.tokenizer}) {r.share_reused:.1%}"
        for r in none.itertuples()
    )
    test = agreement[agreement.split == "test"].set_index("policy")
    parts = [f"**Reusable share** of the spliced ids (policy `none`): {share}."]
    if len(test):
        rates = ", ".join(
            f"`{p}` {r.rate:.1%} (n = {r.decisions}, {r.recomputed:.0%} of copied ids recomputed)"
            for p, r in test.iterrows()
        )
        parts.append(f"**Held-out agreement** with the exact splice: {rates}.")
    best = verdict["best"]
    thr = f"{verdict['threshold']:.1%}"
    if best:
        parts.append(
            f"The declared threshold ({thr}) is met on the held-out corpora by "
            f"`{best}`, the policy that recomputes least among those that meet it."
        )
    else:
        control = (
            ""
            if "all" not in verdict["rates"]
            else f" (the control `all`, which reuses nothing: {verdict['rates']['all']:.1%}); "
            "the reuse mode stays opt-in, never the default"
        )
        parts.append(
            f"No policy meets the declared threshold ({thr}) on the held-out corpora{control}."
        )
    return "\n\n".join(parts)


def evidence_note() -> str:
    """The sentence chapter 6c shows when it is its evidence run
    (:func:`cadlib.record.replay.replayed_run_note`)."""
    return replayed_run_note("kv_reuse", EVIDENCE_PROFILE, EVIDENCE_COMMAND)


def flip_markdown(table: pd.DataFrame, policy: str, min_decisions: int = 10) -> str:
    """For ``policy``: its held-out flips by kind, and the kind and distance bucket where they
    are densest (the highest flip rate among buckets of at least ``min_decisions``
    decisions) against the rate everywhere else (generated from ``table``)."""
    t = table[table.policy == policy]
    if t.empty or t.flips.sum() == 0:
        return f"Under `{policy}` no held-out decision flipped."
    by_kind = t.groupby("kind", observed=True).flips.sum()
    kinds = ", ".join(f"{int(n)} at `{k}` decisions" for k, n in by_kind.items() if n)
    big = t[t.decisions >= min_decisions]
    top = (big if not big.empty else t).sort_values("flip_rate", kind="stable").iloc[-1]
    rest = t.drop(index=top.name)
    other = rest.flips.sum() / max(1, rest.decisions.sum())
    return (
        f"Under `{policy}`, {int(t.flips.sum())} of {int(t.decisions.sum())} held-out "
        f"decisions flipped ({kinds}). They are densest at `{top.kind}` decisions "
        f"{top.after_copy} after a copy: {top.flip_rate:.1%} of {int(top.decisions)} flipped "
        f"there, against {other:.1%} of {int(rest.decisions.sum())} elsewhere."
    )


def identity_markdown(table: pd.DataFrame, tokens: int) -> str:
    """One sentence on the held-out free runs (``test`` split of
    :func:`cadlib.chapters.kv_reuse.run.identity_table`): per
    policy, how many of the runs that reused prompt entries wrote the exact splice's
    transcript."""
    test = table[table.split == "test"]
    if not len(test):
        return ""
    per = "; ".join(
        f"`{r.policy}` {r.identical_reused} of {r.reused_any}"
        + (f" (and {r.runs - r.reused_any} that reused nothing)" if r.runs > r.reused_any else "")
        for r in test.itertuples()
    )
    return (
        f"**Free runs** (the untrained model's own decisions, {tokens} at most), held-out "
        f"corpora: runs that reused prompt entries and wrote the exact splice's transcript "
        f"id for id: {per}."
    )
