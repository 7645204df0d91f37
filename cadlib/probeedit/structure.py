"""The structure of a markdown document that edits are aimed at: sections (by heading path),
blocks (paragraphs, list items, headings) and sentences."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cadlib.resolver import doc_lines

__all__ = [
    "Block",
    "Section",
    "blocks",
    "find_section",
    "sections",
    "sentence_spans",
]


@dataclass(frozen=True)
class Section:
    """A markdown heading and the lines it governs: ``start`` (the heading line, 0-based) up
    to ``end`` (exclusive), the next heading of the same or a higher level."""

    title: str
    level: int
    path: tuple[str, ...]  # titles of this heading and all enclosing headings, outermost first
    start: int
    end: int
    levels: tuple[int, ...] = ()  # the levels of the headings in ``path``


@dataclass(frozen=True)
class Block:
    """A run of lines (0-based, ``end`` exclusive): a ``heading``, a prose ``paragraph`` or a
    bullet ``item`` (a ``- `` line and its indented continuation lines)."""

    kind: str
    start: int
    end: int


_HEADING = re.compile(r"^(#{1,6}) (.+)$")
_BULLET = re.compile(r"^[-*] ")


def sections(doc: str) -> list[Section]:
    """The sections of ``doc`` in document order."""
    lines = doc_lines(doc)
    heads = [(i, m) for i, line in enumerate(lines) if (m := _HEADING.match(line))]
    out, stack = [], []
    for k, (i, m) in enumerate(heads):
        level, title = len(m.group(1)), m.group(2).strip()
        end = next((j for j, mm in heads[k + 1 :] if len(mm.group(1)) <= level), len(lines))
        stack = [s for s in stack if s[0] < level] + [(level, title)]
        path, levels = tuple(t for _, t in stack), tuple(lv for lv, _ in stack)
        out.append(Section(title, level, path, i, end, levels))
    return out


def blocks(doc: str) -> list[Block]:
    """The headings, paragraphs and bullet items of ``doc`` in document order."""
    lines = doc_lines(doc)
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if _HEADING.match(line):
            out.append(Block("heading", i, i + 1))
            i += 1
            continue
        kind = "item" if _BULLET.match(line) else "paragraph"
        j = i + 1
        while j < len(lines) and lines[j].strip():
            if _HEADING.match(lines[j]) or _BULLET.match(lines[j]):
                break
            if (kind == "item") != lines[j].startswith("  "):
                break
            j += 1
        out.append(Block(kind, i, j))
        i = j
    return out


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]]?(\s+)(?=[A-Z0-9`\"(])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of the sentences of a paragraph's text.

    A sentence ends at ``.``, ``!`` or ``?`` (and a closing quote or bracket) followed by
    white space and an upper-case letter, digit, backtick, quote or bracket. The documents
    avoid abbreviations, so this simple rule is exact on them.
    """
    spans, start = [], 0
    for m in _SENTENCE_BREAK.finditer(text):
        spans.append((start, m.start(1)))
        start = m.end(1)
    spans.append((start, len(text.rstrip())))
    return spans


def find_section(doc: str, *path: str) -> Section:
    """The one section whose title path ends with ``path`` (e.g. ``("Meeting 2 (11 March)",
    "Decisions")``); raises ``ValueError`` when none or several match."""
    found = [s for s in sections(doc) if s.path[-len(path) :] == path]
    if len(found) != 1:
        raise ValueError(f"section path {path!r} matches {len(found)} sections, expected 1")
    return found[0]


def _block_text(lines: list[str], block: Block) -> str:
    return "\n".join(lines[block.start : block.end])


def _with_block_text(lines: list[str], block: Block, text: str) -> str:
    return "\n".join(lines[: block.start] + text.split("\n") + lines[block.end :])


def _norm(text: str) -> str:
    """Text as a user would quote it: line breaks (and continuation indents) become spaces."""
    return re.sub(r"[ \t]*\n[ \t]*", " ", text)
