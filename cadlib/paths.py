"""Where the repository is: the one root every results file, corpus folder and data file of
the book is found from.

A leaf module (standard library only), so that the shared top level (:mod:`cadlib.corpora`,
:mod:`cadlib.split`) and every wing can find the repository without importing the book's
machinery.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["repo_root"]


def repo_root() -> Path:
    """The repository root: ``$CADLIB_ROOT``, else the folder above ``cadlib/`` holding
    ``_toc.yml``, else the nearest such folder above the working directory."""
    if os.environ.get("CADLIB_ROOT"):
        return Path(os.environ["CADLIB_ROOT"]).resolve()
    here = Path(__file__).resolve().parents[1]  # cadlib/paths.py
    if (here / "_toc.yml").exists():
        return here
    for folder in [Path.cwd(), *Path.cwd().parents]:
        if (folder / "_toc.yml").exists():
            return folder
    raise FileNotFoundError("cannot find the repository root (no _toc.yml); set CADLIB_ROOT")
