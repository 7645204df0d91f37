"""Nondeterministic finite automata over lexical symbols (paper §II-A, §IV-A, §VI-A).

The right context of a FIM problem is not one symbol string but a regular language of them:
its first symbol may continue a symbol begun in the middle (§V-B) and its INDENT/DEDENT symbols
depend on an unknown indentation stack (§VI-A). :class:`NFA` holds such a language; labels are
*symbol classes* (tuples of terminal ids, any of which may be read) or ``None`` for ε.

:class:`SuffixBuilder` builds the automaton of several symbol sequences *backwards* and shares
equal suffixes (hash-consing ``(element, rest) → state``): it directly yields the reversed NFA
that §IV-B parses with the reversed grammar, and branches that end alike (all right-context
branches end with the same file tail) are parsed once.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

__all__ = ["NFA", "Sym", "Star", "Choice", "SuffixBuilder"]


class NFA:
    """``(Q, Σ, s0, δ, F)`` with ``Q = range(n_states)``; ``edges[p]`` lists ``(label, q)``."""

    def __init__(self):
        self.edges: list[list] = []
        self.start = 0
        self.finals: set[int] = set()

    @property
    def n_states(self) -> int:
        """Number of states."""
        return len(self.edges)

    def add_state(self) -> int:
        """Add a state without arrows; returns its id."""
        self.edges.append([])
        return len(self.edges) - 1

    def add_edge(self, p: int, label: tuple | None, q: int) -> None:
        """Add the arrow ``p --label--> q`` (``label=None``: ε)."""
        self.edges[p].append((label, q))

    @classmethod
    def of_word(cls, word: Sequence[tuple]) -> NFA:
        """The NFA of one symbol string (§IV-A: "identical to the NFA … containing exactly X")."""
        nfa = cls()
        nfa.add_state()
        for label in word:
            q = nfa.add_state()
            nfa.add_edge(q - 1, label, q)
        nfa.finals = {nfa.n_states - 1}
        return nfa

    def reversed(self) -> NFA:
        """Invert every arrow and swap initial and final states (§IV-B); a fresh start state
        reaches the old finals by ε."""
        rev = NFA()
        for _ in range(self.n_states + 1):
            rev.add_state()
        for p, out in enumerate(self.edges):
            for label, q in out:
                rev.add_edge(q, label, p)
        rev.start = self.n_states
        for f in self.finals:
            rev.add_edge(rev.start, None, f)
        rev.finals = {self.start}
        return rev

    def _eclose(self, states: Iterable[int]) -> set:
        out = set(states)
        stack = list(out)
        while stack:
            for label, q in self.edges[stack.pop()]:
                if label is None and q not in out:
                    out.add(q)
                    stack.append(q)
        return out

    def accepts(self, word: Sequence[Hashable]) -> bool:
        """Whether the NFA accepts ``word`` (a sequence of terminal ids); for tests."""
        current = self._eclose([self.start])
        for sym in word:
            step = {q for p in current for label, q in self.edges[p] if label and sym in label}
            current = self._eclose(step)
        return bool(current & self.finals)


def Sym(tclass: tuple) -> tuple:
    """Element: exactly one symbol of the class ``tclass``."""
    return ("sym", tclass)


def Star(tclasses: Iterable[tuple]) -> tuple:
    """Element: zero or more symbols, each of one of ``tclasses``."""
    return ("star", tuple(sorted(set(tclasses))))


def Choice(*alternatives: Sequence[tuple]) -> tuple:
    """Element: one of several element sequences."""
    return ("choice", tuple(tuple(a) for a in alternatives))


class SuffixBuilder:
    """Build the *reversed* NFA of element sequences, sharing equal suffixes.

    State ``end`` (the NFA start) stands for the empty suffix; :meth:`sequence` returns the state
    standing for ``elements + rest``. Reading the reversed symbols of a suffix leads from ``end``
    to its state, so a final state per branch makes this the NFA of the reversed branches.
    """

    def __init__(self):
        self.nfa = NFA()
        self.end = self.nfa.add_state()
        self.nfa.start = self.end
        self._memo: dict = {}

    def element(self, element: tuple, rest: int) -> int:
        """The state for ``element`` followed by the suffix of state ``rest`` (memoised)."""
        key = (element, rest)
        got = self._memo.get(key)
        if got is not None:
            return got
        nfa = self.nfa
        kind, arg = element
        if kind == "sym":
            got = nfa.add_state()
            nfa.add_edge(rest, arg, got)
        elif kind == "star":
            got = nfa.add_state()
            nfa.add_edge(rest, None, got)
            for tclass in arg:
                nfa.add_edge(got, tclass, got)
        elif kind == "choice":
            heads = [self.sequence(alt, rest) for alt in arg]
            got = nfa.add_state()
            for h in heads:
                nfa.add_edge(h, None, got)
        else:
            raise ValueError(f"unknown NFA element {element!r}")
        self._memo[key] = got
        return got

    def sequence(self, elements: Sequence[tuple], rest: int | None = None) -> int:
        """The state for ``elements`` followed by ``rest`` (default: the empty suffix)."""
        state = self.end if rest is None else rest
        for element in reversed(elements):
            state = self.element(element, state)
        return state

    def final(self, state: int) -> int:
        """A fresh final state reached from ``state`` by ε (so it has no loop of its own)."""
        f = self.nfa.add_state()
        self.nfa.add_edge(state, None, f)
        self.nfa.finals.add(f)
        return f
