"""Python 3's grammar, derived from the grammar that ships with ``lark`` (``python.lark``).

The companion paper's system is a Python 3 parser; we do not type a grammar in by hand but load
lark's well-kept ``lark/grammars/python.lark`` (lark 1.x, "adapted from the Python 3 reference
grammar") and let lark compile its EBNF to plain BNF rules. Then:

* terminals are renamed to what :mod:`cadlib.fim.lexer` emits: keywords and operators by their
  literal text, the others by lark's names (``NAME``, ``STRING``, ``LONG_STRING``, six number
  kinds), ``_NEWLINE`` as ``NEWLINE``; bytes literals are terminals of their own (``BYTES``,
  ``LONG_BYTES``: patch "bytes");
* every ``_INDENT γ _DEDENT`` becomes a *block* nonterminal with one rule per indentation band,
  ``block → (INDENT, b) γ (DEDENT, b)`` (:mod:`cadlib.fim.indent` explains the bands: they make
  the right context's unknown DEDENT counts exact, §VI-A);
* rules not reachable from ``file_input`` are dropped.

Patches (each one makes the grammar agree with CPython 3.11's ``ast.parse``; see
:data:`PATCHES`; rules written here are transcribed from CPython 3.11's ``Grammar/python.gram``):

``no <>``
    lark keeps ``<>`` (PEP 401's joke) as a comparison; CPython rejects it unless
    ``barry_as_FLUFL`` is imported.
``dots``
    ``from ... import x``: CPython lexes ``...`` as one token, lark's rule only has ``"."+``.
``targets``
    lark's assignment, augmented/annotated assignment, ``for``, comprehension and ``del``
    targets are arbitrary expressions (``f() = 1``, ``x, y: int = 0``); CPython's are
    ``star_targets`` / ``single_target`` / ``del_targets``, and ``with … as`` takes any
    ``star_target`` where lark allows only a name. :data:`TARGET_RULES`.
``parameters``
    CPython's ``parameters`` / ``lambda_params``: no parameter without a default after one
    with a default (across ``/``), a bare ``*`` needs a named parameter after it, a trailing
    comma after ``*args`` or ``**kwargs`` (lark rejects ``def f(a, *b,)``).
``arguments``
    CPython's ``args``: a keyword argument's name is a name (``f(a.b=1)`` is an error), no
    positional argument after a keyword argument, no ``*x`` after ``**y``, a generator
    expression only as the sole argument.
``import comma``
    ``from m import a,``: a trailing comma needs parentheses.
``comprehension ifs``
    ``[x for a in b if c if d for e in f]``: CPython's ``for_if_clause`` takes any number of
    ``if`` (lark: one, at the end), each a ``disjunction`` (lark also allows a lambda).
``starred subscripts``
    ``a[*b]`` (PEP 646, 3.11).
``star expressions``
    ``return *a, b``, ``yield *a, b``, ``for x in *a, b``, ``x += *a, b``: CPython takes
    ``star_expressions`` where lark takes ``testlist``.
``parenthesised with``
    ``with (a as b, c as d):`` (3.10).
``except*``
    ``except* E:`` blocks (PEP 654, 3.11), never mixed with plain ``except`` in one ``try``.
``star annotations``
    ``def f(*args: *Ts)`` (PEP 646, 3.11): only the ``*`` parameter's annotation may be starred.
``decorators``
    PEP 614 (3.9): a decorator is any ``named_expression`` (``@a @ b``, ``@x[0].y``,
    ``@(yield)``); lark allows only ``@dotted.name(args)``.
``named expressions``
    lark allows ``x := 1`` wherever an expression may stand; CPython only in conditions of
    ``if``/``elif``/``while``, ``match`` subjects, parentheses, displays, comprehension
    results, subscripts and positional call arguments (``named_expression``).
``bytes``
    lark's ``STRING`` takes a ``b`` prefix too, so ``"a" b"c"`` concatenates; CPython rejects
    an implicit concatenation of bytes and text literals ("cannot mix bytes and nonbytes
    literals"). Bytes literals are ``BYTES``/``LONG_BYTES`` here, an atom is a run of one kind
    (CPython's ``strings`` rule leaves the check to its compiler; the recognizer makes it
    syntax), and a ``case`` pattern takes a bytes literal where lark's takes ``STRING``.

All rule text written here is transcribed from CPython 3.11's ``Grammar/python.gram`` into
lark's symbols (:data:`TARGET_RULES` replaces lark's rules of the same names,
:data:`EXTRA_RULES` adds alternatives).

Known differences that remain (they show up as rare differential disagreements): starred
expressions where 3.11 forbids them only in its compiler-like "invalid_*" rules;
``global``/``nonlocal`` and the like are not checked beyond syntax (neither does ``ast.parse``).
The grammar is Python **3.11**'s (the interpreter the differential runs under): 3.12's type
parameters and ``type`` statements are rejected, as 3.11 does, and f-strings follow 3.11's rules
(:mod:`cadlib.fim.fstring`), not PEP 701's.
"""

