"""The edit operations: each a pure function doc -> gold that fails loudly on a target it
cannot edit unambiguously."""

from __future__ import annotations

import random
import re

from cadlib.resolver import doc_lines

from .structure import (
    _HEADING,
    Block,
    Section,
    _block_text,
    _norm,
    _with_block_text,
    blocks,
    sentence_spans,
)

__all__ = [
    "change_heading",
    "delete_block",
    "delete_sentence",
    "insert_paragraph",
    "make_typo",
    "merge_paragraphs",
    "rename_everywhere",
    "replace_at",
    "replace_once",
    "split_paragraph",
    "swap_sections",
]


def replace_once(doc: str, old: str, new: str) -> str:
    """Replace the single occurrence of ``old`` (which must not span lines) by ``new``."""
    if "\n" in old or doc.count(old) != 1:
        raise ValueError(f"{old!r} must occur exactly once within one line, found {doc.count(old)}")
    return doc.replace(old, new)


def replace_at(doc: str, offset: int, old: str, new: str) -> str:
    """Replace ``old`` at character ``offset`` (which must hold ``old``) by ``new``."""
    if doc[offset : offset + len(old)] != old:
        raise ValueError(f"{old!r} is not at offset {offset}")
    return doc[:offset] + new + doc[offset + len(old) :]


def _whole_word_count(doc: str, term: str) -> int:
    """Occurrences of ``term`` as whole words (a plural ``s`` allowed: "job objects")."""
    return len(re.findall(rf"(?<!\w){re.escape(term)}s?(?!\w)", doc))


def rename_everywhere(doc: str, old: str, new: str) -> str:
    """Replace every occurrence of the term ``old`` by ``new``.

    The term must occur at least twice, never inside a longer word (a plural is fine),
    never broken across lines and never in another capitalisation, so that "everywhere" has
    exactly one reading.
    """
    n = doc.count(old)
    if n < 2:
        raise ValueError(f"term {old!r} occurs {n} time(s); a rename needs at least 2")
    if _norm(doc).count(old) != n:
        raise ValueError(f"term {old!r} is broken across lines somewhere")
    if _whole_word_count(doc, old) != n:
        raise ValueError(f"term {old!r} also occurs inside longer words")
    if len(re.findall(re.escape(old), doc, flags=re.IGNORECASE)) != n:
        raise ValueError(f"term {old!r} also occurs in another capitalisation")
    return doc.replace(old, new)


def insert_paragraph(doc: str, section: Section, text: str) -> str:
    """Append the paragraph ``text`` at the end of ``section`` (a section without
    subsections), after a blank line."""
    lines = doc_lines(doc)
    if any(_HEADING.match(line) for line in lines[section.start + 1 : section.end]):
        raise ValueError(f"section {section.title!r} has subsections; its end is ambiguous")
    last = max(i for i in range(section.start, section.end) if lines[i].strip())
    return "\n".join(lines[: last + 1] + ["", *text.split("\n")] + lines[last + 1 :])


def delete_sentence(doc: str, block: Block, k: int) -> str:
    """Delete sentence ``k`` (0-based) of a paragraph of two or more sentences.

    The white space after the sentence goes with it (before it, for the last sentence), so
    the lines the sentence started and ended on are joined and no other line changes.
    """
    lines = doc_lines(doc)
    text = _block_text(lines, block)
    spans = sentence_spans(text)
    if block.kind != "paragraph" or len(spans) < 2 or not 0 <= k < len(spans):
        raise ValueError(f"cannot delete sentence {k} of a {block.kind} of {len(spans)}")
    if k == len(spans) - 1:
        new = text[: spans[k - 1][1]]
    else:
        new = text[: spans[k][0]] + text[spans[k + 1][0] :]
    return _with_block_text(lines, block, new)


def delete_block(doc: str, block: Block) -> str:
    """Delete the lines of ``block`` (a bullet item with its continuation lines)."""
    lines = doc_lines(doc)
    return "\n".join(lines[: block.start] + lines[block.end :])


def _split_trailing_blank(chunk: list[str]) -> tuple[list[str], list[str]]:
    n = len(chunk)
    while n and not chunk[n - 1].strip():
        n -= 1
    return chunk[:n], chunk[n:]


def swap_sections(doc: str, first: Section, second: Section) -> str:
    """Swap two adjacent sibling sections (with their subsections); the blank lines that
    separate them stay where they are."""
    if first.level != second.level or first.end != second.start:
        raise ValueError(f"{first.title!r} and {second.title!r} are not adjacent siblings")
    lines = doc_lines(doc)
    a, a_gap = _split_trailing_blank(lines[first.start : first.end])
    b, b_gap = _split_trailing_blank(lines[second.start : second.end])
    return "\n".join(lines[: first.start] + b + a_gap + a + b_gap + lines[second.end :])


def merge_paragraphs(doc: str, block: Block) -> str:
    """Merge paragraph ``block`` with the paragraph after it by deleting the one blank line
    between them (line breaks stay as they are)."""
    lines = doc_lines(doc)
    nxt = block.end + 1
    ok = (
        block.kind == "paragraph"
        and nxt < len(lines)
        and not lines[block.end].strip()
        and any(b.kind == "paragraph" and b.start == nxt for b in blocks(doc))
    )
    if not ok:
        raise ValueError("merge needs two paragraphs separated by exactly one blank line")
    return "\n".join(lines[: block.end] + lines[nxt:])


def split_paragraph(doc: str, block: Block, k: int) -> str:
    """Split a paragraph so that a new paragraph starts at sentence ``k`` (1-based from the
    second sentence): the white space before it becomes a blank line."""
    lines = doc_lines(doc)
    text = _block_text(lines, block)
    spans = sentence_spans(text)
    if block.kind != "paragraph" or not 1 <= k < len(spans):
        raise ValueError(f"cannot split a {block.kind} of {len(spans)} sentence(s) at {k}")
    new = text[: spans[k - 1][1]] + "\n\n" + text[spans[k][0] :]
    return _with_block_text(lines, block, new)


def change_heading(doc: str, section: Section, title: str) -> str:
    """Replace the title of ``section``'s heading, keeping its level."""
    lines = doc_lines(doc)
    lines[section.start] = "#" * section.level + " " + title
    return "\n".join(lines)


_TYPO_KINDS = ("swap", "drop", "double")


def make_typo(word: str, rng: random.Random) -> str:
    """A misspelling of ``word`` (length >= 5): two adjacent inner letters swapped, an inner
    letter dropped or doubled; the first and last letters stay."""
    if len(word) < 5:
        raise ValueError(f"{word!r} is too short for a typo")
    for _ in range(20):
        kind = rng.choice(_TYPO_KINDS)
        i = rng.randrange(1, len(word) - 2)
        if kind == "swap" and word[i] != word[i + 1]:
            typo = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        elif kind == "drop" and word[i] not in (word[i - 1], word[i + 1]):
            typo = word[:i] + word[i + 1 :]
        elif kind == "double" and word[i] not in (word[i - 1], word[i + 1]):
            typo = word[:i] + word[i] + word[i:]
        else:
            continue
        return typo
    raise ValueError(f"no typo found for {word!r}")
