"""The fast line alignment (git's histogram diff) gives programs as lossless as difflib's."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cadlib import alignment
from cadlib.alignment import AlignmentError, histogram_blocks
from cadlib.oracle import matching_blocks, oracle_program
from cadlib.resolver import resolve

# Repetitive lines (braces, blanks) and the reserved literals, as in tests/test_oracle.py.
line = st.sampled_from(
    [
        "",
        " ",
        "}",
        "{",
        "a",
        "b",
        "x = 1",
        "\r",
        "é ü",
        "<gen>",
        "</gen>",
        "\t",
        "\x00",
        "⟨․gen⟩",
        "\\ No newline",
    ]
)
text = st.lists(line, max_size=30).map("\n".join)
any_text = st.one_of(text, st.text(max_size=60))
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(doc=any_text, gold=any_text)
def test_histogram_programs_are_lossless(doc, gold):
    assert resolve(oracle_program(doc, gold, align="histogram"), doc) == gold


@SETTINGS
@given(doc=text, gold=text)
def test_histogram_blocks_are_equal_increasing_runs(doc, gold):
    old, new = doc.split("\n"), gold.split("\n")
    blocks = histogram_blocks(old, new)
    ends = (0, 0)
    for a, b, size in blocks:
        assert size > 0 and a >= ends[0] and b >= ends[1]
        assert old[a : a + size] == new[b : b + size]
        ends = (a + size, b + size)


@pytest.mark.parametrize(
    "doc, gold",
    [
        ("", ""),
        ("", "new"),
        ("old", ""),
        ("a\nb", "a\nb\n"),
        ("a\r\nb\r\n", "a\r\nB\r\n"),
        ("}\n}\n}", "}\n{\n}\n}"),
        ("\n", "\n\n"),
    ],
)
def test_edge_cases_round_trip(doc, gold):
    assert resolve(oracle_program(doc, gold, align="histogram"), doc) == gold


def test_identical_documents_are_one_block():
    doc = "a\n}\n}\nb"
    assert matching_blocks(doc, doc, align="histogram") == [(0, 0, 4)]


def test_difflib_stays_the_default():
    doc, gold = "a\nb\nc", "a\nB\nc"
    assert oracle_program(doc, gold) == oracle_program(doc, gold, align="difflib")


def test_unknown_alignment_is_refused():
    with pytest.raises(ValueError, match="valid: difflib, histogram"):
        oracle_program("a", "b", align="myers")


def test_missing_git_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(alignment.shutil, "which", lambda name: None)
    with pytest.raises(AlignmentError, match="needs git"):
        histogram_blocks(["a"], ["b"])
