"""Witness completions (:mod:`cadlib.fim.witness`) and the soundness check that CPython parses
every accepted prefix's witness (:mod:`cadlib.fim.witness_check`)."""

import random

import pytest

from cadlib.fim import witness_check as wc
from cadlib.fim.constraint import FIMConstraint, UnconnectableContextError
from cadlib.fim.differential import python_accepts
from cadlib.fim.witness import pieces, witness

CASES = [
    # (left, middle, right): the middle is a viable prefix the witness must finish
    ("x = (", "1,", "\n"),
    ("x = '", "ab", "\n"),
    ("", "s = '''ab", "\n"),
    ("", "def f(", "\n"),
    ("", "if x:", "\n"),
    ("", "if x:\n", ""),
    ("", "@dec", "\n"),
    ("", "@dec\n", "def g(): pass\n"),
    ("", "s = f'{a", "\n"),
    ("", "s = f'{a:", "\n"),
    ("", "s = f'{a!", "\n"),
    ("def g():\n", "    if y", "\n    return 1\n"),
    ("def g():\n    ", "x = [1,", "\n    return 1\n"),
    ("", "for i", "\n"),
    ("", "try:\n  pass\nexc", ""),
    ("", "class C(", "\n"),
    ("", "x = 1e", "\n"),
    ("", "x = 0x", "\n"),
    ("    def __", "", "lf):\n        pass\n"),  # the right context ends a name in progress
    ("", "x = 1  # a comment", "\n"),
    ("", "x = 1 \\", "\n"),
]


@pytest.mark.parametrize("left,middle,right", CASES)
def test_witness_completes_a_viable_prefix(left, middle, right):
    if left.startswith("    def"):
        left = "class C:\n" + left
    c = FIMConstraint(left, right)
    assert c.feed(middle)
    w = witness(c)
    assert w is not None
    assert python_accepts(left + middle + w + right), w
    assert c.fork().feed(w) and c.middle_length == len(middle)  # c itself is unchanged


def test_witness_reads_the_state():
    c = FIMConstraint("", "\n")
    c.feed("s = '''ab")
    assert pieces(c)[0] == "'''"  # the open string's own closing quote comes first
    c = FIMConstraint("", "\n")
    c.feed("if x:")
    assert witness(c) == "\n    pass"  # a block that needs a body gets one, indented
    c = FIMConstraint("", "\n")
    c.feed("x = 1")
    assert witness(c) == ""  # already a program


@pytest.mark.parametrize("middle", ["x = )", "def f(:", "x = 1\n  y = 2", "x = 1\n)"])
def test_no_witness_for_a_dead_prefix(middle):
    c = FIMConstraint("", "\n")
    assert not c.feed(middle)
    assert witness(c) is None


def test_search_limit_gives_none_not_a_wrong_witness():
    c = FIMConstraint("", "\n")
    c.feed("def f(")
    assert witness(c, max_expansions=0) is None


@pytest.mark.parametrize("kind", wc.PERTURBATIONS)
def test_perturb_changes_the_middle(kind):
    middle = "x = f(a, 'b')\nif x:\n    y = 1\n"
    got = wc.perturb(middle, random.Random(3), kind)
    assert got != middle
    if kind == "stray closer":
        assert sum(got.count(ch) for ch in ")]}") == 2
    with pytest.raises(ValueError):
        wc.perturb(middle, random.Random(3), "nope")


def test_rows_stop_at_the_first_dead_prefix():
    c = FIMConstraint("", "\n")
    rows = wc.witness_rows(c, "x = 1)", "", "\n")
    assert [r["viable"] for r in rows] == [True] * 6 + [False]
    assert all(r["parsed"] for r in rows[:-1]) and rows[-1]["witness"] is None


def test_a_wrong_witness_is_a_failure(monkeypatch):
    """The check catches a recognizer whose witnesses CPython rejects (the counter-example)."""
    monkeypatch.setattr(wc, "witness", lambda state, max_expansions, hints=(): ")")
    cuts = [dict(file="m.py", a=4, b=9, left="x = ", middle="(1+2)", right="\n")]
    frame = wc.witness_check(cuts, progress=False)
    summary = wc.witness_summary(frame, cuts)
    true = summary["by_variant"]["true middle"]
    assert true["prefixes_checked"] == 6 and true["witnesses_parsed"] == 3  # "()", "(1)", "(1+2)"
    assert true["failures"] == 3 and summary["failures"] >= 3
    example = summary["failure_examples"][0]
    assert example["witness"] == ")" and example["variant"] == "true middle"
    assert example["prefix"] == ""  # the shortest failing prefix of that middle


def test_check_on_a_small_cut_has_no_failure():
    source = "def f(x):\n    if x:\n        return [x, 'a']\n    return None\n"
    a, b = source.index("if"), source.index("return None")
    cuts = [dict(file="m.py", a=a, b=b, left=source[:a], middle=source[a:b], right=source[b:])]
    summary = wc.witness_summary(wc.witness_check(cuts, seed=1, progress=False), cuts)
    assert summary["failures"] == 0 and summary["witnesses_parsed"] > 0
    assert summary["by_variant"]["true middle"]["dead_prefixes"] == 0


def test_hints_reach_a_header_no_state_suggests():
    """A right context inside an ``if`` header whose bracket spans lines: the state alone
    cannot guess ``if`` (and a comment cannot swallow the header)."""
    left, right = "def f(xs):\n", " xs if (\n        xs) else xs:\n        pass\n    return 1\n"
    c = FIMConstraint(left, right)
    assert witness(c, max_expansions=40) is None
    w = witness(c, hints=("    if",))
    assert w == "    if" and python_accepts(left + w + right)


def test_rows_say_which_search_found_the_witness():
    left, right = "def f(xs):\n", " xs if (\n        xs) else xs:\n        pass\n    return 1\n"
    rows = wc.witness_rows(FIMConstraint(left, right), "    i", left, right, 40, "    if")
    assert [r["source"] for r in rows][:2] == ["hinted", "hinted"]
    assert all(r["parsed"] for r in rows)


# The soundness runs' two failures (results/fim.witness*.json, made before the second was
# fixed): ``can_end`` accepted what CPython rejects.
BACKSLASH_AT_LINE_START = [
    # CPython takes the line's indentation at the backslash (column 2, no matching level);
    # the recognizer counted on into the next line (4) until cadlib.fim.branching, tokenlex
    # and indent took the column at the backslash too
    "class C:\n    def f(self):\n        x = 1\n\n  \\\n  def g(self):\n        pass\n",
    "if 1:\n    x = 1\n    \\\n  y = 2\n",
    "if 1:\n  \\\n  x = 1\n",
    "def f():\n    \\\n    return 1\n",
]


@pytest.mark.parametrize("source", BACKSLASH_AT_LINE_START)
def test_backslash_at_a_line_start_sets_its_indentation(source):
    valid = python_accepts(source)
    for k in range(len(source) + 1):  # every cut: the left fed, the right as its context
        try:
            ours = FIMConstraint(source[:k], source[k:]).can_end()
        except UnconnectableContextError:
            ours = False
        assert ours == valid, k


def test_bytes_and_str_concatenation_is_rejected():
    """A check CPython makes after parsing ("cannot mix bytes and nonbytes literals"), made
    syntax here (patch "bytes"): the first failure of the soundness run."""
    source = "x = ''B'S'\n"
    assert not python_accepts(source)
    c = FIMConstraint("", "")
    assert not (c.feed(source) and c.can_end())
