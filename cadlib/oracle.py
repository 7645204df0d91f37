"""Oracle programs from a (document, gold) pair (paper §3, §4.3, Appendix "Algorithm").

The line-level oracle runs :class:`difflib.SequenceMatcher` (``autojunk=False``) over the
lines of both texts; every matching block becomes a ``Copy`` of its document lines and
every run of gold lines between blocks becomes a ``Gen`` of that run's text. Because lines
are ``split("\\n")`` and the resolver joins ops with ``"\\n"``, the gold's lines are
partitioned exactly by the ops and ``resolve(oracle_program(d, g), d) == g`` holds byte for
byte, for every pair of strings.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .alignment import ALIGNMENTS, histogram_blocks
from .grammar import Copy, Gen, Program
from .resolver import copied_text, doc_lines

__all__ = [
    "ALIGNMENTS",
    "oracle_program",
    "cheapest_program",
    "inline_cheap_copies",
    "matching_blocks",
    "token_cover",
    "TokenCover",
    "longest_matches",
    "greedy_cover",
]


def matching_blocks(doc: str, gold: str, align: str = "difflib") -> list[tuple[int, int, int]]:
    """``(doc_line, gold_line, size)`` triples (0-based) of the line alignment, size > 0.

    ``align="difflib"`` (the default: every number compared with the paper) or
    ``"histogram"`` (git's histogram diff, :mod:`cadlib.alignment`: fast on repetitive files,
    for the ``cad`` command).
    """
    if align not in ALIGNMENTS:
        raise ValueError(f"unknown alignment {align!r}; valid: {', '.join(ALIGNMENTS)}")
    if align == "histogram":
        return histogram_blocks(doc_lines(doc), doc_lines(gold))
    matcher = difflib.SequenceMatcher(None, doc_lines(doc), doc_lines(gold), autojunk=False)
    return [tuple(b) for b in matcher.get_matching_blocks() if b.size > 0]


def oracle_program(doc: str, gold: str, align: str = "difflib") -> Program:
    """The line-level oracle program that turns ``doc`` into ``gold`` (``align``: see
    :func:`matching_blocks`; both alignments give lossless programs)."""
    gold_lines = doc_lines(gold)
    ops: list[Copy | Gen] = []
    at = 0  # next gold line not yet covered
    for a, b, size in matching_blocks(doc, gold, align):
        if b > at:
            ops.append(Gen("\n".join(gold_lines[at:b])))
        ops.append(Copy(a + 1, a + size))
        at = b + size
    if at < len(gold_lines):
        ops.append(Gen("\n".join(gold_lines[at:])))
    return Program(ops)


def cheapest_program(doc: str, gold: str, count, align: str = "histogram") -> tuple[Program, str]:
    """The oracle program of ``align``, unless it costs more tokens than one ``<gen>`` of the
    whole gold (``count``: text -> tokens, e.g. the Qwen2.5 BPE's ``count``); then the
    cheaper of that ``<gen>`` and the aligned program with its cheap copies inlined.

    Why: an alignment minimises edit operations, not tokens; on a file of many repeated lines
    (blank lines, braces) shuffled in blocks, git's histogram diff can match short runs that
    cost more to reference and re-generate around than the gold costs to write out (issue
    36.9). Returns ``(program, how)``, ``how`` being ``align``, ``align + "+inlined"``
    (:func:`inline_cheap_copies`) or ``"gen"``. All resolve to ``gold``.
    """
    aligned = oracle_program(doc, gold, align=align)
    whole = Program([Gen(gold)])
    if count(str(aligned)) <= count(str(whole)):
        return aligned, align
    inlined = inline_cheap_copies(aligned, doc, count)
    return min([(inlined, f"{align}+inlined"), (whole, "gen")], key=lambda c: count(str(c[0])))


def inline_cheap_copies(program: Program, doc: str, count) -> Program:
    """``program`` with every copy whose tag costs at least as many tokens as the lines it
    copies written out as generated text instead (adjacent ``<gen>`` ops merged): the same
    resolution, usually fewer tokens when an alignment matched many short runs."""
    lines = doc_lines(doc)
    ops: list[Copy | Gen] = []
    for op in program:
        if isinstance(op, Copy):
            text = copied_text(lines, op.start, op.end)
            if count(str(op)) < count(text):
                ops.append(op)
                continue
            op = Gen(text)
        if ops and isinstance(ops[-1], Gen):
            op = Gen(ops.pop().text + "\n" + op.text)
        ops.append(op)
    return Program(ops)


@dataclass(frozen=True)
class TokenCover:
    """A token-level cover of a gold token sequence by spans of the document's tokens.

    ``copies`` holds ``(gold_start, doc_start, length)`` triples (0-based, ordered by
    ``gold_start``, non-overlapping): ``gold[g:g+length] == doc[d:d+length]``. Every gold
    token outside a copy is generated. ``n_gold`` is the length of the gold sequence.
    """

    copies: tuple[tuple[int, int, int], ...]
    n_gold: int
    min_span: int

    @property
    def span_lengths(self) -> list[int]:
        return [length for _, _, length in self.copies]

    @property
    def n_copied(self) -> int:
        return sum(self.span_lengths)

    @property
    def n_generated(self) -> int:
        return self.n_gold - self.n_copied

    @property
    def copy_fraction(self) -> float:
        """Copied gold tokens / gold tokens (1.0 for an empty gold: nothing to generate)."""
        return self.n_copied / self.n_gold if self.n_gold else 1.0

    def reconstruct(self, doc_ids: Sequence[int], gold_ids: Sequence[int]) -> list[int]:
        """The gold ids rebuilt from the document's spans plus the generated gold tokens."""
        out: list[int] = []
        at = 0
        for g, d, length in self.copies:
            out.extend(gold_ids[at:g])  # generated tokens
            out.extend(doc_ids[d : d + length])  # copied tokens
            at = g + length
        out.extend(gold_ids[at:])
        return out


def longest_matches(
    doc_ids: Sequence[int], gold_ids: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """For every gold position ``i``: the length of the longest prefix of ``gold[i:]`` that
    occurs anywhere in ``doc`` and its first (leftmost) document position.

    Row ``i`` of the longest-common-prefix table is ``1 + row(i+1) shifted`` where the tokens
    agree and ``0`` elsewhere, so one backward sweep with O(len(doc)) numpy work per gold
    token suffices (no quadratic Python loop).
    """
    doc = np.asarray(doc_ids, dtype=np.int64)
    gold = np.asarray(gold_ids, dtype=np.int64)
    best_len = np.zeros(len(gold), dtype=np.int64)
    best_pos = np.zeros(len(gold), dtype=np.int64)
    if len(doc) == 0:
        return best_len, best_pos
    row = np.zeros(len(doc) + 1, dtype=np.int64)  # row[j] = LCP(gold[i+1:], doc[j:])
    for i in range(len(gold) - 1, -1, -1):
        row = np.append(np.where(doc == gold[i], row[1:] + 1, 0), 0)
        j = int(np.argmax(row[:-1]))
        best_len[i], best_pos[i] = row[j], j
    return best_len, best_pos


def token_cover(doc_ids: Sequence[int], gold_ids: Sequence[int], min_span: int) -> TokenCover:
    """Greedy left-to-right longest-match cover of ``gold_ids`` by ``doc_ids`` (paper §3,
    "Copy ceiling" (b), Appendix D): at each gold position take the longest document span
    that matches from there if it has at least ``min_span`` tokens, else generate one token
    and move on. Greedy is a lower bound on the optimal cover's copy fraction (paper §3).

    This is the token-level *aspirational* ceiling: the ``<copy tokens="a-b"/>`` extension,
    not the line primitive. Ties between equally long matches go to the leftmost document
    position.
    """
    return greedy_cover(*longest_matches(doc_ids, gold_ids), min_span)


def greedy_cover(best_len: np.ndarray, best_pos: np.ndarray, min_span: int) -> TokenCover:
    """The greedy cover from a :func:`longest_matches` table (reuse one table for many m)."""
    if isinstance(min_span, bool) or not isinstance(min_span, (int, np.integer)) or min_span < 1:
        raise ValueError(f"min_span must be an integer >= 1, got {min_span!r}")
    copies = []
    i, n = 0, len(best_len)
    while i < n:
        length = int(best_len[i])
        if length >= min_span:
            copies.append((i, int(best_pos[i]), length))
            i += length
        else:
            i += 1
    return TokenCover(tuple(copies), n, int(min_span))
