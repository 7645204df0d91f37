"""Drafts a decoder verifies in one forward (issue 17 §3; the paper's Appendix M points here).

Two sources of guessed ids, shared by the decoder (:class:`cadlib.decoder.CopyDecoder`'s
``drafts=`` option) and the exact accounting (:func:`cadlib.accounting.composed`), so that
what is counted is what runs:

* **prompt lookup** (:func:`lookup_draft`, :class:`NgramIndex`): ``transformers``'
  ``PromptLookupCandidateGenerator`` rule -- the largest ``n`` (down to 1) whose last n-gram
  occurred earlier with a continuation, its leftmost occurrence, and up to ``K`` ids after it;
* **speculative op headers** (:func:`header_guess`): the next op's header guessed from what
  is already known, the document's line count and the ops so far -- after a copy a ``<gen>``
  opener, else a copy that resumes where the document would continue, at the end
  ``</program>``.

Greedy verification keeps the longest prefix of a draft equal to what the decoder would have
chosen; a draft never changes the output, only how many forwards produce it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .fsm import Transcript
from .grammar import Copy, StreamingParser

__all__ = ["BODY_PLD", "NgramIndex", "first_occurrences", "ngram_index", "lookup_draft",
           "header_guess", "lines_written", "Drafter"]  # fmt: skip

#: Prompt-lookup setting ``(K, n)`` of the drafts inside ``<gen>`` bodies (the book's timed
#: prompt-lookup setting).
BODY_PLD = (10, 2)


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
        for tok in ids:
            self.seq.append(int(tok))
            end = len(self.seq)
            for g in range(1, min(self.n, end) + 1):
                self.firsts[g].setdefault(tuple(self.seq[end - g : end]), end - g)

    def draft(self) -> list[int]:
        """The draft after the whole sequence (:func:`lookup_draft`)."""
        return list(lookup_draft(self.seq, len(self.seq), self.K, self.n, self.firsts))


def lines_written(text: str) -> int:
    """Document lines a ``<gen>`` body of ``text`` stands for (a final newline ends the last
    line rather than starting another)."""
    return len(text.split("\n")) - text.endswith("\n")


def header_guess(prev, last_end: int, n_lines: int, table) -> list[int]:
    """The ids of the next op's header, guessed without the gold.

    ``prev``: the op before (``None`` at the start), ``last_end``: the last line the copies so
    far reached (0 at the start), ``n_lines``: the document's line count, ``table``: the
    :class:`cadlib.literal_ids.TokenTable`. At the document's end ``</program>``; after a
    copy a ``<gen>`` opener; else a copy resuming at ``last_end + 1 + r`` (``r`` = the lines
    the last body wrote, as if it replaced as many) to the document's end, without its
    terminator (the range's end is a decision the model may still change).
    """
    if last_end >= n_lines:
        return list(table.op_literals["close"])
    if isinstance(prev, Copy):
        return list(table.op_literals["gen"])
    r = 0 if prev is None else lines_written(prev.text)
    i = min(last_end + 1 + r, n_lines)
    return [*table.op_literals["copy"], *table.encode(str(i)), *table.dash,
            *table.encode(str(n_lines))]  # fmt: skip


class Drafter:
    """What one decoder run drafts at each decision (:class:`cadlib.decoder.CopyDecoder`'s
    ``drafts=`` option): a :func:`header_guess` at the first decision of an op (``"headers"``),
    else inside a ``<gen>`` body a prompt-lookup draft over the prompt and the ids so far
    (``"pld"``, ``body_pld`` = (K, n)); nothing elsewhere. The same rules as
    :func:`cadlib.accounting.composed`, fed only what the decoder has already produced."""

    KINDS = ("pld", "headers")

    def __init__(self, kinds, table, doc: str, prompt: Sequence[int], body_pld=BODY_PLD):
        unknown = set(kinds) - set(self.KINDS)
        if unknown:
            raise ValueError(f"unknown drafts {sorted(unknown)}; use some of {self.KINDS}")
        self.kinds, self.table = frozenset(kinds), table
        self.n_lines = len(doc.split("\n"))
        self.index = NgramIndex(*body_pld)
        self.index.extend(prompt)
        self.n_prompt = len(prompt)

    def propose(self, ids: Sequence[int], kinds: Sequence[str], next_kind: str,
                op_start: int | None) -> list[int]:  # fmt: skip
        """The draft for position ``len(ids)`` (whose kind is ``next_kind``), given the
        transcript so far; ``op_start``: where the current op began when this is its first
        decision, else ``None``."""
        if "headers" in self.kinds and op_start is not None:
            prev, last_end = self._ops_so_far(ids, kinds)
            return header_guess(prev, last_end, self.n_lines, self.table)[len(ids) - op_start :]
        if "pld" in self.kinds and next_kind == "gen":
            self.index.extend(ids[len(self.index.seq) - self.n_prompt :])
            return self.index.draft()
        return []

    def _ops_so_far(self, ids, kinds) -> tuple:
        """``(the last complete op or None, the end line of the last copy or 0)``."""
        text = Transcript(tuple(ids), tuple(kinds)).program_text(self.table)
        ops = StreamingParser().feed(text)
        ends = [op.end for op in ops if isinstance(op, Copy)]
        return (ops[-1] if ops else None), (ends[-1] if ends else 0)