from __future__ import annotations

import functools

from lark import Lark

from .cfg import Grammar, Rule

__all__ = ["PythonGrammar", "python_grammar", "NEWLINE", "indent", "dedent", "PATCHES"]

NEWLINE = "NEWLINE"
PATCHES = (
    "no <>",
    "dots",
    "targets",
    "parameters",
    "arguments",
    "import comma",
    "comprehension ifs",
    "starred subscripts",
    "star expressions",
    "parenthesised with",
    "named expressions",
    "except*",
    "star annotations",
    "decorators",
    "bytes",
)

#: CPython 3.11's target rules (``Grammar/python.gram``) in lark's symbols; ``a: b c | d``.
TARGET_RULES = """
assign: __targets_eq testlist_star_expr | __targets_eq yield_expr
__targets_eq: star_targets = | __targets_eq star_targets =
annassign: single_target : test | single_target : test = testlist_star_expr
annassign: single_target : test = yield_expr
augassign: single_target augassign_op yield_expr | single_target augassign_op testlist_star_expr
del_stmt: del del_targets
with_item: test as star_target | test
star_targets: star_target | star_target , | star_target __more_star | star_target __more_star ,
__more_star: , star_target | __more_star , star_target
star_target: * target_with_star_atom | target_with_star_atom
target_with_star_atom: atom_expr . name | atom_expr [ subscriptlist ] | star_atom
star_atom: name | ( target_with_star_atom ) | ( ) | ( __star_tuple ) | [ ] | [ star_targets ]
__star_tuple: star_target , | star_target __more_star | star_target __more_star ,
single_target: atom_expr . name | atom_expr [ subscriptlist ] | name | ( single_target )
del_targets: del_target | del_target , | del_target __more_del | del_target __more_del ,
__more_del: , del_target | __more_del , del_target
del_target: atom_expr . name | atom_expr [ subscriptlist ] | name | ( del_target ) | ( )
del_target: ( del_targets ) | [ ] | [ del_targets ]
comp_if: if or_test
parameters: __params | __params ,
__params: __plain | __plain , __star_etc | __star_etc
__plain: __nd | __nd , __d | __d | __nd , / | __nd , / , __nd | __nd , / , __nd , __d
__plain: __nd , / , __d | __nd , __d , / | __nd , __d , / , __d | __d , / | __d , / , __d
__nd: typedparam | __nd , typedparam
__d: __pd | __d , __pd
__pd: typedparam = test
__star_etc: * __starparam | * __starparam , __maybe | * , __maybe | kwparams
__star_etc: * __starparam , kwparams | * __starparam , __maybe , kwparams | * , __maybe , kwparams
__starparam: typedparam | name : star_expr
__maybe: __pm | __maybe , __pm
__pm: typedparam | typedparam = test
kwparams: ** typedparam
lambda_params: __lparams | __lparams ,
__lparams: __lplain | __lplain , __lstar_etc | __lstar_etc
__lplain: __lnd | __lnd , __ld | __ld | __lnd , / | __lnd , / , __lnd | __lnd , / , __lnd , __ld
__lplain: __lnd , / , __ld | __lnd , __ld , / | __lnd , __ld , / , __ld | __ld , / | __ld , / , __ld
__lnd: name | __lnd , name
__ld: __lpd | __ld , __lpd
__lpd: name = test
__lstar_etc: * name | * name , __lmaybe | * , __lmaybe | __lkw
__lstar_etc: * name , __lkw | * name , __lmaybe , __lkw | * , __lmaybe , __lkw
__lmaybe: __lpm | __lmaybe , __lpm
__lpm: name | name = test
__lkw: ** name
arguments: __args | __args , | comprehension{test}
__args: __posargs | __posargs , __kwargs | __kwargs
__posargs: __posarg | __posargs , __posarg
__posarg: namedexpr_test | * test
__kwargs: __kwstars | __kwstars , __kwdstars | __kwdstars
__kwstars: __kwstar | __kwstars , __kwstar
__kwstar: name = test | * test
__kwdstars: __kwdstar | __kwdstars , __kwdstar
__kwdstar: name = test | ** test
namedexpr_test: test | assign_expr
named_or_star: namedexpr_test | star_expr
decorator: @ namedexpr_test NEWLINE
__named_more: , named_or_star | __named_more , named_or_star
"""
#: Rules added next to lark's own (same notation).
EXTRA_RULES = """
comp_for: comp_for comp_if
subscript: star_expr
with_stmt: with ( with_items ) : suite | with ( with_items , ) : suite
try_stmt: try : suite __except_stars | try : suite __except_stars finally_rule
try_stmt: try : suite __except_stars else : suite
try_stmt: try : suite __except_stars else : suite finally_rule
__except_stars: __except_star | __except_stars __except_star
__except_star: except * test : suite | except * test as name : suite
atom: __bytes_concat
__bytes_concat: __bytes | __bytes_concat __bytes
__bytes: BYTES | LONG_BYTES
inner_literal_pattern: BYTES
"""


