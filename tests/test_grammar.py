import pytest
from hypothesis import given
from hypothesis import strategies as st

from cadlib.grammar import Copy, Gen, Program, ProgramSyntaxError, StreamingParser, parse_program

ops = st.one_of(
    st.builds(lambda i, n: Copy(i, i + n), st.integers(1, 500), st.integers(0, 50)),
    st.builds(Gen, st.text()),
)
programs = st.lists(ops, min_size=1, max_size=8).map(Program)


def test_canonical_rendering():
    program = Program([Copy(1, 3), Gen("x = 1"), Copy(5, 5)])
    assert str(program) == (
        '<program><copy lines="1-3"/><gen>\nx = 1\n</gen><copy lines="5-5"/></program>'
    )


def test_paper_form_without_padding_parses():
    assert parse_program("<program><gen>hi</gen></program>") == Program([Gen("hi")])


def test_at_most_one_newline_is_stripped_each_side():
    program = parse_program("<program><gen>\n\nhi\n\n</gen></program>")
    assert program.ops[0].text == "\nhi\n"


def test_whitespace_between_ops_is_allowed():
    text = '<program>\n  <copy lines="2-4"/>\n  <gen>a</gen>\n</program>\n'
    assert parse_program(text) == Program([Copy(2, 4), Gen("a")])


def test_gen_bodies_are_unescaped():
    program = Program([Gen("if a </gen> b: <copy")])
    assert "</gen> b" not in str(program)
    assert parse_program(str(program)) == program


@given(programs)
def test_parse_inverts_render(program):
    assert parse_program(str(program)) == program


# (text, fragment of the expected message): every malformed-program class of the issue.
malformed__message = [
    ("<program><gen>abc</program>", "unclosed <gen>"),
    ('<program><delete lines="1-2"/></program>', "unknown tag '<delete'"),
    ('<program><copy lines="1"/></program>', 'line range "i-j"'),
    ('<program><copy lines=""/></program>', 'line range "i-j"'),
    ("<program><copy/></program>", "copy opener"),
    ('<program><copy lines="5-2"/></program>', "inverted line range 5-2"),
    ('<program><copy lines="0-2"/></program>', "1-based"),
    ('<program><copy lines="-1-2"/></program>', "1-based"),
    ("<program>hello<gen>a</gen></program>", "text outside ops"),
    ('<program><copy lines="1-2"/>', "missing '</program>'"),
    ("<program></program>", "empty program"),
    ("", "expected '<program>'"),
    ('<copy lines="1-2"/>', "program opener"),
    ("<program><gen>a</gen></program> trailing", "text after </program>"),
]


@pytest.mark.parametrize("text, fragment", malformed__message)
def test_malformed_programs_name_the_problem(text, fragment):
    with pytest.raises(ProgramSyntaxError, match="at offset \\d+") as info:
        parse_program(text)
    assert fragment in str(info.value)


def test_error_position_points_at_the_problem():
    with pytest.raises(ProgramSyntaxError) as info:
        parse_program('<program><copy lines="1-2"/><foo/></program>')
    assert info.value.pos == len('<program><copy lines="1-2"/>')


@given(programs, st.lists(st.integers(0, 10_000), max_size=6))
def test_streaming_parser_yields_the_same_ops_at_any_cut(program, cuts):
    text = str(program)
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    parser, ops = StreamingParser(), []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        ops.extend(parser.feed(text[a:b]))
    parser.close()
    assert parser.done and ops == list(program.ops)


def test_streaming_parser_reports_errors_early():
    parser = StreamingParser()
    parser.feed('<program><copy lines="3-')
    with pytest.raises(ProgramSyntaxError, match="inverted"):
        parser.feed('1"/>')


def test_program_helpers():
    program = Program([Copy(1, 2), Gen("a"), Copy(4, 4)])
    assert len(program) == 3 and program.copies == [Copy(1, 2), Copy(4, 4)]
    assert program.gens == [Gen("a")]
