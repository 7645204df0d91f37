"""The floor plan of ``cadlib`` (book/design.md): a short top level, wings that import
downwards, chapters that do not import each other. The edges still to remove are listed
here by name, so a new one fails and a removed one is noticed."""

import ast
from pathlib import Path

import cadlib

PACKAGE = Path(cadlib.__file__).parent
WINGS = ("decoding", "costs", "fim", "chapters", "book")
#: Imports that cross the plan today (issue 33 §3): (importer's room, imported room).
KNOWN_CROSSINGS = {
    ("chapters.decoding", "chapters.ceiling"),
    ("chapters.decoding", "chapters.kernel"),
    ("chapters.fim_constraint", "chapters.sft_pilot"),
    ("chapters.gpu_check", "chapters.decoding"),
    ("chapters.gpu_check", "chapters.kernel"),
    ("chapters.kv_reuse", "chapters.decoding"),
    ("chapters.llama_cpp", "chapters.kernel"),
    ("chapters.losslessness", "chapters.perturbation"),
}


def room(module: str) -> str:
    """``top`` for the top level, else the wing, or ``chapters.<chapter>`` inside chapters."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in WINGS:
        return "top"
    if parts[1] == "chapters" and len(parts) > 2:
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
    by ``cli`` (the shell command runs chapters' code by design)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        module, _ = module_name(path)
        mine = room(module)
        for name in imported(path):
            theirs = room(name)
            if theirs.startswith("chapters.") and theirs != mine and module != "cadlib.cli":
                found.add((mine, theirs))
    return found


def test_the_top_level_is_short():
    entries = [p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"]
    assert len(entries) <= 25, sorted(entries)
    assert {w for w in WINGS if (PACKAGE / w / "__init__.py").exists()} == set(WINGS)


def test_no_new_crossing_and_none_fixed_unnoticed():
    found = crossings()
    assert not found - KNOWN_CROSSINGS, f"new imports across the plan: {found - KNOWN_CROSSINGS}"
    assert not KNOWN_CROSSINGS - found, f"removed (drop them here): {KNOWN_CROSSINGS - found}"


def test_rooms_follow_the_design_page():
    assert room("cadlib.grammar") == room("cadlib.cli") == "top"
    assert room("cadlib.decoding.decoder.CopyDecoder") == "decoding"
    assert room("cadlib.chapters.kernel.timing") == "chapters.kernel"
    assert room("cadlib.chapters") == "chapters"
