"""cadlib.paper is the one home of the paper's figures; the chapter modules only alias it."""

import json

from cadlib import paper, probeedit
from cadlib.book.results import repo_root
from cadlib.chapters import ceiling, formats, kernel, losslessness
from cadlib.chapters import sft_pilot as sft
from cadlib.chapters.perturbation import noise as perturb


def test_chapter_modules_alias_the_paper_constants():
    assert ceiling.PAPER_TABLE2 is paper.TABLE2 and ceiling.PAPER_7B_POINTS is paper.S_7B_POINTS
    assert kernel.PAPER_CURVES is paper.KERNEL_CURVES and kernel.PAPER_M_STAR is paper.M_STAR
    assert formats.PAPER_TABLE3 is paper.TABLE3 and perturb.PAPER_TABLE8 is paper.TABLE8
    assert losslessness.PAPER is paper.LOSSLESSNESS and sft.PAPER_TABLE6 is paper.TABLE6
    assert probeedit.PAPER_STATS is paper.PROBEEDIT_STATS
    assert list(sft.PAPER_TABLE7["py"].values()) == list(paper.TABLE7["py"])


def test_table2_rows_add_up_as_printed():
    for row in paper.TABLE2.values():
        assert row["T"] == row["T_copy"] + row["T_gen"]
        assert abs(row["T_copy"] / row["T"] - row["f_line"]) < 0.0005


def test_figures_lists_every_number_and_fractions_as_percent():
    found = set(paper.figures())
    assert {8872.0, 74.1, 0.741, 303.0, 15.48, 6.8, 36.9} <= found


def test_results_files_record_the_same_paper_figures():
    """Each chapter's results file wrote its ``paper`` section from these constants."""
    table2 = json.loads((repo_root() / "results" / "ceiling.json").read_text())["paper"]["table2"]
    assert table2 == json.loads(json.dumps(paper.TABLE2))
