"""Quotient grammars extracted from Earley charts (paper §IV-B, Fig. 2).

After :func:`cadlib.fim.nfa_parse.parse_nfa` has parsed a regular language ``R`` with a grammar
``G``, the charts hold an implicit description of the left quotient
``R \\ L(G) = {w | ∃ r ∈ R, r∘w ∈ L(G)}``. :func:`quotient_rules` makes it explicit, as Fig. 2
does: every item ``[E → α • β (i)]`` of the final chart says "an ``E`` begun at chart ``i`` is
finished by ``β``" (rule ``E_i → β``), and every item ``[F → γ • E δ (j)]`` of chart ``i`` that
waits for such an ``E`` says "an ``F`` begun at ``j`` is finished by finishing ``E_i``, then
``δ``" (rule ``F_j → E_i δ``); walking those links back from the final chart reaches the
augmented start item, whose ``TOP_s0`` is the quotient's start symbol. The rules over the
original grammar's symbols are kept, so the quotient is ``N ∪ R`` as in Fig. 2's return value.

The right quotient ``L(G) / R = {w | ∃ r ∈ R, w∘r ∈ L(G)}`` needed for the right context of a
FIM problem follows by reversal (§IV-B): ``L(G)/R = Reverse(Reverse(R) \\ Reverse(L(G)))``.

Note on Fig. 2's bookkeeping: the paper follows recorded creation methods (scanned / predicted
/ completed). In an Earley chart every item lies on some derivation from the start, so the
"predicted from" links can be recovered from the chart contents — the items of chart ``i``
waiting for ``E`` — and no creation records are stored.
"""

from __future__ import annotations

from collections.abc import Hashable

from .cfg import Grammar, Rule
from .compiled import CompiledGrammar
from .nfa_parse import NFAChart, parse_nfa
from .regular import NFA

__all__ = ["TOP", "augment", "quotient_rules", "left_quotient", "right_quotient"]

#: The augmented start symbol ``TOP → S`` (so that Fig. 2 line 13 has an item to find).
TOP = "__top__"


def augment(grammar: Grammar) -> Grammar:
    """``grammar`` plus ``TOP → start``, with ``TOP`` as the start symbol."""
    if TOP in grammar.nonterminals:
        return grammar
    return grammar.with_rules([Rule(TOP, (grammar.start,))], start=TOP)


def quotient_rules(
    cg: CompiledGrammar, charts: list[NFAChart], start_q: int, final_q: int, tag: Hashable
) -> tuple[list[Rule], Hashable | None]:
    """Fig. 2: the new rules ``N`` of the left quotient by the paths ``start_q → final_q``.

    Parameters
    ----------
    cg, charts
        The compiled (augmented) grammar and the charts of :func:`parse_nfa`.
    start_q, final_q
        NFA states; ``final_q`` must not lie on a cycle (its items of origin ``final_q`` are then
        predictions, whose quotient is the original rule itself, so they are skipped).
    tag
        Makes the new nonterminals ``("Q", tag, E, i)`` unique to this quotient.

    Returns
    -------
    rules, start
        The new rules and the quotient's start nonterminal, or ``None`` when no string of the
        paths is a prefix of a sentence (the quotient is empty).
    """
    final = charts[final_q]
    made: dict = {}
    queue: list = []
    symbols = cg.symbols

    def nonterminal(a: int, chart: NFAChart) -> tuple:
        key = (a, chart.q)
        name = made.get(key)
        if name is None:
            name = made[key] = ("Q", tag, symbols[a], chart.q)
            queue.append((a, chart))
        return name

    rules: dict = {}  # insertion-ordered set
    for origin, state in final.entries.items():
        if origin is final:
            continue
        for d in cg.items[state]:
            rules[Rule(nonterminal(cg.lhs[d], origin), cg.rhs_after(d))] = None
    while queue:
        a, chart = queue.pop()
        for origin, state in chart.entries.items():
            for d in cg.by_next[state].get(a, ()):
                head = nonterminal(cg.lhs[d], origin)
                rules[Rule(head, (nonterminal(a, chart), *cg.rhs_after(d + 1)))] = None
    return list(rules), made.get((cg.sym_id[TOP], start_q))


def _with_clean_finals(nfa: NFA) -> tuple[NFA, list[int]]:
    """A copy of ``nfa`` whose final states each get a fresh ε-successor with no loop."""
    copy = NFA()
    copy.edges = [list(out) for out in nfa.edges]
    copy.start = nfa.start
    finals = []
    for f in sorted(nfa.finals):
        g = copy.add_state()
        copy.add_edge(f, None, g)
        finals.append(g)
    copy.finals = set(finals)
    return copy, finals


def left_quotient(grammar: Grammar, nfa: NFA, tag: Hashable = "L") -> Grammar | None:
    """``L(nfa) \\ L(grammar)`` as a grammar (``None`` if empty); NFA labels are terminal names.

    The NFA's labels are tuples of terminal *names* here (the constraint works on ids itself).
    """
    g = augment(grammar)
    cg = CompiledGrammar(g)
    nfa, finals = _with_clean_finals(nfa)
    ids = NFA()
    ids.edges = [
        [
            (None if lab is None else tuple(cg.sym_id[t] for t in lab if t in cg.sym_id), q)
            for lab, q in out
        ]
        for out in nfa.edges
    ]
    ids.start, ids.finals = nfa.start, nfa.finals
    charts = parse_nfa(cg, ids, TOP)
    rules, starts = [], []
    for f in finals:
        new, start = quotient_rules(cg, charts, ids.start, f, (tag, f))
        if start is not None:
            rules += new
            starts.append(start)
    if not starts:
        return None
    top = ("Q", tag, "start")
    rules += [Rule(top, (s,)) for s in starts]
    return Grammar(g.terminals, g.rules + tuple(rules), top)


def right_quotient(grammar: Grammar, nfa: NFA, tag: Hashable = "R") -> Grammar | None:
    """``L(grammar) / L(nfa)`` by reversal (§IV-B); ``None`` if empty."""
    rev = left_quotient(grammar.reversed(), nfa.reversed(), tag)
    return None if rev is None else rev.reversed()
