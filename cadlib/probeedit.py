"""ProbeEdit: our own corpus of 154 controlled prose edits over four documents (paper §3, §4.2).

The paper's ProbeEdit corpus (154 (doc, gold) pairs over four source documents: meeting
notes, a technical design doc, a scientific abstract and an API spec) is not public, so this
module builds an equivalent one from four documents written for this project. They ship as
package data in ``cadlib/data/probeedit/`` (read with :mod:`importlib.resources`), so a
pip-installed ``cadlib`` can build the corpus outside the repository.

Every case applies one named edit operation (:data:`OPERATIONS`) to one document and comes
with an instruction that says exactly what to do, so that the gold is determined by it.
Structural operations (delete a sentence, swap two sections, ...) pick their targets from
the document itself; operations that need new words (replace a phrase, rename a term, insert
a paragraph, change a heading) draw from hand-written pools (:data:`POOLS`). Choices go
through a ``random.Random`` seeded with a string (:data:`SEED`, document, operation), never
through hash order, so the corpus is identical on every run and machine.

Documents are hard-wrapped markdown; an edit never rewraps lines it does not need to touch
(deleting a sentence joins what is left of its first and last line, splitting a paragraph
breaks the line where the new paragraph starts, merging two paragraphs deletes the blank line
between them). ``python -m cadlib.probeedit --stats`` prints the corpus statistics
(:func:`corpus_stats`, Qwen2.5 BPE, paper Table 2) and ``--write DIR`` dumps the cases as JSONL.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from . import paper as _paper
from .cases import Corpus, EditCase
from .resolver import doc_lines
from .spans import line_cover, summarize_line_cover
from .tokenizers import qwen25_tokenizer

__all__ = [
    "VERSION",
    "SEED",
    "DOCUMENTS",
    "OPERATIONS",
    "N_CASES",
    "POOLS",
    "PAPER_STATS",
    "Section",
    "Block",
    "document_text",
    "documents",
    "sections",
    "blocks",
    "sentence_spans",
    "find_section",
    "replace_once",
    "replace_at",
    "rename_everywhere",
    "insert_paragraph",
    "delete_sentence",
    "delete_block",
    "swap_sections",
    "merge_paragraphs",
    "split_paragraph",
    "change_heading",
    "make_typo",
    "cases_per_cell",
    "probeedit_corpus",
    "corpus_stats",
    "stats_markdown",
    "write_jsonl",
]

VERSION = "v1"
SEED = 154
N_CASES = 154
WRAP = 80  # column at which the documents (and inserted paragraphs) are wrapped
DATA_PACKAGE = "cadlib"
DATA_DIR = ("data", "probeedit")

#: document name -> kind (paper §3: "meeting notes, a technical design doc, a scientific
#: abstract, an API spec"); the text is ``cadlib/data/probeedit/<name>.md``.
DOCUMENTS = {
    "meeting_notes": "meeting notes",
    "design_doc": "technical design doc",
    "abstract": "scientific abstract",
    "api_spec": "API spec",
}

#: The edit operations, in the order that fixes the balance (:func:`cases_per_cell`).
OPERATIONS = (
    "replace_phrase",
    "rename_term",
    "update_number",
    "insert_paragraph",
    "delete_sentence",
    "delete_list_item",
    "swap_sections",
    "merge_paragraphs",
    "split_paragraph",
    "fix_typo",
    "change_heading",
)

#: The paper's ProbeEdit row of Table 2 (its home is :mod:`cadlib.paper`).
PAPER_STATS = _paper.PROBEEDIT_STATS


# --------------------------------------------------------------------------- documents


def document_text(name: str) -> str:
    """The text of one of the four documents (package data ``cadlib/data/probeedit``)."""
    if name not in DOCUMENTS:
        raise ValueError(f"unknown ProbeEdit document {name!r}; valid: {', '.join(DOCUMENTS)}")
    path = resources.files(DATA_PACKAGE).joinpath(*DATA_DIR, f"{name}.md")
    return path.read_text(encoding="utf-8")


def documents() -> dict[str, str]:
    """All four documents, name -> text."""
    return {name: document_text(name) for name in DOCUMENTS}


# --------------------------------------------------------------------------- structure


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


# --------------------------------------------------------------------------- operations
# Each operation is a pure function doc -> gold that fails loudly on a target it cannot
# edit unambiguously.


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


# --------------------------------------------------------------------------- pools

#: Hand-written edits per document and operation. Paths name a section by the tail of its
#: heading path (:func:`find_section`); inserted paragraphs are wrapped at :data:`WRAP`.
POOLS: dict[str, dict[str, list[tuple]]] = {
    "meeting_notes": {
        "replace_phrase": [
            ("without telling us", "without any warning"),
            ("walked through the draft plan", "presented a first draft of the plan"),
            ("rather than to Dana alone", "as well as to Dana"),
            ("before any further feature work on it", "before anyone builds anything else on it"),
            ("so that we can compare balances", "so that we can check that balances agree"),
        ],
        "rename_term": [
            ("settlement job", "settlement run"),
            ("partial refunds", "partial refund requests"),
            ("team mailing list", "team distribution list"),
            ("runbook entry", "runbook page"),
            ("host key", "server key"),
            ("month-end close", "monthly close"),
        ],
        "insert_paragraph": [
            (
                ("Meeting 1 (4 March)", "Discussion"),
                "Lena suggested retrying failed settlement uploads automatically. The group "
                "agreed to wait for a few weeks of alert data before deciding.",
            ),
            (
                ("Meeting 2 (11 March)", "Discussion"),
                "Priya noted that the comparison query takes about forty minutes on the "
                "replica. That is fine for now, but it will need an index before phase two.",
            ),
            (
                ("Meeting 3 (18 March)", "Discussion"),
                "Sam reported that support has not received a single refund complaint since "
                "phase one went live.",
            ),
            (
                ("Meeting 3 (18 March)", "Attendees"),
                "Tomás Ferreira sent his apologies because he was on call.",
            ),
            (
                ("Meeting 2 (11 March)", "Decisions"),
                "Both decisions were agreed without objection.",
            ),
        ],
        "change_heading": [
            (("Meeting 1 (4 March)",), "Meeting 1 (Monday 4 March)"),
            (("Meeting 2 (11 March)", "Decisions"), "Decisions taken"),
            (("Meeting 3 (18 March)", "Action items"), "Action items and owners"),
            (("Meeting 1 (4 March)", "Discussion"), "Discussion notes"),
            (("Payments Platform: Weekly Sync Notes",), "Payments Platform: Weekly Sync, March"),
        ],
    },
    "design_doc": {
        "replace_phrase": [
            ("which the metrics store cannot serve at all today", "which nothing can serve today"),
            ("while keeping every existing dashboard working", "without breaking any dashboard"),
            (
                "and the hot tier keeps the current block format",
                "and the block format stays the same",
            ),
            ("marks the rolled-up points", "flags the rolled-up points"),
            ("Capacity planning is the exception", "Capacity planning is different"),
        ],
        "rename_term": [
            ("compactor", "rollup worker"),
            ("query router", "query planner"),
            ("ingest service", "ingestion gateway"),
            ("raw samples", "full-resolution samples"),
        ],
        "insert_paragraph": [
            (
                ("Ingest path",),
                "The only new requirement on the ingest service is a metric that reports the "
                "age of the oldest block it still holds.",
            ),
            (
                ("Rollout",),
                "Each step of the rollout can be undone by disabling the compactor, because "
                "raw blocks are kept until their rollups have been verified.",
            ),
            (
                ("Background",),
                "Storage cost has grown by about 4% a month over the last year, roughly in "
                "line with the number of active series.",
            ),
            (
                ("Open questions",),
                "Please add comments on these questions to the review thread before the end "
                "of the month.",
            ),
            (
                ("Query routing",),
                "The router caches the hot tier boundary and refreshes it after every "
                "compactor run.",
            ),
        ],
        "change_heading": [
            (("Summary",), "Overview"),
            (("Risks",), "Risks and mitigations"),
            (("Compaction",), "Compaction and rollups"),
            (("Query routing",), "Routing queries between tiers"),
            (("Open questions",), "Questions for reviewers"),
        ],
    },
    "abstract": {
        "replace_phrase": [
            ("are often promoted as a cheap way", "are widely recommended as a low-cost way"),
            ("where crowns may trap warm air beneath them", "where dense crowns may hold warm air"),
            ("should give priority to wide streets", "should start with wide streets"),
            (
                "which is what matters for sleep and for heat-related illness",
                "the exposure that affects sleep and heat-related illness",
            ),
            (
                "Cities warm faster than the land around them",
                "Cities heat up faster than the countryside",
            ),
        ],
        "rename_term": [
            ("pedestrian height", "head height"),
            ("building height", "mean building height"),
            ("percentage points", "pp"),
            ("wide streets", "broad streets"),
            ("hottest nights", "warmest nights"),
        ],
        "insert_paragraph": [
            (
                ("Objective",),
                "We also asked whether canopy cover changes how quickly streets cool after sunset.",
            ),
            (
                ("Study design",),
                "The three neighbourhoods lie within 4 km of each other, so they share the "
                "same weather on any given night.",
            ),
            (
                ("Measurements",),
                "Hourly wind speed and rainfall came from the nearest airport weather station.",
            ),
            (
                ("Main effect",),
                "Relative humidity did not differ between sensors with high and low canopy cover.",
            ),
            (
                ("Conclusions",),
                "Longer records from more cities are needed to test whether these results "
                "hold in hotter climates.",
            ),
        ],
        "change_heading": [
            (("Objective",), "Aim"),
            (("Effect modifiers",), "Street geometry as an effect modifier"),
            (("Statistical analysis",), "Analysis"),
            (("Conclusions",), "Interpretation"),
            (("Keywords",), "Key words"),
        ],
    },
    "api_spec": {
        "replace_phrase": [
            ("lets internal services submit", "allows internal services to enqueue"),
            ("the worker finishes it", "it runs to completion"),
            (
                "spread their requests evenly over the minute",
                "pace their requests across the minute",
            ),
            (
                "Lists the jobs in a queue, newest first.",
                "Lists the jobs in a queue, most recent first.",
            ),
            ("assigned by the server", "generated by the server"),
        ],
        "rename_term": [
            ("job identifier", "job ID"),
            ("job object", "job resource"),
            ("next_cursor", "next_page_token"),
            ("`cancelled`", "`canceled`"),
            ("the token is missing or expired", "the bearer token is missing or has expired"),
        ],
        "insert_paragraph": [
            (
                ("Authentication",),
                "Services should cache their token and refresh it shortly before it expires "
                "instead of requesting a new one for every call.",
            ),
            (
                ("Rate limits",),
                "Limits are counted per client, not per token, so rotating tokens does not "
                "raise the limit.",
            ),
            (
                ("DELETE /v2/jobs/{job_id}",),
                "Cancelling a job that is already cancelled succeeds and returns the job "
                "unchanged.",
            ),
            (
                ("The job object",),
                "Fields not listed here may be added in later versions; clients must ignore "
                "fields they do not recognise.",
            ),
            (
                ("GET /v2/jobs",),
                "A job submitted while a client is paging through a queue appears only in a "
                "new listing, never in the middle of the current one.",
            ),
        ],
        "change_heading": [
            (("Rate limits",), "Rate limiting"),
            (("The job object",), "Job object fields"),
            (("Endpoints",), "Endpoint reference"),
            (("Authentication",), "Authentication and authorization"),
            (("Job Queue API (v2)",), "Job Queue API (v2) Reference"),
        ],
    },
}


# --------------------------------------------------------------------------- instructions


def _norm(text: str) -> str:
    """Text as a user would quote it: line breaks (and continuation indents) become spaces."""
    return re.sub(r"[ \t]*\n[ \t]*", " ", text)


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


def _paragraph_sentences(doc: _Doc, block: Block) -> list[str]:
    text = _block_text(doc.lines, block)
    return [_norm(text[a:b]) for a, b in sentence_spans(text)]


def _cases_delete_sentence(doc: _Doc, rng: random.Random) -> list[_Case]:
    out = []
    for block in doc.blocks:
        if block.kind != "paragraph":
            continue
        sentences = _paragraph_sentences(doc, block)
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
    for block in doc.blocks:
        if block.kind != "paragraph":
            continue
        sentences = _paragraph_sentences(doc, block)
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


# --------------------------------------------------------------------------- corpus


def cases_per_cell(document: str, operation: str) -> int:
    """How many cases (document, operation) gets: 14 per operation, split 4/4/3/3 over the
    documents with the two 4s rotating, which gives 38 or 39 cases per document."""
    d, o = list(DOCUMENTS).index(document), OPERATIONS.index(operation)
    return 4 if (d - o) % len(DOCUMENTS) in (0, 1) else 3


def _rng(document: str, operation: str, what: str) -> random.Random:
    # a str seed is hashed with SHA-512 by random.seed: the same on every run and machine
    return random.Random(f"probeedit/{VERSION}/{SEED}/{document}/{operation}/{what}")


def _cell(document: str, operation: str, text: str) -> list[EditCase]:
    candidates = _BUILDERS[operation](_Doc(document, text), _rng(document, operation, "build"))
    seen, unique = set(), []
    for c in candidates:  # identical golds (e.g. two spots of one number) count once
        if c.gold != c.doc and (c.doc, c.gold) not in seen:
            seen.add((c.doc, c.gold))
            unique.append(c)
    k = cases_per_cell(document, operation)
    if len(unique) < k:
        raise RuntimeError(f"{document}/{operation}: {len(unique)} candidates, need {k}")
    chosen = _rng(document, operation, "pick").sample(range(len(unique)), k)
    cases = []
    for n, index in enumerate(sorted(chosen)):
        c = unique[index]
        meta = {
            "operation": operation,
            "document": document,
            "document_kind": DOCUMENTS[document],
            "params": c.params,
            "generator": f"cadlib.probeedit {VERSION}",
        }
        cases.append(EditCase(f"probeedit/{document}/{operation}/{n}", c.doc, c.gold,
                              c.instruction, meta))  # fmt: skip
    return cases


def probeedit_corpus() -> Corpus:
    """The 154 ProbeEdit cases: every (document, operation) cell, in document then
    operation order, ids ``probeedit/<document>/<operation>/<k>``."""
    cases = []
    for document, text in documents().items():
        for operation in OPERATIONS:
            cases.extend(_cell(document, operation, text))
    if len(cases) != N_CASES:
        raise RuntimeError(f"ProbeEdit has {len(cases)} cases, expected {N_CASES}")
    source = f"generated:cadlib/data/probeedit (cadlib.probeedit {VERSION})"
    return Corpus("probeedit", source, cases)


# --------------------------------------------------------------------------- statistics


def corpus_stats(cases=None, tokenizer=None) -> dict:
    """Table 2's line-level columns for a corpus (ProbeEdit by default), in Qwen2.5 BPE.

    The definitions are :mod:`cadlib.spans`'s (one place for them, shared with
    :mod:`cadlib.ceiling`): ``T`` = gold tokens;
    ``T_copy`` = the sum over oracle copy spans of the tokens of each span's lines, tokenized
    on their own as a splice would prefill them; ``T_gen = T - T_copy`` (it absorbs joining
    newlines and tokenization seams, so it can be slightly negative for a pure deletion);
    ``f_line = T_copy / T``; ``K`` = number of copy spans; span mean / p50 / p95 in tokens
    (numpy's linearly interpolated percentiles). Adds per-operation and per-document counts
    and the mean document and gold lengths.
    """
    tok = tokenizer or qwen25_tokenizer()
    cases = probeedit_corpus() if cases is None else cases
    if not cases:
        raise ValueError("corpus_stats needs at least one case")
    table2 = summarize_line_cover(line_cover(cases, tok, progress=False))
    return {
        "n": table2["n"],
        "per_operation": dict(Counter(c.meta.get("operation") for c in cases)),
        "per_document": dict(Counter(c.meta.get("document") for c in cases)),
        **{k: table2[k] for k in ("T", "T_copy", "T_gen", "f_line", "K")},
        "span_mean": table2["mean"],
        "span_p50": table2["p50"],
        "span_p95": table2["p95"],
        "gold_tokens_mean": table2["T"] / len(cases),
        "doc_tokens_mean": sum(tok.count(c.doc) for c in cases) / len(cases),
        "tokenizer": tok.name,
    }


def stats_markdown(stats: dict | None = None) -> str:
    """The ours-vs-paper table of :func:`corpus_stats` as markdown (for the README)."""
    ours = stats or corpus_stats()
    rows = [
        ("cases n", "n", "{:,}"),
        ("gold tokens T", "T", "{:,}"),
        ("copied tokens T_copy", "T_copy", "{:,}"),
        ("generated tokens T_gen", "T_gen", "{:,}"),
        ("line-level copy fraction f_line", "f_line", "{:.1%}"),
        ("copy spans K", "K", "{:,}"),
        ("mean copy span (tokens)", "span_mean", "{:.1f}"),
        ("p50 copy span (tokens)", "span_p50", "{:.1f}"),
        ("p95 copy span (tokens)", "span_p95", "{:.1f}"),
        ("mean gold tokens per case", "gold_tokens_mean", "{:.1f}"),
    ]
    out = ["| statistic | ours | paper (Table 2) | ours / paper |", "| --- | ---: | ---: | ---: |"]
    for label, key, fmt in rows:
        a, b = ours[key], PAPER_STATS[key]
        out.append(f"| {label} | {fmt.format(a)} | {fmt.format(b)} | {a / b:.2f} |")
    return "\n".join(out)


def write_jsonl(path: str | Path, cases=None) -> Path:
    """Write the cases (ProbeEdit by default) as JSON lines: id, instruction, doc, gold, meta."""
    cases = probeedit_corpus() if cases is None else cases
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for c in cases:
            row = {"id": c.id, "instruction": c.instruction, "doc": c.doc, "gold": c.gold,
                   "meta": c.meta}  # fmt: skip
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cadlib.probeedit", description=__doc__)
    parser.add_argument("--write", metavar="DIR", help="write DIR/probeedit.jsonl")
    parser.add_argument("--stats", action="store_true", help="print the corpus statistics")
    args = parser.parse_args(argv)
    if not (args.write or args.stats):
        parser.error("nothing to do: give --write DIR and/or --stats")
    corpus = probeedit_corpus()
    if args.write:
        print(write_jsonl(Path(args.write) / "probeedit.jsonl", corpus))
    if args.stats:
        stats = corpus_stats(corpus)
        print(json.dumps(stats, indent=1))
        print(stats_markdown(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
