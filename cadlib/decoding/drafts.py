"""Drafts a decoder verifies in one forward (issue 17 §3; the paper's Appendix M points here).

Three sources of guessed ids, one class each under one protocol (:class:`DraftSource`, the
shape of ``transformers``' candidate generators), composed by one :class:`Drafter` shared by
the decoder (:class:`cadlib.decoding.decoder.CopyDecoder`'s ``drafts=`` option) and the exact
accounting (:func:`cadlib.costs.accounting.composed`), so that what is counted is what runs:

* **prompt lookup** (:class:`PromptLookupDrafts`; the rule is
  :mod:`cadlib.decoding.prompt_lookup`'s): ``transformers``' ``PromptLookupCandidateGenerator``
  rule -- the largest ``n`` (down to 1) whose last n-gram occurred earlier with a continuation,
  its leftmost occurrence, and up to ``K`` ids after it;
* **cursor lookup** (:class:`CursorDrafts`; :func:`cadlib.decoding.prompt_lookup.cursor_lookup`):
  the same rule confined to the document lines a ``<gen>`` body stands in for, which only an
  edit program knows (the body starts right after the last copied line);
* **speculative op headers** (:class:`HeaderDrafts`; :func:`header_guess`): the next op's
  header guessed from what is already known, the document's line count and the ops so far --
  after a copy a ``<gen>`` opener, else a copy that resumes where the document would
  continue, at the end ``</program>`` -- drafted as soon as a body's closer begins, guessed
  again at each later decision of a copy's range from the digits decided so far, and carrying
  the splice and the next header once the range is known and its splice short.

The sources of one drafter share a :class:`ProgramPosition`: the ops a transcript holds so far,
parsed once per prefix, and the body being decoded.

Greedy verification keeps the longest prefix of a draft equal to what the decoder would have
chosen; a draft never changes the output, only how many forwards produce it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from cadlib.escape import encode_gen_body
from cadlib.grammar import Copy, StreamingParser
from cadlib.resolver import copied_text

from .fsm import Transcript
from .prompt_lookup import NgramIndex, cursor_lookup, ngram_index

__all__ = [
    "BODY_PLD",
    "CURSOR_LINES",
    "SPLICE_CHAIN",
    "DRAFT_KINDS",
    "composition_drafts",
    "resume_line",
    "header_guess",
    "lines_written",
    "DraftSource",
    "ProgramPosition",
    "PromptLookupDrafts",
    "CursorDrafts",
    "HeaderDrafts",
    "Drafter",
]

#: Prompt-lookup setting ``(K, n)`` of the drafts inside ``<gen>`` bodies (the book's timed
#: prompt-lookup setting).
BODY_PLD = (10, 2)

#: Document lines a ``"cursor"`` draft looks in, from the line after the last copied one.
CURSOR_LINES = 20

#: Longest splice (ids, with its ``"/>``) that a guessed copy to the document's end carries
#: in its draft: a wrong guess feeds it for nothing, and on CPU a forward's cost grows with
#: its ids (chapter 2's s(N)), so only short tails ride along.
SPLICE_CHAIN = 64

#: Most ids a copy's range (start, dash, end) is searched for behind a decision.
RANGE_IDS = 24


#: The drafts (:attr:`Drafter.KINDS`) named by the ``+`` parts of a composition's setting
#: (:data:`cadlib.costs.accounting.COMPOSITIONS`).
DRAFT_KINDS = {"+PLD": "pld", "+cursor": "cursor", "+headers": "headers"}


def composition_drafts(setting: str) -> tuple[str, ...]:
    """The ``drafts=`` of :class:`cadlib.decoding.decoder.CopyDecoder` that runs the composition
    ``setting`` (e.g. ``"m=0 +cursor +headers"`` -> ``("cursor", "headers")``)."""
    return tuple(kind for part, kind in DRAFT_KINDS.items() if part in setting.split())


def lines_written(text: str) -> int:
    """Document lines a ``<gen>`` body of ``text`` stands for (a final newline ends the last
    line rather than starting another)."""
    return len(text.split("\n")) - text.endswith("\n")


def resume_line(prev, last_end: int, n_lines: int) -> int:
    """The line a copy after ``prev`` is guessed to resume at: ``last_end + 1 + r`` (``r`` =
    the lines ``prev``'s body wrote, as if it replaced as many; 0 after a copy or at the
    start), at most the document's last line."""
    r = 0 if prev is None or isinstance(prev, Copy) else lines_written(prev.text)
    return min(last_end + 1 + r, n_lines)


