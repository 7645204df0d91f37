import re

from cadlib.book import coverage
from cadlib.book.summary import headline_table
from cadlib.chapters import card_of, chapter_values


def test_every_table_figure_and_appendix_is_listed_once():
    items = [i.item for i in coverage.all_items()]
    assert len(items) == len(set(items))
    assert [f"Table {n}" for n in range(1, 25)] == [i for i in items if i.startswith("Table")]
    assert [f"App. {x}" for x in "ABCDEFGHIJKLMNOPQ"] == [i for i in items if i.startswith("App")]
    assert "Figure 3" in items and "Abstract / §1" in items


def test_not_run_here_items_say_why_and_named_headlines_exist():
    for name in ("Table 5", "Table 23", "App. Q"):
        item = next(i for i in coverage.all_items() if i.item == name)
        assert item.status == coverage.NOT_RUN_HERE and item.note
    for item in coverage.all_items():
        assert not item.headlines or coverage._labels(item), item.item


def test_verdicts_come_from_the_summary_not_from_the_map():
    table = coverage.coverage_table(headline_table({}))  # nothing run: every verdict says so
    row = table.set_index("item").loc["Table 2"]
    assert re.fullmatch(r"\d+ not yet run", row.verdicts)
    assert "](" not in coverage.coverage_markdown(headline_table({}))  # links are {doc} roles


def test_tables_the_paper_identifies_point_to_their_chapters():
    by_item = {i.item: i for i in coverage.all_items()}
    for name, chapter in (
        ("Table 13", "03_ceiling"),
        ("Table 14", "05_perturbation"),
        ("Table 16", "02_kernel"),
    ):
        item = by_item[name]
        assert item.status != coverage.MISSING and chapter in item.chapters, name
    assert by_item["App. O"].status == coverage.PARTLY and "ablations" in by_item["App. O"].note


def test_a_chapters_items_are_its_own_and_the_books_are_no_single_chapters():
    """An item one chapter treats is declared in its ``headlines.COVERAGE`` and names its
    notebook; the book's own items name several chapters or none."""
    for name, items in chapter_values("headlines", "COVERAGE").items():
        assert all(i.chapters == (card_of(name).notebook,) for i in items), name
    assert all(len(i.chapters) != 1 for i in coverage.BOOK_ITEMS)
