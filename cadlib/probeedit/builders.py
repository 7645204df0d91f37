"""Case builders: for one document and operation, every candidate edit with an instruction
that determines its gold (the quoted text and, where it is not unique, the section it is in)."""

from __future__ import annotations

import random
import re
import textwrap
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from cadlib.resolver import doc_lines

from .operations import (
    change_heading,
    delete_block,
    delete_sentence,
    insert_paragraph,
    make_typo,
    merge_paragraphs,
    rename_everywhere,
    replace_at,
    replace_once,
    split_paragraph,
    swap_sections,
)
from .spec import POOLS, WRAP
from .structure import (
    _HEADING,
    Block,
    Section,
    _block_text,
    _norm,
    blocks,
    find_section,
    sections,
    sentence_spans,
)


def _count_in(lines: list[str], start: int, end: int, quote: str) -> int:
    return _norm("\n".join(lines[start:end])).count(quote)


@dataclass
class _Doc:
    """A document with its parsed structure, and helpers to describe places in it."""

    name: str
    text: str

    def __post_init__(self):
        self.lines = doc_lines(self.text)
        self.sections = sections(self.text)
        self.blocks = blocks(self.text)
        self.titles = Counter(s.title for s in self.sections)

    def enclosing(self, line: int) -> list[Section]:
        """Sections (below the document title) that contain ``line``, innermost first."""
        found = [s for s in self.sections if s.start <= line < s.end and s.level > 1]
        return sorted(found, key=lambda s: -s.level)

    def qualified(self, section: Section) -> tuple[str, str]:
        """``('"Decisions"', ' of "Meeting 2 (11 March)"')``: the quoted title and as many
        enclosing titles as it takes to make it unique in the document."""
        path = [t for t, lv in zip(section.path, section.levels, strict=True) if lv > 1]
        path = path or [section.title]
        k = len(path) - 1
        while sum(s.path[-(len(path) - k) :] == tuple(path[k:]) for s in self.sections) > 1:
            k -= 1
            if k < 0:
                raise ValueError(f"section {section.path!r} has no unique name")
        return f'"{path[-1]}"', "".join(f' of "{t}"' for t in reversed(path[k:-1]))

    def phrase(self, section: Section) -> str:
        """``the "Decisions" section of "Meeting 2 (11 March)"``."""
        title, qualifier = self.qualified(section)
        return f"the {title} section{qualifier}"

    def scope(self, line: int, quote: str, rng: random.Random) -> str | None:
        """Where to say the quoted text is: ``""`` when it is unique in the document (or, at
        random, the section that holds it), a section name when only that makes it unique,
        ``None`` when nothing does."""
        enclosing = self.enclosing(line)
        if _count_in(self.lines, 0, len(self.lines), quote) == 1:
            if enclosing and rng.random() < 0.3:
                return self.phrase(enclosing[0])
            return ""
        for section in enclosing:
            if _count_in(self.lines, section.start, section.end, quote) == 1:
                return self.phrase(section)
        return None


def _in(scope: str) -> str:
    return f" in {scope}" if scope else ""


def _paragraph_head(doc: _Doc, block: Block, min_words: int = 4) -> str | None:
    """The shortest start of a paragraph (at least ``min_words`` words) unique in the doc."""
    words = _norm(_block_text(doc.lines, block)).split(" ")
    for n in range(min_words, len(words) + 1):
        head = " ".join(words[:n])
        if _count_in(doc.lines, 0, len(doc.lines), head) == 1:
            return head
    return None


@dataclass
class _Case:
    doc: str
    gold: str
    instruction: str
    params: dict


