"""The book's pages (``cadlib.book``) iterate over the chapters' cards and name no chapter:
each chapter declares what the pages read of it in its own ``headlines`` module (issue 48),
and those modules stay cheap to import."""

import ast
import sys
from pathlib import Path

import pytest

import cadlib
from cadlib.chapters import CHAPTERS, cards

PACKAGE = Path(cadlib.__file__).parent
#: Every way a chapter is named: its package, its results name and its notebook's stem.
NAMES = set(CHAPTERS) | {c.name for c in cards()} | {c.notebook for c in cards()}
HEADLINES = sorted((PACKAGE / "chapters").glob("*/headlines.py"))


def _named(node) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def chapter_keys(tree: ast.AST) -> list[str]:
    """Where ``tree`` keys data by a chapter: a dict key, the first argument of a call (a row
    constructor such as ``Headline("kernel", ...)``), the first item of a tuple or list (a
    ``(chapter, text)`` row; a tuple of chapter names alone, such as the notebooks a coverage
    item names, keys nothing), a subscript (``table["kernel"]``) or a comparison."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            candidates = [k for k in node.keys if k is not None]
        elif isinstance(node, ast.Call):
            candidates = node.args[:1]
        elif isinstance(node, ast.Tuple | ast.List):  # a (chapter, value) row; a list of
            keyed = not all(map(_named, node.elts))  # chapters (all names) is not keyed
            candidates = node.elts[:1] if keyed else []
        elif isinstance(node, ast.Subscript):
            candidates = [node.slice]
        elif isinstance(node, ast.Compare):
            candidates = [node.left, *node.comparators]
        else:
            continue
        found += [f"line {c.lineno}: {c.value!r}" for c in candidates if _named(c)]
    return found


@pytest.mark.parametrize(
    "path", sorted((PACKAGE / "book").rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_page_names_a_chapter(path):
    assert chapter_keys(ast.parse(path.read_text())) == []


def test_the_check_catches_a_chapter_named_as_data():
    source = (
        'TOLERANCES = {"kernel": []}\nrows = [Headline("fim", "x")]\n'
        'BEYOND = (("01_losslessness", "text"),)\nx = table["ceiling"]\ny = c == "decoding"\n'
    )
    assert len(chapter_keys(ast.parse(source))) == 5
    harmless = (
        'print("the kernel chapter")\nf(x, "kernel")\n'
        'Item("Table 4", "", ("02_kernel", "03_ceiling"))\n'
    )
    assert chapter_keys(ast.parse(harmless)) == []


#: What a chapter's headlines module may import at its top: the pages' vocabulary, the
#: paper's figures, the corpora's labels and its own card (torch-free, no chapter code).
TOP_LEVEL = ("cadlib.book", "cadlib.paper", "cadlib.corpora")
#: Inside a function (imported when the page calls it): also the record and cost readers.
IN_FUNCTIONS = (*TOP_LEVEL, "cadlib.record", "cadlib.costs")


def _imports(tree: ast.Module):
    """``(name, at the top)`` for every module or name imported in ``tree``, dotted
    (``from cadlib import paper``: ``cadlib.paper``; relative ones keep their dots)."""
    top = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((a.name, id(node) in top) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (f"{node.module}." if node.module else "")
            yield from ((base + a.name, id(node) in top) for a in node.names)


def _under(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(f"{p}.") for p in prefixes)


def bad_imports(tree: ast.Module) -> list[str]:
    """What ``tree`` imports beyond :data:`TOP_LEVEL` (or :data:`IN_FUNCTIONS`, inside a
    function), its own card and the standard library."""
    bad = []
    for name, at_top in _imports(tree):
        root = name.split(".")[0]
        if name.startswith("."):
            ok = _under(name, (".card",))
        elif root == "cadlib":
            ok = _under(name, TOP_LEVEL if at_top else IN_FUNCTIONS)
        else:
            ok = root in sys.stdlib_module_names or root == "__future__"
        if not ok:
            bad.append(name)
    return bad


@pytest.mark.parametrize("path", HEADLINES, ids=lambda p: p.parent.name)
def test_headlines_modules_import_no_torch_and_no_chapter_code(path):
    assert bad_imports(ast.parse(path.read_text())) == []


def test_the_import_check_rejects_torch_and_the_chapters_other_roles():
    source = (
        "import json\nimport torch\nfrom . import run\nfrom .card import CARD\n"
        "from cadlib import paper\nfrom cadlib.chapters.kernel import run as kr\n"
        "from cadlib.costs import cost_model\n"
        "def f():\n    from cadlib.costs.cost_model import CostGrid\n"
    )
    assert bad_imports(ast.parse(source)) == [
        "torch",
        ".run",
        "cadlib.chapters.kernel.run",
        "cadlib.costs.cost_model",
    ]


def test_every_chapter_has_a_headlines_module():
    assert sorted(p.parent.name for p in HEADLINES) == sorted(CHAPTERS)