def header_guess(prev, last_end: int, n_lines: int, table) -> list[int]:
    """The ids of the next op's header, guessed without the gold.

    ``prev``: the op before (``None`` at the start), ``last_end``: the last line the copies so
    far reached (0 at the start), ``n_lines``: the document's line count, ``table``: the
    :class:`cadlib.decoding.token_table.TokenTable`. At the document's end ``</program>``; after a
    copy a ``<gen>`` opener; else a copy from :func:`resume_line` to the document's end,
    without its terminator (the range's end is a decision the model may still change).
    """
    if last_end >= n_lines:
        return list(table.op_literals["close"])
    if isinstance(prev, Copy):
        return list(table.op_literals["gen"])
    i = resume_line(prev, last_end, n_lines)
    return [
        *table.op_literals["copy"],
        *table.encode(str(i)),
        *table.dash,
        *table.encode(str(n_lines)),
    ]


class DraftSource(Protocol):
    """One way of guessing the ids after a transcript (the shape of ``transformers``' candidate
    generators): :class:`PromptLookupDrafts`, :class:`CursorDrafts`, :class:`HeaderDrafts`."""

    def propose(
        self, ids: Sequence[int], kinds: Sequence[str], next_kind: str, op_start: int | None
    ) -> list[int] | None:
        """The draft for position ``len(ids)`` (arguments as :meth:`Drafter.propose`);
        ``None`` where this source does not guess (the next one is asked), ``[]`` where it
        guesses nothing (no other source is asked)."""


class ProgramPosition:
    """Where a transcript stands in its program, shared by the sources of one :class:`Drafter`:
    the op before a position and the last copied line (parsed once per prefix), the body being
    decoded and how much of its closer has begun."""

    def __init__(self, table):
        self.table = table
        self._parsed: tuple = (None, None)  # (position parsed up to, (prev op, last end))

    def ops_before(self, ids: Sequence[int], kinds: Sequence[str], upto: int) -> tuple:
        """:func:`_ops_in` the first ``upto`` ids, a prefix of what the run produced (cached
        for the last ``upto``: every decision of a body asks about the same prefix)."""
        if self._parsed[0] != upto:
            self._parsed = (upto, _ops_in(ids[:upto], kinds[:upto], self.table))
        return self._parsed[1]

    def body(self, ids: Sequence[int], kinds: Sequence[str]) -> Sequence[int]:
        """The ``<gen>`` body ids that end the transcript (none outside a body)."""
        return ids[len(ids) - _trailing_run(kinds, "gen") :]

    def closer_begun(self, body: Sequence[int]) -> int:
        """How many ids of ``</gen>`` end ``body`` when its closer has begun (else 0)."""
        close = self.table.gen_close
        for j in range(min(len(close) - 1, len(body)), 0, -1):
            if tuple(body[len(body) - j :]) == tuple(close[:j]):
                return j
        return 0

    def open_body(
        self, ids: Sequence[int], kinds: Sequence[str], next_kind: str
    ) -> Sequence[int] | None:
        """The body so far when the next id is one of its ids and its closer has not begun
        (where the body sources guess), else ``None``."""
        if next_kind != "gen":
            return None
        body = self.body(ids, kinds)
        return None if self.closer_begun(body) else body


class PromptLookupDrafts:
    """``"pld"``: inside a ``<gen>`` body, prompt lookup over the prompt and the ids so far
    (``(K, n)`` = the drafter's ``body_pld``, :class:`NgramIndex`)."""

    def __init__(self, position: ProgramPosition, prompt: Sequence[int], K: int, n: int):
        self.position, self.prompt, self.K, self.n = position, prompt, K, n
        self._index: NgramIndex | None = None  # built at the first draft

    def propose(self, ids, kinds, next_kind, op_start) -> list[int] | None:
        """:meth:`after` inside an open body, else ``None``."""
        if self.position.open_body(ids, kinds, next_kind) is None:
            return None
        return self.after(ids)

    def after(self, ids: Sequence[int]) -> list[int]:
        """The prompt-lookup draft after the prompt and ``ids`` (which extend the ids of the
        previous call)."""
        if self._index is None:
            self._index = NgramIndex(self.K, self.n)
            self._index.extend(self.prompt)
        self._index.extend(ids[len(self._index.seq) - len(self.prompt) :])
        return self._index.draft()


