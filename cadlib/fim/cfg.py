"""Context-free grammars as plain data (companion paper §II-B).

A :class:`Grammar` is a set of terminals, a tuple of :class:`Rule` ``lhs -> rhs`` and a start
symbol. Symbols are any hashable values: the Python grammar uses lark's terminal and rule names
(strings), the quotient grammars of §IV-B add tuples such as ``("Q", branch, "suite", chart)``.
Everything here is pure and cheap; the Earley machinery compiles a grammar to integer tables
(:class:`cadlib.fim.compiled.CompiledGrammar`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

__all__ = ["Rule", "Grammar"]


@dataclass(frozen=True)
class Rule:
    """One production ``lhs -> rhs`` (``rhs`` may be empty)."""

    lhs: Hashable
    rhs: tuple

    def __repr__(self) -> str:
        return f"{self.lhs} -> {' '.join(map(str, self.rhs)) or 'ε'}"


class Grammar:
    """A context-free grammar ``(V, Σ, R, S)``; nonterminals are the rule left-hand sides.

    Parameters
    ----------
    terminals
        The alphabet Σ (lexical symbols, paper footnote 1: "symbols", not LLM tokens).
    rules
        The productions R; a symbol that is neither a terminal nor a left-hand side is an error.
    start
        The start nonterminal S.
    """

    def __init__(self, terminals: Iterable[Hashable], rules: Iterable[Rule], start: Hashable):
        self.terminals = frozenset(terminals)
        self.rules = tuple(rules)
        self.start = start
        self.nonterminals = frozenset(r.lhs for r in self.rules)
        clash = self.terminals & self.nonterminals
        if clash:
            names = sorted(map(str, clash))
            raise ValueError(f"symbols used both as terminal and nonterminal: {names}")
        unknown = {s for r in self.rules for s in r.rhs} - self.terminals - self.nonterminals
        if unknown:
            names = sorted(map(str, unknown))
            raise ValueError(f"symbols with neither a rule nor a terminal: {names}")
        if start not in self.nonterminals:
            raise ValueError(f"start symbol {start!r} has no rule")

    def __repr__(self) -> str:
        return (
            f"<Grammar: {len(self.terminals)} terminals, {len(self.nonterminals)} "
            f"nonterminals, {len(self.rules)} rules, start {self.start!r}>"
        )

    def reversed(self) -> Grammar:
        """The grammar of the reversed language: every right-hand side reversed (§IV-B)."""
        return Grammar(self.terminals, [Rule(r.lhs, r.rhs[::-1]) for r in self.rules], self.start)

    def nullable(self) -> frozenset:
        """Nonterminals that derive the empty string."""
        return self._least_fixpoint(frozenset())

    def productive(self) -> frozenset:
        """Nonterminals that derive at least one terminal string."""
        return self._least_fixpoint(self.terminals)

    def _least_fixpoint(self, given: frozenset) -> frozenset:
        """The nonterminals with a rule whose right-hand side holds only ``given`` symbols or
        nonterminals already found, repeated until nothing is added."""
        found: set = set()
        changed = True
        while changed:
            changed = False
            for r in self.rules:
                if r.lhs not in found and all(s in found or s in given for s in r.rhs):
                    found.add(r.lhs)
                    changed = True
        return frozenset(found)

    def with_rules(self, extra: Iterable[Rule], start: Hashable | None = None) -> Grammar:
        """This grammar plus ``extra`` rules (new nonterminals allowed), optionally a new start."""
        start = self.start if start is None else start
        return Grammar(self.terminals, self.rules + tuple(extra), start)
