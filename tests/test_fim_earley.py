"""Earley recognition, Earley over NFAs and quotient extraction on small grammars (paper §IV),
checked against brute-force enumeration of the languages."""

import functools
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib.fim.cfg import Grammar, Rule
from cadlib.fim.earley import CompiledGrammar, Recognizer, parse_nfa
from cadlib.fim.quotient import TOP, augment, left_quotient, right_quotient
from cadlib.fim.regular import NFA, Star, SuffixBuilder, Sym

R = Rule
#: The paper's §IV-B example grammar (function calls).
CALLS = Grammar({"ID", "LPAR", "RPAR", "COMMA"}, [
    R("Expr", ("ID",)), R("Expr", ("Call",)),
    R("Call", ("Expr", "LPAR", "Args", "RPAR")),
    R("Args", ()), R("Args", ("Expr", "ArgCont")),
    R("ArgCont", ()), R("ArgCont", ("COMMA", "Expr", "ArgCont")),
], "Expr")
#: Balanced brackets with a nullable, right-recursive list (exercises ε-handling).
BRACKETS = Grammar({"(", ")", "x"}, [
    R("S", ()), R("S", ("T", "S")), R("T", ("(", "S", ")")), R("T", ("x",)),
], "S")
ALPHABET = {id(CALLS): sorted(CALLS.terminals), id(BRACKETS): sorted(BRACKETS.terminals)}


@functools.cache
def sentences(grammar_name: str, max_len: int) -> frozenset:
    """Every sentence of at most ``max_len`` symbols (leftmost expansion, pruned by the
    shortest yield of each nonterminal)."""
    g = {"calls": CALLS, "brackets": BRACKETS}[grammar_name]
    shortest = {t: 1 for t in g.terminals}
    changed = True
    while changed:
        changed = False
        for r in g.rules:
            n = sum(shortest.get(s, 99) for s in r.rhs)
            if n < shortest.get(r.lhs, 99):
                shortest[r.lhs] = n
                changed = True
    out, seen, todo = set(), set(), [(g.start,)]
    while todo:
        form = todo.pop()
        if sum(shortest[s] for s in form) > max_len or form in seen:
            continue
        seen.add(form)
        i = next((k for k, s in enumerate(form) if s in g.nonterminals), None)
        if i is None:
            out.add(form)
            continue
        todo += [form[:i] + r.rhs + form[i + 1:] for r in g.rules if r.lhs == form[i]]
    return frozenset(out)


def member(rec: Recognizer, word) -> bool:
    chart = rec.feed(word)
    return chart is not None and rec.accepts(chart)


def words(alphabet, max_len: int):
    return [w for n in range(max_len + 1) for w in itertools.product(alphabet, repeat=n)]


def test_membership_and_viability_match_enumeration():
    for name, g in (("calls", CALLS), ("brackets", BRACKETS)):
        rec = Recognizer(g)
        lang = sentences(name, 9)
        prefixes = {s[:k] for s in lang for k in range(len(s) + 1)}
        for w in words(sorted(g.terminals), 5):
            assert member(rec, w) == (w in lang), (name, w)
            if len(w) <= 4:  # every completion of these fits in 9 symbols
                assert (rec.feed(w) is not None) == (w in prefixes), (name, w)


def test_scan_is_memoised_and_shares_charts():
    rec = Recognizer(CALLS)
    a = rec.feed(["ID", "LPAR"])
    b = rec.feed(["ID", "LPAR"])
    assert a is b
    assert rec.scannable(a) >= set(rec.terminal_ids(["ID", "RPAR"]))


def test_paper_example_quotient_of_open_call():
    """§IV-B: after ``foo(a,`` the quotient completes the open ArgCont, Args and Call."""
    lq = left_quotient(CALLS, NFA.of_word([(s,) for s in ("ID", "LPAR", "ID", "COMMA")]))
    rec = Recognizer(lq)
    assert member(rec, ("ID", "RPAR"))
    assert member(rec, ("ID", "RPAR", "LPAR", "RPAR"))  # foo(a,b)() : Call!0 -> Expr!0 ...
    assert not member(rec, ("RPAR",))
    assert any(isinstance(r.lhs, tuple) for r in lq.rules)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(sorted(CALLS.terminals)), max_size=4))
def test_right_quotient_by_a_word_matches_enumeration(suffix):
    suffix = tuple(suffix)
    rq = right_quotient(CALLS, NFA.of_word([(s,) for s in suffix]))
    lang = sentences("calls", 9)
    for w in words(sorted(CALLS.terminals), 4):
        expected = w + suffix in lang
        assert (rq is not None and member(Recognizer(rq), w)) == expected, (w, suffix)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(sorted(BRACKETS.terminals)), max_size=4))
def test_left_quotient_by_a_word_matches_enumeration(prefix):
    prefix = tuple(prefix)
    lq = left_quotient(BRACKETS, NFA.of_word([(s,) for s in prefix]))
    lang = sentences("brackets", 9)
    for w in words(sorted(BRACKETS.terminals), 4):
        assert (lq is not None and member(Recognizer(lq), w)) == (prefix + w in lang)


def test_right_quotient_by_a_regular_language_with_a_loop():
    """``L(G) / (x* ")" ")")``: Earley over an NFA with a cycle (§IV-A) and extraction."""
    b = SuffixBuilder()
    start = b.sequence([Star([("x",)]), Sym((")",)), Sym((")",))])
    b.final(start)
    nfa = b.nfa.reversed()  # the builder builds reversed automata; this is the forward one
    rq = right_quotient(BRACKETS, nfa)
    rec = Recognizer(rq)
    lang = sentences("brackets", 10)
    suffixes = [("x",) * k + (")", ")") for k in range(4)]
    for w in words(sorted(BRACKETS.terminals), 4):
        expected = any(w + s in lang for s in suffixes)
        assert member(rec, w) == expected, w


def test_parse_nfa_decides_intersection_emptiness():
    cg = CompiledGrammar(augment(BRACKETS))
    for word, nonempty in ((("(", "x", ")"), True), (("(", "x"), False), ((")",), False)):
        nfa = NFA.of_word([(cg.sym_id[s],) for s in word])
        charts = parse_nfa(cg, nfa, TOP)
        final = charts[max(nfa.finals)]
        root = charts[nfa.start]
        done = cg.completed[final.entries[root]] if root in final.entries else ()
        assert (cg.sym_id[TOP] in done) == nonempty, word


def test_reversal_laws():
    rev = CALLS.reversed()
    assert rev.reversed().rules == CALLS.rules
    nfa = NFA.of_word([("a",), ("b",)])
    assert nfa.accepts(["a", "b"]) and not nfa.accepts(["b", "a"])
    assert nfa.reversed().accepts(["b", "a"]) and not nfa.reversed().accepts(["a", "b"])


def test_grammar_validation_names_the_problem():
    import pytest

    with pytest.raises(ValueError, match="neither a rule nor a terminal"):
        Grammar({"a"}, [R("S", ("b",))], "S")
    with pytest.raises(ValueError, match="both as terminal and nonterminal"):
        Grammar({"S"}, [R("S", ())], "S")
