import warnings

import pytest

from cadlib.grammar import Copy, Gen, Program
from cadlib.resolver import (
    RangeClippedWarning,
    ResolveError,
    copied_text,
    doc_lines,
    op_text,
    resolve,
)

DOC = "l1\nl2\nl3\nl4"


def test_copy_joins_lines_with_newlines():
    assert resolve(Program([Copy(2, 3)]), DOC) == "l2\nl3"


def test_ops_are_joined_by_one_newline():
    assert resolve(Program([Copy(1, 1), Gen("new"), Copy(4, 4)]), DOC) == "l1\nnew\nl4"


def test_program_text_is_accepted():
    assert resolve('<program><copy lines="1-2"/><gen>\nx\n</gen></program>', DOC) == "l1\nl2\nx"


def test_gen_strips_at_most_one_newline_per_side():
    program = "<program><gen>\n\nx\n\n</gen></program>"
    assert resolve(program, DOC) == "\nx\n"


def test_trailing_newline_of_the_document_is_a_line():
    doc = "a\nb\n"  # three lines: "a", "b", ""
    assert resolve(Program([Copy(1, 3)]), doc) == doc
    with pytest.raises(ResolveError, match="has 3 line"):
        resolve(Program([Copy(1, 4)]), doc)


@pytest.mark.parametrize("op", [Copy(3, 9), Copy(5, 5), Copy(3, 2)])
def test_strict_rejects_out_of_range_and_inverted(op):
    with pytest.raises(ResolveError):
        resolve(Program([op]), DOC)


def test_clipped_clips_and_warns():
    with pytest.warns(RangeClippedWarning, match="clipped to 3-4"):
        assert resolve(Program([Copy(3, 9)]), DOC, mode="clipped") == "l3\nl4"


def test_clipped_inverted_range_copies_nothing():
    with pytest.warns(RangeClippedWarning, match="empty"):
        assert resolve(Program([Gen("a"), Copy(3, 2)]), DOC, mode="clipped") == "a\n"


def test_in_range_programs_do_not_warn_in_clipped_mode():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve(Program([Copy(1, 4)]), DOC, mode="clipped") == DOC


def test_unknown_mode_lists_the_valid_ones():
    with pytest.raises(ValueError, match="strict, clipped"):
        resolve(Program([Copy(1, 1)]), DOC, mode="lenient")


def test_op_text_is_what_resolve_emits_for_one_op():
    # The copy rule's one home (copied_text) agrees with the checked resolver op by op.
    doc = "a\nb\n\nc\n"
    for op in (Copy(1, 1), Copy(2, 4), Copy(3, 5), Gen("x\ny")):
        assert op_text(op, doc_lines(doc)) == resolve(Program((op,)), doc)
    assert copied_text(["a", "b", "c"], 2, 3) == "b\nc"
