"""The literal lexemes' automata (cadlib.fim.literals): numbers commit where CPython does,
strings keep to their quotes, prefixes and escapes, f-strings run their fields' parse."""

import pytest

from cadlib.fim.lexer import LexError, dfa, lex_text
from cadlib.fim.literals import NUMBER_STATES, describe_string, from_number, from_string

PLAIN = (False, "u", '"', False)  # raw, mode, quote, triple


def test_a_radix_prefix_commits_and_a_letter_ends_no_number():
    assert from_number("zero", "x") == ("num", "hex0")
    assert NUMBER_STATES["hex0"][:2] == (None, True)  # no lexeme yet, and no backing up
    assert from_number("dec", "a") is None
    assert from_number("dec", "e") == ("num", "exp")


def test_strings_keep_their_quotes_bytes_and_escapes():
    assert from_string(PLAIN, "body", '"') == ("str", PLAIN, "done")
    assert from_string((False, "b", '"', False), "body", "é") is None
    assert from_string(PLAIN, "esc", "x") == ("str", PLAIN, ("hex", 2))
    assert from_string(PLAIN, ("hex", 2), "g") is None
    assert describe_string(True, "done") == (("LONG_STRING",), False, frozenset({"LONG_STRING"}))


@pytest.mark.parametrize(
    "text, ok", [('f"{x}"', True), ('f"}}"', True), ('f"}"', False), ('f"""a""b"""', True)]
)
def test_fstrings_run_their_fields_parse(text, ok):
    if ok:
        assert [lx.accept for lx in lex_text(text)] in ([("STRING",)], [("LONG_STRING",)])
        assert dfa.accept[dfa.run(0, text)] is not None
    else:
        with pytest.raises(LexError):
            list(lex_text(text))
