"""Search/replace blocks (Aider's format), rendered from change blocks and applied with
Aider's semantics."""

from __future__ import annotations

import numpy as np

from cadlib.resolver import doc_lines

from .run_blocks import Block, _block_texts, _grow, _widen, change_blocks
from .run_failures import ApplyError, _diagnose_generic
from .run_unified_diff import DOC_NAME

__all__ = [
    "ambiguous_anchors",
    "apply_search_replace",
    "parse_search_replace",
    "render_search_replace",
    "search_replace_blocks",
]

# ---------------------------------------------------------------------------------------------
# Search/replace blocks, applied with Aider's semantics
# ---------------------------------------------------------------------------------------------

HEAD, DIVIDER, UPDATED = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"
_FENCE = "```"


def _aider_unwrap(text: str) -> str:
    """Aider's ``strip_quoted_wrapping`` without a file name: drop a surrounding code fence,
    rejoin the lines with LF (``splitlines``), end with a newline."""
    if not text:
        return text
    lines = text.splitlines()
    if lines[0].startswith(_FENCE) and lines[-1].startswith(_FENCE):
        lines = lines[1:-1]
    text = "\n".join(lines)
    return text + "\n" if text and not text.endswith("\n") else text


def _aider_prep(text: str) -> list[str]:
    """Aider's ``prep``: add a final newline if missing, split keeping line ends."""
    if text and not text.endswith("\n"):
        text += "\n"
    return text.splitlines(keepends=True)


def _exact_matches(whole: list[str], part: list[str]) -> list[int]:
    """Start indices of every exact match of ``part`` in ``whole`` (Aider's
    ``perfect_replace`` takes the first)."""
    m = len(part)
    return [i for i in range(len(whole) - m + 1) if whole[i : i + m] == part]


def _replace_lines(whole: list[str], part: list[str], repl: list[str], at: int) -> str:
    return "".join([*whole[:at], *repl, *whole[at + len(part) :]])


def _aider_do_replace(state: str, search: str, replace: str, where: str) -> str:
    """One block as Aider's ``do_replace`` applies it: a blank SEARCH appends REPLACE to the
    file; otherwise the first exact line-sequence match is rewritten (its fuzzy fallbacks
    run only when no exact match exists, and are not modelled: see ``anchor-not-found``)."""
    search, replace = _aider_unwrap(search), _aider_unwrap(replace)
    if not search.strip():
        return state + replace
    whole, part = _aider_prep(state), _aider_prep(search)
    hits = _exact_matches(whole, part)
    if not hits:
        category = "line-endings" if "\r" in state else "anchor-not-found"
        raise ApplyError(category, f"{where}: SEARCH {part[0]!r}... ({len(part)} line(s))")
    return _replace_lines(whole, part, _aider_prep(replace), hits[0])


def _ends_blank(text: str) -> bool:
    """Aider's ``strip_quoted_wrapping`` drops one trailing empty line of a block text."""
    return text == "\n" or text.endswith("\n\n") or text.endswith("\n\r\n")


def _needs_growth(doc: str, gold: str, blocks: list[Block], k: int, n_doc: int):
    """The grown blocks if block ``k`` would be misread by Aider, else None: a blank SEARCH
    (appended to the file) grows by a neighbouring line; a SEARCH or REPLACE ending in an
    empty line (dropped by Aider) grows by the following line."""
    search, replace = _block_texts(doc, gold, blocks[k])
    if not search.strip():
        return _grow(blocks, k, n_doc)
    if _ends_blank(search) or _ends_blank(replace):
        return _widen(blocks, k, False, n_doc)
    return None


def search_replace_blocks(doc: str, gold: str, unique: bool = False) -> list[Block]:
    """The S/R blocks for ``doc -> gold``: the change blocks, grown as
    :func:`_needs_growth` says; with ``unique=True`` also grown upwards until Aider's first
    exact match of each SEARCH is its intended place."""
    n_doc = len(doc_lines(doc))
    blocks, k = change_blocks(doc, gold), 0
    while k < len(blocks):
        grown = _needs_growth(doc, gold, blocks, k, n_doc)
        blocks, k = (blocks, k + 1) if grown is None else (grown, 0)
    while unique and (miss := _first_misplaced(doc, gold, blocks)) is not None:
        grown = _grow(blocks, miss[0], n_doc)
        if grown is None:
            break
        blocks = grown
    return blocks


def _render_block(search: str, replace: str) -> str:
    def body(text: str) -> str:
        return text + "\n" if text and not text.endswith("\n") else text

    return f"{HEAD}\n{body(search)}{DIVIDER}\n{body(replace)}{UPDATED}\n"


def render_search_replace(doc: str, gold: str, unique: bool = False, fenced: bool = False) -> str:
    """The S/R text: one block per :func:`search_replace_blocks` block, in document order;
    ``fenced`` wraps each block as Aider's prompt asks, in the file's name and a code fence
    (which the parser skips; they only cost tokens)."""
    blocks = search_replace_blocks(doc, gold, unique=unique)
    texts = (_render_block(*_block_texts(doc, gold, blk)) for blk in blocks)
    return "".join(f"{DOC_NAME}\n{_FENCE}\n{t}{_FENCE}\n" if fenced else t for t in texts)


def _collect(lines: list[str], at: int, marker: str) -> tuple[str, int]:
    body = []
    while at < len(lines) and lines[at].strip() != marker:
        body.append(lines[at])
        at += 1
    if at >= len(lines):
        raise ApplyError("block-syntax", f"expected {marker!r} after line {at}")
    return "".join(body), at


