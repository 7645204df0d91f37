"""Python's indentation as symbols, for the middle and for the right context (paper §VI).

The lexer turns indentation into INDENT/DEDENT symbols with a stack of column levels (§VI).
The middle's lexer knows its stack; the right context's does not: its first indented line may
be an INDENT or any number of DEDENTs, and each later line that goes below every level seen so
far pops an unknown number of the middle's levels. §VI-A describes the right context's symbols
as a regular language, e.g. ``NL (INDENT | DEDENT*) PASS NL DEDENT{1,4}``.

That language alone over-approximates: ``DEDENT*`` does not say *which* levels are popped, so
``if a:\\n    def g():\\n        pass\\n`` + ``    else: …`` would be accepted (two DEDENTs reach
an ``if`` that can take ``else``) although CPython pops only one level (to column 4) and fails.
We make it exact with **indentation bands**. The columns at which the right context's lines
start, with 0, cut the columns into bands: one band per such column ``=c`` and one per open
interval between them (and above the last). Every INDENT and DEDENT carries the band of the
level it pushes or pops, and the grammar pairs them (``block → (INDENT, b) … (DEDENT, b)``,
:mod:`cadlib.fim.python_grammar`). A right-context line at column ``v`` below every level seen
so far then pops "any number of the middle's levels *strictly between* ``v`` and the last level
popped" — ``(DEDENT, b)*`` for those bands only — and requires a level at exactly ``v``, which
appears as exactly one ``(DEDENT, =v)`` when that level is popped later. The counts are then
forced by the grammar's pairing of each DEDENT with the INDENT that opened its block.

Brackets and backslash continuations suspend indentation (newlines inside brackets are no
symbols); the right context's bracket depth at the cut is fixed, because the whole file must end
balanced. A middle that ends at the start of a line, inside its indentation, has its line's
column completed by the right context's leading whitespace: the middle's lexer then performs
that line's INDENT/DEDENT itself (it knows its stack), and the right context is described per
band of that column.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from .lexer import CLOSE_BRACKETS, OPEN_BRACKETS, LexError, lex_text
from .python_grammar import NEWLINE, dedent, indent
from .regular import Choice, Star, Sym

__all__ = ["Bands", "advance_column", "right_events", "stream_elements", "BASE"]

#: Band id of column 0, the bottom of every indentation stack (never pushed or popped).
BASE = -1


def advance_column(col: int, alt: int, ch: str) -> tuple[int, int]:
    """``(col, altcol)`` after a whitespace character at the start of a line.

    CPython measures indentation twice, with tabs to multiples of 8 (``col``) and as one
    column (``altcol``); the two must order the levels alike, or it raises ``TabError``.
    """
    if ch == " ":
        return col + 1, alt + 1
    if ch == "\t":
        return (col // 8 + 1) * 8, alt + 1
    if ch == "\f":
        return 0, 0
    return col, alt


class Bands:
    """Indentation bands from the right context's line columns (see the module docstring).

    Band ids increase with the column: with boundaries ``0 < b1 < … < bk``, id ``2i-1`` is the
    column ``bi`` itself and id ``2i`` the open interval above it (``0`` is ``(0, b1)``).
    """

    def __init__(self, columns: Iterable[int]):
        self.bounds = [0] + sorted({c for c in columns if c > 0})
        self.n = 2 * (len(self.bounds) - 1) + 1

    def __repr__(self) -> str:
        return f"<Bands bounds={self.bounds}>"

    def band(self, col: int) -> int:
        """The band of a column (``BASE`` for 0)."""
        if col == 0:
            return BASE
        i = bisect.bisect_left(self.bounds, col)
        if i < len(self.bounds) and self.bounds[i] == col:
            return 2 * i - 1
        return 2 * (i - 1)

    def max_column(self, band: int) -> float:
        """The largest column in a band (``inf`` for the top one)."""
        if band == BASE:
            return 0
        i = (band + 1) // 2
        if band % 2:
            return self.bounds[i]
        return self.bounds[i + 1] - 1 if i + 1 < len(self.bounds) else float("inf")


def right_events(text: str, start: int, at_line_start: bool) -> tuple[list, int] | None:
    """Lex ``text[start:]`` (a right context from a symbol boundary) into line events.

    Parameters
    ----------
    text, start
        The right context and where its first own symbol starts.
    at_line_start
        Whether the middle ends at the start of a line (then the first line's column is the
        middle's column plus this line's leading whitespace: event ``("line", None, None)``).

    Returns
    -------
    events, depth
        ``("tok", class)``, ``("nl",)`` (a NEWLINE symbol), ``("line", column)`` (indentation
        is processed here) and a final ``("eof",)``; ``depth`` is the bracket depth the middle
        must end with. ``None`` when no middle can precede this text (lex error, unbalanced
        brackets, end of file after ``\\``).
    """
    try:
        lexemes = list(lex_text(text, start))
    except LexError:
        return None
    rel = low = 0
    for lx in lexemes:
        if lx[0] == "tok":
            rel += (lx[1][0] in OPEN_BRACKETS) - (lx[1][0] in CLOSE_BRACKETS)
            low = min(low, rel)
    depth0 = -rel
    if depth0 < 0 or depth0 + low < 0 or (at_line_start and depth0):
        return None
    if lexemes and lexemes[-1][0] == "ignore" and text[lexemes[-1][2]] == "\\":
        return None
    events: list = []
    depth, bol, col, alt, unknown = depth0, at_line_start, 0, 0, at_line_start
    for kind, acc, i, _ in lexemes:
        if kind == "ws":
            col, alt = advance_column(col, alt, text[i]) if bol else (col, alt)
        elif kind == "nl":
            unknown = False
            if depth == 0 and not bol:
                events.append(("nl",))
            if depth == 0:
                bol, col, alt = True, 0, 0
        elif kind == "tok" or (kind == "ignore" and text[i] == "\\"):
            if bol and depth == 0:  # CPython takes the indentation at a token or a backslash
                events.append(("line", None, None) if unknown else ("line", col, alt))
                bol = False
            if kind == "tok":
                events.append(("tok", acc))
            depth += (acc[0] in OPEN_BRACKETS) - (acc[0] in CLOSE_BRACKETS)
    if not bol:
        events.append(("nl",))
    events.append(("eof",))
    return events, depth0


def _compare(entry: tuple, col: int, bands: Bands) -> int:
    """Sign of ``entry_column - col``; a symbolic entry (column ``None``) compares by band."""
    c, _, b = entry
    if c is not None:
        return (c > col) - (c < col)
    v = bands.band(col)
    return (b > v) - (b < v)


def _dedents(lo: int, hi: int) -> list:
    """``(DEDENT, b)*`` for the bands ``lo < b < hi`` (empty list when there are none)."""
    ids = range(lo + 1, hi)
    return [Star([(dedent(b),) for b in ids])] if ids else []


def _unknown_pops(col: int, last: tuple, bands: Bands) -> list:
    """The middle's levels popped between column ``col`` and the last popped entry."""
    c, _, b = last
    hi = b + 1 if c is None and b % 2 == 0 else b
    return _dedents(bands.band(col), hi)


