"""What ProbeEdit is made of: its version and seed, the four documents, the operations, and
the hand-written pools of new words (data: ``cadlib/data/probeedit/pools.json``)."""

from __future__ import annotations

import json
from importlib import resources

__all__ = [
    "DOCUMENTS",
    "N_CASES",
    "OPERATIONS",
    "POOLS",
    "SEED",
    "VERSION",
    "WRAP",
    "document_text",
    "documents",
]

VERSION = "v1"
SEED = 154
N_CASES = 154
WRAP = 80  # column at which the documents (and inserted paragraphs) are wrapped
DATA_PACKAGE = "cadlib"
DATA_DIR = ("data", "probeedit")

#: document name -> kind (paper §3: "meeting notes, a technical design doc, a scientific
#: abstract, an API spec"); the text is ``cadlib/data/probeedit/<name>.md``.
DOCUMENTS = {
    "meeting_notes": "meeting notes",
    "design_doc": "technical design doc",
    "abstract": "scientific abstract",
    "api_spec": "API spec",
}

#: The edit operations, in the order that fixes the balance (:func:`cases_per_cell`).
OPERATIONS = (
    "replace_phrase",
    "rename_term",
    "update_number",
    "insert_paragraph",
    "delete_sentence",
    "delete_list_item",
    "swap_sections",
    "merge_paragraphs",
    "split_paragraph",
    "fix_typo",
    "change_heading",
)


def _as_tuples(value):
    """JSON lists back to the tuples the builders unpack (entries, section paths)."""
    return tuple(_as_tuples(v) for v in value) if isinstance(value, list) else value


def _load_pools() -> dict[str, dict[str, list[tuple]]]:
    path = resources.files(DATA_PACKAGE).joinpath(*DATA_DIR, "pools.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {
        doc: {op: [_as_tuples(e) for e in entries] for op, entries in ops.items()}
        for doc, ops in raw.items()
    }


#: Hand-written edits per document and operation. Paths name a section by the tail of its
#: heading path (:func:`find_section`); inserted paragraphs are wrapped at :data:`WRAP`.
POOLS: dict[str, dict[str, list[tuple]]] = _load_pools()


def document_text(name: str) -> str:
    """The text of one of the four documents (package data ``cadlib/data/probeedit``)."""
    if name not in DOCUMENTS:
        raise ValueError(f"unknown ProbeEdit document {name!r}; valid: {', '.join(DOCUMENTS)}")
    path = resources.files(DATA_PACKAGE).joinpath(*DATA_DIR, f"{name}.md")
    return path.read_text(encoding="utf-8")


def documents() -> dict[str, str]:
    """All four documents, name -> text."""
    return {name: document_text(name) for name in DOCUMENTS}
