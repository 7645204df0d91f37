"""Results files: ``results/<chapter>.json``, the numbers the book's summary page reads.

Layout (DESIGN.md): ``{"chapter", "profile", "created", "hardware", "model", "tokenizer",
"params", "numbers": {...}, "paper": {...}}``, where ``paper`` holds the paper's published
figure for each number we reproduce, under the same key as in ``numbers``.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import os
import platform
import sys
from pathlib import Path

__all__ = ["repo_root", "results_dir", "write_results", "load_results", "hardware_info"]


def repo_root() -> Path:
    """The repository root: ``$CADLIB_ROOT``, else the folder above ``cadlib/`` holding
    ``_toc.yml``, else the nearest such folder above the working directory."""
    if os.environ.get("CADLIB_ROOT"):
        return Path(os.environ["CADLIB_ROOT"]).resolve()
    here = Path(__file__).resolve().parent.parent
    if (here / "_toc.yml").exists():
        return here
    for folder in [Path.cwd(), *Path.cwd().parents]:
        if (folder / "_toc.yml").exists():
            return folder
    raise FileNotFoundError("cannot find the repository root (no _toc.yml); set CADLIB_ROOT")


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


def hardware_info(device: str | None = None) -> dict:
    """CPU, core count, GPU (when one is used) and library versions, for labelling numbers."""
    info = {"cpu": _cpu_name(), "cores": os.cpu_count(), "python": platform.python_version()}
    for package in ("torch", "transformers"):
        try:
            info[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    torch = sys.modules.get("torch")  # only when a model was used: importing it costs seconds
    if torch is not None:
        info["threads"] = torch.get_num_threads()
        if torch.cuda.is_available() and (device is None or str(device).startswith("cuda")):
            info["gpu"] = torch.cuda.get_device_name(0)
    return info


def _jsonable(value):
    if hasattr(value, "item") and callable(value.item):  # numpy / torch scalars
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


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
    """Write ``results/<chapter>.json`` and return its path."""
    record = {
        "chapter": chapter,
        "profile": profile,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "hardware": hardware_info(device),
        "model": model,
        "tokenizer": tokenizer,
        "params": params or {},
        "numbers": numbers,
        "paper": paper or {},
    }
    path = results_dir() / f"{chapter}.json"
    path.write_text(json.dumps(record, indent=1, default=_jsonable, ensure_ascii=False) + "\n")
    return path


def load_results(chapter: str) -> dict:
    """Read ``<chapter>.json`` from :func:`results_dir`, falling back to ``<repo>/results``."""
    path = results_dir() / f"{chapter}.json"
    if not path.exists():
        path = repo_root() / "results" / f"{chapter}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: run notebooks/*{chapter}*.ipynb first")
    return json.loads(path.read_text())
