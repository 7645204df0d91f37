"""The lexeme automaton and finished-text lexing against CPython's tokenizer (paper §V)."""

import io
import tokenize

import pytest

from cadlib.fim.lexer import IGNORE, NOT_ID, LexError, dfa, follows, lex_text, number_follow


def sources(folder):
    from cadlib.corpora import load_corpus

    corpus = load_corpus("heval-fix-py", local_dir=folder)
    return [c.meta["prompt"] + c.gold for c in corpus] + [c.meta["prompt"] + c.doc for c in corpus]


def spans(text):
    return [(lx.start, lx.end) for lx in lex_text(text) if lx.kind in ("tok", "ignore")]


def tokenize_spans(text):
    lines = [0]
    for line in text.split("\n"):
        lines.append(lines[-1] + len(line) + 1)
    keep = (tokenize.NAME, tokenize.NUMBER, tokenize.STRING, tokenize.OP, tokenize.COMMENT)
    return [
        (lines[t.start[0] - 1] + t.start[1], lines[t.end[0] - 1] + t.end[1])
        for t in tokenize.generate_tokens(io.StringIO(text).readline)
        if t.type in keep
    ]


def test_symbol_boundaries_match_tokenize_on_humanevalpack(humanevalpack_dir):
    for src in sources(humanevalpack_dir):
        assert spans(src) == tokenize_spans(src)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("x = 1", [("NAME",), ("=",), ("DEC_NUMBER",)]),
        ("rb'x' + Rb\"y\"", [("BYTES",), ("+",), ("BYTES",)]),  # bytes: their own terminal
        ("ub'x'", [("NAME",), ("STRING",)]),  # "ub" is no string prefix
        ("1or 2", [("DEC_NUMBER",), ("or",), ("DEC_NUMBER",)]),
        ("0x1for", [("HEX_NUMBER",), ("or",)]),  # hex digits take the f
        ("1.e5 .5j 09.5", [("FLOAT_NUMBER",), ("IMAG_NUMBER",), ("FLOAT_NUMBER",)]),
        ("1..real", [("FLOAT_NUMBER",), (".",), ("NAME",)]),
        ("..", [(".",), (".",)]),
        ("...", [("...",)]),
        ('"""a""b"""', [("LONG_STRING",)]),
        ("''", [("STRING",)]),
        ("match _", [("match", "NAME"), ("_", "NAME")]),
        ("a\\\nb # c", [("NAME",), IGNORE, ("NAME",), IGNORE]),
    ],
)
def test_lexemes(text, expected):
    assert [lx.accept for lx in lex_text(text) if lx.kind != "ws"] == expected


@pytest.mark.parametrize(
    "text",
    [
        "0or 1",  # CPython commits to an octal literal (paper §V footnote 3)
        "1e+x",
        "1__0",
        "1_",
        "01",
        "1.real",
        "1andy",
        "0b12",
        "0o8",
        '"\\x4"',
        'b"é"',
        '"abc\n"',
        "!",
        "$",
        "\\ x",
    ],
)
def test_cpython_lexing_errors(text):
    with pytest.raises(LexError):
        list(lex_text(text))


def test_number_follow_guard():
    assert number_follow(" ") == ()
    assert number_follow("o") == (frozenset("r"), NOT_ID)
    assert number_follow("i") == (frozenset("fns"),)
    assert number_follow("x") is None


def test_sip_states_cover_every_lexeme_kind():
    kinds = {dfa.descs[s][0] for s in dfa.sip_states}
    assert kinds == {"name", "str", "num", "op", "comment", "bs", "cont"}
    assert all(dfa.step(0, ch) in dfa.sip_states for ch in "a1.'\"#\\(")


def test_follows_treats_the_end_of_text_as_a_non_identifier():
    need = number_follow("a")  # "and", then no identifier character
    assert follows("nd", 0, need) and follows("nd y", 0, need)
    assert not follows("ndy", 0, need) and not follows("n", 0, need)
