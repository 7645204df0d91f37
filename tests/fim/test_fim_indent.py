"""Indentation (paper §VI): bands, the right context's regular language, and the end-to-end
law "an empty middle can end iff CPython accepts left + right" for random block structures."""

from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib.fim import FIMConstraint, UnconnectableContextError
from cadlib.fim.differential import python_accepts
from cadlib.fim.indent import BASE, Bands, right_events, stream_elements


def can_end(left: str, middle: str, right: str) -> bool:
    try:
        c = FIMConstraint(left, right)
    except UnconnectableContextError:
        return False
    return c.feed(middle) and c.can_end()


def test_bands_order_columns():
    b = Bands([4, 8, 4])
    assert b.bounds == [0, 4, 8] and b.n == 5
    assert [b.band(c) for c in (0, 2, 4, 6, 8, 12)] == [BASE, 0, 1, 2, 3, 4]
    assert [b.max_column(i) for i in range(5)] == [3, 4, 7, 8, float("inf")]


def test_right_events_mark_lines_and_brackets():
    events, depth = right_events("x)\n    y = [1,\n  2]\nz", 0, False)
    assert depth == 1
    assert [e for e in events if e[0] in ("line", "nl", "eof")] == [
        ("nl",),
        ("line", 4, 4),
        ("nl",),
        ("line", 0, 0),
        ("nl",),
        ("eof",),
    ]
    assert right_events(")(", 0, False) is None  # would close below depth 0
    assert right_events("x\\", 0, False) is None  # end of file after a backslash


def test_first_line_is_indent_or_any_dedents():
    """§VI-A: "NL (INDENT | DEDENT*)" — here with bands."""
    bands = Bands([4])
    events, _ = right_events("\n    pass\n", 0, False)
    elements = stream_elements(events, bands)
    assert elements[0] == ("sym", ("NEWLINE",))
    assert elements[1][0] == "choice"


def test_figure_9():
    """Fig. 9: the same right context after different left contexts."""
    left = "if foo:\n    if bar:\n        pass\n"
    assert can_end(left, "", "    pass\n")
    assert can_end(left, "", "pass\n")
    assert not can_end(left, "", "  pass\n")  # no outer level at column 2
    assert can_end(left, "        x = 1\n", "    pass\n")


def test_dedent_counts_are_exact():
    """``DEDENT*`` alone would let ``else`` reach the outer ``if``; CPython pops to column 4."""
    left = "if a:\n    def g():\n        pass\n"
    assert not python_accepts(left + "    else:\n        pass\n")
    assert not can_end(left, "", "    else:\n        pass\n")
    assert can_end(left, "", "else:\n    pass\n")


def test_tabs_and_spaces_must_agree():
    """CPython's TabError: a tab counts as 8 columns and as 1; both must order the levels."""
    left = "if x:\n        pass\n"
    for middle, right in (("\tpass\n", ""), ("", "\tpass\n"), ("\t", "pass\n")):
        assert not python_accepts(left + middle + right)
        assert not can_end(left, middle, right)
    assert can_end("if x:\n\tpass\n", "", "\tpass\n")
    assert not can_end("if x:", "", "\n\tpass\n        pass\n")  # inside the right context


def test_middle_ending_inside_indentation():
    left = "def f(x):\n    if x:\n"
    right = "  return 1\n    return 2\n"
    for middle in ("      ", "    ", "  ", "        "):
        assert can_end(left, middle, right) == python_accepts(left + middle + right), middle


LINES = ["if x:", "pass", "y = (1,", "2)", "else:", "# c", "", "z = 2"]


@st.composite
def indented_program(draw):
    n = draw(st.integers(1, 7))
    lines = [
        " " * draw(st.sampled_from([0, 2, 4, 6, 8])) + draw(st.sampled_from(LINES))
        for _ in range(n)
    ]
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n"]))
    a = draw(st.integers(0, len(text)))
    b = draw(st.integers(a, len(text)))
    return text, a, b


@settings(max_examples=150, deadline=None)
@given(indented_program())
def test_random_block_structures_agree_with_cpython(program):
    text, a, b = program
    left, middle, right = text[:a], text[a:b], text[b:]
    expected = python_accepts(text)
    assert can_end(left, middle, right) == expected
    if expected:  # every prefix of a valid middle is viable
        c = FIMConstraint(left, right)
        assert all(c.feed(ch) for ch in middle)
