"""The right context as a quotient grammar (paper §IV-B, §V-B, §VI-A).

The middle must connect to a right context that may begin *inside* a symbol of the middle
(``"foo`` + ``bar", x)``: the string continues into the right context), that starts at an
unknown bracket depth and indentation, and that ends the file. :class:`RightContext` turns it
into start symbols of one grammar that the middle is parsed with:

1. **Tails** (§V-B, Fig. 7). For every automaton state a middle can end in (a string, comment,
   name, number or operator in progress), :meth:`RightContext.tail` runs the right context until
   that symbol's longest match ends (with CPython's commit rule) and records the end index
   ``j``. The set of such ``j`` is Fig. 7's result (the paper reports a median of 5); we simulate
   each state forward instead of Fig. 7's backward pass, which gives the same indices for a
   deterministic automaton.
2. **Branches.** For each ``j``, the text after it is lexed from a clean symbol boundary into
   line events (:func:`cadlib.fim.indent.right_events`), once assuming the middle ends mid-line
   (``("A", j)``) and once at a line start (``("B", j, band)``, one per indentation band of the
   line's column when that line has symbols); a text without symbols is ``("E", j)``, which the
   middle's own end-of-file handling covers.
3. **One NFA for all branches** (:class:`cadlib.fim.regular.SuffixBuilder`): each branch's symbol
   language (§VI-A, with bands) built backwards with shared suffixes, i.e. the *reversed* right
   contexts.
4. **Quotients** (§IV-B): the reversed grammar parses that NFA once (:func:`parse_nfa`) and
   Fig. 2 extracts one left quotient per branch; reversed back, each is ``L(G)/R_branch``.

The middle is then parsed from the file's start with the union of the original grammar and
every branch's quotient rules, one start symbol per branch (and ``TOP`` for ``E``).
"""

from __future__ import annotations

import functools
import itertools

from .cfg import Rule
from .compiled import CompiledGrammar
from .indent import BASE, Bands, advance_column, right_events, stream_elements
from .lexer import dfa, follows, number_follow
from .literals import NUMBER_TERMINALS
from .nfa_parse import parse_nfa
from .python_grammar import PythonGrammar
from .quotient import TOP, augment, quotient_rules
from .regular import SuffixBuilder

__all__ = ["RightContext"]

_MISSING = object()
_UIDS = itertools.count()
#: Start a fresh shared forward grammar once this many dotted rules have been appended.
_MAX_DOTTED = 400_000