def _cases_replace_phrase(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    for old, new in POOLS[doc.name]["replace_phrase"]:
        text = rng.choice(
            [
                f'Replace "{old}" with "{new}".',
                f'Change the phrase "{old}" to "{new}".',
                f'Reword "{old}" as "{new}"; leave everything else as it is.',
            ]
        )
        out.append(
            _Case(doc.text, replace_once(doc.text, old, new), text, {"old": old, "new": new})
        )
    return out


def _cases_rename_term(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    for old, new in POOLS[doc.name]["rename_term"]:
        n = doc.text.count(old)
        all_n = "both" if n == 2 else f"all {n}"
        text = rng.choice(
            [
                f'Rename "{old}" to "{new}" everywhere in the document.',
                f'Replace every occurrence of "{old}" with "{new}".',
                f'Change {all_n} occurrences of "{old}" to "{new}".',
            ]
        )
        gold = rename_everywhere(doc.text, old, new)
        out.append(_Case(doc.text, gold, text, {"old": old, "new": new}))
    return out


_MONTHS = "January February March April May June July August September October November December"
_NUMBER = re.compile(r"(?<![\w.,:/$-])\$?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w:/-]|[.,]\d)")


def _new_number(old: str, after: str, rng: random.Random) -> str:
    """A different, plausible value in the same format as ``old``."""
    if re.match(rf"({_MONTHS.replace(' ', '|')})\b", after):  # a day of the month
        day = int(old)
        return str(day + rng.choice([1, 2, 3, 4, 7]) if day <= 21 else day - rng.choice([1, 2, 3]))
    if "." in old:
        places = len(old.split(".")[1])
        value = round(float(old) + rng.choice([-2, -1, 1, 2, 3]) * 10**-places, places)
        value = value if value > 0 else float(old) + 10**-places
        return f"{value:.{places}f}"
    value = int(old.replace(",", ""))
    if value < 10:
        new = value + rng.choice([1, 2, 3]) if value <= 3 or rng.random() < 0.5 else value - 1
    else:
        step = value * rng.choice([0.1, 0.2, 0.25, 0.5])
        unit = 10 ** (len(str(int(step))) - 1)
        step = max(1, round(step / unit) * unit)
        up = rng.random() < 0.5 or value - step <= 0
        if after.startswith("%") and value + step > 100:
            up = False
        new = value + step if up else value - step
    return f"{new:,}" if "," in old else str(new)


_STOPWORDS = set("a an and at by for from in of on or over per than the to with within".split())


def _number_windows(line: str, m: re.Match):
    """``(start, end)`` spans of ``line`` to quote around the number ``m``, shortest first:
    two or more words that do not end in a stop word or run across a sentence break, and
    last the whole line."""
    words = [(w.start(), w.end()) for w in re.finditer(r"\S+", line)]
    k = next(j for j, (a, b) in enumerate(words) if a <= m.start(1) < b)
    for lo, hi in [(0, 3), (0, 2), (-1, 2), (-1, 3), (-2, 1), (-3, 1), (-1, 1), (-2, 3), (-3, 3)]:
        lo, hi = max(k + lo, 0), min(k + hi, len(words))
        a, b = words[lo][0], words[hi - 1][1]
        while b > m.end(1) and line[b - 1] in ".,;:)":
            b -= 1
        while a < m.start() and line[a] in "(-":
            a += 1
        quote = line[a:b]
        last = re.sub(r"\W", "", quote.split()[-1]).lower()
        if len(quote.split()) >= 2 and last not in _STOPWORDS and not re.search(r"[.;!?] ", quote):
            yield a, b
    a = len(line) - len(line.lstrip(" -"))
    yield a, len(line.rstrip(" ."))


def _cases_update_number(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    offset = 0
    spots = []
    for i, line in enumerate(doc.lines):
        if not _HEADING.match(line):
            outside = re.sub(r"`[^`]*`", lambda m: " " * len(m.group()), line)
            for m in _NUMBER.finditer(outside):
                if not line[: m.start()].rstrip().endswith("RFC"):
                    spots.append((i, offset, m))
        offset += len(line) + 1
    for i, line_offset, m in spots:
        line, old = doc.lines[i], m.group(1)
        new = _new_number(old, line[m.end(1) :].lstrip(), rng)
        scope = None
        for a, b in _number_windows(line, m):
            quote = line[a:b]
            scope = doc.scope(i, quote, rng)
            if scope is not None:
                break
        if scope is None:
            continue
        pos = m.start(1) - a
        new_quote = quote[:pos] + new + quote[pos + len(old) :]
        gold = replace_at(doc.text, line_offset + a, quote, new_quote)
        text = rng.choice(
            [
                f'Change "{quote}" to "{new_quote}"{_in(scope)}.',
                f'Update the number{_in(scope)}: "{quote}" should now read "{new_quote}".',
                f'The number in "{quote}"{_in(scope)} is out of date; make it "{new_quote}".',
            ]
        )
        params = {"line": i + 1, "old": quote, "new": new_quote, "scope": scope}
        out.append(_Case(doc.text, gold, text, params))
    return out


def _cases_insert_paragraph(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    for path, paragraph in POOLS[doc.name]["insert_paragraph"]:
        section = find_section(doc.text, *path)
        wrapped = "\n".join(textwrap.wrap(paragraph, WRAP, break_on_hyphens=False))
        where = doc.phrase(section)
        text = rng.choice(
            [
                f"At the end of {where}, add this paragraph, exactly as written:",
                f"Add the following paragraph as the last paragraph of {where}:",
                f"Append a new paragraph to {where} with this text:",
            ]
        )
        gold = insert_paragraph(doc.text, section, wrapped)
        params = {"section": list(path), "text": wrapped}
        out.append(_Case(doc.text, gold, f"{text}\n\n{wrapped}", params))
    return out


def _paragraphs(doc: _Doc) -> Iterator[tuple[Block, list[str]]]:
    """Each paragraph block of ``doc`` with its (normalized) sentences, in order: what the
    sentence-level builders walk. It draws no random numbers, so their draws are unchanged."""
    for block in doc.blocks:
        if block.kind == "paragraph":
            text = _block_text(doc.lines, block)
            yield block, [_norm(text[a:b]) for a, b in sentence_spans(text)]


def _cases_delete_sentence(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    for block, sentences in _paragraphs(doc):
        if len(sentences) < 2:
            continue
        for k, sentence in enumerate(sentences):
            scope = doc.scope(block.start, sentence, rng)
            if scope is None:
                continue
            text = rng.choice(
                [
                    f'Delete this sentence{_in(scope)}: "{sentence}"',
                    f"Remove the following sentence{_in(scope)} and keep the rest of its "
                    f'paragraph: "{sentence}"',
                    f'Cut this sentence{_in(scope)}: "{sentence}"',
                ]
            )
            params = {"line": block.start + 1, "sentence": k, "text": sentence, "scope": scope}
            out.append(_Case(doc.text, delete_sentence(doc.text, block, k), text, params))
    return out


def _cases_delete_list_item(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    items = [b for b in doc.blocks if b.kind == "item"]
    for block in items:
        neighbours = [b for b in items if b.start == block.end or b.end == block.start]
        if not neighbours:  # the only item of its list: deleting it would orphan the list
            continue
        item = _norm(_block_text(doc.lines, block))[2:]
        scope = doc.scope(block.start, item, rng)
        if scope is None:
            continue
        text = rng.choice(
            [
                f'Delete this list item{_in(scope)}: "{item}"',
                f'Remove the bullet{_in(scope)} that reads "{item}"',
                f'Drop this item from the list{_in(scope)}: "{item}"',
            ]
        )
        params = {"line": block.start + 1, "text": item, "scope": scope}
        out.append(_Case(doc.text, delete_block(doc.text, block), text, params))
    return out


def _cases_swap_sections(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    for a in doc.sections:
        for b in doc.sections:
            if a.level == b.level > 1 and a.end == b.start:
                parent = doc.enclosing(a.start)[1:2]
                where = ""
                if parent and (doc.titles[a.title] > 1 or doc.titles[b.title] > 1):
                    where = f"In {doc.phrase(parent[0])}, "
                na, nb = f'"{a.title}"', f'"{b.title}"'
                text = rng.choice(
                    [
                        f"swap the sections {na} and {nb}, so that {nb} comes first.",
                        f"move the {nb} section, with everything under it, above the {na} section.",
                        f"put the {nb} section before the {na} section.",
                    ]
                )
                text = where + text if where else text[0].upper() + text[1:]
                params = {"first": list(a.path), "second": list(b.path)}
                out.append(_Case(doc.text, swap_sections(doc.text, a, b), text, params))
    return out


def _cases_merge_paragraphs(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    paragraphs = [b for b in doc.blocks if b.kind == "paragraph"]
    for p, q in zip(paragraphs, paragraphs[1:], strict=False):
        if q.start != p.end + 1:  # one blank line apart, hence in the same section
            continue
        head = _paragraph_head(doc, q)
        if head is None:
            continue
        text = rng.choice(
            [
                f'Merge the paragraph that begins "{head}" into the paragraph before it by '
                "deleting the blank line between them.",
                f'Join the paragraph starting "{head}" to the previous one: remove the blank '
                "line that separates them and change nothing else.",
                f'Make "{head} ..." part of the preceding paragraph (just drop the blank line '
                "between the two).",
            ]
        )
        params = {"line": p.start + 1, "next_line": q.start + 1, "head": head}
        out.append(_Case(doc.text, merge_paragraphs(doc.text, p), text, params))
    return out


def _cases_split_paragraph(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    for block, sentences in _paragraphs(doc):
        for k in range(1, len(sentences)):
            words = sentences[k].split(" ")
            quote = next(
                (
                    " ".join(words[:n])
                    for n in range(4, len(words) + 1)
                    if _count_in(doc.lines, 0, len(doc.lines), " ".join(words[:n])) == 1
                ),
                None,
            )
            if quote is None:
                continue
            ellipsis = "" if quote == sentences[k] else " ..."
            text = rng.choice(
                [
                    f"Split the paragraph in two so that a new paragraph starts at the sentence "
                    f'"{quote}{ellipsis}". Leave the other line breaks as they are.',
                    f'Start a new paragraph at "{quote}{ellipsis}" (put a blank line before '
                    "that sentence; do not rewrap anything else).",
                    f'Break the paragraph before the sentence "{quote}{ellipsis}", so that this '
                    "sentence and the rest become their own paragraph; keep other line breaks.",
                ]
            )
            params = {"line": block.start + 1, "sentence": k, "head": quote}
            out.append(_Case(doc.text, split_paragraph(doc.text, block, k), text, params))
    return out


def _cases_fix_typo(doc: _Doc, rng: random.Random) -> list[_Case]:
    """Candidates are the words of prose and list items; each case's *doc* carries the typo
    and its gold is the original document."""
    out = []
    offset = 0
    in_text = {i for b in doc.blocks if b.kind != "heading" for i in range(b.start, b.end)}
    for i, line in enumerate(doc.lines):
        if i in in_text:
            outside = re.sub(r"`[^`]*`", lambda m: " " * len(m.group()), line)
            for m in re.finditer(r"(?<![\w'-])[a-z]{6,}(?![\w'-])", outside):
                word = m.group()
                typo = make_typo(word, rng)
                if re.search(rf"(?i){re.escape(typo)}", doc.text):
                    continue
                at = offset + m.start()
                typo_doc = replace_at(doc.text, at, word, typo)
                text = rng.choice(
                    [
                        f'Fix the typo "{typo}"; it should be "{word}".',
                        f'Correct the misspelling "{typo}" to "{word}".',
                        f'There is a typo: "{typo}" should read "{word}". Please fix it.',
                    ]
                )
                params = {"line": i + 1, "typo": typo, "word": word}
                out.append(_Case(typo_doc, doc.text, text, params))
        offset += len(line) + 1
    return out


def _cases_change_heading(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    for path, title in POOLS[doc.name]["change_heading"]:
        section = find_section(doc.text, *path)
        name, qualifier = doc.qualified(section)
        text = rng.choice(
            [
                f'Rename the heading {name}{qualifier} to "{title}".',
                f'Change the heading {name}{qualifier} to "{title}", keeping its level.',
                f'Retitle {doc.phrase(section)} as "{title}".',
            ]
        )
        params = {"section": list(path), "title": title}
        out.append(_Case(doc.text, change_heading(doc.text, section, title), text, params))
    return out


_BUILDERS = {
    "replace_phrase": _cases_replace_phrase,
    "rename_term": _cases_rename_term,
    "update_number": _cases_update_number,
    "insert_paragraph": _cases_insert_paragraph,
    "delete_sentence": _cases_delete_sentence,
    "delete_list_item": _cases_delete_list_item,
    "swap_sections": _cases_swap_sections,
    "merge_paragraphs": _cases_merge_paragraphs,
    "split_paragraph": _cases_split_paragraph,
    "fix_typo": _cases_fix_typo,
    "change_heading": _cases_change_heading,
}
