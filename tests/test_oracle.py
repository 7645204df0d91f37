from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib.grammar import Copy, Gen, Program, parse_program
from cadlib.oracle import oracle_program
from cadlib.resolver import resolve

# Lines drawn from a small pool so that documents and golds share many lines.
line = st.sampled_from(["", " ", "a", "b", "x = 1", "\r", "é ü", "<gen>", "</gen>", "⟨․gen⟩", "\t"])
text = st.lists(line, max_size=12).map("\n".join)
any_text = st.one_of(text, st.text())


def test_unchanged_document_is_one_copy():
    assert oracle_program("a\nb\n", "a\nb\n") == Program([Copy(1, 3)])


def test_changed_line_becomes_a_gen():
    program = oracle_program("a\nb\nc", "a\nB\nc")
    assert program == Program([Copy(1, 1), Gen("B"), Copy(3, 3)])


def test_insertion_and_deletion():
    assert oracle_program("a\nc", "a\nb\nc") == Program([Copy(1, 1), Gen("b"), Copy(2, 2)])
    assert oracle_program("a\nb\nc", "a\nc") == Program([Copy(1, 1), Copy(3, 3)])


# The byte-exact edge cases named in the issue.
edge_cases = [
    ("", ""),
    ("", "new"),
    ("old", ""),
    ("a\nb", "a\nb\n"),
    ("a\nb\n", "a\nb\n\n\n"),
    ("a\n\n\n\nb\n", "a\n\nb\n"),
    ("a\r\nb\r\n", "a\r\nB\r\n"),
    ("a\nb", "a\r\nb"),
    ("x\n", 'if a </gen> b:\n    <copy lines="1-2"/>\n</program>\n'),
    ("é\n", "ü\u2028v\n⟨․gen⟩\n"),
    ("\n", "\n\n"),
]


def test_byte_exact_on_edge_cases():
    for doc, gold in edge_cases:
        program = oracle_program(doc, gold)
        assert resolve(program, doc) == gold, (doc, gold, str(program))
        assert resolve(str(program), doc) == gold  # through the text form too


@settings(max_examples=300)
@given(any_text, any_text)
def test_round_trip_is_byte_exact_for_every_pair(doc, gold):
    program = oracle_program(doc, gold)
    assert resolve(program, doc) == gold
    assert resolve(parse_program(str(program)), doc) == gold


@given(text, text)
def test_copies_are_in_range_and_ordered_by_gold(doc, gold):
    n = len(doc.split("\n"))
    for op in oracle_program(doc, gold).copies:
        assert 1 <= op.start <= op.end <= n


def shuffled_blank_file(n_lines=4000, seed=0):
    """Issue 36.9's case, smaller: 70 % blank lines, 100-line blocks shuffled."""
    import random

    rng = random.Random(seed)
    lines = ["" if rng.random() < 0.7 else f"x = {rng.randrange(50)}" for _ in range(n_lines)]
    blocks = [lines[i : i + 100] for i in range(0, n_lines, 100)]
    rng.shuffle(blocks)
    return "\n".join(lines), "\n".join(line for b in blocks for line in b)


def test_an_alignment_dearer_than_the_gold_falls_back():
    from cadlib.models.tokenizer import qwen25_tokenizer
    from cadlib.oracle import cheapest_program

    count = qwen25_tokenizer().count
    doc, gold = shuffled_blank_file()
    aligned = oracle_program(doc, gold, align="histogram")
    whole = f"<program><gen>\n{gold}\n</gen></program>"
    assert count(str(aligned)) > count(whole)  # the case the fallback is for
    program, how = cheapest_program(doc, gold, count, align="histogram")
    assert how in ("histogram+inlined", "gen") and count(str(program)) <= count(whole)
    assert resolve(str(program), doc) == gold
    # an ordinary edit keeps its aligned program
    doc = "def f(mid):\n    return mid\n" * 5
    gold = doc.replace("return mid\n", "return mid + 1\n", 1)
    assert cheapest_program(doc, gold, count) == (
        oracle_program(doc, gold, "histogram"),
        "histogram",
    )
