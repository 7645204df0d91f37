"""Tokenization at the copy boundaries (chapter 6 §5): the naive transcript spells the same
text with other ids, and the boundary table counts canonical windows."""

from cadlib.corpora import EditCase
from cadlib.decoding.fsm import transcript
from cadlib.decoding.token_boundaries import boundary_table, naive_transcript_ids
from cadlib.oracle import oracle_program

DOC = "def add(a, b):\n    total = a - b\n    return total\n\n\nprint(add(1, 2))\n"
GOLD = "def add(a, b):\n    total = a + b\n    return total\n\n\nprint(add(1, 2))\n"


def test_naive_transcript_is_the_same_text(tok):
    program = oracle_program(DOC, GOLD)
    ours = transcript(program, DOC, tok)
    naive = naive_transcript_ids(program, DOC, tok)
    assert tok.decode(naive) == ours.text(tok) and list(ours.ids) != naive


def test_boundary_table_counts_canonical_windows(tok):
    cases = [EditCase("a", DOC, GOLD, "Fix."), EditCase("b", "x\ny\n\nz", "x\nY\n\nz", "Fix.")]
    table = boundary_table({"toy": cases}, {"SmolLM2": tok}).iloc[0]
    assert table.copy_ours == table.copies and table.gen_ours == table.gens
    assert table.whole_ours == 2
