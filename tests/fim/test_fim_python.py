"""Whole-program recognition (empty left and right context) against ``ast.parse``: the
grammar derived from lark's ``python.lark`` with its patches, lexing and indentation."""

import random

import pytest

from cadlib.fim import FIMConstraint
from cadlib.fim.differential import EDIT_ALPHABET, python_accepts
from cadlib.fim.python_grammar import PATCHES, python_grammar

EMPTY = FIMConstraint("", "")


def accepts(source: str) -> bool:
    c = EMPTY.fork()
    return c.feed(source) and c.can_end()


AGREES = [
    "x = 1",
    "0or 1",
    "1or 2",
    "1if 1 else 2",
    "x = 0x1for",
    "1andy",
    "1and y",
    "f(a=1)",
    "f(a.b=1)",
    "f() = 1",
    "(a, b) = c",
    "[a, *b] = c",
    "a, = c",
    "() = x",
    "*a, b = c",
    "*a = c",
    "del a, b",
    "del *a",
    "for x, in y: pass",
    "for f() in y: pass",
    "with a as (b, c): pass",
    "x: int = 1",
    "x, y: int",
    "(x): int",
    "a += 1",
    "a, b += 1",
    "def f(*): pass",
    "def f(*, a): pass",
    "def f(*, **k): pass",
    "from . import x",
    "from ... import x",
    "from a import b,",
    "from a import (b,)",
    "x = yield",
    "async def f():\n    await x\n    async for a in b: pass\n    async with a: pass",
    "match x:\n    case 1:\n        pass\n    case _:\n        pass",
    "match = 1",
    "_ = 3",
    "[a for a in b if c if d]",
    "[x for x in y if lambda: 1]",
    "a[*b]",
    "x := 1",
    "(x := 1)",
    "x = y := 1",
    "f(x := 1)",
    "f(a=x := 1)",
    "if x := 1: pass",
    "[y := 1, 2]",
    "x, y := 1, 2",
    "[*a for a in b]",
    "return *a, b",
    "for x in *a, b: pass",
    "with (a as b, c as d): pass",
    "x = a <> b",
    "if x:\n  pass\n else:\n  pass",
    "if x:\npass",
    "  x = 1",
    "x = [1,\n# c\n2]",
    "x = 1 + \\\n 2",
    'x = "a\\\nb"',
    'x = "abc',
    "x = 1.__class__",
    "x = 1 .real",
    "\tx = 1",
    "if x:\n    # c\n    pass",
    "class A: x = 1",
    "x = 1;",
    "def f(a, /, b, *, c): pass",
    "print(x for x in y, 1)",
    "f(**a, *b)",
    "x = `a`",
    "x = $",
    'x = b"\\u1234"',
    "try:\n    pass\nfinally:\n    pass",
    "lambda: (yield)",
    "@a.b(c)\ndef f(): pass",
    "lambda *: 0",
    "def f(a=1, b): pass",
    "f(a=1, b)",
    "def f(a, *b,): pass",
    "def f(*,): pass",
    "def f(a=1, /, b): pass",
    "lambda a, /, b=1, *c, d, **e: 0",
    "f(x for x in y,)",
    "f(a, *b, c=1, *d, **e, f=2)",
    "f(**a, *b)",
    "f(a=1, **b, c=2)",
    "def f(a, /, /): pass",
    "if x:\n\tpass\n        pass",
    "if x:\n\tpass\n\tpass",
    "if x:\n        pass\n\tpass",
    "if x:\n  \tpass\n\tpass",
    "if x:\n\tif y:\n\t\tpass\n\tpass",
    "x = 1 \\\n",
    "x = 1 \\\n  # c",
    "x = 1 \\\n\n",
    "x = 1 \\\n  ",
    "x = 1\n\\\n",
]
#: Documented differences (cadlib.fim.differential.KNOWN_DIFFERENCES): ours accepts.
KNOWN = ['x = "\\N{DASH}"']
#: Python 3.11 syntax that issue 34 found rejected (PEP 614 decorators, ``@`` as an operator
#: on a decorator line, PEP 654 ``except*``, PEP 646 ``*args: *Ts``), and what stays an error.
NEWER = [
    "@property    @abstractmethod\ndef imag(self): pass",
    "@abstr@ctmethod\ndef f(): pass",
    "class A:\n    @ab@abc.abstractmethod\n    async def f(self): pass",
    "@x[0].y\nclass A: pass",
    "@(yield)\ndef f(): pass",
    "@x := y\ndef f(): pass",
    "@lambda f: f\ndef g(): pass",
    "@a if b else c\ndef g(): pass",
    "@a,\ndef g(): pass",
    "@*a\ndef g(): pass",
    "x @= y @ z",
    "try:\n    pass\nexcept* E:\n    pass",
    "try:\n    pass\nexcept *E as e:\n    pass\nelse:\n    pass\nfinally:\n    pass",
    "try:\n    pass\nexcept*:\n    pass",
    "try:\n    pass\nexcept* E:\n    pass\nexcept F:\n    pass",
    "def f(*args: *Ts): pass",
    "def f(*a: *b, c): pass",
    "def f(*, a: *Ts): pass",
    "def f(**k: *Ts): pass",
    "lambda *a: *b",
    "def f[T](): pass",
    "type X = int",
]


@pytest.mark.parametrize("source", NEWER)
def test_python_311_syntax_agrees_with_cpython(source):
    assert accepts(source) == python_accepts(source)


@pytest.mark.parametrize("source", AGREES)
def test_agrees_with_cpython(source):
    assert accepts(source) == python_accepts(source)


@pytest.mark.parametrize("source", KNOWN)
def test_known_differences_stay_documented(source):
    assert accepts(source) and not python_accepts(source)


def test_grammar_is_derived_from_lark_and_patched():
    pg = python_grammar()
    g = pg.with_bands(3)
    assert g.start == "file_input" and not g.nonterminals - g.productive()
    assert {"funcdef", "suite", "atom_expr", "comprehension{test}"} <= g.nonterminals
    assert len(PATCHES) >= 10 and len(g.rules) > 500


@pytest.fixture(scope="module")
def humanevalpack_sources(humanevalpack_dir):
    from cadlib.corpora import load_corpus

    corpus = load_corpus("heval-fix-py", local_dir=humanevalpack_dir)
    return [c.meta["prompt"] + c.gold for c in corpus] + [c.meta["prompt"] + c.doc for c in corpus]


def test_every_humanevalpack_source_is_accepted(humanevalpack_sources):
    assert all(accepts(src) for src in humanevalpack_sources)


def test_random_mutations_agree_with_cpython(humanevalpack_sources):
    rng = random.Random(0)
    srcs = humanevalpack_sources
    for _ in range(400):
        s = rng.choice(srcs)
        i = rng.randrange(len(s))
        ch = rng.choice(EDIT_ALPHABET)
        m = rng.choice([s[:i] + s[i + 1 :], s[:i] + ch + s[i:], s[:i] + ch + s[i + 1 :]])
        assert accepts(m) == python_accepts(m), (m[max(0, i - 30) : i + 30], i)
