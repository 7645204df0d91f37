"""No reader page names the project's issue tracker: "Issue 17's goals" means nothing to a
reader of the book. Checked on every chapter notebook and book page: the markdown cells, the
Markdown a code cell renders and what it prints, and the plain Markdown pages under ``book/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: "Issue 17", "issue 32", "issue #3", "Issue-49's": a tracker reference, in any case.
ISSUE = re.compile(r"\bissue\s*[-#]?\s*\d+", re.IGNORECASE)


def reader_pages() -> list[str]:
    pages = [*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("book/*.ipynb"), *ROOT.glob("book/*.md")]
    return sorted(str(p.relative_to(ROOT)) for p in pages)


def reader_text(path: Path) -> list[str]:
    """What a reader sees of ``path`` as text: a Markdown page whole; of a notebook, its
    markdown cells and its code cells' rendered Markdown and printed text."""
    if path.suffix == ".md":
        return [path.read_text()]
    texts = []
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            texts.append("".join(cell["source"]))
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                texts.append("".join(out["text"]))
            markdown = out.get("data", {}).get("text/markdown")
            if markdown:
                texts.append("".join(markdown))
    return texts


def issue_references(path: Path) -> list[str]:
    return [m.group() for text in reader_text(path) for m in ISSUE.finditer(text)]


def test_the_pattern_catches_tracker_references_and_spares_ordinary_numbers():
    for text in ("Issue 17's goals", "(issue 32)", "issue #3", "Issue-49"):
        assert ISSUE.search(text), text
    for text in ("an issue with 3 cases", "issues: 4", "Table 17", "reissue 5"):
        assert not ISSUE.search(text), text


def test_the_reader_text_of_a_notebook_holds_markdown_and_rendered_outputs(tmp_path):
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["Issue 17's goals"]},
            {
                "cell_type": "code",
                "source": ["x"],
                "outputs": [
                    {"output_type": "display_data", "data": {"text/markdown": ["see issue 3"]}},
                    {"output_type": "stream", "name": "stdout", "text": ["issue 4\n"]},
                ],
            },
        ]
    }
    page = tmp_path / "page.ipynb"
    page.write_text(json.dumps(nb))
    assert issue_references(page) == ["Issue 17", "issue 3", "issue 4"]


@pytest.mark.parametrize("page", reader_pages())
def test_no_reader_page_names_an_issue(page):
    assert issue_references(ROOT / page) == []
