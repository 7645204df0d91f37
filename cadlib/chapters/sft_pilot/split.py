"""The seeded train / held-out split of every corpus (paper §5, Table 22) and the training sets."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from cadlib.book.results import repo_root
from cadlib.cases import EditCase
from cadlib.corpora import case_rank, split_key

__all__ = [
    "HELD_OUT_FRACTION",
    "SPLIT_CORPORA",
    "SPLIT_FILE",
    "TRAIN_SET_LABELS",
    "TRAIN_SETS",
    "held_out_ids",
    "load_split",
    "make_split",
    "save_split",
    "split_cases",
    "split_path",
    "training_cases",
]

#: Corpora that are split into train / held-out (paper §5, Table 22).
SPLIT_CORPORA = ("heval-fix-py", "heval-fix-js", "probeedit")
#: Training sets of the pilot: Py-only (131 cases) and Combined (385 cases).
TRAIN_SETS = {"py": ("heval-fix-py",), "combined": SPLIT_CORPORA}
#: Share of each corpus held out: round(0.2 * 164) = 33, round(0.2 * 154) = 31 (Table 22).
HELD_OUT_FRACTION = 0.2
SPLIT_FILE = "data/sft_split.json"

#: Display names of the training sets.
TRAIN_SET_LABELS = {"py": "Py-only", "combined": "Combined"}


def held_out_ids(
    ids: Sequence[str], seed: int = 0, fraction: float = HELD_OUT_FRACTION
) -> list[str]:
    """The ``round(fraction * len(ids))`` ids held out: first in ``sha256(seed:key)`` order.

    Returned in the corpus order of ``ids``. Duplicated ids fail loudly.
    """
    if len(set(ids)) != len(ids):
        raise ValueError("case ids must be unique to split a corpus")
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction!r}")
    n_held = round(fraction * len(ids))
    chosen = set(sorted(ids, key=lambda i: case_rank(seed, i))[:n_held])
    return [i for i in ids if i in chosen]


def make_split(
    corpora: Mapping[str, Sequence[EditCase]], seed: int = 0, fraction: float = HELD_OUT_FRACTION
) -> dict:
    """The train / held-out split of every corpus, with the rule and seed that made it.

    Parameters
    ----------
    corpora : mapping
        Corpus name -> its cases (``load_corpus(name)``), e.g. for :data:`SPLIT_CORPORA`.
    seed : int
        Split seed (0 for the saved split).
    fraction : float
        Held-out share of each corpus; the paper's 33/164 and 31/154 are ``round(0.2 n)``.
    """
    out = {
        "seed": seed,
        "fraction": fraction,
        "method": (
            "per corpus, hold out the round(fraction * n) case ids that come first when ordered by "
            "sha256(f'{seed}:{key}') (hex); key = 'humanevalpack/<task number>' for HumanEvalPack "
            "cases (so Python/k and JavaScript/k are always on the same side) and the case id "
            "otherwise; made by cadlib.chapters.sft_pilot.make_split"
        ),
        "paper": "§5 and App. 'Training details', Table 22: 131/33 Py, 131/33 JS, 123/31 ProbeEdit",
        "corpora": {},
    }
    for name, cases in corpora.items():
        ids = [c.id for c in cases]
        held = held_out_ids(ids, seed, fraction)
        held_set = set(held)
        out["corpora"][name] = {
            "n": len(ids),
            "n_train": len(ids) - len(held),
            "n_held_out": len(held),
            "held_out": held,
            "train": [i for i in ids if i not in held_set],
        }
    return out


def split_path() -> Path:
    """``<repo>/data/sft_split.json``."""
    return repo_root() / SPLIT_FILE


def save_split(split: dict, path: str | Path | None = None) -> Path:
    path = Path(path) if path else split_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(split, indent=1) + "\n")
    return path


def load_split(path: str | Path | None = None) -> dict:
    """Read the saved split (``data/sft_split.json``)."""
    path = Path(path) if path else split_path()
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist; create it with "
            "cadlib.chapters.sft_pilot.save_split(cadlib.chapters.sft_pilot.make_split(...))"
        )
    return json.loads(path.read_text())


def split_cases(split: dict, name: str, cases: Sequence[EditCase], part: str) -> list[EditCase]:
    """The cases of corpus ``name`` in ``part`` (``"train"`` or ``"held_out"``), split order.

    Fails loudly when the corpus does not hold every id the split names (a changed corpus).
    """
    if part not in ("train", "held_out"):
        raise ValueError(f"unknown part {part!r}; valid: 'train', 'held_out'")
    if name not in split["corpora"]:
        raise ValueError(f"the split has no corpus {name!r}; it has {', '.join(split['corpora'])}")
    by_id = {c.id: c for c in cases}
    entry = split["corpora"][name]
    missing = [i for i in entry[part] if i not in by_id]
    if missing or len(cases) != entry["n"]:
        raise ValueError(
            f"corpus {name} does not match the saved split ({len(cases)} cases vs {entry['n']}; "
            f"{len(missing)} ids missing, e.g. {missing[:3]}): regenerate data/sft_split.json"
        )
    return [by_id[i] for i in entry[part]]


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
