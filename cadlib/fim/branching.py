"""The incremental branching lexer and its interaction with the parser (paper §V-A, Fig. 5).

An incremental lexer has no lookahead: when the symbol in progress (*sip*) matches a lexeme it
cannot know whether the next character will extend it. So each character forks: one branch
extends the sip, the other ends the symbol here, feeds it to the Earley recognizer and carries a
*branch guard*, the automaton state of the ended symbol's extension; if a later character makes
that extension a lexeme again (a longer match exists) or enters a CPython *commit* state, the
branch is deleted. A branch is also deleted when its sip can no longer become a terminal that
the chart can scan (Fig. 5 lines 10-12, ``st'``). Comments and ``\\``-newline are lexemes that
feed nothing; whitespace and newlines are handled at symbol boundaries together with Python's
line structure (NEWLINE, INDENT/DEDENT, brackets: :mod:`cadlib.fim.indent`).

A :data:`Branch` is an immutable tuple ``(chart, sip, guards, follow, line, ftext)``:

``chart``
    the :class:`~cadlib.fim.earley.Chart` after the symbols already ended;
``sip``
    the :class:`~cadlib.fim.lexer.LexemeDFA` state of the symbol in progress (0 = none);
``guards``
    automaton states of ended symbols that must not grow into a longer lexeme;
``follow``
    characters a number's successor must still match (CPython's ``verify_end_of_number``);
``line``
    ``(depth, at_line_start, col, altcol, stack)``: bracket depth, whether no symbol is on this
    line yet, the column so far (tabs to 8, and tabs as 1 for CPython's ``TabError`` check), and
    the indentation stack as ``((col, altcol, band), …)``;
``ftext``
    the text of the symbol in progress when it is an f-string (else ``None``), kept beside its
    automaton state rather than in it: when a step leaves a replacement field's expression
    (:attr:`~cadlib.fim.lexer.LexemeDFA.fstr` goes from 2 to 1), the expression just closed
    must parse (:func:`cadlib.fim.fstring.last_field_valid`, CPython 3.11's rule), else the
    branch dies. The automaton's states stay few (the mask's tables are keyed on them,
    :mod:`cadlib.fim.tokenlex`), and the text costs only while an f-string is open.

Branches share charts and never mutate, so a set of branches is the whole lexer+parser state and
copying it is copying a short list.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from .earley import Chart, Recognizer
from .fstring import last_field_valid
from .indent import BASE, advance_column
from .lexer import CLOSE_BRACKETS, IGNORE, OPEN_BRACKETS, dfa, number_follow
from .literals import NUMBER_TERMINALS
from .python_grammar import NEWLINE, dedent, indent

__all__ = ["BranchingLexer", "Branch", "START_LINE", "advance_lookahead"]

Branch = tuple
#: Line state at the start of a file: depth 0, at a line start, column 0, stack ``[0]``.
START_LINE = (0, True, 0, 0, ((0, 0, BASE),))
_WHITESPACE = frozenset(" \t\f\r")


class BranchingLexer:
    """Fig. 5's ``IncLex`` over a :class:`~cadlib.fim.earley.Recognizer`.

    Parameters
    ----------
    rec
        The recognizer whose grammar uses the terminal names of :mod:`cadlib.fim.lexer`.
    band
        ``column -> band`` for the INDENT symbols (see :class:`cadlib.fim.indent.Bands`).
    """

    def __init__(self, rec: Recognizer, band: Callable[[int], int]):
        self.rec = rec
        self.band = band
        self._ids: dict[Hashable, tuple] = {}
        self._reach: dict[int, object] = {}
        self.newline = self.ids((NEWLINE,))

    def ids(self, names: tuple) -> tuple:
        """Terminal ids of a symbol class (cached)."""
        got = self._ids.get(names)
        if got is None:
            got = self._ids[names] = self.rec.terminal_ids(names)
        return got

    def initial(self) -> list[Branch]:
        """The branches at the start of a file: one, at the root chart."""
        return [(self.rec.root, 0, (), (), START_LINE, None)]

    def sip_viable(self, sip: int, chart: Chart) -> bool:
        """Whether the symbol in progress can still become a terminal ``chart`` can scan."""
        got = chart.viable.get(sip)
        if got is None:
            reach = self._reach.get(sip)
            if reach is None:
                raw = dfa.reach[sip]
                reach = self._reach[sip] = (
                    True if raw is IGNORE else frozenset(self.ids(tuple(raw)))
                )
            got = chart.viable[sip] = reach is True or not reach.isdisjoint(
                self.rec.scannable(chart)
            )
        return got

    def emit(self, chart: Chart, line: tuple, names: tuple) -> tuple | None:
        """Feed one ended symbol to the parser; ``(chart, line)`` or ``None`` if rejected."""
        if names is IGNORE:
            return chart, line
        chart = self.rec.scan(chart, self.ids(names))
        if chart is None:
            return None
        first = names[0]
        if first in OPEN_BRACKETS:
            line = (line[0] + 1,) + line[1:]
        elif first in CLOSE_BRACKETS:
            if line[0] == 0:
                return None
            line = (line[0] - 1,) + line[1:]
        return chart, line

    def indentation(self, chart: Chart, col: int, alt: int, stack: tuple) -> tuple | None:
        """INDENT/DEDENT symbols for a logical line starting at ``col`` (§VI); ``(chart,
        stack)`` or ``None`` (rejected, no outer level matches, or CPython's ``TabError``)."""
        scan = self.rec.scan
        top, top_alt, _ = stack[-1]
        if col > top:
            if alt <= top_alt:
                return None
            b = self.band(col)
            chart = scan(chart, self.ids((indent(b),)))
            return None if chart is None else (chart, stack + ((col, alt, b),))
        while stack[-1][0] > col:
            chart = scan(chart, self.ids((dedent(stack[-1][2]),)))
            if chart is None:
                return None
            stack = stack[:-1]
        return (chart, stack) if stack[-1][:2] == (col, alt) else None

    def step(self, branches: list[Branch], ch: str) -> list[Branch]:
        """Fig. 5's loop body for one character: every branch extends, ends or dies."""
        out: list[Branch] = []
        step, accept, commit, fstr = dfa.step, dfa.accept, dfa.commit, dfa.fstr
        for chart, sip, guards, follow, line, ftext in branches:
            if guards or follow:
                ahead = advance_lookahead(guards, follow, ch)
                if ahead is None:
                    continue  # a longer lexeme exists, or the follow-guard fails: delete it
                guards, follow = ahead
            if not sip:
                self._boundary(out, chart, guards, follow, line, ch)
                continue
            nxt = step(sip, ch)
            if nxt >= 0 and self.sip_viable(nxt, chart):
                if fstr[nxt]:
                    text = _fstring_text(sip, ftext, ch)
                    if fstr[nxt] == 2 or fstr[sip] != 2 or last_field_valid(text):
                        out.append((chart, nxt, guards, follow, line, text))
                else:
                    out.append((chart, nxt, guards, follow, line, None))
            names = accept[sip]
            if names is None or (nxt >= 0 and (accept[nxt] is not None or commit[nxt])):
                continue
            ended = self.emit(chart, line, names)
            if ended is None:
                continue
            new_follow = number_follow(ch) if names[0] in NUMBER_TERMINALS else ()
            if new_follow is None:
                continue
            new_guards = guards + (nxt,) if nxt >= 0 else guards
            self._boundary(out, ended[0], new_guards, new_follow, ended[1], ch)
        return out

    def _boundary(
        self, out: list, chart: Chart, guards: tuple, follow: tuple, line: tuple, ch: str
    ) -> None:
        """Character ``ch`` at a symbol boundary: whitespace, newline, or a new sip."""
        depth, bol, col, alt, stack = line
        if ch in _WHITESPACE:
            if bol:
                line = (depth, bol, *advance_column(col, alt, ch), stack)
            out.append((chart, 0, guards, follow, line, None))
            return
        if ch == "\n":
            if depth == 0:
                if not bol:
                    chart = self.rec.scan(chart, self.newline)
                    if chart is None:
                        return
                line = (0, True, 0, 0, stack)
            out.append((chart, 0, guards, follow, line, None))
            return
        sip = dfa.step(0, ch)
        if sip < 0:
            return
        if bol and depth == 0 and ch != "#":
            done = self.indentation(chart, col, alt, stack)
            if done is None:
                return
            chart, stack = done
            line = (0, False, 0, 0, stack)
        if self.sip_viable(sip, chart):
            out.append((chart, sip, guards, follow, line, None))

    def feed(self, branches: list[Branch], text: str) -> list[Branch]:
        """Step through ``text``; stops early (returning ``[]``) once every branch died."""
        step = self.step
        for ch in text:
            branches = step(branches, ch)
            if not branches:
                break
        return branches


def advance_lookahead(guards: tuple, follow: tuple, ch: str) -> tuple | None:
    """A branch's ``(guards, follow)`` after ``ch``, or ``None`` when the branch dies: a guard
    became a lexeme or committed (a longer lexeme exists), or ``ch`` breaks the follow-guard
    (:func:`cadlib.fim.lexer.number_follow`). Shared by the lexer's step and the lexical
    tables' symbolic one (:mod:`cadlib.fim.tokenlex`)."""
    if guards:
        kept = []
        for g in guards:
            g = dfa.step(g, ch)
            if g >= 0:
                if dfa.accept[g] is not None or dfa.commit[g]:
                    return None
                kept.append(g)
        guards = tuple(kept)
    if follow:
        if ch not in follow[0]:
            return None
        follow = follow[1:]
    return guards, follow


def _fstring_text(sip: int, ftext: str | None, ch: str) -> str:
    """An f-string's text after ``ch``: ``ftext`` and ``ch``, or, when ``ch`` is the opening
    quote, the prefix (the name state's text, ``f``, ``rf`` …) and ``ch``."""
    if ftext is None:
        return dfa.descs[sip][1] + ch
    return ftext + ch
