"""Change blocks: the regions between the oracle alignment's matching blocks."""

from __future__ import annotations

from dataclasses import dataclass

from cadlib.oracle import matching_blocks
from cadlib.resolver import doc_lines

__all__ = [
    "Block",
    "change_blocks",
]

# ---------------------------------------------------------------------------------------------
# Change blocks from the oracle alignment
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """Doc lines ``i1..i2`` become gold lines ``j1..j2`` (0-based, half-open, ``split("\\n")``)."""

    i1: int
    i2: int
    j1: int
    j2: int


def _segment(lines: list[str], start: int, stop: int) -> str:
    """The text of ``lines[start:stop]``, each with its newline (the last line has none)."""
    text = "\n".join(lines[start:stop])
    return text + "\n" if start < stop < len(lines) else text


def change_blocks(doc: str, gold: str) -> list[Block]:
    """The gaps between the oracle's matching blocks (paper §3): every changed region.

    Lines are ``split("\\n")``, so the last line of a text carries no newline: a matching
    block that pairs the last line of one text with an inner line of the other pairs
    different bytes, and that line is counted as changed here (CaD needs no such care, as
    the resolver joins with newlines). Consecutive blocks are thus separated by at least one
    unchanged line, and unchanged lines map 1:1 between the texts."""
    n_doc, n_gold = len(doc_lines(doc)), len(doc_lines(gold))
    blocks, a_at, b_at = [], 0, 0
    for a, b, size in [*matching_blocks(doc, gold), (n_doc, n_gold, 0)]:
        if size and (a + size == n_doc) != (b + size == n_gold):
            size -= 1
        if size == 0 and (a, b) != (n_doc, n_gold):
            continue
        if a > a_at or b > b_at:
            blocks.append(Block(a_at, a, b_at, b))
        a_at, b_at = a + size, b + size
    return blocks


def _widen(blocks: list[Block], k: int, up: bool, n_doc: int) -> list[Block] | None:
    """Block ``k`` widened by the doc line above (``up``) or below; None at the document's
    edge. An unchanged line maps 1:1, so ``j`` moves with ``i``; a line of the
    neighbouring block merges the two blocks."""
    b = blocks[k]
    if up and b.i1 == 0 or not up and b.i2 >= n_doc:
        return None
    if up and k > 0 and blocks[k - 1].i2 == b.i1:
        p = blocks[k - 1]
        return [*blocks[: k - 1], Block(p.i1, b.i2, p.j1, b.j2), *blocks[k + 1 :]]
    if not up and k + 1 < len(blocks) and blocks[k + 1].i1 == b.i2:
        q = blocks[k + 1]
        return [*blocks[:k], Block(b.i1, q.i2, b.j1, q.j2), *blocks[k + 2 :]]
    step = Block(b.i1 - 1, b.i2, b.j1 - 1, b.j2) if up else Block(b.i1, b.i2 + 1, b.j1, b.j2 + 1)
    return [*blocks[:k], step, *blocks[k + 1 :]]


def _grow(blocks: list[Block], k: int, n_doc: int) -> list[Block] | None:
    """Widen block ``k`` by the preceding line, or by the following one at the start of the
    document; None if it already spans the whole document."""
    return _widen(blocks, k, True, n_doc) or _widen(blocks, k, False, n_doc)


def _block_texts(doc: str, gold: str, blk: Block) -> tuple[str, str]:
    return _segment(doc_lines(doc), blk.i1, blk.i2), _segment(doc_lines(gold), blk.j1, blk.j2)
