"""Edit corpora as lists of :class:`EditCase` (paper §3).

HumanEvalFix (HumanEvalPack, Muennighoff et al. 2024): doc = ``buggy_solution``, gold =
``canonical_solution``, as in the paper. Source: the Hugging Face hub (``bigcode/humanevalpack``)
when it is reachable, else a local mirror named by the environment variable
``CADLIB_HUMANEVALPACK_DIR`` (or the ``local_dir`` argument), else ``../shared/data/humanevalpack``
beside the repository root. The source used is reported on
the returned :class:`Corpus` (``.source``), and never chosen silently.

ProbeEdit: our own prose corpus, generated deterministically by :mod:`cadlib.probeedit`.

Real edits (``realedits-flask``): 300 (file before, file after, commit subject) triples from
the history of Flask (pallets/flask, BSD-3-Clause): doc = the file at the parent commit, gold =
the file at the commit, instruction = the commit's subject line. Read from ``flask.jsonl`` in
the folder named by ``CADLIB_REALEDITS_DIR`` (or ``local_dir``), else in
``../shared/data/realedits`` beside the repository root; never committed here.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import socket
from collections.abc import Sequence
from pathlib import Path

from .book.results import repo_root
from .cases import Corpus, EditCase
from .probeedit import probeedit_corpus

__all__ = [
    "EditCase",
    "Corpus",
    "load_corpus",
    "CORPORA",
    "CORPUS_LABELS",
    "HUMANEVALPACK_LANGUAGES",
    "HUMANEVALPACK_ENV",
    "REALEDITS_ENV",
    "REALEDITS_PROJECTS",
    "CorpusUnavailable",
    "humanevalpack_default_dir",
    "split_key",
    "case_rank",
    "seeded_subset",
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
REALEDITS_PROJECTS = {"realedits-flask": "flask"}
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
