from cadlib.chapters.losslessness import run as L
from cadlib.corpora import EditCase


def test_every_edge_case_is_byte_exact_for_us():
    table = L.edge_case_table(L.EDGE_CASES)
    assert table["ours byte-exact"].all()
    # ... and the contrasts the chapter shows are real:
    assert not table["splitlines byte-exact"].all()
    assert not table["paper escape round-trips gold"].all()


def test_round_trip_table_counts_cases():
    cases = [EditCase("a", "x\ny", "x\nz", "edit"), EditCase("b", "", "</gen>", "edit")]
    table = L.round_trip_table(cases)
    assert table.byte_exact.all() and table.reserved_in_gold.tolist() == [False, True]


def test_adversarial_strings_hold_a_reserved_literal_and_round_trip():
    strings = L.adversarial_strings(["def f():\n    return 1\n", "x"], n=200, seed=1)
    assert len(strings) == 200
    assert all(any(t in s for t in ("<", "\u27e8")) for s in strings)
    assert L.adversarial_strings(["abc"], n=5, seed=1) == L.adversarial_strings(["abc"], 5, 1)
    assert L.escape_fuzz(strings) == {
        "n": 200,
        "round_trip": 200,
        "gen_close_in_body": 0,
        "program_round_trip": 200,
    }


def test_literal_audit_flags_the_papers_misprinted_ids():
    audit = L.literal_audit().set_index("literal")
    assert audit.loc["</", "agrees"] and audit.loc["copy", "agrees"]
    assert not audit.loc['"/>', "agrees"] and audit.loc["/>", "paper id decodes to"] == "af"


def test_table4_counts_rejections_and_recoveries():
    cases = [EditCase("a", "1\n2\n3\n4", "2\n3", "e"), EditCase("b", "1\n2", "1\nX\n2", "e")]
    table = L.table4({"toy": cases}, trials=3, seed=0)
    oracle = table.loc[("toy", "oracle")]
    assert oracle.to_dict() == {
        "runs": 2,
        "out_of_range": 0,
        "strict_rejected": 0,
        "strict_em": 2,
        "clipped_em": 2,
    }
    clamped = table.loc[("toy", "eps=1 clamped")]
    assert clamped.runs == 6 and clamped.out_of_range <= 6
    assert clamped.strict_em <= clamped.clipped_em <= 6
    assert table.loc[("pooled", "oracle")].runs == 2