class CursorDrafts:
    """``"cursor"``: inside a body, prompt lookup that first looks in the document lines the
    body stands in for -- the :data:`CURSOR_LINES` lines after the last copied one, tokenized
    as a body -- and takes the leftmost match there (an edit usually rewrites part of those
    lines and keeps the rest), else the ``"pld"`` rule (``fallback``); an empty body drafts the
    first K ids of those lines (:meth:`first_ids`)."""

    def __init__(
        self,
        position: ProgramPosition,
        table,
        lines: Sequence[str],
        K: int,
        n: int,
        fallback: PromptLookupDrafts,
    ):
        self.position, self.table, self.lines = position, table, lines
        self.K, self.n, self.fallback = K, n, fallback
        self._upcoming: dict[int, tuple] = {}

    def propose(self, ids, kinds, next_kind, op_start) -> list[int] | None:
        """The lookup in the lines ahead, else the fallback's, inside an open body; else
        ``None``."""
        body = self.position.open_body(ids, kinds, next_kind)
        if body is None:
            return None
        _, last_end = self.position.ops_before(ids, kinds, len(ids) - len(body))
        return self._lookup(body, last_end) or self.fallback.after(ids)

    def first_ids(self, last_end: int) -> list[int]:
        """The first K ids of the lines after ``last_end``, as a body."""
        return list(self._upcoming_ids(last_end)[0][: self.K])

    def _lookup(self, body: Sequence[int], last_end: int) -> list[int]:
        """The draft after ``body`` from the lines ahead (``[]``: no match there)."""
        if not body:
            return self.first_ids(last_end)
        ahead, firsts = self._upcoming_ids(last_end)
        return cursor_lookup(ahead, firsts, body, self.K, self.n)

    def _upcoming_ids(self, last_end: int) -> tuple:
        """The ids of the :data:`CURSOR_LINES` lines after ``last_end`` as a body, and their
        n-gram index (cached per ``last_end``)."""
        got = self._upcoming.get(last_end)
        if got is None:
            text = "\n".join(self.lines[last_end : last_end + CURSOR_LINES])
            up = list(self.table.body_ids(encode_gen_body(text)))
            got = self._upcoming[last_end] = (up, ngram_index(up, self.n))
        return got


