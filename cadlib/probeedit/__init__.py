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

from . import corpus, operations, spec, structure
from .corpus import *  # noqa: F403
from .operations import *  # noqa: F403
from .spec import *  # noqa: F403
from .structure import *  # noqa: F403

__all__ = [
    *corpus.__all__,
    *operations.__all__,
    *spec.__all__,
    *structure.__all__,
]