def indent(band: int) -> tuple:
    """The INDENT terminal of an indentation band."""
    return ("INDENT", band)


def dedent(band: int) -> tuple:
    """The DEDENT terminal of an indentation band."""
    return ("DEDENT", band)


class PythonGrammar:
    """Python's rules with the indentation blocks left open; :meth:`with_bands` closes them.

    Attributes
    ----------
    rules
        Band-independent rules (tuple of :class:`~cadlib.fim.cfg.Rule`).
    blocks
        ``{block_nonterminal: inner_symbols}`` for every ``_INDENT γ _DEDENT`` of lark's rules.
    terminals
        Band-independent terminal names.
    """

    def __init__(self, rules, blocks, terminals):
        self.rules = tuple(rules)
        self.blocks = dict(blocks)
        self.terminals = frozenset(terminals)
        self._banded: dict[int, Grammar] = {}

    def with_bands(self, n_bands: int) -> Grammar:
        """The complete grammar for ``n_bands`` indentation bands (start ``file_input``)."""
        got = self._banded.get(n_bands)
        if got is None:
            got = self._banded[n_bands] = self._build(n_bands)
        return got

    def _build(self, n_bands: int) -> Grammar:
        extra = [
            Rule(block, (indent(b), *inner, dedent(b)))
            for block, inner in self.blocks.items()
            for b in range(n_bands)
        ]
        terminals = self.terminals | {f(b) for b in range(n_bands) for f in (indent, dedent)}
        return Grammar(terminals, self.rules + tuple(extra), "file_input")


def _terminal_name(lark_term, patterns: dict) -> str:
    name = lark_term.name
    if name == "_NEWLINE":
        return NEWLINE
    kind, value = patterns[name]
    return value if kind == "str" else name


