"""The fences of issue 48: every chapter package has the same role files, the mechanism wings
hold mechanisms, and every notebook opens one chapter package the same way. Each check reads
the source (ast), so a new exception fails here rather than in a reader's head."""

import ast
import json
import re
from pathlib import Path

import pytest

import cadlib
from cadlib.chapters import CHAPTERS, cards
from cadlib.record.card import ROLES

PACKAGE = Path(cadlib.__file__).parent
ROOT = PACKAGE.parent
MECHANISMS = ("decoding", "costs", "fim", "models")
REQUIRED = set(ROLES) - {"commands"}


def _modules(folder: Path):
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_package_has_the_role_files_and_no_other_names(chapter):
    folder = PACKAGE / "chapters" / chapter
    names = {p.stem for p in folder.glob("*.py")} - {"__init__"}
    assert REQUIRED <= names, f"{chapter} lacks {sorted(REQUIRED - names)}"
    odd = {n for n in names if n.split("_", 1)[0] not in ROLES}
    assert not odd, f"{chapter}: modules that are no role nor <role>_<topic>: {sorted(odd)}"
    assert not [p for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_package_init_only_names_its_card_and_roles(chapter):
    body = _tree(PACKAGE / "chapters" / chapter / "__init__.py").body
    kinds = [type(node).__name__ for node in body]
    source = (PACKAGE / "chapters" / chapter / "__init__.py").read_text()
    assert set(kinds) <= {"Expr", "ImportFrom", "Assign"}, kinds
    assert "from .card import CARD" in source and "lazy_roles(__name__)" in source


def test_cards_import_nothing_but_the_card_type():
    for chapter in CHAPTERS:
        imports = [
            node.module
            for node in ast.walk(_tree(PACKAGE / "chapters" / chapter / "card.py"))
            if isinstance(node, ast.ImportFrom | ast.Import)
        ]
        assert imports == ["cadlib.record.card"], (chapter, imports)


def _defined(path: Path) -> set[str]:
    names = set()
    for node in _tree(path).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def test_profiles_live_in_profile_modules_and_answers_in_text_modules():
    for path in _modules(PACKAGE):
        defined, role = _defined(path), path.stem.split("_", 1)[0]
        where = str(path.relative_to(PACKAGE))
        if "PROFILES" in defined:
            assert path.parent.parent.name == "chapters" and path.stem == "profiles", where
        if "answer" in defined:
            assert path.parent.parent.name == "chapters" and role == "text", where


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


#: Function names that generate sentences (the chapters' text roles hold them).
PROSE = re.compile(r"(^answer$|_sentences?$|_markdown$|_prose$|^prose_|_verdict_text$)")


@pytest.mark.parametrize("wing", MECHANISMS)
def test_mechanism_wings_hold_no_entry_point_plot_prose_or_chapter(wing):
    for path in _modules(PACKAGE / wing):
        where = str(path.relative_to(PACKAGE))
        source = path.read_text()
        assert '__name__ == "__main__"' not in source and "def main(" not in source, where
        imports = _imports(path)
        assert not {m for m in imports if m.split(".")[0] in ("matplotlib", "seaborn")}, where
        upward = {m for m in imports if m.startswith(("cadlib.chapters", "cadlib.book"))}
        assert not upward, (where, upward)
        prose = {n for n in _defined(path) if PROSE.search(n)}
        assert not prose, (where, prose)


def _notebook_code(name: str) -> str:
    cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())["cells"]
    return "\n".join(
        "".join(c["source"])
        for c in cells
        if c["cell_type"] == "code" and "injected-parameters" not in c["metadata"].get("tags", [])
    )


@pytest.mark.parametrize("card", cards(), ids=lambda c: c.notebook)
def test_each_notebook_opens_one_chapter_package_from_its_parameters(card):
    code = _notebook_code(card.notebook)
    package = CHAPTERS[[c.name for c in cards()].index(card.name)]
    chapters = set(re.findall(r"cadlib\.chapters\.(\w+)", code))
    chapters |= set(re.findall(r"from cadlib\.chapters import (\w+)", code))
    assert chapters == {package}, f"{card.notebook} imports chapters {sorted(chapters)}"
    assert re.search(r"session\.start\(\w+\.CARD, \w+\.profiles\.PROFILES, globals\(\)", code)
    assert not re.search(r"\bnumbers\[[^\]]+\]\s*=|\bnumbers\.update\(|\bnumbers\s*=\s*\{", code)
    beside = re.search(r"[(,]\s*(ch\.)?P\s*,[^()]*\bprofile(=profile)?\s*[,)]", code)
    assert not beside, f"pass P, not profile beside it: {beside.group(0)}"


def test_cards_profiles_and_headlines_import_no_torch():
    """What the pages and ``cad check-models`` read of every chapter (its card, profiles and
    headlines) loads without torch: a fresh interpreter imports them all and has not loaded it."""
    import subprocess
    import sys

    roles = [
        f"cadlib.chapters.{c}.{r}" for c in CHAPTERS for r in ("card", "profiles", "headlines")
    ]
    code = f"import sys, importlib; [importlib.import_module(m) for m in {roles!r}]; " + (
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
