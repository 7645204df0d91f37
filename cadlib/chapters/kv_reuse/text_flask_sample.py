"""The sentences on the committed Flask sample (:mod:`cadlib.chapters.kv_reuse.run_flask_sample`):
the chosen policy on fresh, long RealEdits-Flask edits."""

from __future__ import annotations

from statistics import median

from cadlib.corpora import CORPUS_LABELS
from cadlib.record.provenance import load_caption

from .profiles import PROFILES
from .run_every_case import _verdict
from .run_flask_sample import CORPUS
from .run_policy_search import TEST_CASES
from .text_policy_search import setting_sentence

__all__ = [
    "sample_markdown",
    "answer_sentence",
]


def sample_markdown(run: dict) -> str:
    """The verdict on the fresh Flask sample: its prompt lengths, the chosen policy's agreement
    with its interval against the threshold, the cases that reuse nothing and the agreement
    on the others, ``none`` beside it."""
    v = _verdict([run])
    r, some, thr = v["r"], v["some"], v["thr"]
    prompts = sorted(run["prompt_ids"])
    cap = max(PROFILES["agreement"]["max_prompt"][CORPUS], TEST_CASES[CORPUS][2])
    longer = (
        f": all longer than the {cap:,}-id cap of the Flask cases above" if prompts[0] > cap else ""
    )
    verdict = ("meets" if v["meets"] else "**does not meet**") + f" the {thr:.1%} threshold"
    stratum = (
        f" {v['idle']} cases reuse nothing; on the {int(some.cases)} that reuse any id, "
        f"{some.rate:.2%} of {int(some.decisions)} decisions agree."
        if some is not None and v["idle"]
        else " Every case reuses some id."
    )
    return (
        f"On {int(r.cases)} fresh {CORPUS_LABELS[CORPUS]} cases (real commits; prompts of "
        f"{prompts[0]:,}–{prompts[-1]:,} ids, median {median(prompts):,.0f}{longer}), "
        f"`{v['chosen']}` agrees with the exact splice "
        f"on {r.rate:.2%} of {int(r.decisions)} decisions (95% interval {r.lo:.2%}–"
        f"{r.hi:.2%}), recomputing {r.recomputed:.0%} of the copied ids: it {verdict}."
        f"{stratum} `none` agrees on {v['base'].rate:.1%}, recomputing "
        f"{v['base'].recomputed:.0%}. Nothing here is timed. {load_caption(run)} "
        f"{setting_sentence(run)}"
    )


def answer_sentence(run: dict) -> str:
    """One sentence for the chapter's **Answer.**: the chosen policy on the fresh Flask
    sample, against the threshold."""
    v = _verdict([run])
    r = v["r"]
    return (
        f"On {int(r.cases)} fresh Flask edits (prompts of median "
        f"{median(run['prompt_ids']):,.0f} ids) it agrees on {r.rate:.2%}, "
        f"recomputing {r.recomputed:.0%}: {'meeting' if v['meets'] else 'short of'} the "
        f"threshold."
    )