def _line(out: list, known: list, col: int, alt: int, bands: Bands) -> bool:
    """Append a right-context line's INDENT/DEDENTs (CPython's rules, with ``TabError``
    checks where the other level's ``altcol`` is known); ``False`` if it cannot match."""
    top = known[-1]
    if _compare(top, col, bands) < 0:
        if top[1] is not None and alt <= top[1]:
            return False
        out.append(Sym((indent(bands.band(col)),)))
        known.append((col, alt, bands.band(col)))
        return True
    last = None
    while known and _compare(known[-1], col, bands) > 0:
        last = known.pop()
        out.append(Sym((dedent(last[2]),)))
    if not known:
        out += _unknown_pops(col, last, bands)
        known.append((col, alt, bands.band(col)))
        return True
    top = known[-1]
    return _compare(top, col, bands) == 0 and (top[1] is None or top[1] == alt)


def stream_elements(events: list, bands: Bands, first_band: int | None = None) -> list | None:
    """The right context's symbols as NFA elements (§VI-A with bands), or ``None`` if the
    indentation can match no middle.

    Parameters
    ----------
    events
        From :func:`right_events`.
    bands
        The bands of INDENT/DEDENT terminals.
    first_band
        For an event ``("line", None, None)``: the band of the middle's column there (its INDENT or
        DEDENTs are the middle's, so the stream starts after them).
    """
    out: list = []
    known: list = []  # levels known from the right context: (col, altcol, band), top last
    for ev in events:
        kind = ev[0]
        if kind == "tok":
            out.append(Sym(ev[1]))
        elif kind == "nl":
            out.append(Sym((NEWLINE,)))
        elif kind == "line" and ev[1] is None:
            known = [(0, 0, BASE)] if first_band == BASE else [(None, None, first_band)]
        elif kind == "line" and not known:  # first line: INDENT | DEDENT*
            col, alt = ev[1], ev[2]
            b = bands.band(col)
            pops = _dedents(b, bands.n)
            if col:
                out.append(Choice([Sym((indent(b),))], pops))
            else:
                out += pops
            known = [(col, alt, b)]
        elif kind == "line":
            if not _line(out, known, ev[1], ev[2], bands):
                return None
        else:  # eof: pop everything
            last = (None, None, bands.n)
            while known and known[-1][2] != BASE:
                last = known.pop()
                out.append(Sym((dedent(last[2]),)))
            if not known:
                out += _unknown_pops(0, last, bands)
    return out
