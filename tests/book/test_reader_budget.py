"""A reader's budget: every chapter reads in minutes, and no table scrolls for pages.

**Words.** A chapter may hold at most :data:`WORD_BUDGET` words of prose, counted on the
committed notebook as a reader sees it (:func:`prose`):

- counted: every markdown cell, with each glued value (``{glue:md}`name```, ``{glue:text}``,
  ``{glue}``) replaced by the text the code glued under that name (the Answer is glued), and
  every Markdown a code cell renders (``text/markdown`` of ``display_data`` and
  ``execute_result`` outputs: the generated findings);
- not counted: code cells and what they print (``stream`` outputs: program output, shown as
  such), fenced code blocks and display math (``$$ ... $$``), tables (Markdown pipe tables, every
  line of which starts with ``|``, and HTML ``<table>`` elements) and captions (HTML
  ``<caption>`` / ``<figcaption>``, and a paragraph set wholly in italics, such as the
  ``*Setting: ...*`` line under a chapter's parameters), HTML comments and tags (their text
  counts), link targets;
- a word is a whitespace-separated token holding a letter or a digit, after an inline code span
  and an inline formula (``$...$``) are each made one token; headings and list items count.

**Tables.** No rendered table shows more than :data:`ROW_BUDGET` rows (:func:`visible_rows`): the
body rows of an HTML table in an output, and the rows of a Markdown pipe table in a cell or an
output (header and rule not counted); a table inside a ``<details>`` element (not opened by
default) is collapsed, not shown. Checked on the chapters and on the book's notebook pages.

A page over budget that other open work owns is listed in :data:`OVER_BUDGET` or
:data:`TABLES_OVER_BUDGET` with the reason; the test checks that it *is* still over, so the
entry must be removed once the page is fixed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORD_BUDGET = 2000
ROW_BUDGET = 25

#: Chapters over the word budget, by notebook stem, with the open work that owns their trim.
OVER_BUDGET: dict[str, str] = {}
#: Pages with a table over the row budget, by path, with the open work that owns the fix.
TABLES_OVER_BUDGET = {
    "book/summary.ipynb": "the summary page is re-executed by the lead (its full table, 80+ rows)",
    "book/coverage.ipynb": "the coverage map (one row per table and appendix of the paper)",
}

_GLUE = re.compile(r"\{glue(?::\w+)?\}`([^`]+)`")
_DROP = [
    r"<!--.*?-->",  # HTML comments
    r"^(```|~~~).*?^\1",  # fenced code
    r"\$\$.*?\$\$",  # display math
    r"<table.*?</table>",  # HTML tables
    r"<(fig)?caption.*?</(fig)?caption>",  # captions
    r"^[ \t]*\|.*$",  # Markdown pipe-table lines
    r"^[ \t]*(\*[^*\s][^*]*\*|_[^_\s][^_]*_)[ \t]*$",  # a paragraph wholly in italics
    r"\]\([^)]*\)",  # link targets
    r"<[^>]+>",  # remaining tags (their text counts)
]
_ONE_TOKEN = [r"`[^`\n]+`", r"(?<!\$)\$[^$\n]+\$(?!\$)"]  # inline code, inline math
_WORD = re.compile(r"[^\W_]", re.UNICODE)
_FOLDED = r"<details(?![^>]*\bopen\b)[^>]*>.*?</details>"  # a <details open> stays shown


def chapters() -> list[str]:
    return sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


def pages() -> list[str]:
    found = [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "book").glob("*.ipynb")]
    return sorted(str(p.relative_to(ROOT)) for p in found)


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def glued(nb: dict) -> dict[str, str]:
    """Every value glued in ``nb`` by name: its Markdown, else its plain text."""
    values = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                prefix = out["metadata"]["scrapbook"].get("mime_prefix", "")
                data = out.get("data", {})
                value = data.get(f"{prefix}text/markdown", data.get(f"{prefix}text/plain", ""))
                values[name] = _text(value)
    return values


def reader_markdown(nb: dict) -> list[str]:
    """The Markdown a reader sees: markdown cells with glued values filled in, and the
    Markdown code cells render (not glue records: those appear where they are referenced)."""
    values, texts = glued(nb), []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            src = _text(cell["source"])
            texts.append(_GLUE.sub(lambda m: values.get(m.group(1), m.group(0)), src))
        for out in cell.get("outputs", []):
            if out.get("output_type") in ("display_data", "execute_result"):
                markdown = out.get("data", {}).get("text/markdown")
                if markdown:
                    texts.append(_text(markdown))
    return texts


def prose(markdown: str) -> str:
    """``markdown`` without what the budget does not count (the module's docstring)."""
    for pattern in _DROP:
        markdown = re.sub(pattern, " ", markdown, flags=re.S | re.M | re.I)
    for pattern in _ONE_TOKEN:
        markdown = re.sub(pattern, " x ", markdown)
    return markdown


def word_count(nb: dict) -> int:
    return sum(1 for t in reader_markdown(nb) for w in prose(t).split() if _WORD.search(w))


def visible_rows(nb: dict) -> list[int]:
    """The visible row count of every table ``nb`` renders (collapsed ones left out)."""
    counts = []
    for cell in nb["cells"]:
        texts = [_text(cell["source"])] if cell["cell_type"] == "markdown" else []
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            texts += [_text(data[k]) for k in ("text/html", "text/markdown") if k in data]
        for text in texts:
            text = re.sub(_FOLDED, " ", text, flags=re.S | re.I)
            for table in re.findall(r"<table.*?</table>", text, flags=re.S | re.I):
                body = re.search(r"<tbody.*?</tbody>", table, flags=re.S | re.I)
                counts.append(len(re.findall(r"<tr\b", body.group() if body else table)))
            counts += _pipe_tables(text)
    return counts


def _pipe_tables(text: str) -> list[int]:
    """Body rows of each Markdown pipe table in ``text`` (header and rule left out)."""
    counts, run = [], 0
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            run += 1
        elif run:
            counts.append(max(run - 2, 0))
            run = 0
    return counts


def _load(path: str) -> dict:
    return json.loads((ROOT / path).read_text())


# --- the counting rules, on constructed pages -------------------------------------------------


def _nb(*cells) -> dict:
    return {"cells": list(cells)}


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "source": [text]}


