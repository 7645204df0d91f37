"""The sentences on the committed policy search (:mod:`cadlib.chapters.kv_reuse.run_policy_search`):
what it chose and how the choice fares on fresh held-out cases."""

from __future__ import annotations

from cadlib.record.provenance import load_caption
from cadlib.record.results import machine_label

from .run_policy_search import per_corpus, reusing, search_table

__all__ = [
    "setting_sentence",
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


def search_markdown(report: dict) -> str:
    """The chosen policy, its development and held-out agreement against the threshold, and
    the per-corpus range, generated from the committed run."""
    t, chosen, thr = search_table(report), report["chosen"], report["protocol"]["threshold"]
    dev, test = (t[(t.split == s) & (t.policy == chosen)].iloc[0] for s in ("dev", "test"))
    met_dev = (t[t.split == "dev"].rate >= thr).any()
    how = (
        "the one that recomputes least among those meeting it on development"
        if met_dev
        else f"no policy of the grid met the {thr:.1%} threshold on development, so the one with "
        "the highest development agreement"
    )
    corpora = per_corpus(report)
    c = corpora[corpora.policy == chosen]
    verdict = "meets" if test.rate >= thr else "**does not meet**"
    idle, some = reusing(report, chosen)
    stratum = (
        ""
        if not idle
        else (
            f" {idle} of those cases reuse no id under `{chosen}` (short copies: every id is "
            "recomputed), so they agree by construction"
            + (
                "."
                if some is None
                else f"; on the {int(some.cases)} that reuse some, "
                f"{some.rate:.1%} of {int(some.decisions)} decisions agree."
            )
        )
    )
    return (
        f"Of {len(report['protocol']['grid'])} recompute policies tried on "
        f"{int(dev.cases)} development cases, `{chosen}` was chosen ({how}): "
        f"{dev.rate:.1%} of {int(dev.decisions)} development decisions agree with the exact "
        f"splice, recomputing {dev.recomputed:.0%} of the copied ids. On {int(test.cases)} "
        f"fresh held-out cases it agrees on {test.rate:.1%} of {int(test.decisions)} "
        f"decisions (95% interval {test.lo:.1%}–{test.hi:.1%}; per corpus "
        f"{c.rate.min():.1%}–{c.rate.max():.1%}), recomputing {test.recomputed:.0%}: it "
        f"{verdict} the {thr:.1%} threshold.{stratum} Nothing here is timed. "
        f"{load_caption(report)} {setting_sentence(report)}"
    )


def answer_sentence(report: dict) -> str:
    """One sentence for the chapter's **Answer.**: the dev-chosen policy's fresh held-out
    agreement (and on the cases where it reused anything) and whether it meets the
    threshold."""
    t, chosen, thr = search_table(report), report["chosen"], report["protocol"]["threshold"]
    test = t[(t.split == "test") & (t.policy == chosen)].iloc[0]
    verdict = "meets it" if test.rate >= thr else "still short of it"
    idle, some = reusing(report, chosen)
    stratum = (
        ""
        if not idle or some is None
        else f" ({some.rate:.1%} on the {int(some.cases)} cases where it reused any id)"
    )
    return (
        f"A policy chosen on development cases from a wider grid, `{chosen}` (recomputing "
        f"{test.recomputed:.0%} of the copied ids), agrees on {test.rate:.1%} of "
        f"{int(test.decisions)} decisions of {int(test.cases)} fresh held-out cases"
        f"{stratum}: {verdict}."
    )