def parse_search_replace(text: str) -> list[tuple[str, str]]:
    """``(search, replace)`` pairs, read as Aider's ``find_original_update_blocks`` reads
    them: marker lines are recognised by ``line.strip()``, anything outside blocks is
    ignored."""
    lines, pairs, at = text.splitlines(keepends=True), [], 0
    while at < len(lines):
        if lines[at].strip() == HEAD:
            search, at = _collect(lines, at + 1, DIVIDER)
            replace, at = _collect(lines, at + 1, UPDATED)
            pairs.append((search, replace))
        at += 1
    return pairs


def apply_search_replace(doc: str, text: str) -> str:
    """Apply every block of ``text`` to ``doc`` in order, each to the document as the
    previous blocks left it (Aider's semantics, see :func:`_aider_do_replace`)."""
    state = doc
    pairs = parse_search_replace(text)
    for k, (search, replace) in enumerate(pairs, start=1):
        state = _aider_do_replace(state, search, replace, f"block {k} of {len(pairs)}")
    return state


def _sr_replay(doc: str, gold: str, blocks: list[Block]):
    """Replay the blocks as Aider would, following the intended placement, and yield
    ``(k, hits, at, whole, harmful)`` per block: every exact match of its SEARCH, the intended
    line, the document lines as they stand, and whether the first match is elsewhere *and*
    gives another document. Stops after a harmful block (the rest is then undefined)."""
    state, shift = doc, 0
    for k, blk in enumerate(blocks):
        search, replace = (_aider_unwrap(t) for t in _block_texts(doc, gold, blk))
        whole, part, repl = _aider_prep(state), _aider_prep(search), _aider_prep(replace)
        starts = np.cumsum([0, *map(len, whole)])
        intended = sum(len(line) + 1 for line in doc_lines(doc)[: blk.i1]) + shift
        at = int(np.searchsorted(starts, intended))
        hits = _exact_matches(whole, part)
        if not search.strip() or not hits or at >= len(whole) or starts[at] != intended:
            return
        state = _replace_lines(whole, part, repl, at)
        harmful = hits[0] != at and _replace_lines(whole, part, repl, hits[0]) != state
        yield k, hits, at, whole, harmful
        if harmful:
            return
        shift += len(replace) - len(search)


def _first_misplaced(doc: str, gold: str, blocks: list[Block]):
    """The first harmful block of :func:`_sr_replay`, or None."""
    return next((step for step in _sr_replay(doc, gold, blocks) if step[-1]), None)


def ambiguous_anchors(doc: str, gold: str, unique: bool = False) -> int:
    """How many S/R blocks have a SEARCH text with more than one exact match in the document
    as it stands when they are applied (harmful or not): what a tool that rejects a
    non-unique anchor, instead of taking the first, would refuse."""
    blocks = search_replace_blocks(doc, gold, unique=unique)
    return sum(len(hits) > 1 for _, hits, *_ in _sr_replay(doc, gold, blocks))


def _text_hazard(doc: str, gold: str, blocks: list[Block]) -> tuple[str, str] | None:
    """A block text that Aider reads differently from how it was rendered."""
    for k, blk in enumerate(blocks, start=1):
        if not _block_texts(doc, gold, blk)[0].strip():
            return "blank-anchor", f"block {k} (doc line {blk.i1 + 1})"
        for text in _block_texts(doc, gold, blk):
            if "\r" in text:
                return "line-endings", f"block {k} (doc line {blk.i1 + 1}) holds a CR"
            if any(line.strip() in (HEAD, DIVIDER, UPDATED) for line in text.split("\n")):
                return "marker-collision", f"block {k} (doc line {blk.i1 + 1})"
            lines = text.splitlines()
            if lines and lines[0].startswith(_FENCE) and lines[-1].startswith(_FENCE):
                return "fence-stripped", f"block {k} (doc line {blk.i1 + 1})"
            if _ends_blank(text):
                return "blank-line-dropped", f"block {k} (doc line {blk.i1 + 1}) at the end"
    return None


def _diagnose_search_replace(doc, gold, output, error=None, unique: bool = False):
    """Root cause of a failed S/R round trip: a block text Aider misreads, else an error
    from applying, else the first harmfully misplaced block, else the generic reasons."""
    blocks = search_replace_blocks(doc, gold, unique=unique)
    hazard = _text_hazard(doc, gold, blocks)
    if hazard:
        return hazard[0], hazard[1] + (f"; {error}" if error else "")
    miss = None if error else _first_misplaced(doc, gold, blocks)
    if miss is None:
        return _diagnose_generic(doc, gold, output, error)
    k, hits, at, whole, _ = miss
    search = _aider_unwrap(_block_texts(doc, gold, blocks[k])[0])
    shown = next(line for line in search.split("\n") if line.strip())
    origin = (
        "the document repeats it"
        if len(_exact_matches(_aider_prep(doc), _aider_prep(search))) > 1
        else "an earlier block wrote the first copy"
    )
    return "anchor-ambiguous", (
        f"block {k + 1} of {len(blocks)}: SEARCH ({len(_aider_prep(search))} line(s), "
        f"{shown.strip()!r}) matches at line(s) {', '.join(str(h + 1) for h in hits)}; "
        f"Aider rewrote line {hits[0] + 1}, intended line {at + 1} ({origin})"
    )