class HeaderDrafts:
    """``"headers"``: at the first decision of an op, :func:`header_guess`; and as soon as a
    body's closer has begun (its first id decided), the rest of ``</gen>`` with the next op's
    guessed header, one forward earlier. A guessed copy that resumes after a body and runs to
    the document's end (so ``</program>`` follows) carries its ``"/>``, its splice and
    ``</program>`` too when the splice is at most :data:`SPLICE_CHAIN` ids: one forward then
    verifies the whole rest of the program. At a later decision inside a copy's range the rest
    of the range is guessed again from the digits decided so far (the start taken as complete,
    the end as the document's end) and carries, in the same way, its ``"/>``, a short splice
    and the next op's guessed header. With a ``cursor`` (``"cursor"`` drafted too) a guessed
    ``<gen>`` opener carries the first ids of the lines ahead (:meth:`CursorDrafts.first_ids`).
    Inside an open body it does not guess (``None``)."""

    def __init__(
        self,
        position: ProgramPosition,
        table,
        lines: Sequence[str],
        cursor: CursorDrafts | None = None,
    ):
        self.position, self.table, self.lines, self.cursor = position, table, lines, cursor
        self.n_lines = len(lines)
        self._closer = tuple(table.gen_close) + tuple(table.after_gen_close)

    def propose(self, ids, kinds, next_kind, op_start) -> list[int] | None:
        """The rest of the guessed header at an op's first decision, the rest of a range, or
        the rest of a begun closer with the next header; ``None`` inside an open body."""
        if op_start is not None:
            prev, last_end = self.position.ops_before(ids, kinds, op_start)
            return self._header(prev, last_end)[len(ids) - op_start :]
        if next_kind != "gen":
            return self._range_rest(ids, kinds)
        closing = self.position.closer_begun(self.position.body(ids, kinds))
        if not closing:
            return None
        ext = self._closer[closing:]
        prev, last_end = _ops_in([*ids, *ext], [*kinds, *(["gen"] * len(ext))], self.table)
        return [*ext, *self._header(prev, last_end)]

    def _header(self, prev, last_end: int) -> list[int]:
        """:func:`header_guess`, carrying the first body ids after a ``<gen>`` opener (with a
        cursor) or the rest of the program after a copy to the document's end."""
        guess = header_guess(prev, last_end, self.n_lines, self.table)
        if guess == list(self.table.op_literals["gen"]) and self.cursor is not None:
            return [*guess, *self.cursor.first_ids(last_end)]
        if prev is not None and not isinstance(prev, Copy) and last_end < self.n_lines:
            start = resume_line(prev, last_end, self.n_lines)  # the guess copies start..end
            return [*guess, *self._after_range(start, self.n_lines)]
        return guess

    def _range_rest(self, ids: Sequence[int], kinds: Sequence[str]) -> list[int]:
        """At a later decision inside a copy's range (the guess at the op's first decision was
        wrong or stopped short): the rest of the most likely range given the ids decided so
        far, then what :meth:`_after_range` carries. The guesses, first match wins: from
        :func:`resume_line` to the document's end; the start decided so far, taken as
        complete, to the end; once the start is complete (the dash), its end the document's
        end; else the end decided so far taken as complete. ``[]`` outside a range."""
        t = self.table
        lit = t.op_literals["copy"]
        at = _literal_end(ids, lit, RANGE_IDS)
        if at is None:
            return []
        decided = list(ids[at:])
        dash = _find(decided, t.dash)
        start_ids = decided if dash is None else decided[:dash]
        end_ids = [] if dash is None else decided[dash + len(t.dash) :]
        if dash == 0 or any(i not in t.digits for i in (*start_ids, *end_ids)):
            return []
        prev, last_end = self.position.ops_before(ids, kinds, at - len(lit))
        r = resume_line(prev, last_end, self.n_lines)
        to_end = list(t.encode(str(self.n_lines)))
        guesses = [(r, [*t.encode(str(r)), *t.dash, *to_end])]
        if start_ids:
            guesses.append((_number(start_ids, t), [*start_ids, *t.dash, *to_end]))
        for start, guess in guesses:
            if len(decided) < len(guess) and guess[: len(decided)] == decided:
                if not 1 <= start <= self.n_lines:
                    return []
                return [*guess[len(decided) :], *self._after_range(start, self.n_lines)]
        if not end_ids:
            return []
        return self._after_range(_number(start_ids, t), _number(end_ids, t))

    def _after_range(self, start: int, end: int) -> list[int]:
        """What follows a copy of lines ``start..end`` once its range is decided: its ``"/>``
        and splice, then the next op's guessed header (:meth:`_header`), when the splice is
        at most :data:`SPLICE_CHAIN` ids (else ``[]``: too many ids to feed on a guess)."""
        if not 1 <= start <= end <= self.n_lines:
            return []
        text = copied_text(self.lines, start, end)
        if len(text.encode()) > SPLICE_CHAIN * self.table.longest_token:
            return []
        tail = [i for i, _ in self.table.copy_end(text)]
        if len(tail) > SPLICE_CHAIN:
            return []
        return [*tail, *self._header(Copy(start, end), end)]


