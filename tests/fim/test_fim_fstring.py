"""f-string replacement fields with 3.11's rules (cadlib.fim.fstring) against ``ast.parse``.

The interpreter running the tests is 3.11 (the rules are 3.11's, not PEP 701's), so
``ast.parse`` is the oracle: every generated f-string, complete or cut into a FIM problem,
must get the same verdict from the constraint.
"""

import ast
import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib.fim import fstring
from cadlib.fim.constraint import FIMConstraint
from cadlib.fim.differential import python_accepts
from cadlib.fim.lexer import LexError, dfa, lex_text

pytestmark = pytest.mark.skipif(
    sys.version_info[:2] != (3, 11), reason="the f-string rules are CPython 3.11's"
)


def ours(source: str) -> bool:
    c = FIMConstraint("", "")
    return c.feed(source) and c.can_end()


def mixes_bytes_and_text(source: str) -> bool:
    """Whether CPython rejects ``source`` for concatenating bytes and text literals (a
    compile-time rule the grammar makes syntax: patch "bytes")."""
    try:
        ast.parse(source)
    except SyntaxError as e:
        return "cannot mix bytes and nonbytes literals" in str(e.msg)
    return False


def expected(source: str) -> bool:
    """``ast.parse``'s verdict: since issue 34 every f-string rule of 3.11 is checked, the
    expression's own syntax included, so no verdict is left out."""
    return python_accepts(source)


#: Hand-picked cases, each one of 3.11's rules (valid and invalid alike).
CASES = [
    r'f"\{6}"',
    r'f"\{{6}"',
    r'f"{6\}"',
    r'f"{x!r:>{w}}"',
    r'f"{x:{y:{z}}}"',
    r'f"{x:{{}}}"',
    r'f"{x=}"',
    r'f"{x = !r}"',
    r'f"{x=y}"',
    r'f"{a!=b}"',
    r'f"{a<=b}"',
    r'f"{a:=b}"',
    r'f"{(a:=b)}"',
    r'f"{*a}"',
    r'f"{*a,}"',
    r'f"{yield}"',
    r'f"{ }"',
    'f"""{"a"}"""',
    'f"""{""}"""',
    'f\'{"""a"""}\'',
    'f"{x!r }"',
    'f"{x! r}"',
    'f"{x:}}"',
    'f"{x:{{y}}}"',
    'f"{x:a}b}"',
    'f"{lambda x: x}"',
    'f"{(lambda x: x)}"',
    'f"{x:\\n}"',
    'rf"\\{x}"',
    'f"{x}}}"',
    'f"}}{{"',
    'f"{x!s:{y!r}}"',
    'f"{x:{y=}}"',
    "f'{a[\"b\"]}'",
    'f"""{a\n+b}"""',
    'f"{a\nb}"',
    'f"{a:{b}{c}d}"',
    'f"{{}}"',
    'f"{x}" f"{y"',
    "f\"{f'{x}'}\"",
    "f'{f\"{f'x'}\"}'",
    'f"{x:\\}"',
    'f"""a""""',
    'f""""a"""',
    "f\"\"\"{'''a'''}\"\"\"",
    "f\"{''}\"",
    'f\'{""""""}\'',
    'f"{a b}"',
    'f"{a,}"',
    'f"{,a}"',
    'f"{a#}"',
    'f"{a!}"',
    'f"{a!x}"',
    'f"{}"',
    'f"{!r}"',
    'f"{a)}"',
    'f"{(a]}"',
    'f"{a:{b:{c}}}"',
    'f"\\N{EM DASH}{a}"',
    'f"{a}\\N{x}}"',
    "f'{'",
    "f'}'",
    "f'{{'",
    'F"{a!a}"',
    'Rf"{a}\\"',
    'fr"\\N{a}"',
    'f"{a:=}"',
    'f"{a==b}"',
    'f"{a>=b}"',
    'f"{a<b}"',
    'f"{a = }"',
    'f"{a=:>4}"',
    'f"{a=!r:>4}"',
    'f"{a=!}"',
]


@pytest.mark.parametrize("literal", CASES)
def test_hand_picked_fstrings_agree_with_cpython(literal):
    source = f"x = {literal}\n"
    assert ours(source) == expected(source), source
    if python_accepts(source):
        assert ours(source)  # never a false rejection


_PIECES = [
    "{",
    "}",
    "{{",
    "}}",
    "a",
    "b1",
    " ",
    "!r",
    "!s",
    "!a",
    "!",
    ":",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    "(",
    ")",
    "[",
    "]",
    ",",
    "*",
    "'",
    '"',
    "''",
    "'''",
    "\\",
    "\\N{EM DASH}",
    "#",
    ">4",
    ".2f",
    "x.y",
    "lambda",
    "\n",
    "f'",
    "+",
    "1",
    ":=",
    "{a}",
    "{a!r:>{w}}",
]


def _fstring(rng: random.Random) -> str:
    prefix = rng.choice(["f", "F", "rf", "fR"])
    quote = rng.choice(['"', "'", '"""', "'''"])
    body = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 9)))
    return f"{prefix}{quote}{body}{quote}"


def test_generated_fstrings_agree_with_cpython():
    rng = random.Random(0)
    valid = 0
    for _ in range(4000):
        source = f"x = {_fstring(rng)}\n"
        truth = python_accepts(source)
        valid += truth
        assert ours(source) == expected(source), source
    assert 300 < valid < 3700  # both verdicts are exercised


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="ab1 {}!rs:=()[]'\"\\#<>,.*\n", max_size=14),
    st.sampled_from(['f"', "f'", 'f"""', "rf'''"]),
)
def test_any_body_agrees_with_cpython(body, opening):
    quote = opening.lstrip("rf")
    source = f"x = {opening}{body}{quote}\n"
    assert ours(source) == expected(source), source