@functools.cache
def python_grammar() -> PythonGrammar:
    """Load and convert lark's ``python.lark`` (cached; ~0.3 s the first time)."""
    parser = Lark.open_from_package(
        "lark",
        "python.lark",
        ["grammars"],
        parser="earley",
        lexer="basic",
        start="file_input",
        keep_all_tokens=True,
    )
    patterns = {t.name: (t.pattern.type, t.pattern.value) for t in parser.terminals}
    literals = {value for kind, value in patterns.values() if kind == "str"}

    def rule_name(name: str) -> str:  # lark's rules `case` and `finally` vs their keywords
        return f"{name}_rule" if name in literals else name

    rules, blocks = [], {}
    for r in parser.rules:
        rhs = []
        for s in r.expansion:
            if s.name in ("_INDENT", "_DEDENT"):
                rhs.append(s.name)
            else:
                rhs.append(_terminal_name(s, patterns) if s.is_term else rule_name(s.name))
        if "<>" in rhs:  # patch "no <>"
            continue
        if "_INDENT" in rhs:
            i, j = rhs.index("_INDENT"), rhs.index("_DEDENT")
            inner = tuple(rhs[i + 1 : j])
            block = blocks.setdefault(inner, f"__block_{len(blocks)}")
            rhs = rhs[:i] + [block] + rhs[j + 1 :]
        rules.append(Rule(rule_name(r.origin.name), tuple(rhs)))
    rules += [Rule("dots", ("...",)), Rule("dots", ("dots", ".")), Rule("dots", ("dots", "..."))]
    rules = _patch_targets(rules)
    rules = _reachable(rules, "file_input", {b: inner for inner, b in blocks.items()})
    lhs = {r.lhs for r in rules} | set(blocks.values())
    terminals = {s for r in rules for s in r.rhs if s not in lhs}
    return PythonGrammar(rules, {b: inner for inner, b in blocks.items()}, terminals)


def _parse_rules(text: str) -> list:
    return [
        Rule(lhs.strip(), tuple(alt.split()))
        for line in text.strip().splitlines()
        for lhs, alts in [line.split(":", 1)]
        for alt in alts.split("|")
    ]


def _named_expressions(r: Rule) -> Rule:
    """Patch "named expressions": ``test`` → ``namedexpr_test`` where CPython allows ``:=``."""
    lhs, rhs = r.lhs, list(r.rhs)
    if lhs in ("if_stmt", "elif_", "while_stmt", "match_stmt") and rhs[1:2] == ["test"]:
        rhs[1] = "namedexpr_test"
    elif lhs == "subscript" and rhs == ["test"]:
        rhs = ["namedexpr_test"]
    elif lhs == "atom" and rhs == ["(", "test", ")"]:
        rhs[1] = "namedexpr_test"
    elif lhs.startswith("comprehension{") and rhs[0] in ("test", "test_or_star_expr"):
        rhs[0] = "namedexpr_test"
    elif lhs in ("_exprlist", "_tuple_inner"):
        rhs = [
            "named_or_star"
            if x == "test_or_star_expr"
            else "__named_more"
            if x.startswith("__")
            else x
            for x in rhs
        ]
    return Rule(lhs, tuple(rhs))


def _patch_targets(rules: list) -> list:
    """The patches of the module docstring after "dots"."""
    new = _parse_rules(TARGET_RULES)
    replaced = {r.lhs for r in new}
    out = []
    for r in rules:
        if r.lhs in replaced or r.rhs == ("assign_expr",):
            continue
        r = _named_expressions(r)
        if r.lhs in ("return_stmt", "yield_expr", "for_stmt"):  # patch "star expressions"
            r = Rule(r.lhs, tuple("testlist_star_expr" if x == "testlist" else x for x in r.rhs))
        if r.lhs in ("for_stmt", "comp_for"):
            r = Rule(r.lhs, tuple("star_targets" if x == "exprlist" else x for x in r.rhs))
        if r.lhs == "import_from" and r.rhs[-1] == "import_as_names":
            r = Rule(r.lhs, r.rhs[:-1] + ("__import_as_names_bare",))
        if r.lhs == "import_as_names" and r.rhs[-1] != ",":  # patch "import comma"
            out.append(Rule("__import_as_names_bare", r.rhs))
        out.append(r)
    return out + new + _parse_rules(EXTRA_RULES)


def _reachable(rules: list, start: str, blocks: dict) -> list:
    """The rules reachable from ``start``; a block reaches its inner symbols."""
    edges: dict = {b: set(inner) for b, inner in blocks.items()}
    for r in rules:
        edges.setdefault(r.lhs, set()).update(r.rhs)
    seen, stack = {start}, [start]
    while stack:
        for s in edges.get(stack.pop(), ()):
            if s in edges and s not in seen:
                seen.add(s)
                stack.append(s)
    return [r for r in rules if r.lhs in seen]
