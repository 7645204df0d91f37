"""A chapter's card: what the book needs to know about a chapter without running it.

Every chapter package (``cadlib/chapters/<name>/``) has the same role files (CONTRIBUTING,
"A chapter package"); its ``card.py`` holds one :class:`Card`, which imports nothing but this
module, so the book's pages can list every chapter (its notebook, results files, evidence runs
and paper references) without importing torch or a model. The other roles are imported when
first named (:func:`lazy_roles`), so ``from cadlib.chapters import kernel`` is cheap and
``kernel.run`` is the chapter's measuring code.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable

__all__ = ["ROLES", "Card", "lazy_roles"]

#: The role files of every chapter package, in reading order. ``card`` (this module's
#: :class:`Card`, torch-free), ``profiles`` (``PROFILES``), ``run`` (measure, and the one
#: function that builds the results dict), ``show`` (tables and figures, no sentences),
#: ``text`` (the only generated prose: outcome-dependent sentences, ``answer``),
#: ``headlines`` (summary rows, re-run tolerances, coverage rows, paper settings) and
#: ``commands`` (the chapter's ``python -m`` evidence runs, where it has any). A larger role
#: is split by topic into ``<role>_<topic>.py`` (``run_training.py``), never under other names.
ROLES = ("card", "profiles", "run", "show", "text", "headlines", "commands")


@dataclasses.dataclass(frozen=True)
class Card:
    """One chapter, as the pages see it.

    ``name``: the results name (``results/<name>[.<profile>].json``) and the package's name
    under :mod:`cadlib.chapters`; ``number``: as the book numbers it (``"6b"``);
    ``notebook``: ``notebooks/<notebook>.ipynb``; ``title`` and ``question`` (the one the
    chapter's Answer answers); ``paper``: the sections, tables and appendices it re-derives
    (empty: beyond the paper); ``evidence``: its committed evidence profiles, largest first
    (the summary reads the largest one committed, so a row never quotes a smaller sample than
    the chapter has); ``records``: whether its runs record measurements for replay
    (:mod:`cadlib.record.replay`)."""

    name: str
    number: str
    notebook: str
    title: str
    question: str
    paper: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    records: bool = False


def lazy_roles(package: str) -> Callable[[str], object]:
    """A module ``__getattr__`` for a chapter package: ``<package>.<role>`` (or a
    ``<role>_<topic>`` module) is imported when first named, so importing the package (or its
    card) stays cheap."""

    def __getattr__(name: str):
        if name.split("_", 1)[0] in ROLES:
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as err:
                if err.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
