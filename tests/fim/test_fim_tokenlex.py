"""The mask's lexical tables (cadlib.fim.tokenlex): equal to feeding every token on its own,
on states of every kind, and when one trie's tables are reused and grown across states."""

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib.fim import FIMConstraint, TokenTrie
from cadlib.fim.mask import naive_allowed_mask, token_texts

# token texts that end and start every kind of symbol: names and keyword prefixes, string
# prefixes and quotes, numbers and what may follow them ("1if", "0x", "1e"), operators that
# extend (":=", "->", "..."), comments, continuations, indentation, tabs, non-ASCII
PIECES = [
    "x",
    "xy",
    " x",
    " ",
    "  ",
    "    ",
    "\t",
    "\n",
    "\n    ",
    "\n\n",
    "(",
    ")",
    "()",
    "):",
    ":",
    ":=",
    "=",
    " = ",
    "==",
    "1",
    "12",
    "1.",
    "1e",
    "e5",
    "1_0",
    "0x",
    "0o7",
    "1j",
    "if",
    " if ",
    "1if",
    "or",
    "1or",
    "in",
    "is",
    "else",
    "not",
    "and",
    '"',
    '"a',
    'a"',
    "'",
    "r'",
    "b'",
    'f"',
    "'''",
    '"""',
    "#",
    "# c",
    "\\",
    "\\\n",
    "return",
    " return",
    "re",
    "ret",
    "def",
    " f",
    "(x",
    "0",
    ".",
    "..",
    "...",
    "->",
    "-",
    "*",
    "**",
    ",",
    ", ",
    "[",
    "]",
    "[]",
    "{",
    "}",
    "é",
    " é",
    "€",
    "lambda",
    "pass",
    "\r",
    "x.y",
    ".5",
    "5.",
    ".x",
    "x(",
    "x)",
    ")\n",
    ":\n",
    ":\n    ",
    "\f",
    "async",
    "match",
    "\nx",
    "\n    y",
    ")\nx",
    ":\n    pass",
    "\n#",
    "\n\tx",
    "x\n  ",
]
# left and right contexts: a line start (inside a block, after a dedent), brackets, strings,
# numbers, a comment, a name, mid-indentation, and an empty file
CONTEXTS = [
    ("def f(x):\n    ", "\n"),
    ("x = [1, ", "]\n"),
    ('s = "ab', '"\n'),
    ("if a:\n", ""),
    ("x = 1", "\ny = 2\n"),
    ("def f():\n    ret", "urn 1\n"),
    ("# co", "\nx = 1\n"),
    ("x = (1 +\n", ")\n"),
    ("", ""),
    ("y = 0", " if a else 1\n"),
    ("def f(x):\n  ", "  return x\n"),
    ("if a:\n    b\n", "c\n"),
    ("x = r'", "'\n"),
    ("x = 0", "\n"),
    ("x = f(a,\n      ", ")\n"),
    ("x = 1 \\\n", "+ 2\n"),
]
FEEDS = ["", "x", " ", "\n", "(", "  ", "1", "1e", "1i", "0", ".", "r", "#", "\\", "\t", "'"]


def naive(constraint, texts):
    return np.array([bool(t) and constraint.fork().feed(t) for t in texts])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=40, unique=True),
    st.lists(st.tuples(st.sampled_from(CONTEXTS), st.sampled_from(FEEDS)), min_size=1, max_size=6),
)
def test_tables_equal_feeding_each_token_across_states(vocab, states):
    """One trie, several states in turn: the tables built for the first states (with subtrees
    deferred where their charts failed) give the exact mask on later ones."""
    trie = TokenTrie(vocab)
    for (left, right), fed in states:
        c = FIMConstraint(left, right)
        if c.feed(fed):
            assert (trie.allowed(c) == naive(c, vocab)).all(), (left, fed)


def test_a_deferred_subtree_is_walked_when_a_later_chart_needs_it():
    """``"def ("`` fails at the check of ``"("``: the tokens below it wait there, and the same
    table (symbol boundary mid-line) must walk them for ``"x = ("``."""
    vocab = ["(", "()", "(x", "(x)", "x", " ", ")"]
    trie = TokenTrie(vocab)
    first = FIMConstraint("def ", "():\n    pass\n")
    assert list(trie.allowed(first)) == list(naive(first, vocab))
    (table,) = trie.tables.tables.values()
    assert table.at  # something was deferred
    later = FIMConstraint("x = ", "\n")
    assert later.branches[0][1:4] == first.branches[0][1:4]  # the same lexical key
    got = trie.allowed(later)
    assert (got == naive(later, vocab)).all() and got[vocab.index("(x)")]
    assert len(trie.tables.tables) == 1 and not table.at
    # the first chart again (the table grew since), then once more: the kept answer
    assert (trie.allowed(first) == naive(first, vocab)).all()
    assert trie.tables.allowed(first._problem.lexer, first.branches)[0][0] is table._last[3]


