"""The floor plan of ``cadlib`` (book/design.md): a short top level, wings that import
downwards, chapters that do not import each other. The edges still to remove are listed
here by name, so a new one fails and a removed one is noticed."""

import ast
from pathlib import Path

import cadlib
from cadlib.chapters import CHAPTERS

PACKAGE = Path(cadlib.__file__).parent
WINGS = ("decoding", "costs", "fim", "chapters", "record", "book")


def room(module: str) -> str:
    """``top`` for the top level, else the wing, or ``chapters.<chapter>`` inside chapters."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in WINGS:
        return "top"
    if parts[1] == "chapters" and len(parts) > 2 and parts[2] in CHAPTERS:
        return f"chapters.{parts[2]}"
    return parts[1]


def module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def imported(path: Path) -> set[str]:
    """Every ``cadlib`` module or name ``path`` imports, as an absolute dotted name."""
    module, is_package = module_name(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                base = module.split(".")[: None if is_package else -1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            found |= {f"{target}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {name for name in found if name.startswith("cadlib.")}


def crossings() -> set[tuple[str, str]]:
    """(importer's room, imported room) for every import of a chapter from outside it, except
    by ``cli`` (the shell commands, ``cad`` and the GPU check, run chapters' code by design)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        module, _ = module_name(path)
        mine = room(module)
        if module.split(".")[:2] == ["cadlib", "cli"]:
            continue
        for name in imported(path):
            theirs = room(name)
            if theirs.startswith("chapters.") and theirs != mine:
                found.add((mine, theirs))
    return found


def test_the_top_level_is_short():
    entries = [p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"]
    assert len(entries) <= 25, sorted(entries)
    assert {w for w in WINGS if (PACKAGE / w / "__init__.py").exists()} == set(WINGS)


def test_no_module_is_longer_than_a_reader_takes_in():
    """Issue 33: no module over 500 lines (a longer one is split by concept, never packed:
    ``ruff format`` sets the lines)."""
    long = {
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if len(p.read_text().splitlines()) > 500
    }
    assert long == set(), sorted(long)


def test_no_chapter_imports_another():
    assert crossings() == set(), f"imports across the plan: {sorted(crossings())}"


def test_rooms_follow_the_design_page():
    assert room("cadlib.grammar") == room("cadlib.cli") == "top"
    assert room("cadlib.decoding.decoder.CopyDecoder") == "decoding"
    assert room("cadlib.chapters.kernel.run_fixed_costs") == "chapters.kernel"
    assert room("cadlib.chapters") == room("cadlib.chapters.cards") == "chapters"


#: Shared top-level modules that still import a wing (the plan says they should not).
KNOWN_UPWARD = {("cadlib.models.loading", "record"), ("cadlib.probeedit.corpus", "costs")}


def test_the_shared_top_level_imports_no_wing():
    """Below the wings: a top-level module (the package ``__init__`` aside; ``cli`` is a package)
    imports only the top level, so a wing can be read without the others."""
    found = set()
    shared = [
        *PACKAGE.glob("*.py"),
        *(PACKAGE / "probeedit").rglob("*.py"),
        *(PACKAGE / "models").rglob("*.py"),
    ]
    for path in shared:
        module, _ = module_name(path)
        if module == "cadlib":
            continue
        found |= {(module, room(n)) for n in imported(path) if room(n) != "top"}
    assert found == KNOWN_UPWARD, f"new: {found - KNOWN_UPWARD}; gone: {KNOWN_UPWARD - found}"


def test_every_cadlib_name_the_makefile_and_docs_run_exists():
    """``python -m cadlib.X`` and ``from cadlib.X import Y`` in the Makefile, CI script,
    README, CONTRIBUTING and the book's pages name modules and names that exist (a move
    that misses one breaks a make target no unit test runs)."""
    import importlib
    import re

    root = PACKAGE.parent
    texts = [
        root / "Makefile",
        root / ".ci" / "run",
        root / "README.md",
        root / "CONTRIBUTING.md",
        *sorted((root / "book").glob("*.md")),
    ]
    missing = []
    for path in texts:
        text = path.read_text()
        for mod in re.findall(r"-m (cadlib(?:\.\w+)*)", text):
            if importlib.util.find_spec(mod) is None:
                missing.append(f"{path.name}: -m {mod}")
        for mod, names in re.findall(r"from (cadlib(?:\.\w+)*) import ([\w, ]+)", text):
            module = importlib.import_module(mod)
            for name in filter(None, (n.split(" as ")[0].strip() for n in names.split(","))):
                if not hasattr(module, name) and importlib.util.find_spec(f"{mod}.{name}") is None:
                    missing.append(f"{path.name}: from {mod} import {name}")
    assert not missing, missing


def test_the_record_floor_reads_no_chapter_and_no_page():
    """``cadlib.record`` is what every chapter and wing runs and writes with: it imports no
    chapter and no page (the pages read it, never the other way)."""
    found = {
        (module_name(path)[0], name)
        for path in (PACKAGE / "record").rglob("*.py")
        for name in imported(path)
        if room(name) in ("book", "chapters") or room(name).startswith("chapters.")
    }
    assert found == set(), sorted(found)


def test_no_formatter_escape_remains():
    """``ruff format`` sets every line (``make lint`` checks it); nothing opts out of it."""
    marked = [
        str(p.relative_to(PACKAGE.parent))
        for folder in (PACKAGE, PACKAGE.parent / "tests")
        for p in folder.rglob("*.py")
        if "# fmt" + ": skip" in p.read_text()  # spelled apart, so this file does not match
    ]
    assert marked == []


def _module_imports(module: str, path: Path, is_package: bool, known: set[str]) -> set[str]:
    """The ``cadlib`` modules ``module``'s top-level statements import (a name imported from a
    package counts as that package unless it is a submodule)."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([node.module] if node.module else []))
            found |= {
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            }
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m in known and m != module}


def test_no_import_circle():
    """Issue 48: no two ``cadlib`` modules import each other, directly or round a circle, at
    module level (``tokenizers`` and ``models.tokenizer`` once did)."""
    import graphlib

    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    known = {name for name, _ in paths}
    graph = {
        name: _module_imports(name, path, is_package, known)
        for (name, is_package), path in paths.items()
    }
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the circle