class RightContext:
    """Branches and quotient rules of a right context (see the module docstring).

    Attributes
    ----------
    text
        The right context.
    bands
        Indentation bands (:class:`cadlib.fim.indent.Bands`) of the whole FIM problem.
    depth
        ``{("A", j): bracket depth the middle must end with}``.
    l0
        ``{j: (leading whitespace, has_symbols)}`` of the first line after ``j`` (for ``B``).
    starts
        ``{branch key: start symbol}`` of every branch whose quotient is not empty.
    rules
        The quotient rules of all branches, in forward (not reversed) orientation.
    """

    def __init__(self, text: str, pg: PythonGrammar):
        self.text = text
        self.uid = next(_UIDS)
        self._tail: dict = {}
        self._events: dict = {}
        ends = {0} | {t[0] for q in dfa.sip_states if (t := self.tail(q)) is not None}
        line_ends = {0} | {t[0] for q in (_COMMENT, _BACKSLASH) if (t := self.tail(q))}
        self.depth: dict = {}
        self.l0: dict = {}
        events: dict = {}
        for j in sorted(ends):
            got = right_events(text, j, False)
            if got is not None:
                events[("A", j)] = got[0]
                self.depth[("A", j)] = got[1]
        for j in sorted(line_ends):
            got = right_events(text, j, True)
            if got is not None:
                events[("B", j)] = got[0]
                ws = len(text[j:]) - len(text[j:].lstrip(" \t\f"))
                self.l0[j] = (text[j : j + ws], ("line", None, None) in got[0])
        self.bands = Bands(
            ev[1] for evs in events.values() for ev in evs if ev[0] == "line" and ev[1] is not None
        )
        self.streams = self._streams(events)
        self.starts: dict = {}
        self.rules: list = []
        self._quotients(pg)

    def tail(self, sip: int) -> tuple | None:
        """``(j, state)``: where a symbol in progress in ``sip`` ends in the right context
        (longest match, CPython's commit and number-follow rules), or ``None`` (lex error)."""
        got = self._tail.get(sip, _MISSING)
        if got is not _MISSING:
            return got
        event = self._last_event(sip, 0)
        if event is None:
            last = (0, sip) if dfa.accept[sip] is not None else None
        else:
            last = event if event[0] >= 0 else None
        text = self.text
        if last is not None and dfa.accept[last[1]][0] in NUMBER_TERMINALS and last[0] < len(text):
            need = number_follow(text[last[0]])
            if need is None or not follows(text, last[0] + 1, need):
                last = None
        self._tail[sip] = last
        return last

    def _last_event(self, state: int, i: int) -> tuple | None:
        """The last accepting ``(position, state)`` or commit ``(-1, state)`` met when the
        automaton runs from ``state`` at ``text[i]`` until it dies (memoised on ``(state, i)``,
        so the walks of the many states that converge are shared)."""
        memo, text = self._events, self.text
        step, accept, commit = dfa.step, dfa.accept, dfa.commit
        path = []
        q, k = state, i
        while (q, k) not in memo:
            nxt = step(q, text[k]) if k < len(text) else -1
            if nxt < 0:
                memo[(q, k)] = None
                break
            path.append(((q, k), nxt, k + 1))
            q, k = nxt, k + 1
        result = memo[(q, k)]
        for key, nxt, pos in reversed(path):
            if result is None:
                if accept[nxt] is not None:
                    result = (pos, nxt)
                elif commit[nxt]:
                    result = (-1, nxt)
            memo[key] = result
        return memo[(state, i)]

    def prefix_ok(self, guards: tuple, follow: tuple) -> bool:
        """Whether a middle's pending branch guards and number follow-guard survive the right
        context's first characters (the guards of Fig. 5 continue past the cut)."""
        if follow and not follows(self.text, 0, follow):
            return False
        for g in guards:
            for ch in self.text:
                g = dfa.step(g, ch)
                if g < 0:
                    break
                if dfa.accept[g] is not None or dfa.commit[g]:
                    return False
        return True

    def line_start_key(self, j: int, col: int, alt: int) -> tuple[tuple, tuple | None]:
        """Branch key for a middle ending at a line start at column ``(col, altcol)`` before
        ``j``, and the columns of that line's first symbol (``None`` if it has none)."""
        ws, has_symbols = self.l0[j]
        if not has_symbols:
            return ("B", j, None), None
        for ch in ws:
            col, alt = advance_column(col, alt, ch)
        return ("B", j, self.bands.band(col)), (col, alt)

    def _streams(self, events: dict) -> dict:
        """NFA elements of every branch (``E`` branches get none)."""
        out = {}
        for key, evs in events.items():
            if not any(ev[0] == "tok" for ev in evs):
                out[("E", key[1])] = None
            elif key[0] == "A":
                out[key] = stream_elements(evs, self.bands)
            elif ("line", None, None) not in evs:
                out[("B", key[1], None)] = stream_elements(evs, self.bands)
            else:
                ws = self.l0[key[1]][0]
                for b in [BASE, *range(self.bands.n)]:
                    if self.bands.max_column(b) >= len(ws):  # the line is at least that deep
                        out[("B", key[1], b)] = stream_elements(evs, self.bands, b)
        return {k: v for k, v in out.items() if k[0] == "E" or v is not None}

    def _quotients(self, pg: PythonGrammar) -> None:
        """Steps 3 and 4 of the module docstring."""
        for key, elements in self.streams.items():
            if elements is None:
                self.starts[key] = TOP
        keys = [k for k, v in self.streams.items() if v is not None]
        if not keys:
            return
        cg = _reversed_compiled(pg, self.bands.n)
        builder = SuffixBuilder()
        finals = {}
        for key in keys:
            finals[key] = builder.final(builder.sequence(_ids(cg, self.streams[key])))
        charts = parse_nfa(cg, builder.nfa, TOP)
        for key in keys:
            tag = (self.uid, key)
            rules, start = quotient_rules(cg, charts, builder.nfa.start, finals[key], tag)
            if start is not None:
                self.starts[key] = start
                self.rules += [Rule(r.lhs, r.rhs[::-1]) for r in rules]

    def compiled(self, pg: PythonGrammar) -> CompiledGrammar:
        """The union grammar, compiled: Python with ``TOP`` plus every branch's quotient rules.

        The Python part is compiled once per band count and shared; this context's quotient
        nonterminals are fresh (tagged with ``uid``), so appending them leaves every other
        context's states valid (:meth:`CompiledGrammar.add_rules`).
        """
        cg = _forward_compiled(pg, self.bands.n)
        if len(cg.nxt) > _MAX_DOTTED:
            _forward_compiled.cache_clear()
            cg = _forward_compiled(pg, self.bands.n)
        cg.add_rules(self.rules)
        return cg


_COMMENT = dfa.state(("comment",))
_BACKSLASH = dfa.state(("bs",))


@functools.lru_cache(maxsize=16)
def _forward_compiled(pg: PythonGrammar, n_bands: int) -> CompiledGrammar:
    """The shared compiled Python grammar with ``TOP`` for ``n_bands`` bands."""
    return CompiledGrammar(augment(pg.with_bands(n_bands)))


@functools.lru_cache(maxsize=16)
def _reversed_compiled(pg: PythonGrammar, n_bands: int) -> CompiledGrammar:
    """The compiled reversed, augmented Python grammar for ``n_bands`` bands (cached: its
    lazily built states are reused by every right context with as many bands)."""
    return CompiledGrammar(augment(pg.with_bands(n_bands).reversed()))


def _ids(cg: CompiledGrammar, elements: list) -> list:
    """NFA elements with terminal names replaced by the compiled grammar's ids."""

    def conv(tclass):
        return tuple(cg.sym_id[t] for t in tclass if t in cg.sym_id)

    out = []
    for kind, arg in elements:
        if kind == "sym":
            out.append((kind, conv(arg)))
        elif kind == "star":
            out.append((kind, tuple(sorted(conv(t) for t in arg))))
        else:
            out.append((kind, tuple(tuple(_ids(cg, alt)) for alt in arg)))
    return out
