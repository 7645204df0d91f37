"""Earley recognition, Earley over NFAs and quotient extraction on small grammars (paper §IV),
checked against brute-force enumeration of the languages."""

import functools
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib.fim.cfg import Grammar, Rule
from cadlib.fim.compiled import CompiledGrammar
from cadlib.fim.earley import Recognizer
from cadlib.fim.nfa_parse import parse_nfa
from cadlib.fim.quotient import TOP, augment, left_quotient, right_quotient
from cadlib.fim.regular import NFA, Star, SuffixBuilder, Sym

R = Rule
#: The paper's §IV-B example grammar (function calls).
CALLS = Grammar(
    {"ID", "LPAR", "RPAR", "COMMA"},
    [
        R("Expr", ("ID",)),
        R("Expr", ("Call",)),
        R("Call", ("Expr", "LPAR", "Args", "RPAR")),
        R("Args", ()),
        R("Args", ("Expr", "ArgCont")),
        R("ArgCont", ()),
        R("ArgCont", ("COMMA", "Expr", "ArgCont")),
    ],
    "Expr",
)
#: Balanced brackets with a nullable, right-recursive list (exercises ε-handling).
BRACKETS = Grammar(
    {"(", ")", "x"},
    [
        R("S", ()),
        R("S", ("T", "S")),
        R("T", ("(", "S", ")")),
        R("T", ("x",)),
    ],
    "S",
)
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
        todo += [form[:i] + r.rhs + form[i + 1 :] for r in g.rules if r.lhs == form[i]]
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


def test_nullable_and_productive_nonterminals():
    assert CALLS.nullable() == {"Args", "ArgCont"} and BRACKETS.nullable() == {"S"}
    assert CALLS.productive() == CALLS.nonterminals and BRACKETS.productive() == {"S", "T"}
    loop = Grammar({"a"}, [R("S", ("a",)), R("S", ("U",)), R("U", ("U", "a"))], "S")
    assert loop.productive() == {"S"} and loop.nullable() == frozenset()


def test_grammar_validation_names_the_problem():
    import pytest

    with pytest.raises(ValueError, match="neither a rule nor a terminal"):
        Grammar({"a"}, [R("S", ("b",))], "S")
    with pytest.raises(ValueError, match="both as terminal and nonterminal"):
        Grammar({"S"}, [R("S", ())], "S")


def _entries(rec, chart) -> list:
    """A chart's live content (to compare the charts of two recognizers of one compiled
    grammar): per origin, named by its depth, the dotted rules not yet complete (all of them
    at the root's, which ``accepts`` reads); finished entries other than the root's are left
    out (a lean chart may hold the live part of a state where the full one holds its union
    with a finished one)."""
    cg = rec.cg
    out = []
    for o, s in chart.entries.items():
        live = tuple(sorted(d for d in cg.items[s] if cg.nxt[d] >= 0 or o is rec.root))
        if live:
            out.append((o.depth, live))
    return sorted(out)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["calls", "brackets"]), st.lists(st.integers(0, 3), max_size=16))
def test_lean_charts_equal_full_charts(name, picks):
    """Lean charts (issue 34 §5: finished entries dropped, push chains built directly) hold
    the live entries of the full charts, symbol by symbol, until both reject (runs of one
    symbol are frequent), and accept and scan alike."""
    g = {"calls": CALLS, "brackets": BRACKETS}[name]
    cg = CompiledGrammar(g)
    lean, full = Recognizer(cg, lean_charts=True), Recognizer(cg, lean_charts=False)
    alphabet = ALPHABET[id(g)]
    a, b = lean.root, full.root
    for k in picks:
        for _ in range(1 + k % 3):
            sym = (cg.sym_id[alphabet[k % len(alphabet)]],)
            a, b = lean.scan(a, sym), full.scan(b, sym)
            assert (a is None) == (b is None)
            if a is None:
                return
            assert all(lean.cg.by_next[s] or o is lean.root for o, s in a.entries.items())
            assert _entries(lean, a) == _entries(full, b) and lean.accepts(a) == full.accepts(b)
            assert lean.scannable(a) == full.scannable(b)


def test_lean_charts_equal_full_charts_on_python():
    """Along real programs with a right context (whose quotient rules finish entries at every
    level of ``- - - -``), every branch's chart, character by character, holds the full
    chart's live entries and the verdicts agree; brackets become push chains, built directly
    from the third on, and a chain of unary minus keeps three entries."""
    from cadlib.fim.constraint import FIMConstraint

    sources = [
        "x = - - - - - - 1\n",
        "y = ((((((a))))))[[[[1]]]]\n",
        "z = ~~~~+-+-~a\n",
        "def f(x):\n    return [a for a in x if a](1, *b, **c)\n",
        "x = {1: (2, 3), **d}[a:b, ::2].c.d(e=f)\nwhile not not not a < b <= c: pass\n",
    ]
    for source in sources:
        for cut in (len(source) // 2, len(source)):
            lean = FIMConstraint("", source[cut:])
            twin = lean._problem.fresh()  # the same compiled grammar: state ids compare
            twin.rec.lean_charts = False
            full = FIMConstraint("", source[cut:], _problem=twin, _branches=twin.lexer.initial())
            for ch in source[:cut]:
                lean.feed(ch)
                full.feed(ch)
                assert [(_entries(lean._problem.rec, b[0]), b[1:]) for b in lean.branches] == [
                    (_entries(twin.rec, b[0]), b[1:]) for b in full.branches
                ], source
            assert lean.can_end() and full.can_end(), source
    c = FIMConstraint("x = ", "1\n")
    c.feed("((((")
    assert c.branches[0][0].push is not None  # built directly from the third bracket on
    c = FIMConstraint("x = ", "1\n")
    c.feed("- - - - ")
    assert len(c.branches[0][0].entries) == 3  # root, the last level and its prediction
