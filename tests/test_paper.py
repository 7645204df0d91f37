"""cadlib.paper is the one home of the paper's figures."""

import importlib
import json
import pkgutil

from cadlib import paper, probeedit
from cadlib.chapters import ceiling, formats, kernel, losslessness
from cadlib.chapters import sft_pilot as sft
from cadlib.chapters.perturbation import noise as perturb
from cadlib.paths import repo_root


def modules_of(package) -> list:
    """Every module of a chapter package (its role files), imported."""
    return [
        importlib.import_module(f"{package.__name__}.{m.name}")
        for m in pkgutil.iter_modules(package.__path__)
    ]


def test_no_chapter_keeps_a_second_name_for_a_paper_constant():
    # one home: a module attribute that *is* one of paper's tables is an alias (PAPER_TABLE7,
    # a table derived from paper.TABLE7, is not)
    tables = {id(v): k for k, v in vars(paper).items() if k.isupper() and isinstance(v, dict)}
    packaged = [m for chapter in (ceiling, kernel, losslessness) for m in modules_of(chapter)]
    for module in (*packaged, formats, sft, perturb, probeedit):
        aliases = [k for k, v in vars(module).items() if k.isupper() and id(v) in tables]
        assert not aliases, f"{module.__name__}: {aliases}"
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
