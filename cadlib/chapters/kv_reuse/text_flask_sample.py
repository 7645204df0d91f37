"""The sentences on the committed Flask sample (:mod:`cadlib.chapters.kv_reuse.run_flask_sample`):
the chosen policy on fresh, long RealEdits-Flask edits."""

from __future__ import annotations

from statistics import median

from cadlib.corpora import CORPUS_LABELS

from .profiles import PROFILES
from .run_every_case import _verdict
from .run_flask_sample import CORPUS
from .run_policy_search import TEST_CASES
from .text_policy_search import reuse_clause, untimed_caption, verdict_clause

__all__ = [
    "sample_markdown",
    "answer_sentence",
]


def sample_markdown(run: dict) -> str:
    """The verdict on the fresh Flask sample: its prompt lengths, then the chosen policy where
    it reuses prompt entries (agreement with its interval, flipped cases) against the
    threshold, the cases that reuse nothing counted apart, ``none`` beside it."""
    v = _verdict([run])
    r, thr = v["r"], v["thr"]
    prompts = sorted(run["prompt_ids"])
    cap = max(PROFILES["agreement"]["max_prompt"][CORPUS], TEST_CASES[CORPUS][2])
    longer = (
        f": all longer than the {cap:,}-id cap of the Flask cases above" if prompts[0] > cap else ""
    )
    return (
        f"On {int(r.cases + r.idle)} fresh {CORPUS_LABELS[CORPUS]} cases (real commits; prompts "
        f"of {prompts[0]:,}–{prompts[-1]:,} ids, median {median(prompts):,.0f}{longer}), "
        f"`{v['chosen']}` {reuse_clause(r)}: {verdict_clause(v, thr)}."
        + (
            f" The other {int(r.idle)} recompute every copied id and agree by construction."
            if r.idle
            else ""
        )
        + f" `none` (recomputing {v['base'].recomputed:.0%}) agrees on {v['base'].rate:.1%}."
        + untimed_caption(run)
    )


def answer_sentence(run: dict) -> str:
    """One sentence for the chapter's **Answer.**: the chosen policy on the fresh Flask
    sample where it reuses prompt entries, against the threshold, with its flipped cases."""
    v = _verdict([run])
    r = v["r"]
    return (
        f"On {int(r.cases + r.idle)} fresh Flask edits (prompts of median "
        f"{median(run['prompt_ids']):,.0f} ids) it agrees on {r.rate:.2%} where it reuses "
        f"prompt entries ({int(r.cases)} cases, {int(r.flipped)} with a flipped decision): "
        f"{'meeting' if v['meets'] else 'short of'} the threshold."
    )
