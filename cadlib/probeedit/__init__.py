"""ProbeEdit: our own corpus of 154 controlled prose edits over four documents (paper §3, §4.2).

The paper's ProbeEdit corpus (154 (doc, gold) pairs over four source documents: meeting
notes, a technical design doc, a scientific abstract and an API spec) is not public, so this
module builds an equivalent one from four documents written for this project. They ship as
package data in ``cadlib/data/probeedit/`` (read with :mod:`importlib.resources`), so a
pip-installed ``cadlib`` can build the corpus outside the repository.

Every case applies one named edit operation (:data:`OPERATIONS`) to one document and comes
with an instruction that says exactly what to do, so that the gold is determined by it.
Structural operations (delete a sentence, swap two sections, ...) pick their targets from
the document itself; operations that need new words (replace a phrase, rename a term, insert
a paragraph, change a heading) draw from hand-written pools (:data:`POOLS`). Choices go
through a ``random.Random`` seeded with a string (:data:`SEED`, document, operation), never
through hash order, so the corpus is identical on every run and machine.

Documents are hard-wrapped markdown; an edit never rewraps lines it does not need to touch
(deleting a sentence joins what is left of its first and last line, splitting a paragraph
breaks the line where the new paragraph starts, merging two paragraphs deletes the blank line
between them). ``python -m cadlib.probeedit --stats`` prints the corpus statistics
(:func:`corpus_stats`, Qwen2.5 BPE, paper Table 2) and ``--write DIR`` dumps the cases as JSONL.
"""

from .corpus import (
    cases_per_cell,
    corpus_stats,
    main,
    probeedit_corpus,
    stats_markdown,
    write_jsonl,
)
from .operations import (
    change_heading,
    delete_block,
    delete_sentence,
    insert_paragraph,
    make_typo,
    merge_paragraphs,
    rename_everywhere,
    replace_at,
    replace_once,
    split_paragraph,
    swap_sections,
)
from .spec import (
    DOCUMENTS,
    N_CASES,
    OPERATIONS,
    POOLS,
    SEED,
    VERSION,
    WRAP,
    document_text,
    documents,
)
from .structure import Block, Section, blocks, find_section, sections, sentence_spans

__all__ = [
    "VERSION",
    "SEED",
    "DOCUMENTS",
    "OPERATIONS",
    "N_CASES",
    "POOLS",
    "Section",
    "Block",
    "document_text",
    "documents",
    "sections",
    "blocks",
    "sentence_spans",
    "find_section",
    "replace_once",
    "replace_at",
    "rename_everywhere",
    "insert_paragraph",
    "delete_sentence",
    "delete_block",
    "swap_sections",
    "merge_paragraphs",
    "split_paragraph",
    "change_heading",
    "make_typo",
    "cases_per_cell",
    "probeedit_corpus",
    "corpus_stats",
    "stats_markdown",
    "write_jsonl",
    "WRAP",
    "main",
]
