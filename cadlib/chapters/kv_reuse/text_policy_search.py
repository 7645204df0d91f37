"""The sentences on the committed policy search (:mod:`cadlib.chapters.kv_reuse.run_policy_search`):
what it chose and how the choice fares on fresh held-out cases, read where it reuses prompt
entries; and the clauses the later runs' sentences share."""

from __future__ import annotations

from cadlib.record.results import machine_label

from .run import agreement_table
from .run_policy_search import _frame, judged

__all__ = [
    "setting_sentence",
    "untimed_caption",
    "reuse_clause",
    "verdict_clause",
    "search_markdown",
    "answer_sentence",
]


def setting_sentence(report: dict) -> str:
    """What produced a run's numbers, ending with the machine (for nbval's sanitizer): the
    model and tokenizer, the engine and threads, how decisions were made, and that the paper
    has no such figure."""
    return (
        f"Setting: {report['protocol']['model']} with its own tokenizer, fp32 on "
        "transformers, one torch thread, decisions teacher-forced along the oracle program; "
        "no paper figure (beyond the paper); "
        f"{machine_label(report['hardware'])}."
    )


def untimed_caption(report: dict) -> str:
    """The closing caption of an untimed run's paragraph, a line of its own in italics: that
    nothing was timed and :func:`setting_sentence` (the load it ran under stays in its file:
    it bears on timings only)."""
    return f"\n\n*Nothing here is timed. {setting_sentence(report)}*"


def reuse_clause(r, per=None, where: str = "corpus") -> str:
    """Where a policy reuses prompt entries (its :func:`.run.reusing_table` row ``r``, and
    ``per`` corpus): what it recomputes, in how many cases it reuses, its agreement there with
    the interval and the range per ``where``, and how many of those cases have a flipped
    decision."""
    spread = "" if per is None else f"; per {where} {per.rate.min():.2%}–{per.rate.max():.2%}"
    return (
        f"recomputes {r.recomputed:.0%} of the copied ids and reuses prompt entries in "
        f"{int(r.cases)} of {int(r.cases + r.idle)} cases. There it agrees with the exact "
        f"splice on {r.rate:.2%} of {int(r.decisions)} decisions (95% interval {r.lo:.2%}–"
        f"{r.hi:.2%}{spread}), and {int(r.flipped)} of the {int(r.cases)} cases have a flipped "
        "decision"
    )


def verdict_clause(v: dict, thr: float, where: str = "corpus") -> str:
    """Met or not (``v`` of :func:`.run.judge`), and over several corpora (``where``) in each:
    a miss names those below ``thr``, or says none reaches it."""
    name, many = f"the {thr:.1%} threshold", len(v["per"]) > 1
    if v["meets"]:  # "every" only where each was tested: a corpus may reuse no id at all
        return f"it meets {name}" + (
            f" in every {where}" * bool(many and v["per"].rate.notna().all())
        )
    below = v["below"]
    if many and len(below) == len(v["per"]):
        return f"it **does not meet** {name} in any {where}"
    return f"it **does not meet** {name}" + (
        f" (below it in {', '.join(below)})" if many and below else ""
    )


def search_markdown(report: dict) -> str:
    """The chosen policy and why the declared rule chose it, then its development and fresh
    held-out agreement where it reuses prompt entries against the threshold, generated from
    the committed run."""
    chosen, thr = report["chosen"], report["protocol"]["threshold"]
    rule = agreement_table(_frame(report["dev"]), by=("policy",))  # what the rule read
    how = (
        "the least recomputed among those meeting the threshold there"
        if (rule[rule.policy != "all"].rate >= thr).any()
        else f"none met the {thr:.1%} threshold there, so the highest development agreement, "
        "pooled over every case"
    )
    d, test = judged(report, "dev")["pooled"], judged(report)
    r = test["pooled"]
    return (
        f"Of {len(report['protocol']['grid'])} recompute policies tried on "
        f"{int(d.cases + d.idle)} development cases, the declared rule chose `{chosen}` "
        f"({how}); it reuses prompt entries in {int(d.cases)} of them, agreeing there on "
        f"{d.rate:.2%} of {int(d.decisions)} decisions. On fresh held-out cases it "
        f"{reuse_clause(r, test['per'])}: {verdict_clause(test, thr)}."
        + (
            f" The other {int(r.idle)} recompute every copied id and agree by construction."
            if r.idle
            else ""
        )
        + untimed_caption(report)
    )


def answer_sentence(report: dict) -> str:
    """One sentence for the chapter's **Answer.**: the dev-chosen policy's fresh held-out
    agreement where it reuses prompt entries, and whether it meets the threshold."""
    v = judged(report)
    r = v["pooled"]
    return (
        f"`{report['chosen']}`, chosen on development cases from a wider grid (recomputing "
        f"{r.recomputed:.0%} of the copied ids), reuses prompt entries in {int(r.cases)} of "
        f"{int(r.cases + r.idle)} fresh held-out cases and agrees there on {r.rate:.2%} of "
        f"{int(r.decisions)} decisions: {'it meets' if v['meets'] else 'short of'} the threshold."
    )
