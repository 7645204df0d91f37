"""Edit corpora as lists of :class:`EditCase` (paper §3).

HumanEvalFix (HumanEvalPack, Muennighoff et al. 2024): doc = ``buggy_solution``, gold =
``canonical_solution``, as in the paper. Source: the Hugging Face hub (``bigcode/humanevalpack``)
when it is reachable, else a local mirror named by the environment variable
``CADLIB_HUMANEVALPACK_DIR`` (or the ``local_dir`` argument), else ``../shared/data/humanevalpack``
beside the repository root. The source used is reported on
the returned :class:`Corpus` (``.source``), and never chosen silently.

ProbeEdit: our own prose corpus, generated deterministically by :mod:`cadlib.probeedit`.

Real edits: (file before, file after, commit subject) triples, 300 per project, from the
history of Flask (``realedits-flask``: pallets/flask, BSD-3-Clause; **development** data: it was
a goal corpus while the drafts were designed), Requests (``realedits-requests``: psf/requests,
Apache-2.0) and Cobra (``realedits-cobra``: spf13/cobra, Apache-2.0); the last two are **test**
data, read once for final figures after every setting is declared in code. doc = the file at the
parent commit, gold = the file at the commit, instruction = the commit's subject line. Read from
``<project>.jsonl`` in the folder named by ``CADLIB_REALEDITS_DIR`` (or ``local_dir``), else in
``../shared/data/realedits`` beside the repository root (its README names the licences); never
committed here.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import socket
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .cases import Corpus, EditCase
from .paths import repo_root
from .probeedit import probeedit_corpus

__all__ = [
    "load_corpora",
    "EditCase",
    "Corpus",
    "load_corpus",
    "CORPORA",
    "CORPUS_LABELS",
    "HUMANEVALPACK_LANGUAGES",
    "HUMANEVALPACK_ENV",
    "REALEDITS_ENV",
    "REALEDITS_PROJECTS",
    "REALEDITS_TEST",
    "CorpusUnavailable",
    "humanevalpack_default_dir",
    "split_key",
    "case_rank",
    "seeded_subset",
    "SPLIT_CORPORA",
    "HELD_OUT_FRACTION",
    "SPLIT_FILE",
    "held_out_ids",
    "make_split",
    "split_path",
    "save_split",
    "load_split",
    "split_cases",
]

HUMANEVALPACK_ENV = "CADLIB_HUMANEVALPACK_DIR"
HUMANEVALPACK_REPO = "bigcode/humanevalpack"
#: corpus name -> HumanEvalPack language folder
HUMANEVALPACK_LANGUAGES = {
    "heval-fix-py": "python",
    "heval-fix-js": "js",
    "heval-fix-java": "java",
    "heval-fix-go": "go",
    "heval-fix-cpp": "cpp",
    "heval-fix-rust": "rust",
}
REALEDITS_ENV = "CADLIB_REALEDITS_DIR"
#: corpus name -> the ``<project>.jsonl`` file of the real-edit folder
REALEDITS_PROJECTS = {
    "realedits-flask": "flask",
    "realedits-requests": "requests",
    "realedits-cobra": "cobra",
}
#: Real-edit corpora that are test data: never used to choose a setting, rule or policy.
REALEDITS_TEST = ("realedits-requests", "realedits-cobra")
CORPORA = (*HUMANEVALPACK_LANGUAGES, "probeedit", *REALEDITS_PROJECTS)
#: corpus name -> its display name in tables, figures and prose (the paper's spelling).
CORPUS_LABELS = {
    "probeedit": "ProbeEdit",
    "heval-fix-py": "HEvalFix-Py",
    "heval-fix-js": "HEvalFix-JS",
    "heval-fix-java": "HEvalFix-Java",
    "heval-fix-go": "HEvalFix-Go",
    "heval-fix-cpp": "HEvalFix-C++",
    "heval-fix-rust": "HEvalFix-Rust",
    "realedits-flask": "RealEdits-Flask",
    "realedits-requests": "RealEdits-Requests",
    "realedits-cobra": "RealEdits-Cobra",
    "pooled": "Pooled",
}
_DOC_GOLD_FIELDS = ("buggy_solution", "canonical_solution")


class CorpusUnavailable(RuntimeError):
    """Neither the hub nor a local mirror could provide the corpus."""


@functools.cache
def _hub_reachable(host: str = "huggingface.co") -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        return False
    try:
        socket.create_connection((host, 443), timeout=3).close()
        return True
    except OSError:
        return False


def _humanevalpack_file(language: str, local_dir: str | os.PathLike | None) -> tuple[Path, str]:
    """Path of ``<language>.jsonl`` and a label of where it came from (hub first)."""
    if _hub_reachable():
        from huggingface_hub import hf_hub_download  # lazy: only when the hub is reachable

        filename = f"data/{language}/data/humanevalpack.jsonl"
        path = hf_hub_download(HUMANEVALPACK_REPO, filename, repo_type="dataset")
        return Path(path), f"hub:{HUMANEVALPACK_REPO}/{filename}"
    folder = local_dir or os.environ.get(HUMANEVALPACK_ENV)
    how = f"{HUMANEVALPACK_ENV}={folder}" if folder and not local_dir else "local_dir"
    if not folder:
        folder, how = humanevalpack_default_dir(), "default folder"
        if not folder.is_dir():
            raise CorpusUnavailable(
                f"the hub is not reachable and no local HumanEvalPack is configured: set "
                f"{HUMANEVALPACK_ENV} to a folder holding <language>.jsonl files (default: "
                f"{folder}, which does not exist)"
            )
    path = Path(folder).expanduser().resolve() / f"{language}.jsonl"
    if not path.is_file():
        raise CorpusUnavailable(f"{path} does not exist ({how})")
    return path, f"local:{path}"


def humanevalpack_default_dir() -> Path:
    """The HumanEvalPack mirror read when the hub is unreachable and neither ``local_dir`` nor
    ``$CADLIB_HUMANEVALPACK_DIR`` names one: ``../shared/data/humanevalpack`` beside the
    repository root (where the Makefile points the variable), so a chapter re-run as the
    README writes it works from a clean clone."""
    return (repo_root() / ".." / "shared" / "data" / "humanevalpack").resolve()


def _load_humanevalfix(name: str, local_dir) -> Corpus:
    path, source = _humanevalpack_file(HUMANEVALPACK_LANGUAGES[name], local_dir)
    cases = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            meta = {k: v for k, v in row.items() if k not in _DOC_GOLD_FIELDS}
            meta["language"] = HUMANEVALPACK_LANGUAGES[name]
            cases.append(
                EditCase(
                    id=row["task_id"],
                    doc=row["buggy_solution"],
                    gold=row["canonical_solution"],
                    instruction=f"Fix bugs in {row['entry_point']}.",
                    meta=meta,
                )
            )
    return Corpus(name, source, cases)


def _realedits_file(project: str, local_dir: str | os.PathLike | None) -> tuple[Path, str]:
    """Path of ``<project>.jsonl`` and a label of where it came from: ``local_dir``, else
    ``$CADLIB_REALEDITS_DIR``, else ``../shared/data/realedits`` beside the repository root."""
    folder = local_dir or os.environ.get(REALEDITS_ENV)
    how = f"{REALEDITS_ENV}={folder}" if folder and not local_dir else "local_dir"
    if not folder:
        folder, how = repo_root() / ".." / "shared" / "data" / "realedits", "default folder"
    path = Path(folder).expanduser().resolve() / f"{project}.jsonl"
    if not path.is_file():
        raise CorpusUnavailable(
            f"{path} does not exist ({how}): set {REALEDITS_ENV} to the folder holding "
            f"{project}.jsonl (see its README.md)"
        )
    return path, f"local:{path}"


def _load_realedits(name: str, local_dir) -> Corpus:
    """Real edits of one project: one case per (commit, file), in the file's order."""
    project = REALEDITS_PROJECTS[name]
    path, source = _realedits_file(project, local_dir)
    cases = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            meta = {"commit": row["commit"], "path": row["path"], "project": project}
            cases.append(EditCase(row["id"], row["doc"], row["gold"], row["instruction"], meta))
    return Corpus(name, source, cases)


