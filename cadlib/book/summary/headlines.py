"""The summary's declared comparisons, collected from the chapters in book order.

Each chapter declares its own headline figures in ``cadlib.chapters.<package>.headlines``
(``HEADLINES``, each a :class:`~cadlib.book.summary.spec.Headline` with its tolerance and
reason) and what it adds beyond the paper (``BEYOND_THE_PAPER``); this module names no chapter:
it reads them through :func:`cadlib.chapters.chapter_values`, in functions, since the chapters'
headlines modules import :mod:`cadlib.book`.
"""

from __future__ import annotations

from cadlib.chapters import cards, chapter_values

from .spec import Headline

__all__ = ["all_headlines", "beyond_the_paper"]


def all_headlines() -> tuple[Headline, ...]:
    """Every chapter's ``headlines.HEADLINES``, in book order."""
    return tuple(h for rows in chapter_values("headlines", "HEADLINES").values() for h in rows)


def beyond_the_paper() -> tuple[tuple[str, str], ...]:
    """``(notebook stem, what it adds)`` for every entry of each chapter's
    ``headlines.BEYOND_THE_PAPER``, in book order (shown on the summary page). A chapter that
    re-derives nothing of the paper (its card names no section) and declares no entry is listed
    with its question, so no chapter beyond the paper is missing from the list."""
    declared = chapter_values("headlines", "BEYOND_THE_PAPER")
    rows = []
    for card in cards():
        texts = declared.get(card.name, ())
        if not texts and not card.paper:
            texts = (f"the whole chapter: {card.question[:1].lower()}{card.question[1:]}",)
        rows.extend((card.notebook, text) for text in texts)
    return tuple(rows)
