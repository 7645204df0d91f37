"""Prompt lookup over sequences of ids: the rule of ``transformers``'
``PromptLookupCandidateGenerator`` -- the largest ``n`` (down to 1) whose last n-gram occurred
earlier with a continuation, its leftmost occurrence, and up to ``K`` ids after it.

One home for the rule that the drafts (:mod:`cadlib.decoding.drafts`: prompt lookup inside
``<gen>`` bodies, and the same confined to the document lines a body stands in for) and the
exact accounting of prompt-lookup decoding (:mod:`cadlib.costs.accounting`) both apply:
:func:`lookup_draft` over a table of first occurrences (:func:`ngram_index`), kept up to date
by :class:`NgramIndex` as a sequence grows, and :func:`cursor_lookup` within a window of ids.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "TIMED_PLD",
    "first_occurrences",
    "ngram_index",
    "lookup_draft",
    "NgramIndex",
    "cursor_lookup",
]

#: The prompt-lookup setting ``(K, n)`` of the timed runs (``pld_num_tokens``, ``pld_max_ngram``):
#: the rival at its best, the setting of :data:`cadlib.costs.accounting.PLD_GRID` with the fewest
#: forwards on each of the accounted corpora (and the fewest predicted seconds; chapter 6 §2b
#: prints the best per corpus of each run). It was K=10 n=2 (``transformers``' default n-gram
#: size) until the accounting showed that setting behind K=40 n=3 on every corpus.
TIMED_PLD = (40, 3)


def first_occurrences(seq: Sequence[int], n: int) -> dict[tuple, int]:
    """Start of the leftmost occurrence of every n-gram of ``seq``."""
    grams = zip(*(seq[k:] for k in range(n)), strict=False)
    first: dict[tuple, int] = {}
    for i, gram in enumerate(grams):
        first.setdefault(gram, i)
    return first


def ngram_index(seq: Sequence[int], n_max: int) -> dict[int, dict[tuple, int]]:
    """``{n: first occurrences of the n-grams of seq}`` for n = 1..n_max."""
    return {n: first_occurrences(seq, n) for n in range(1, n_max + 1)}


def lookup_draft(seq: Sequence[int], length: int, K: int, n: int, firsts: dict) -> Sequence[int]:
    """The prompt-lookup draft after ``seq[:length]``: the largest n (down to 1) whose last
    n-gram occurs earlier with a continuation, its leftmost such occurrence, and up to ``K``
    ids that follow it (``()``: no match).

    ``firsts`` (:func:`ngram_index`) may cover more of ``seq`` than ``length``: the leftmost
    occurrence of the suffix n-gram lies inside ``seq[:length]`` (the suffix itself is one),
    so one table of the whole sequence serves every round; a match needs a continuation, so
    it must start before the suffix.
    """
    for g in range(min(n, length - 1), 0, -1):
        start = firsts[g][tuple(seq[length - g : length])] + g
        if start < length:
            return seq[start : min(start + K, length)]
    return ()


class NgramIndex:
    """Prompt lookup over a sequence that grows (the prompt, then the ids decoded so far):
    first occurrences kept up to date as ids are appended, so each draft is a few lookups."""

    def __init__(self, K: int, n: int):
        if K < 1 or n < 1:
            raise ValueError(f"prompt lookup needs K >= 1 and n >= 1, got K={K}, n={n}")
        self.K, self.n = K, n
        self.seq: list[int] = []
        self.firsts: dict[int, dict[tuple, int]] = {g: {} for g in range(1, n + 1)}

    def extend(self, ids: Sequence[int]) -> None:
        """Append ``ids`` and index the n-grams they end."""
        old = len(self.seq)
        self.seq.extend(int(t) for t in ids)
        seq = self.seq
        for g in range(1, self.n + 1):
            first = max(old - g + 1, 0)  # the first n-gram that ends in the new ids
            grams = zip(*(seq[first + k :] for k in range(g)), strict=False)
            setdefault = self.firsts[g].setdefault
            for i, gram in enumerate(grams, first):
                setdefault(gram, i)

    def draft(self) -> list[int]:
        """The draft after the whole sequence (:func:`lookup_draft`)."""
        return list(lookup_draft(self.seq, len(self.seq), self.K, self.n, self.firsts))


def cursor_lookup(
    ahead: Sequence[int], firsts: dict, body: Sequence[int], K: int, n: int
) -> list[int]:
    """Prompt lookup confined to ``ahead`` (the document's ids where a body stands,
    ``firsts`` = :func:`ngram_index` of it): the largest n (down to 1) whose last n-gram of
    ``body`` occurs in ``ahead`` with a continuation, its leftmost occurrence, and up to
    ``K`` ids after it (``[]``: no match)."""
    for g in range(min(n, len(body)), 0, -1):
        start = firsts[g].get(tuple(body[len(body) - g :]))
        if start is not None and start + g < len(ahead):
            return list(ahead[start + g : start + g + K])
    return []
