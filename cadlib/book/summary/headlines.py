"""The summary's declared comparisons, collected from the chapters in book order.

Each chapter declares its own headline figures in ``cadlib.chapters.<package>.headlines``
(``HEADLINES``, each a :class:`~cadlib.book.summary.spec.Headline` with its tolerance and
reason) and what it adds beyond the paper (``BEYOND_THE_PAPER``); this module names no chapter:
it reads them through :func:`cadlib.chapters.chapter_values`, in functions, since the chapters'
headlines modules import :mod:`cadlib.book`.
"""

from __future__ import annotations

from cadlib.chapters import card_of, chapter_values

from .spec import Headline

__all__ = ["all_headlines", "beyond_the_paper"]


def all_headlines() -> tuple[Headline, ...]:
    """Every chapter's ``headlines.HEADLINES``, in book order."""
    return tuple(h for rows in chapter_values("headlines", "HEADLINES").values() for h in rows)


def beyond_the_paper() -> tuple[tuple[str, str], ...]:
    """``(notebook stem, what it adds)`` for every entry of each chapter's
    ``headlines.BEYOND_THE_PAPER``, in book order (shown on the summary page)."""
    return tuple(
        (card_of(name).notebook, text)
        for name, texts in chapter_values("headlines", "BEYOND_THE_PAPER").items()
        for text in texts
    )