def load_corpus(name: str, local_dir: str | os.PathLike | None = None) -> Corpus:
    """Load a corpus by name; see :data:`CORPORA` for the names.

    ``local_dir`` overrides ``$CADLIB_HUMANEVALPACK_DIR`` for the HumanEvalPack corpora and
    ``$CADLIB_REALEDITS_DIR`` for the real-edit corpora.
    """
    if name in HUMANEVALPACK_LANGUAGES:
        return _load_humanevalfix(name, local_dir)
    if name in REALEDITS_PROJECTS:
        return _load_realedits(name, local_dir)
    if name == "probeedit":
        return probeedit_corpus()
    raise ValueError(f"unknown corpus {name!r}; valid names: {', '.join(CORPORA)}")


# --------------------------------------------------------------------------------------------
# Seeded subsets that every machine and Python draws alike
# --------------------------------------------------------------------------------------------


def split_key(case_id: str) -> str:
    """The key a case is drawn by: the task number for HumanEvalPack (``"Python/7"`` and
    ``"JavaScript/7"`` -> ``"humanevalpack/7"``, so translations of a task fall together), the
    id itself otherwise."""
    m = re.fullmatch(r"(?:Python|JavaScript|Java|Go|CPP|Rust)/(\d+)", case_id)
    return f"humanevalpack/{m.group(1)}" if m else case_id


