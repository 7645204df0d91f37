"""The summary's first screen: what holds and what does not, in at most ten lines.

:func:`first_screen` writes what a reader sees above the full table: the verdict counts
(:func:`cadlib.book.verdicts.count_line`), then three to five findings, each one generated:

1. **what reproduces**: the figures that count as evidence and agree (exact, within noise), by
   chapter, from the headline table;
2. **what does not**: every figure that contradicts the paper, and every one where the paper's
   numbers disagree with each other, with ours beside the paper's;
3. up to :data:`MAX_LOSSES` sentences **where the mechanism loses**, as the chapters' own Answers
   say it on their committed pages (:func:`chapter_answers`, :func:`loss_sentence`): an Answer
   whose first sentence opens with "No" gives that sentence, else a sentence that opens with
   "Where it loses" (those first; then book order). Chapters past the limit are named.

No number is typed here: every figure comes from the headline table or a chapter's Answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from cadlib.book import verdicts as V
from cadlib.chapters import cards
from cadlib.paths import repo_root

from .render import format_value

__all__ = ["MAX_LOSSES", "chapter_answers", "first_screen", "loss_sentence"]

#: At most this many chapters' loss sentences (the screen holds at most five findings).
MAX_LOSSES = 3
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[*_]*[A-Z])")
_OPENS_NO = re.compile(r"^[*_\s]*No\b")
_WHERE_LOSES = re.compile(r"^[*_\s]*Where it loses[*_]*\s*:?\s*", re.IGNORECASE)


def chapter_answers(folder: Path | None = None) -> dict[str, str]:
    """Each chapter's Answer as its committed page shows it (the value glued under a name ending
    in ``-answer`` in ``notebooks/<notebook>.ipynb``), by chapter name, in book order; a chapter
    without a page or a glued Answer is left out."""
    folder = folder or repo_root() / "notebooks"
    answers = {}
    for card in cards():
        path = folder / f"{card.notebook}.ipynb"
        if path.exists():
            answer = _glued_answer(json.loads(path.read_text()))
            if answer:
                answers[card.name] = answer
    return answers


def _glued_answer(nb: dict) -> str | None:
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            scrap = out.get("metadata", {}).get("scrapbook", {})
            if scrap.get("name", "").endswith("-answer"):
                value = out.get("data", {}).get(f"{scrap.get('mime_prefix', '')}text/markdown")
                return "".join(value) if isinstance(value, list) else value
    return None


def loss_sentence(answer: str) -> tuple[int, str] | None:
    """Where an Answer says the mechanism loses, with its rank (0: the Answer opens with "No";
    1: a sentence opens with "Where it loses", given without those words), or None when it
    says neither."""
    sentences = _SENTENCE.split(answer.strip())
    if sentences and _OPENS_NO.match(sentences[0]):
        return 0, sentences[0]
    for sentence in sentences:
        if _WHERE_LOSES.match(sentence):
            return 1, _WHERE_LOSES.sub("", sentence, count=1)
    return None


def first_screen(table: pd.DataFrame, answers: Mapping[str, str]) -> str:
    """The first screen as Markdown (at most ten lines): the count line, then the findings.
    ``table``: :func:`cadlib.book.summary.headline_table`; ``answers``: chapter name ->
    Answer (:func:`chapter_answers`)."""
    found = [_holds(table), _does_not_hold(table), *_losses(answers)]
    return V.count_line(table["status"]) + "\n\n" + "\n".join(f"- {f}" for f in found if f)


def _link(name: str) -> str:
    card = next(c for c in cards() if c.name == name)
    return f"{{doc}}`chapter {card.number} </notebooks/{card.notebook}>`"


def _holds(table: pd.DataFrame) -> str:
    agree = table[table.status.isin([V.EXACT, V.WITHIN_NOISE])]
    if agree.empty:
        return "**What reproduces**: no figure that counts as evidence agrees with the paper."
    per = agree.groupby("chapter", sort=False).size()
    where = ", ".join(f"{_link(c)} ({n})" for c, n in per.items())
    return (
        f"**What reproduces**: {len(agree)} figures agree with the paper "
        f"({V.EXACT} or {V.WITHIN_NOISE}): {where}."
    )


def _does_not_hold(table: pd.DataFrame) -> str:
    parts = []
    for verdict in (V.CONTRADICTS, V.PAPER_DISAGREES):
        rows = table[table.status == verdict]
        if len(rows):
            figures = "; ".join(
                f"{r.figure} (ours {format_value(r.ours, r.unit)}, paper "
                f"{format_value(r.paper, r.unit)})"
                for r in rows.itertuples()
            )
            parts.append(f"*{verdict}* ({len(rows)}): {figures}")
    return f"**What does not**: {'. '.join(parts)}." if parts else ""


def _losses(answers: Mapping[str, str]) -> list[str]:
    found = [(hit, name) for name, a in answers.items() if (hit := loss_sentence(a))]
    found.sort(key=lambda item: item[0][0])  # stable: book order within a rank
    shown = [
        f"**Where it loses** ({_link(name)}): {sentence}"
        for (_, sentence), name in found[:MAX_LOSSES]
    ]
    rest = [name for _, name in found[MAX_LOSSES:]]
    if rest and shown:
        shown[-1] += f" More in {', '.join(_link(n) for n in rest)}."
    return shown
