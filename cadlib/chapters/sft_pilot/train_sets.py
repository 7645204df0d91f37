"""Chapter 7's training sets: Py-only and Combined, drawn from the train side of the saved
split (:func:`cadlib.corpora.make_split`, ``data/sft_split.json``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cadlib.cases import EditCase
from cadlib.corpora import SPLIT_CORPORA, split_cases, split_key

__all__ = ["TRAIN_SET_LABELS", "TRAIN_SETS", "training_cases"]

#: Training sets of the pilot: Py-only (131 cases) and Combined (385 cases).
TRAIN_SETS = {"py": ("heval-fix-py",), "combined": SPLIT_CORPORA}
#: Display names of the training sets.
TRAIN_SET_LABELS = {"py": "Py-only", "combined": "Combined"}


def training_cases(
    split: dict, train_set: str, corpora: Mapping[str, Sequence[EditCase]]
) -> list[EditCase]:
    """The training cases of ``train_set`` (``"py"`` or ``"combined"``), corpus by corpus,
    after checking that none of them is a held-out case of any corpus."""
    if train_set not in TRAIN_SETS:
        raise ValueError(f"unknown train set {train_set!r}; valid: {', '.join(TRAIN_SETS)}")
    cases = [
        case
        for name in TRAIN_SETS[train_set]
        for case in split_cases(split, name, corpora[name], "train")
    ]
    held_keys = {split_key(i) for e in split["corpora"].values() for i in e["held_out"]}
    leaked = [c.id for c in cases if split_key(c.id) in held_keys]
    if leaked:
        raise AssertionError(f"held-out cases in the training set: {leaked[:5]}")
    return cases
