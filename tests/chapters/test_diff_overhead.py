from cadlib.chapters.formats import run_diff_overhead as D
from cadlib.corpora import EditCase

DOC, GOLD = "a\nb\nc\nd\ne\n", "a\nb\nC\nd\ne\n"


def test_variants_drop_file_headers_and_hunk_numbers():
    full = D.render_variant(DOC, GOLD, 3, True, True)
    assert full.startswith("--- a/") and "@@ -1,5 +1,5 @@" in full
    bare = D.render_variant(DOC, GOLD, 0, False, False)
    assert bare == "@@\n-c\n+C\n"


def test_overhead_table_covers_every_setting_and_counts_cases_below_the_paper():
    cases = [EditCase("x", DOC, GOLD, "", {})]
    table = D.overhead_table({"toy": cases}, {"toy": 1e9})
    assert len(table) == len(D.SETTINGS) and (table["cases at or below paper"] == 1.0).all()
    ours = table.iloc[0]
    assert (ours.context, ours["file headers"], ours["hunk numbers"]) == (3, True, True)
    assert table["overhead %"].iloc[-1] < ours["overhead %"]  # bare @@, no context: cheapest
