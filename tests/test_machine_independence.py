"""Committed outputs that nbval compares must not depend on the machine that executed them.

CI runs on whatever machine the submitting session had; an output naming the CPU, the core
count, a library version or a date passes on one machine and fails on the next. The chapters
name the machine only through :func:`cadlib.record.results.setting_label`, whose
``machine: ...`` tail ``tests/nbval_sanitize.cfg`` rewrites; ``make test`` runs nbval with
``CADLIB_FAKE_MACHINE=1``.
"""

import configparser
import importlib.metadata
import json
import platform
import re
from pathlib import Path

import pytest

from cadlib.record import results
from cadlib.record.provenance import load_caption

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))

#: What names a machine: CPU families, core counts, timestamps, and this machine's own CPU
#: name and library versions.
GENERIC = r"AMD EPYC|Intel\(R\)|Xeon|Ryzen|Apple M\d|\b\d+ cores?\b|20\d\d-\d\d-\d\d[ T]\d\d:\d\d"


def sanitizers() -> list[tuple[re.Pattern, str]]:
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "tests" / "nbval_sanitize.cfg")
    return [(re.compile(cfg[s]["regex"]), cfg[s].get("replace", "")) for s in cfg.sections()]


def sanitize(text: str) -> str:
    for pattern, replacement in sanitizers():
        text = pattern.sub(replacement, text)
    return text


def machine_pattern() -> re.Pattern:
    here = [
        re.escape(results.hardware_info()["cpu"]),
        re.escape(f"python {platform.python_version()}"),
    ]
    for package in ("torch", "transformers"):
        here.append(re.escape(f"{package} {importlib.metadata.version(package)}"))
    return re.compile("|".join([GENERIC, *here]))


def compared_texts(notebook: Path):
    """(cell index, text) of every output nbval compares: untagged cells, text-like data."""
    for index, cell in enumerate(json.loads(notebook.read_text())["cells"]):
        if cell["cell_type"] != "code":
            continue
        if "nbval-ignore-output" in cell.get("metadata", {}).get("tags", []):
            continue
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")]
            texts += [v for k, v in output.get("data", {}).items() if not k.startswith("image/")]
            for text in texts:
                yield index, "".join(text) if isinstance(text, list) else str(text)


def test_fake_machine_replaces_cpu_cores_and_versions(monkeypatch):
    real = results.hardware_info()
    monkeypatch.setenv(results.FAKE_MACHINE_ENV, "1")
    fake = results.hardware_info()
    assert fake["cpu"] != real["cpu"] and fake["cores"] != real["cores"]
    assert fake["python"] == fake["torch"] == results.tool_version("2.39.5") != real["python"]
    label = results.setting_label("no model", profile="cpu", threads=1, git_apply="2.39.5")
    assert label.startswith("no model; profile cpu; machine: Fake CPU")
    assert "2.39.5" not in label


def test_machine_label_sanitizes_to_the_same_text_on_any_machine(monkeypatch):
    def line():
        label = results.setting_label("tokenizer qwen2.5", profile="cpu", git_apply="2.39.5")
        return f"*Setting: {label}.*"

    real = line()
    monkeypatch.setenv(results.FAKE_MACHINE_ENV, "1")
    fake = line()
    other = (
        "*Setting: tokenizer qwen2.5; profile cpu; "
        "machine: Intel(R) Xeon(R) Processor, 4 cores; git apply 2.47.1.*"
    )
    assert real != fake
    assert sanitize(real) == sanitize(fake) == sanitize(other)
    assert "tokenizer qwen2.5; profile cpu" in sanitize(real)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_compared_output_names_the_machine(notebook: Path):
    pattern = machine_pattern()
    leaks = [
        (index, match.group(0))
        for index, text in compared_texts(notebook)
        for match in [pattern.search(sanitize(text))]
        if match
    ]
    assert not leaks, (
        f"{notebook.name}: compared outputs name the machine (cell, text): {leaks}; use "
        "cadlib.record.results.setting_label or tag the cell nbval-ignore-output"
    )


def test_the_load_caption_does_not_read_as_a_core_count():
    load = {"samples": 3, "other_cores": {"mean": 0.01, "max": 0.02}, "busiest_other": []}
    caption = load_caption({"provenance": {"load": load, "busy": False}})
    assert re.compile(GENERIC).search("machine: 2 cores")
    assert not re.compile(GENERIC).search(caption), caption
