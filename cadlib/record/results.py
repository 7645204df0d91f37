"""Results files: ``results/<chapter>.json``, the numbers the book's summary page reads.

One naming scheme across the book: the cpu profile writes ``results/<chapter>.json``; every
other profile writes ``results/<chapter>.<profile>.json`` (:func:`results_name`), e.g.
``results/kernel.paper.json`` from a GPU run, so no profile's run overwrites another's
committed numbers. CI re-derives and compares the cpu files and the evidence runs the
committed chapters show (:func:`cadlib.chapters.shown_results`); the evidence a chapter
shows beside its own run is read from the committed files (:func:`load_committed`).

Layout: ``{"chapter", "profile", "created", "hardware", "provenance", "model", "tokenizer",
"params", "numbers": {...}, "paper": {...}}``, where ``paper`` holds the paper's published
figure for each number we reproduce, under the same key as in ``numbers``, and
``provenance`` the commit and the machine's load while the run was made
(:func:`cadlib.record.provenance.provenance`).
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import math
import os
import platform
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from cadlib.paths import repo_root

from .provenance import provenance

__all__ = [
    "cases_name",
    "write_cases",
    "FAKE_MACHINE_ENV",
    "committed_path",
    "hardware_info",
    "load_committed",
    "load_results",
    "machine_label",
    "results_dir",
    "results_name",
    "find_results_file",
    "read_results_file",
    "run_report",
    "write_run_report",
    "setting_label",
    "strict_json",
    "write_results",
]

#: Set to 1 (the Makefile's nbval run does) to report a fake CPU, core count and versions:
#: committed outputs that leak the machine then fail nbval on every machine, not only on
#: the next one with another CPU.
FAKE_MACHINE_ENV = "CADLIB_FAKE_MACHINE"
_FAKE = {"cpu": "Fake CPU (CADLIB_FAKE_MACHINE)", "cores": 999, "version": "0.0.0-fake"}


def results_dir() -> Path:
    """Where chapters write their results: ``$CADLIB_RESULTS_DIR`` if set (the test suite
    points it at ``_build/test-results`` so that re-running notebooks leaves the committed
    ``results/`` untouched), else ``<repo>/results``."""
    override = os.environ.get("CADLIB_RESULTS_DIR")
    path = Path(override) if override else repo_root() / "results"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _faking() -> bool:
    return os.environ.get(FAKE_MACHINE_ENV, "") not in ("", "0")


def hardware_info(device: str | None = None) -> dict:
    """CPU, core count, GPU (when one is used) and library versions, for labelling numbers.

    Under ``CADLIB_FAKE_MACHINE=1`` the CPU, core count and versions are fakes (see
    :data:`FAKE_MACHINE_ENV`)."""
    fake = _faking()
    info = {
        "cpu": _FAKE["cpu"] if fake else _cpu_name(),
        "cores": _FAKE["cores"] if fake else os.cpu_count(),
        "python": _FAKE["version"] if fake else platform.python_version(),
    }
    for package in ("torch", "transformers"):
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
        info[package] = _FAKE["version"] if fake else version
    torch = sys.modules.get("torch")  # only when a model was used: importing it costs seconds
    if torch is not None:
        info["threads"] = torch.get_num_threads()
        if torch.cuda.is_available() and (device is None or str(device).startswith("cuda")):
            info["gpu"] = torch.cuda.get_device_name(0)
    return info


def tool_version(version: str) -> str:
    """``version`` of an external tool (e.g. git), or the fake one under
    ``CADLIB_FAKE_MACHINE=1``: versions name the machine too."""
    return _FAKE["version"] if _faking() else version


def machine_label(hw: dict | None = None, threads: int | None = None, **tools: str) -> str:
    """``machine: <CPU or GPU>, <n> cores[, <t> torch threads][; <tool> <version> ...]``.

    Everything machine-dependent in a chapter's setting line sits after ``machine:`` and up to
    the end of the line (or a closing ``*``), the one place ``tests/nbval_sanitize.cfg``
    rewrites, so committed outputs compare equal on any machine."""
    hw = hardware_info() if hw is None else hw
    where = f"{hw['gpu']}, " if hw.get("gpu") else ""
    text = f"machine: {where}{hw['cpu']}, {hw['cores']} cores"
    if threads is not None:
        text += f", {threads} torch thread{'s' * (threads != 1)}"
    for tool, version in tools.items():
        text += f"; {tool.replace('_', ' ')} {tool_version(version)}"
    return text


def setting_label(
    *parts: str, profile: str, hw: dict | None = None, threads: int | None = None, **tools: str
) -> str:
    """One chapter's setting line: what it ran (model, tokenizer, ...), its profile, then the
    machine last (:func:`machine_label`), e.g. ``tokenizer qwen2.5; no model; profile cpu;
    machine: AMD EPYC, 2 cores``."""
    return "; ".join([*parts, f"profile {profile}", machine_label(hw, threads, **tools)])


def _json_key(key) -> str:
    """A dict key as ``json.dumps`` writes it (``1`` -> ``"1"``, ``True`` -> ``"true"``)."""
    if isinstance(key, str):
        return key
    if hasattr(key, "item") and callable(key.item):  # numpy scalars
        key = key.item()
    if key is None or isinstance(key, bool | int | float):
        return json.dumps(key)
    raise TypeError(f"not a JSON object key: {key!r} ({type(key).__name__})")


def strict_json(value):
    """``value`` as strict JSON data: NaN and infinities become ``None`` (JSON has neither),
    numpy / torch scalars and arrays become numbers and lists, a DataFrame its list of row
    records, a Series a dict, a path its string; anything else unknown fails loudly."""
    if isinstance(value, dict):
        return {_json_key(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str | int | bool):
        return value
    if isinstance(value, pd.DataFrame):
        return strict_json(value.to_dict(orient="records"))
    if isinstance(value, pd.Series):
        return strict_json(value.to_dict())
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy / torch scalars and arrays
        return strict_json(value.tolist())
    if hasattr(value, "item") and callable(value.item):
        return strict_json(value.item())
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def results_name(chapter: str, profile: str | None = None) -> str:
    """``<chapter>.json`` for the cpu profile (or none given), else ``<chapter>.<profile>.json``."""
    return f"{chapter}.json" if profile in (None, "cpu") else f"{chapter}.{profile}.json"


def cases_name(chapter: str, profile: str | None = None) -> str:
    """The per-case records beside a results file: ``<chapter>[.<profile>].cases.jsonl``."""
    return results_name(chapter, profile).removesuffix(".json") + ".cases.jsonl"


def write_cases(chapter: str, records: Iterable[Mapping], profile: str | None = None) -> Path:
    """Write a run's per-case records to :func:`results_dir`/:func:`cases_name`: one compact
    JSON object a line, in the order given, text as written (``ensure_ascii=False``); return
    the path. The one case-record writer of the book (``Chapter.write_cases``)."""
    path = results_dir() / cases_name(chapter, profile)
    lines = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def write_results(
    chapter: str,
    numbers: dict,
    paper: dict | None = None,
    *,
    profile: str,
    model: str | None,
    tokenizer: str | None,
    params: dict | None = None,
    device: str | None = None,
) -> Path:
    """Write ``results/<chapter>.json`` (``<chapter>.<profile>.json`` for a profile other than
    cpu, :func:`results_name`) and return its path."""
    record = {
        "chapter": chapter,
        "profile": profile,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "hardware": hardware_info(device),
        "provenance": provenance(repo_root()),
        "model": model,
        "tokenizer": tokenizer,
        "params": params or {},
        "numbers": numbers,
        "paper": paper or {},
    }
    path = results_dir() / results_name(chapter, profile)
    text = json.dumps(strict_json(record), indent=1, ensure_ascii=False, allow_nan=False)
    path.write_text(text + "\n")
    return path


def find_results_file(name: str) -> Path:
    """``name`` in :func:`results_dir`, else in ``<repo>/results`` (where committed runs of
    other profiles live while the tests send a re-run's results elsewhere); the latter path
    when it is in neither."""
    path = results_dir() / name
    return path if path.exists() else repo_root() / "results" / name


def read_results_file(name: str) -> dict | None:
    """The record in ``name`` as :func:`find_results_file` finds it, or ``None`` when there is
    none: how a benchmark's committed run is read back (one place, so every reader looks in
    the same folders)."""
    path = find_results_file(name)
    return json.loads(path.read_text()) if path.exists() else None


def run_report(profile: str, command: str, device: str = "cpu", **fields) -> dict:
    """A benchmark's report before :func:`write_run_report`: its ``profile`` and ``command``,
    the hardware it ran on, ``fields``, then when it was written and its provenance (commit,
    the load of other processes while it ran)."""
    return dict(
        profile=profile,
        command=command,
        hardware=hardware_info(device),
        **fields,
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        provenance=provenance(repo_root()),
    )


def write_run_report(report: dict, out: str | Path) -> dict:
    """Write a benchmark's ``report`` to ``out`` as indented JSON (its folder made), and return
    it: the one format of the ``results/*.json`` runs recorded outside the chapters."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    return report


def committed_path(name: str) -> Path:
    """``<repo>/results/<name>``: a committed results file (or its case records), never a
    re-run's copy in :func:`results_dir`."""
    return repo_root() / "results" / name


def load_committed(chapter: str, profile: str | None = None) -> dict | None:
    """The committed results record of ``chapter`` at ``profile`` (:func:`committed_path`), or
    ``None`` when there is none. Evidence runs are read this way: a chapter that re-runs (under
    nbval, or ``make book``'s reproduction) writes its own numbers elsewhere, and the evidence
    it shows beside them is the committed run's, with that run's provenance."""
    path = committed_path(results_name(chapter, profile))
    return json.loads(path.read_text()) if path.exists() else None


def load_results(chapter: str, profile: str | None = None) -> dict:
    """Read ``<chapter>.json`` (``<chapter>.<profile>.json``, :func:`results_name`) through
    :func:`find_results_file`."""
    path = find_results_file(results_name(chapter, profile))
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: run notebooks/*{chapter}*.ipynb first")
    return json.loads(path.read_text())