def test_symbols_route_tokens_to_shared_tables():
    """An operator hands every token it does not extend to the boundary table, a name the
    ones that do not start with an identifier character; a keyword prefix hands the tokens
    that make it a plain name to the plain name's table. The masks stay exact."""
    vocab = [
        "(",
        " (",
        "=",
        "==",
        "x",
        " x",
        "x(",
        ".y",
        "1",
        "abc",
        ")",
        ":",
        ".",
        "'a'",
        "urn",
        "u",
        "ur",
        "xs",
        "x)",
        "s(",
        " 1",
    ]
    trie = TokenTrie(vocab)
    for left, right in [
        ("x = a ", "\n"),
        ("x = y =", " 1\n"),
        ("x = f", "\n"),
        ("x = 1", "\n"),
        ("x = r", "\n"),
        ("def f():\n    ret", "\n"),
        ("x = ret", "\n"),
        ("x = zq", "\n"),
    ]:
        c = FIMConstraint(left, right)
        assert (trie.allowed(c) == naive(c, vocab)).all(), left
    name = FIMConstraint("x = zq", "\n").branches[0][1]  # the plain name's automaton state
    # "1" then ".y" would be the attribute of a number ("1 .y"), but the lexer reads "1."
    c = FIMConstraint("x = 1", "\n")
    assert trie.allowed(c)[vocab.index(".")] and not trie.allowed(c)[vocab.index(".y")]
    kinds = {(key[0], after_name) for (key, after_name) in trie.tables.tables}
    assert (0, False) in kinds and (0, True) in kinds  # both boundary tables were used
    ret = trie.tables.table((FIMConstraint("x = ret", "\n").branches[0][1], (), (), False))
    assert ret.routes == [0, name]  # "ret" + "x": the plain name's table


def middle_states(tok, n_problems: int, per_problem: int, seed: int) -> list:
    """Constraints along true middles of HumanEvalPack problems, cut at a line start,
    mid-indentation, after a bracket, quote, number, operator or name, and at random."""
    from cadlib.corpora import load_corpus
    from cadlib.fim.step_cost import fim_problems

    rng = random.Random(seed)
    out = []
    for _, left, middle, right in fim_problems(load_corpus("heval-fix-py"), n_problems, seed):
        cuts = [i for i in range(1, len(middle)) if middle[i - 1] in "\n ([{'\"0123456789=,.:#"]
        for cut in rng.sample(cuts, min(per_problem - 1, len(cuts))) + [rng.randrange(len(middle))]:
            c = FIMConstraint(left, right)
            if c.feed(middle[:cut]):
                out.append(c)
    return out


def test_smollm2_tables_equal_naive_along_true_middles(tok):
    """The whole vocabulary, on a fresh trie, at cuts of every kind along real middles (the
    tables grow from state to state, as in decoding)."""
    trie = TokenTrie(token_texts(tok))
    states = middle_states(tok, n_problems=3, per_problem=4, seed=1)
    kinds = {(b[1] == 0, b[4][1], b[4][0] > 0) for c in states for b in c.branches}
    assert len(states) >= 10 and (True, True, False) in kinds  # a line start among them
    # and the rarer states: a number that may end before "else" (two branches, a guard and a
    # follow set), one before "if", a continuation line, a triple-quoted string's newline
    for left, right, fed in [
        ("y = a if 1", " b\n", "e"),
        ("y = a if 1", " else b\n", "i"),
        ("x = 1 + \\", "\n2\n", "\n"),
        ('s = """a', '"""\n', "\n"),
    ]:
        states.append(FIMConstraint(left, right))
        assert states[-1].feed(fed)
    assert any(len(c.branches) > 1 and any(b[2] and b[3] for b in c.branches) for c in states)
    for c in states:
        mask = trie.allowed(c)
        mask[tok.eos_token_id] = c.can_end()
        assert (mask == naive_allowed_mask(c, tok)).all(), (c.left[-30:], c.middle_length)


# f-string pieces: fields, conversions, format specs, doubled braces, nested quotes
FSTRING_PIECES = PIECES + [
    "{",
    "}",
    "{{",
    "}}",
    "{x",
    "x}",
    "!r",
    "!r}",
    ":>",
    ":>{",
    "{x!r}",
    "=}",
    "'}",
    "{'a'",
    "!",
    "!=",
    "f'",
    "f'{",
    "'\n",
    "{x:{y}}",
    " }",
]
FSTRING_CONTEXTS = [
    ('s = f"a', '"\n'),
    ('s = f"{', '}"\n'),
    ("s = f'{x", "!r}'\n"),
    ('s = f"{x:', '}"\n'),
    ('s = f"""{', '}"""\n'),
    ("s = rf'{x}", "'\n"),
    ('s = f"{a[', ']}"\n'),
    ("", ""),
]
FSTRING_FEEDS = ["", "x", "{", "}", "!", "'", "{x", ":>", "=", " "]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(FSTRING_PIECES), min_size=1, max_size=40, unique=True),
    st.lists(
        st.tuples(st.sampled_from(FSTRING_CONTEXTS), st.sampled_from(FSTRING_FEEDS)),
        min_size=1,
        max_size=5,
    ),
)
def test_tables_equal_feeding_each_token_inside_fstrings(vocab, states):
    """States inside f-string literals, fields, conversions and format specs (their lexical
    states carry the field's parse): the mask is still exactly "feed each token"."""
    trie = TokenTrie(vocab)
    for (left, right), fed in states:
        c = FIMConstraint(left, right)
        if c.feed(fed):
            assert (trie.allowed(c) == naive(c, vocab)).all(), (left, fed, right)
