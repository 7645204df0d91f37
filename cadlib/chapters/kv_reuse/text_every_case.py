"""The sentences on the committed every-case runs (:mod:`cadlib.chapters.kv_reuse.run_every_case`):
the chosen policy over every case of the held-out HumanEvalFix corpora, read where it reuses
prompt entries (cases that reuse none agree by construction and are counted apart)."""

from __future__ import annotations

from cadlib.corpora import CORPUS_LABELS

from .run_every_case import CORPORA, _verdict, tasks
from .text_policy_search import reuse_clause, untimed_caption, verdict_clause

__all__ = [
    "every_markdown",
    "answer_sentence",
]


def every_markdown(runs: list[dict]) -> str:
    """The verdict over every case of the corpora run, read where the chosen policy reuses
    prompt entries: its agreement and flipped cases there against the threshold, pooled and
    per language (one family: the same tasks translated), the cases that reuse nothing
    counted apart, ``none`` beside it; the corpora not yet recorded named. Rates near the
    threshold get two decimals, so that a miss never reads as the threshold itself."""
    v = _verdict(runs)
    r, base = v["r"], v["base"]
    names = [x["protocol"]["corpus"] for x in runs]
    missing = [CORPUS_LABELS.get(c, c) for c in CORPORA if c not in names]
    n = tasks(runs)
    family = f" (one family: {n} task{'s' * (n > 1)} in {len(runs)} languages)" * (len(runs) > 1)
    return (
        f"On every case of {', '.join(CORPUS_LABELS.get(c, c) for c in names)}{family}, "
        f"`{v['chosen']}` {reuse_clause(r, v['per'], 'language')}: "
        f"{verdict_clause(v, v['thr'], 'language')}."
        + (
            f" The other {int(r.idle)} recompute every copied id and agree by construction."
            if r.idle
            else ""
        )
        + f" `none` (recomputing {base.recomputed:.0%}) agrees on {base.rate:.1%}."
        + (f" Not yet recorded: {', '.join(missing)}." if missing else "")
        + untimed_caption(runs[0])
    )


def answer_sentence(runs: list[dict]) -> str:
    """One sentence for the chapter's **Answer.**: the chosen policy over every case of the
    languages recorded (one family), where it reuses prompt entries, against the threshold."""
    v, n, k = _verdict(runs), len(runs), tasks(runs)
    r = v["r"]
    return (
        f"On every case of {n} held-out HumanEvalFix language{'s' if n > 1 else ''} "
        f"({k} task{'s' * (k > 1)}), it reuses prompt entries in {int(r.cases)} of "
        f"{int(r.cases + r.idle)} cases and agrees there on {r.rate:.2%}, {int(r.flipped)} of "
        f"them with a flipped decision: {verdict_clause(v, v['thr'], 'language')}."
    )
