"""The unit of every corpus: :class:`EditCase`, and :class:`Corpus`, a named list of them.

A leaf module (standard library only), so that the corpus builders (:mod:`cadlib.corpora`,
:mod:`cadlib.probeedit`) and everything that scores cases (:mod:`cadlib.chapters.ceiling`,
:mod:`cadlib.chapters.perturbation.run`, :mod:`cadlib.chapters.sft_pilot`, ...) can import the
types without importing each other. ``cadlib.corpora.EditCase`` and ``cadlib.corpora.Corpus`` stay
importable (API).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["EditCase", "Corpus"]


@dataclass(frozen=True)
class EditCase:
    """One edit: turn ``doc`` into ``gold`` following ``instruction``; ``meta`` holds the rest."""

    id: str
    doc: str
    gold: str
    instruction: str
    meta: dict = field(default_factory=dict, compare=False, hash=False)


class Corpus(list):
    """A list of :class:`EditCase` that knows its ``name`` and the ``source`` it came from."""

    def __init__(self, name: str, source: str, cases):
        super().__init__(cases)
        self.name = name
        self.source = source

    def __repr__(self) -> str:
        return f"<Corpus {self.name}: {len(self)} cases from {self.source}>"