def case_rank(seed: int, case_id: str) -> str:
    """``sha256(f"{seed}:{split_key(case_id)}")``: an order of cases that needs no RNG."""
    return hashlib.sha256(f"{seed}:{split_key(case_id)}".encode()).hexdigest()


def seeded_subset(cases: Sequence[EditCase], n: int | None, seed: int = 0) -> list[EditCase]:
    """The first ``n`` cases in :func:`case_rank` order (all when ``n`` is None), kept in
    their original order: the one seeded subset of the book's cpu profiles."""
    if n is None or n >= len(cases):
        return list(cases)
    chosen = set(sorted((c.id for c in cases), key=lambda i: case_rank(seed, i))[:n])
    return [c for c in cases if c.id in chosen]


# The seeded train / held-out split of the pilot's corpora (paper §5, Table 22), shared by
# chapter 7 (which trains on it) and chapter 8 (which evaluates on its held-out cases).

#: Corpora that are split into train / held-out (paper §5, Table 22).
SPLIT_CORPORA = ("heval-fix-py", "heval-fix-js", "probeedit")
#: Share of each corpus held out: round(0.2 * 164) = 33, round(0.2 * 154) = 31 (Table 22).
HELD_OUT_FRACTION = 0.2
#: Where the saved split lives, relative to the repository root.
SPLIT_FILE = "data/sft_split.json"


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
            "otherwise; made by cadlib.corpora.make_split"
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
            "cadlib.corpora.save_split(cadlib.corpora.make_split(...))"
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


def load_corpora(names: Iterable[str], **kwargs) -> tuple[dict[str, list[EditCase]], dict]:
    """Load each named corpus; return ``(loaded, unavailable)`` where ``unavailable`` maps a
    name to the reason it could not be loaded (shown by the notebooks, never dropped silently).
    """
    loaded, unavailable = {}, {}
    for name in names:
        try:
            loaded[name] = load_corpus(name, **kwargs)
        except Exception as err:  # not written yet, no data, ...: reported, not dropped silently
            unavailable[name] = f"{type(err).__name__}: {err}"
    return loaded, unavailable
