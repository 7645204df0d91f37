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

from .grammar import Copy, Gen, Program
from .resolver import doc_lines

__all__ = ["oracle_program", "matching_blocks"]


def matching_blocks(doc: str, gold: str) -> list[tuple[int, int, int]]:
    """``(doc_line, gold_line, size)`` triples (0-based) of the line alignment, size > 0."""
    matcher = difflib.SequenceMatcher(None, doc_lines(doc), doc_lines(gold), autojunk=False)
    return [tuple(b) for b in matcher.get_matching_blocks() if b.size > 0]


def oracle_program(doc: str, gold: str) -> Program:
    """The line-level oracle program that turns ``doc`` into ``gold``."""
    gold_lines = doc_lines(gold)
    ops: list[Copy | Gen] = []
    at = 0  # next gold line not yet covered
    for a, b, size in matching_blocks(doc, gold):
        if b > at:
            ops.append(Gen("\n".join(gold_lines[at:b])))
        ops.append(Copy(a + 1, a + size))
        at = b + size
    if at < len(gold_lines):
        ops.append(Gen("\n".join(gold_lines[at:])))
    return Program(ops)
