"""A grammar compiled for Earley recognition: integer tables and lazily built LR(0) states.

Both recognizers of the wing read one :class:`CompiledGrammar`: the incremental recognizer
(:class:`cadlib.fim.earley.Recognizer`, §IV) and the Earley parse of an NFA
(:func:`cadlib.fim.nfa_parse.parse_nfa`, §IV-A); the quotient grammars extend a shared one
(:meth:`CompiledGrammar.add_rules`, §IV-B). Its states are the Aycock & Horspool states of the
recognizer's charts (see :mod:`cadlib.fim.earley`): interned sets of dotted rules, closed under
stepping over nullable nonterminals, whose ``goto`` and union tables fill on demand.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from .cfg import Grammar

__all__ = ["CompiledGrammar"]


class CompiledGrammar:
    """Integer tables of a :class:`~cadlib.fim.cfg.Grammar` and the lazily built LR(0) states.

    Symbols get ids (terminals first); each rule position is a *dotted rule* id ``d`` with
    ``nxt[d]`` the symbol after the dot (``-1`` at the end) and ``lhs[d]`` the rule's left side.
    States are interned frozensets of dotted rules; their goto/union tables fill on demand, so a
    grammar of hundreds of rules compiles in milliseconds and only visited states are built.
    """

    def __init__(self, grammar: Grammar):
        self.grammar = grammar
        terminals = sorted(grammar.terminals, key=repr)
        self.symbols: list = list(terminals)
        self.sym_id: dict = {s: i for i, s in enumerate(self.symbols)}
        self.n_terminals = len(terminals)
        self.nxt: list[int] = []
        self.lhs: list[int] = []
        self.first_items: dict[int, list] = defaultdict(list)
        self.nullable: list[bool] = [False] * len(terminals)
        self._lc_direct: dict[int, set] = defaultdict(set)
        self._lc: dict[int, frozenset] = {}
        # interned states and their tables
        self._state_id: dict[frozenset, int] = {}
        self.items: list[frozenset] = []
        self.by_next: list[dict] = []
        self.completed: list[tuple] = []
        self.wants: list[frozenset] = []
        self.terms: list[frozenset] = []
        self._goto: list[dict] = []
        self._union: dict[tuple, int] = {}
        self._predicted: dict[frozenset, int] = {}
        self.add_rules(grammar.rules)

    def add_rules(self, rules: Iterable) -> None:
        """Append rules whose left-hand sides are *new* nonterminals (or, at construction, the
        grammar's own). Existing states stay valid: their items and predictions cannot mention
        the new nonterminals, so a quotient grammar can extend a shared compiled grammar."""
        rules = list(rules)
        fresh = []
        for rule in rules:
            for sym in (rule.lhs, *rule.rhs):
                if sym not in self.sym_id:
                    self.sym_id[sym] = len(self.symbols)
                    self.symbols.append(sym)
                    self.nullable.append(False)
                    fresh.append(sym)
        lhs_new = set()
        for rule in rules:
            a = self.sym_id[rule.lhs]
            lhs_new.add(a)
            base = len(self.nxt)
            ids = [self.sym_id[s] for s in rule.rhs]
            self.nxt.extend(ids)
            self.nxt.append(-1)
            self.lhs.extend([a] * (len(ids) + 1))
            self.first_items[a].append(base)
        changed = True
        while changed:  # nullable nonterminals among the new ones
            changed = False
            for a in lhs_new:
                if not self.nullable[a] and any(self._all_nullable(d) for d in self.first_items[a]):
                    self.nullable[a] = changed = True
        for a in lhs_new:
            self._lc_direct[a] = self._direct_corners(a)

    def _all_nullable(self, d: int) -> bool:
        while self.nxt[d] >= 0:
            if not self.nullable[self.nxt[d]]:
                return False
            d += 1
        return True

    def _direct_corners(self, a: int) -> set:
        """Nonterminals that can start a rule of ``a`` (after a nullable prefix)."""
        out = set()
        for d in self.first_items[a]:
            while self.nxt[d] >= 0:
                x = self.nxt[d]
                if x >= self.n_terminals:
                    out.add(x)
                if not self.nullable[x]:
                    break
                d += 1
        return out

    def left_corner_closure(self, a: int) -> frozenset:
        """``a`` and every nonterminal reachable from it through left corners (cached)."""
        got = self._lc.get(a)
        if got is None:
            seen = {a}
            stack = [a]
            while stack:
                for b in self._lc_direct.get(stack.pop(), ()):
                    if b not in seen:
                        seen.add(b)
                        stack.append(b)
            got = self._lc[a] = frozenset(seen)
        return got

    def _close(self, items: Iterable[int]) -> frozenset:
        """Close a set of dotted rules under stepping over nullable symbols."""
        out = set(items)
        stack = list(out)
        nxt, nullable = self.nxt, self.nullable
        while stack:
            d = stack.pop()
            x = nxt[d]
            if x >= 0 and nullable[x] and d + 1 not in out:
                out.add(d + 1)
                stack.append(d + 1)
        return frozenset(out)

    def intern(self, items: frozenset) -> int:
        """The id of a (closed) set of dotted rules, building its tables the first time."""
        sid = self._state_id.get(items)
        if sid is not None:
            return sid
        sid = len(self.items)
        self._state_id[items] = sid
        by_next: dict[int, list] = defaultdict(list)
        completed = []
        for d in items:
            x = self.nxt[d]
            if x < 0:
                completed.append(self.lhs[d])
            else:
                by_next[x].append(d)
        nt = self.n_terminals
        self.items.append(items)
        self.by_next.append({x: tuple(ds) for x, ds in by_next.items()})
        self.completed.append(tuple(set(completed)))
        self.wants.append(frozenset(x for x in by_next if x >= nt))
        self.terms.append(frozenset(x for x in by_next if x < nt))
        self._goto.append({})
        return sid

    def goto(self, state: int, symbol: int) -> int:
        """State after stepping ``symbol`` over the dot of ``state``'s items (-1 if none)."""
        table = self._goto[state]
        got = table.get(symbol)
        if got is None:
            ds = self.by_next[state].get(symbol)
            got = self.intern(self._close(d + 1 for d in ds)) if ds else -1
            table[symbol] = got
        return got

    def union(self, a: int, b: int) -> int:
        """The state holding the items of both ``a`` and ``b``."""
        if a == b:
            return a
        key = (a, b) if a < b else (b, a)
        got = self._union.get(key)
        if got is None:
            got = self._union[key] = self.intern(self.items[a] | self.items[b])
        return got

    def predicted(self, wanted: frozenset) -> int:
        """State of the items predicted for the nonterminals in ``wanted`` (origin = here)."""
        got = self._predicted.get(wanted)
        if got is None:
            nts: set = set()
            for a in wanted:
                nts |= self.left_corner_closure(a)
            items = [d for a in nts for d in self.first_items[a]]
            got = self._predicted[wanted] = self.intern(self._close(items))
        return got

    def rhs_after(self, d: int) -> tuple:
        """The symbols (objects, not ids) after the dot of dotted rule ``d``."""
        out = []
        while self.nxt[d] >= 0:
            out.append(self.symbols[self.nxt[d]])
            d += 1
        return tuple(out)