@pytest.mark.parametrize("literals", ['f""b""', '"a" b"c"', '("a"\n b"c")'])
def test_text_and_bytes_literals_do_not_concatenate(literals):
    """CPython rejects an implicit concatenation of bytes and text literals (patch "bytes" of
    cadlib.fim.python_grammar); bytes with bytes, and text with text, concatenate."""
    source = f"x = {literals}\n"
    assert mixes_bytes_and_text(source)
    assert not ours(source) and not expected(source), source
    for same in ('b"a" rb"c"', '"a" f"c" r"d"', "b'a' b'''c'''"):
        source = f"x = {same}\n"
        assert ours(source) and expected(source), source


@pytest.mark.slow  # ~10 s: the fast tier stays under its two minutes
def test_fstrings_cut_into_fim_problems_agree():
    """Left and right contexts that start or end inside an f-string's fields."""
    rng = random.Random(1)
    checked = 0
    for _ in range(150):
        source = f"x = {_fstring(rng)}\ny = 1\n"
        if not python_accepts(source) or "\\N{" in source:  # \N{name}: names not looked up
            continue
        a = rng.randrange(4, len(source) - 6)
        b = rng.randrange(a, len(source) - 6)
        c = FIMConstraint(source[:a], source[b:])
        assert c.feed(source[a:b]) and c.can_end(), (source, a, b)
        middle = source[a:b]
        for edited in (middle + "}", middle + "{", middle + "!x", "{" + middle):
            program = source[:a] + edited + source[b:]
            trial = FIMConstraint(source[:a], source[b:])
            assert (trial.feed(edited) and trial.can_end()) == expected(program), program
        checked += 1
    assert checked > 50


def test_lexer_keeps_fstrings_one_lexeme_and_rejects_broken_fields():
    assert [lx.accept for lx in lex_text('f"a{b!r:>{w}}c"') if lx.kind == "tok"] == [("STRING",)]
    with pytest.raises(LexError):
        list(lex_text('f"{a!x}"'))
    assert dfa.run(0, 'f"{a') >= 0 and dfa.run(0, 'f"{a\\') < 0
    # an expression's states do not grow with its text (the mask's tables are shared); its
    # syntax is checked beside the automaton (cadlib.fim.branching), not by it
    assert dfa.run(0, 'f"{a b}') >= 0
    assert dfa.run(0, 'f"{abc') == dfa.run(0, 'f"{abcdef')


def test_fstring_states_stay_out_of_sip_states():
    assert all(dfa.descs[s][0] != "fstr" for s in dfa.sip_states)


def test_valid_expression_is_cpythons_rule():
    assert fstring.valid_expression("a + b") and fstring.valid_expression("*a,")
    assert not fstring.valid_expression(" \t") and not fstring.valid_expression("*a")
    assert fstring.can_end(fstring.START) and not fstring.can_end(("L", 0, "{"))


def test_closed_expressions_end_before_the_character_that_ends_them():
    got = fstring.closed_expressions("{a!=b}{a!r}{a=}{a = !r}{x:{y}}{a<}{(a:b)}", False)
    assert got == ["a!=b", "a", "a", "a ", "x", "y", "a<", "(a:b)"]
    assert fstring.closed_expressions("{a!x}", False) is None
    assert fstring.split_lexeme("Rf'''a{b}'''") == (True, "'''", "a{b}'''")
    assert fstring.lexeme_fields_valid('f"{a}{b!r:>{w}}"')
    assert not fstring.lexeme_fields_valid('f"{a}{b c}"')
    assert not fstring.lexeme_fields_valid('f"{a')


def test_an_expression_is_checked_where_it_ends_and_no_earlier():
    """A field's expression is judged when its ``}``, ``:``, ``!`` + conversion or ``=`` is
    read: a prefix that a later ``!=``, ``==`` or more text can still repair stays viable."""
    for prefix, rest in [
        ('x = f"{a if b', ' != 1 else c}"'),
        ('x = f"{a b', '}"'),
        ('x = f"{a if b!', '= 1 else c}"'),
        ('x = f"{a if b=', '= 1 else c}"'),
    ]:
        c = FIMConstraint("", "\n")
        assert c.feed(prefix), prefix
        assert (c.feed(rest) and c.can_end()) == python_accepts(prefix + rest + "\n"), prefix
    for dead in [
        'x = f"{a b}',
        'x = f"{a b:',
        'x = f"{a b!r',
        'x = f"{a b=}',
        'x = f"{,a}',
        'x = f"{1:{a b}',
        'x = f"""{a\nb}',
    ]:
        assert not FIMConstraint("", "\n").feed(dead), dead


def test_a_field_closed_by_the_right_context_is_checked():
    c = FIMConstraint("s = f'{method", "}$'\n")
    ok, bad = c.fork(), c.fork()
    assert ok.feed(".ident") and bad.feed(",.ident")  # both viable: the field is still open
    assert ok.can_end() and not bad.can_end()


def test_nested_fstrings_are_checked_through_the_outer_expression():
    assert ours('x = f\'{",".join(f"{a}" for a in b)}\'\n')
    assert not ours('x = f\'{",".join(f"{a}.b}" for a in b)}\'\n')
