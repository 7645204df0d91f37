"""One package per chapter of the book, each of the same shape (CONTRIBUTING, "A chapter
package"): the role files ``card``, ``profiles``, ``run``, ``show``, ``text``, ``headlines``
and, where the chapter has evidence runs of its own, ``commands``
(:data:`cadlib.record.card.ROLES`).

A chapter imports no other chapter: what two chapters share lives below them (the wings
``cadlib.decoding``, ``cadlib.costs``, ``cadlib.fim``, or the top level: ``cadlib.metrics``'
paired tests, ``cadlib.corpora``' held-out split, ``cadlib.endpoint_noise``). The book's pages
(:mod:`cadlib.book`) name no chapter: they iterate over :data:`CHAPTERS` through
:func:`cards` and :func:`chapter_values`. The GPU check, which runs chapters 2 and 6 on a GPU
(``make gpu-check``), is a shell command: :mod:`cadlib.cli.gpu_check`.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from cadlib.paths import repo_root
from cadlib.record.card import Card
from cadlib.record.params import notebook_parameter
from cadlib.record.results import results_name

__all__ = [
    "CHAPTERS",
    "Card",
    "card_of",
    "cards",
    "chapter_values",
    "evidence_runs",
    "notebooks",
    "shown_results",
]

#: The chapter packages in book order; to add a chapter, copy a package and add its name here.
CHAPTERS = (
    "losslessness",
    "kernel",
    "ceiling",
    "formats",
    "perturbation",
    "decoding",
    "llama_cpp",
    "kv_reuse",
    "sft_pilot",
    "fim_constraint",
)


def cards() -> tuple[Card, ...]:
    """Every chapter's :class:`~cadlib.record.card.Card`, in book order (torch-free)."""
    return tuple(importlib.import_module(f"{__name__}.{c}.card").CARD for c in CHAPTERS)


def card_of(name: str) -> Card:
    """The card of the chapter whose results name is ``name`` (``"fim"``), or a
    ``ValueError`` listing the valid names."""
    by_name = {card.name: card for card in cards()}
    if name not in by_name:
        raise ValueError(f"unknown chapter {name!r}; valid: {sorted(by_name)}")
    return by_name[name]


def chapter_values(role: str, attribute: str) -> dict[str, object]:
    """``{results name: <chapter>.<role>.<attribute>}`` for every chapter whose ``role`` module
    defines ``attribute`` (e.g. ``chapter_values("headlines", "TOLERANCES")``), in book order."""
    found = {}
    for package, card in zip(CHAPTERS, cards(), strict=True):
        try:
            module = importlib.import_module(f"{__name__}.{package}.{role}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{package}.{role}":
                raise
            continue
        if hasattr(module, attribute):
            found[card.name] = getattr(module, attribute)
    return found


def notebooks() -> dict[str, str]:
    """``{results name: notebook stem}``: the notebook (``notebooks/<stem>.ipynb``) that writes
    each chapter's results file."""
    return {card.name: card.notebook for card in cards()}


def evidence_runs() -> dict[str, tuple[str, ...]]:
    """``{results name: evidence profiles, largest first}`` of the chapters that have any."""
    return {card.name: card.evidence for card in cards() if card.evidence}


def shown_results(folder: Path | None = None) -> dict[str, str]:
    """``{chapter: results file name}`` of the run each committed chapter shows: the profile
    its notebook (in ``folder``, default ``<repo>/notebooks``) was executed at, read from the
    file (:func:`cadlib.record.params.notebook_parameter`). A chapter committed at an evidence
    profile (``full``, ``large``) shows that run, which CI replays; the others show their cpu
    run."""
    folder = folder or repo_root() / "notebooks"
    return {
        card.name: results_name(
            card.name, notebook_parameter(folder / f"{card.notebook}.ipynb", "profile")
        )
        for card in cards()
    }
