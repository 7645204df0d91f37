"""The summary's first screen (:mod:`cadlib.book.summary.screen`): at most ten lines,
the verdict counts first, then three to five findings that say what holds, what does not and
where the mechanism loses, every figure generated."""

import ast
import inspect
import json

import pandas as pd

from cadlib.book import summary as S
from cadlib.book import verdicts as V
from cadlib.book.summary import screen as FS
from cadlib.chapters import cards

MAX_LINES = 10


def _table(*rows) -> pd.DataFrame:
    names = [c.name for c in cards()]
    return pd.DataFrame(
        [
            {"chapter": names[i], "figure": f, "status": s, "ours": o, "paper": p, "unit": ""}
            for i, f, s, o, p in rows
        ]
    )


TABLE = _table(
    (0, "round trips", V.EXACT, 482.0, 482.0),
    (2, "f_line", V.EXACT, 74.1, 74.1),
    (4, "EM at 1", V.WITHIN_NOISE, 23.9, 24.76),
    (2, "p50 span", V.CONTRADICTS, 16.0, 19.0),
    (2, "pointer advantage", V.PAPER_DISAGREES, 2.23, 0.15),
    (5, "speedup", V.BEYOND, 2.9, None),
)


def _answers(*texts) -> dict[str, str]:
    return dict(zip([c.name for c in cards()], texts, strict=False))


def test_an_answer_that_opens_with_no_or_says_where_it_loses_gives_its_sentence():
    assert FS.loss_sentence("**No** on multi-line documents: 2/26. Pooled, 9/33.") == (
        0,
        "**No** on multi-line documents: 2/26.",
    )
    assert FS.loss_sentence("Faster on 2 of 8. Where it loses: slower on 149 cases. Pooled.") == (
        1,
        "slower on 149 cases.",
    )
    assert FS.loss_sentence("**Yes.** Every case round-trips. Nothing is lost.") is None
    assert FS.loss_sentence("Notably fast. Not one case is slower.") is None  # "Not", "Notably"


def test_the_first_screen_counts_then_says_what_holds_what_does_not_and_where_it_loses():
    answers = _answers(
        "**Yes.** Exact.",
        "A splice is exact.",
        "Most of it.",
        "Cheapest.",
        "Exact to the line.",
        "By the median case, 2 of 8. Where it loses: slower on 149 cases.",
        "Yes, on one case.",
        "No policy meets the threshold. More.",
        "**No** on multi-line documents: 2/26.",
        "**No** on the primary metric.",
    )
    screen = FS.first_screen(TABLE, answers)
    lines = screen.splitlines()
    assert len(lines) <= MAX_LINES
    assert lines[0] == V.count_line(TABLE["status"])
    findings = [line for line in lines if line.startswith("- ")]
    assert 3 <= len(findings) <= 5
    assert "3 figures agree with the paper" in findings[0]
    assert "p50 span (ours 16, paper 19)" in findings[1]
    assert "pointer advantage (ours 2.23, paper 0.15)" in findings[1]
    losses = findings[2:]
    assert len(losses) == FS.MAX_LOSSES
    # the Answers that open with No first, in book order; the rest named, not dropped
    assert "No policy meets the threshold." in losses[0]
    assert "**No** on multi-line documents: 2/26." in losses[1]
    assert "**No** on the primary metric." in losses[2]
    assert "More in" in losses[2] and cards()[5].notebook in losses[2]


def test_nothing_that_reproduces_or_fails_is_said_so():
    table = _table((5, "speedup", V.BEYOND, 2.9, None), (1, "s(8)", V.NOT_COMPARABLE, 4.2, 7.0))
    screen = FS.first_screen(table, _answers("**Yes.** Exact."))
    assert "no figure that counts as evidence agrees" in screen
    assert "What does not" not in screen and "Where it loses" not in screen


def test_the_committed_pages_give_a_first_screen_of_at_most_ten_lines():
    answers = FS.chapter_answers()
    assert set(answers) <= {c.name for c in cards()} and answers
    table = S.headline_table()
    screen = S.first_screen(table, answers)
    assert len(screen.splitlines()) <= MAX_LINES
    findings = [line for line in screen.splitlines() if line.startswith("- ")]
    assert 3 <= len(findings) <= 5
    for label in table[table.status.isin([V.CONTRADICTS, V.PAPER_DISAGREES])].figure:
        assert label in screen


def test_the_answers_are_read_from_the_glued_value_of_each_page(tmp_path):
    card = cards()[0]
    out = {
        "output_type": "display_data",
        "data": {"application/papermill.record/text/markdown": ["**No.** ", "Nothing."]},
        "metadata": {
            "scrapbook": {"name": "x-answer", "mime_prefix": "application/papermill.record/"}
        },
    }
    page = {"cells": [{"cell_type": "code", "source": [], "outputs": [out]}]}
    (tmp_path / f"{card.notebook}.ipynb").write_text(json.dumps(page))
    assert FS.chapter_answers(tmp_path) == {card.name: "**No.** Nothing."}


def test_the_module_types_no_number_into_its_sentences():
    tree = ast.parse(inspect.getsource(FS))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    typed = [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in docstrings
        and any(map(str.isdigit, n.value))
    ]
    assert typed == []
