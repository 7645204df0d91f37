"""The reproduction report ``make book`` writes (cadlib.book.reproduction)."""

import json

import pytest

from cadlib.book import reproduction as RP
from cadlib.book.rerun_check import TIMING, Tolerance, tolerances


@pytest.fixture(autouse=True)
def chapter_x(monkeypatch):
    monkeypatch.setitem(
        tolerances(),
        "x",
        [
            ("numbers.seconds.*", TIMING),
            ("numbers.loss", Tolerance("close", "model float", rel=1e-3)),
        ],
    )


def write(folder, name, profile="cpu", **numbers):
    folder.mkdir(exist_ok=True)
    record = {"chapter": "x", "profile": profile, "numbers": numbers, "paper": {}}
    (folder / name).write_text(json.dumps(record))


def test_the_report_counts_fields_and_names_what_differs(tmp_path):
    committed, rerun = tmp_path / "committed", tmp_path / "rerun"
    write(committed, "x.json", n=3, k=5, loss=2.0, seconds={"a": 1.0, "b": 2.0})
    write(committed, "x.full.json", profile="full", n=9)  # an evidence run: not re-run by book
    write(rerun, "x.json", n=3, k=6, loss=2.001, seconds={"a": 3.0, "b": 8.0})
    report = RP.build_report(rerun, tmp_path / "out" / "report.json", committed)
    (row,) = report["chapters"]
    assert (row["same"], row["within tolerance"], row["differs"]) == (1, 1, 1)
    assert row["differences"][0]["path"] == "numbers.k"
    assert row["timing ratio (median)"] == 3.5 and row["timings in band"] is False
    assert json.loads((tmp_path / "out" / "report.json").read_text()) == report
    text = RP.report_markdown(report)
    assert "1 of 1 chapters re-run" in text and "**1 differ**" in text and "outside" in text
    assert list(RP.differences_table(report).path) == ["numbers.k"]
    assert RP.chapter_table(report).loc["x", "differs"] == 1


def test_a_chapter_that_was_not_re_run_is_named(tmp_path):
    write(tmp_path / "committed", "x.json", n=3)
    (tmp_path / "rerun").mkdir()
    report = RP.build_report(tmp_path / "rerun", tmp_path / "r.json", tmp_path / "committed")
    assert "Not re-run: x." in RP.report_markdown(report)


def test_before_make_book_the_page_says_how_to_make_the_report(tmp_path):
    assert RP.load_report(tmp_path / "none.json") is None
    assert "`make book`" in RP.report_markdown(None)
    assert RP.differences_table(None).empty


def test_the_command_fails_in_one_line_without_a_re_run(tmp_path, capsys):
    assert RP.main([str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.strip().startswith("reproduction: error: no re-run results")