def _code(*outputs) -> dict:
    return {"cell_type": "code", "source": ["x"], "outputs": list(outputs)}


def test_prose_counts_words_and_glued_values_not_tables_code_or_captions():
    glue = {
        "output_type": "display_data",
        "data": {"application/papermill.record/text/markdown": "four words glued here"},
        "metadata": {"scrapbook": {"name": "a", "mime_prefix": "application/papermill.record/"}},
    }
    nb = _nb(
        _md("# Two words\n\n**Answer.** {glue:md}`a`\n\n*Setting: a caption line.*\n"),
        _md("| a | b |\n| --- | --- |\n| 1 | 2 |\n\n```python\nx = 1\n```\n"),
        _md("Inline `code here` and $x = 1$ are one each — fine.\n\n$$\na + b\n$$\n"),
        _code(
            glue,
            {"output_type": "stream", "name": "stdout", "text": ["printed words are not prose\n"]},
            {"output_type": "execute_result", "data": {"text/markdown": ["Generated, three."]}},
            {"output_type": "display_data", "data": {"text/html": ["<table><tr><td>w</td></tr>"]}},
        ),
    )
    # "Two words" 2, "Answer." + 4 glued 5, "Inline x and x are one each fine." 8 (— is not a
    # word), "Generated, three." 2
    assert word_count(nb) == 17


def test_visible_rows_count_body_rows_and_skip_collapsed_tables():
    rows = "".join(f"<tr><td>{i}</td></tr>" for i in range(30))
    table = f"<table><thead><tr><th>h</th></tr></thead><tbody>{rows}</tbody></table>"
    nb = _nb(
        _code({"output_type": "execute_result", "data": {"text/html": [table]}}),
        _code(
            {"output_type": "display_data", "data": {"text/html": [f"<details>{table}</details>"]}}
        ),
        _md("| a |\n| --- |\n" + "| 1 |\n" * 27 + "\ntext\n"),
        _md(f"<details open><summary>shown</summary>{table}</details>"),
    )
    assert visible_rows(nb) == [30, 27, 30]


# --- the budget, on the committed pages -------------------------------------------------------


@pytest.mark.parametrize("chapter", chapters())
def test_a_chapter_reads_within_the_word_budget(chapter):
    words = word_count(_load(f"notebooks/{chapter}.ipynb"))
    if chapter in OVER_BUDGET:
        assert words > WORD_BUDGET, f"{chapter} is within budget now: remove it from OVER_BUDGET"
    else:
        assert words <= WORD_BUDGET, f"{chapter}: {words} words of prose (budget {WORD_BUDGET})"


@pytest.mark.parametrize("page", pages())
def test_no_table_shows_more_rows_than_the_budget(page):
    longest = max(visible_rows(_load(page)), default=0)
    if page in TABLES_OVER_BUDGET:
        assert longest > ROW_BUDGET, f"{page} is within budget now: remove it"
    else:
        assert longest <= ROW_BUDGET, f"{page}: a table shows {longest} rows (at most {ROW_BUDGET})"


def test_the_exception_lists_name_existing_pages():
    assert set(OVER_BUDGET) <= set(chapters())
    assert set(TABLES_OVER_BUDGET) <= set(pages())


def test_a_long_table_is_folded_and_a_short_one_left_open():
    import pandas as pd

    from cadlib.record.style import TABLE_ROWS, collapsed_table

    assert TABLE_ROWS == ROW_BUDGET
    short = pd.DataFrame({"x": range(ROW_BUDGET)})
    assert collapsed_table(short, "rows") is short
    folded = collapsed_table(pd.DataFrame({"x": range(ROW_BUDGET + 1)}), "rows").data
    assert folded.startswith("<details><summary>rows (26 rows)</summary>")
    page = _nb(_code({"output_type": "display_data", "data": {"text/html": [folded]}}))
    assert visible_rows(page) == []