class Drafter:
    """What one decoder run drafts at each decision (:class:`cadlib.decoding.decoder.CopyDecoder`'s
    ``drafts=`` option), fed only what the decoder has already produced; the accounting
    (:func:`cadlib.costs.accounting.composed`) drives the same object along the oracle transcript,
    so what is counted is what runs. ``kinds`` (any of :data:`KINDS`) name the sources it asks,
    first answer wins: ``"headers"`` (:class:`HeaderDrafts`, given the cursor when ``"cursor"``
    is drafted too), then inside a body ``"cursor"`` (:class:`CursorDrafts`) or else ``"pld"``
    (:class:`PromptLookupDrafts`, also the cursor's fallback); they share one
    :class:`ProgramPosition`.

    ``max_ids`` caps every draft (``None``: no cap). A verify forward feeds the whole draft
    and computes the logits of each of its positions, so a rejected tail costs compute that
    nothing uses; what that costs depends on the engine (how a forward's time grows with its
    ids, the price of a logits row), hence each engine's own cap
    (:attr:`cadlib.decoding.engines.Engine.draft_max_ids`).
    """

    KINDS = ("pld", "cursor", "headers")

    def __init__(
        self,
        kinds,
        table,
        doc: str,
        prompt: Sequence[int],
        body_pld=BODY_PLD,
        max_ids: int | None = None,
    ):
        unknown = set(kinds) - set(self.KINDS)
        if unknown:
            raise ValueError(f"unknown drafts {sorted(unknown)}; use some of {self.KINDS}")
        if max_ids is not None and max_ids < 1:
            raise ValueError(f"a draft cap needs max_ids >= 1 (or None), got {max_ids}")
        self.max_ids = max_ids
        self.kinds, self.table = frozenset(kinds), table
        K, n = body_pld
        self.sources = _sources(self.kinds, table, doc.split("\n"), prompt, K, n)

    def propose(
        self, ids: Sequence[int], kinds: Sequence[str], next_kind: str, op_start: int | None
    ) -> list[int]:
        """The draft for position ``len(ids)`` (whose kind is ``next_kind``), given the
        transcript so far; ``op_start``: where the current op began when this is its first
        decision, else ``None``. At most ``max_ids`` ids."""
        for source in self.sources:
            draft = source.propose(ids, kinds, next_kind, op_start)
            if draft is not None:
                return draft if self.max_ids is None else draft[: self.max_ids]
        return []


def _sources(
    kinds: frozenset, table, lines: list[str], prompt: Sequence[int], K: int, n: int
) -> list[DraftSource]:
    """The sources of :class:`Drafter` for ``kinds``, in the order it asks them."""
    position = ProgramPosition(table)
    lookup = PromptLookupDrafts(position, prompt, K, n)
    cursor = CursorDrafts(position, table, lines, K, n, lookup) if "cursor" in kinds else None
    body = cursor if cursor is not None else lookup if "pld" in kinds else None
    headers = HeaderDrafts(position, table, lines, cursor) if "headers" in kinds else None
    return [source for source in (headers, body) if source is not None]


def _ops_in(ids, kinds, table) -> tuple:
    """``(the last complete op or None, the end line of the last copy or 0)`` of the program
    that the transcript ``ids`` / ``kinds`` holds so far."""
    text = Transcript(tuple(ids), tuple(kinds)).program_text(table)
    ops = StreamingParser().feed(text)
    ends = [op.end for op in ops if isinstance(op, Copy)]
    return (ops[-1] if ops else None), (ends[-1] if ends else 0)


def _literal_end(ids: Sequence[int], literal: tuple, within: int) -> int | None:
    """The position right after the last occurrence of ``literal`` among the last
    ``within`` ids of ``ids`` (``None``: none there)."""
    m = len(literal)
    for k in range(len(ids) - m, max(len(ids) - within - m, 0) - 1, -1):
        if tuple(ids[k : k + m]) == literal:
            return k + m
    return None


def _find(seq: Sequence[int], sub: tuple) -> int | None:
    """The first index of ``sub`` in ``seq`` (``None``: absent)."""
    m = len(sub)
    return next((k for k in range(len(seq) - m + 1) if tuple(seq[k : k + m]) == sub), None)


def _number(digit_ids: Sequence[int], table) -> int:
    """The number spelled by digit ids."""
    return int("".join(table.digits[i] for i in digit_ids))


def _trailing_run(kinds: Sequence[str], kind: str) -> int:
    """How many entries at the end of ``kinds`` equal ``kind``."""
    n = 0
    while n < len(kinds) and kinds[len(kinds) - 1 - n] == kind:
        n += 1
    return n
