"""The sentences on the committed every-case runs (:mod:`cadlib.chapters.kv_reuse.run_every_case`):
the chosen policy over every case of the held-out HumanEvalFix corpora."""

from __future__ import annotations

from cadlib.corpora import CORPUS_LABELS
from cadlib.record.provenance import load_caption

from .run_every_case import CORPORA, _verdict
from .text_policy_search import setting_sentence

__all__ = [
    "every_markdown",
    "answer_sentence",
]


def _load_sentence(runs: list[dict]) -> str:
    """The load the runs were recorded under, in one sentence (a run's own caption when there
    is one run or one lacks provenance)."""
    if len(runs) == 1 or not all(x.get("provenance") for x in runs):
        return " ".join(dict.fromkeys(load_caption(x) for x in runs))
    means = [x["provenance"]["load"]["other_cores"]["mean"] for x in runs]
    busy = sum(bool(x["provenance"]["busy"]) for x in runs)
    return (
        f"Other processes kept {min(means):.2f}–{max(means):.2f} of a core busy on average "
        f"while the {len(runs)} runs recorded ({busy} of them on a busy machine)."
    )


def every_markdown(runs: list[dict]) -> str:
    """The verdict over every case of the corpora run: the chosen policy's pooled agreement
    against the threshold, the per-corpus range and the corpora below it, the cases that reuse
    nothing (which agree by construction) and the agreement on the others, ``none`` beside it;
    the corpora not yet recorded named. Rates near the threshold get two decimals, so that a
    miss never reads as the threshold itself."""
    v = _verdict(runs)
    r, some, thr = v["r"], v["some"], v["thr"]
    labels = ", ".join(CORPUS_LABELS.get(x["protocol"]["corpus"], "?") for x in runs)
    missing = [
        CORPUS_LABELS.get(c, c) for c in CORPORA if c not in {x["protocol"]["corpus"] for x in runs}
    ]
    if not v["meets"]:
        verdict = f"it **does not meet** the {thr:.1%} threshold"
    else:
        verdict = f"it meets the {thr:.1%} threshold pooled"
        if v["below"]:
            verdict += f", but not on {', '.join(v['below'])}"
    if v["carried"]:
        verdict += (
            f". That is carried by the {v['idle']} cases that reuse nothing (short "
            "copies: every id recomputed, so they agree by construction): on the "
            f"{int(some.cases)} that reuse any id it agrees on {some.rate:.2%} of "
            f"{int(some.decisions)} decisions, below the threshold"
        )
    elif some is not None:
        verdict += (
            f" ({v['idle']} cases reuse nothing; on the {int(some.cases)} that reuse "
            f"any id, {some.rate:.2%} of {int(some.decisions)} decisions)"
        )
    return (
        f"On every case of {labels} ({int(r.cases)} cases, {int(r.decisions)} decisions), "
        f"`{v['chosen']}` agrees with the exact splice on {r.rate:.2%} (95% interval "
        f"{r.lo:.2%}–{r.hi:.2%}; per corpus {v['per'].rate.min():.2%}–"
        f"{v['per'].rate.max():.2%}), recomputing {r.recomputed:.0%} of the copied ids: "
        f"{verdict}. `none` agrees on {v['base'].rate:.1%}, recomputing "
        f"{v['base'].recomputed:.0%}."
        + (f" Not yet recorded: {', '.join(missing)}." if missing else "")
        + f" Nothing here is timed. {_load_sentence(runs)} {setting_sentence(runs[0])}"
    )


def answer_sentence(runs: list[dict]) -> str:
    """One sentence for the chapter's **Answer.**: the chosen policy over every case of the
    corpora recorded, against the threshold, and on the cases where it reuses anything when
    those carry the verdict."""
    v = _verdict(runs)
    r, some = v["r"], v["some"]
    n = len(runs)
    head = (
        f"On every case of {n} held-out HumanEvalFix {'corpus' if n == 1 else 'corpora'} "
        f"({int(r.cases)} cases) it agrees on {r.rate:.2%}, recomputing "
        f"{r.recomputed:.0%} of the copied ids"
    )
    if not v["meets"]:
        return f"{head}: still short of the threshold."
    if v["carried"]:
        return (
            f"{head}: at the threshold pooled, but only because {v['idle']} of those cases "
            f"reuse nothing; where it reuses any id, {some.rate:.2%}."
        )
    return f"{head}: meeting the threshold."
