"""The public FIM constraint (paper §III Problem 1): API, cuts inside tokens, strings and
indentation (§V-B, §VI-A), errors, and a seeded differential sample against CPython."""

import random

import pytest

from cadlib.fim import (
    FIMConstraint,
    UnconnectableContextError,
    UnsupportedLanguageError,
    differential_check,
    summarize,
)
from cadlib.fim.differential import cut_kinds, fim_splits, python_accepts, random_edit
from cadlib.fim.lexer import dfa
from cadlib.fim.python_grammar import python_grammar
from cadlib.fim.right import RightContext


def test_feed_viable_can_end_and_fork():
    c = FIMConstraint("def f(x):\n    return x +", "\n")
    assert c.viable() and not c.can_end()
    trial = c.fork()
    assert not trial.feed(")")
    assert not trial.viable() and not trial.feed(" 1")  # a dead state stays dead
    assert c.viable() and c.feed(" 1") and c.can_end()
    assert c.middle_length == 2 and trial.middle_length == 3
    assert c.clone().can_end()


# left, middle, right: cuts inside a name, a string, a number, an operator, a comment,
# indentation, brackets, and an empty right context (the middle ends the file).
CASES = [
    ("def f():\n    ret", "", "urn 1\n"),
    ("def f():\n    return fo", "o", "(1)\n"),
    ('x = "ab', "", 'c"\n'),
    ('x = "ab', '" + "', 'c"\n'),
    ("x = 1", "2", "3.5e1\n"),
    ("x = a ", "=", "= b\n"),
    ("x = 1  # co", "mm", "ent\ny = 2\n"),
    ("if x:\n  ", "  ", "  pass\n"),
    ("x = [1, ", "2,", "3]\n"),
    ("def f(a,\n", "      b", "):\n    pass\n"),
    ("x = 1\n", "if x:\n    pass", ""),
    ('s = """doc', "", ' string"""\n'),
    ("x = 0", "x1", "f\n"),
]


@pytest.mark.parametrize("left, middle, right", CASES)
def test_cuts_inside_symbols(left, middle, right):
    assert python_accepts(left + middle + right)
    c = FIMConstraint(left, right)
    assert all(c.feed(ch) for ch in middle)
    assert c.can_end()


@pytest.mark.parametrize(
    "left, middle, right",
    [
        ("def f():\n    ret", "x", "urn 1\n"),  # "retxurn 1" is no statement
        ('x = "ab', '"', 'c"\n'),  # closes the string: c" opens an unterminated one
        ("x = 0", "o", "r 1\n"),  # 0or: CPython commits to an octal literal
        ("if x:\n", "", "pass\n"),  # a block needs an indented line
        ("x = (", "", "\n"),  # unclosed bracket at the end of the file
    ],
)
def test_invalid_ends(left, middle, right):
    assert not python_accepts(left + middle + right)
    c = FIMConstraint(left, right)
    c.feed(middle)
    assert not c.can_end()


def test_figure_6_tail_indices():
    """§V-B Fig. 6: a symbol begun in the middle may end after 1, 3, 5 or 8 characters of
    ``"#'#"#"#\\n``; an unclosed triple-quoted string cannot end."""
    rc = RightContext('"#\'#"#"#\n', python_grammar())
    tails = {
        name: rc.tail(dfa.run(0, prefix))
        for name, prefix in [
            ("name", "x"),
            ("double", '"foo'),
            ("long", '"""foo""'),
            ("single", "'foo"),
            ("backslash", '"foo\\'),
            ("comment", "#foo"),
            ("triple", '"""foo'),
        ]
    }
    assert {k: v and v[0] for k, v in tails.items()} == {
        "name": 0,
        "double": 1,
        "long": 1,
        "single": 3,
        "backslash": 5,
        "comment": 8,
        "triple": None,
    }


def test_unconnectable_contexts_raise_named_errors():
    with pytest.raises(UnconnectableContextError, match="left context"):
        FIMConstraint("def f(:", "")
    with pytest.raises(UnconnectableContextError, match="right context"):
        FIMConstraint("x = ", "\n)\n(")
    with pytest.raises(UnsupportedLanguageError):
        FIMConstraint("", "", language="javascript")


@pytest.fixture(scope="module")
def humanevalpack(humanevalpack_dir):
    from cadlib.corpora import load_corpus

    return load_corpus("heval-fix-py", local_dir=humanevalpack_dir)


def test_cut_kinds_and_edits():
    src = 'def f(x):\n    return "ab" + x\n'
    kinds = cut_kinds(src)
    assert kinds[src.index("ab")] == "mid_string" and kinds[src.index("eturn")] == "mid_token"
    assert kinds[src.index("  return")] == "mid_indent" and kinds[0] == "boundary"
    rng = random.Random(0)
    assert all(a <= b for a, b, *_ in fim_splits(src, 20, rng))
    i, edited, what = random_edit("abc", rng)
    assert what and edited != "abc" or "duplicate" in what


def test_differential_sample_agrees_with_cpython(humanevalpack):
    """Seeded sample of the differential test (the full run: ``differential_check`` on the
    whole corpus, see cadlib.fim.differential)."""
    rng = random.Random(1)
    cases = rng.sample(list(humanevalpack), 8)
    frame = differential_check(cases, n_splits=3, seed=7, n_edits=4, progress=False)
    s = summarize(frame)
    assert s["splits"] == 48 and s["edits"] == 192
    assert s["true_middles_all_prefixes_viable"] == 1.0 and s["true_middles_accepted"] == 1.0
    assert s["edit_agreement"] == 1.0, frame[~frame.agree]
    assert set(frame.right_cut) == {"boundary", "mid_token", "mid_string", "mid_indent"}
