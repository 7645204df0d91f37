"""Edit formats head to head (paper §4.4, Table 3): tokens and round-trip exact match.

From each case's oracle alignment (:func:`cadlib.oracle.matching_blocks`) the same edit is
rendered in four formats, parsed back and applied to the document with each format's own
semantics:

``full``
    full regeneration: the text is the gold document itself.
``search-replace``
    Aider-style ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE`` blocks (Gauthier 2024),
    applied as Aider's ``do_replace`` applies them: every block, in order, rewrites the *first*
    exact line-sequence match of its SEARCH text in the document as it stands. A SEARCH text
    that also occurs earlier than the intended place is therefore applied at the wrong place:
    anchor ambiguity, as in practice.
``unified-diff``
    ``difflib.unified_diff`` with 3 lines of context (the default of ``diff -u``, ``git diff``
    and difflib), ``--- a/doc`` / ``+++ b/doc`` headers and ``\\ No newline at end of file``
    markers, parsed back with :mod:`unidiff` and applied by ``git apply``.
``cad``
    Copy-as-Decode: ``str(oracle_program(doc, gold))``, parsed by
    :func:`cadlib.grammar.parse_program` and expanded by :func:`cadlib.resolver.resolve`.

Extensions (not in the paper): ``search-replace-unique`` grows each SEARCH anchor until its
first exact match is the intended place (what disambiguation costs),
``search-replace-fenced`` wraps each block in the file-name line and code fence Aider's prompt
asks for (what the bare blocks leave out), and ``unified-diff-u0`` / ``-u1`` with 0 / 1 lines
of context.

**How the S/R anchor is chosen.** The change regions are the gaps between the oracle's
matching blocks (doc lines ``i1..i2`` become gold lines ``j1..j2``, 0-based, half-open, lines
as ``doc.split("\\n")``). A block's SEARCH text is the doc lines of its region (the minimal
anchor the alignment gives) and its REPLACE text the gold lines. A pure insertion has an empty
SEARCH, and Aider treats a whitespace-only SEARCH as "append to the file", so such a block is
grown by one neighbouring line at a time -- the preceding doc line, or the following one at
the start of the document -- until its SEARCH holds a non-blank character; REPLACE grows by
the same (unchanged) lines. Blocks that come to overlap are merged. Blocks are emitted in
document order, one after another, without file names or code fences (which Aider also
requires; they would add a few tokens per block to S/R). Nothing makes the anchor unique.

**Round-trip exact match** is byte-exact (``output == gold``). The paper's §3 metric also
tolerates one trailing newline; that is reported as ``em_r``.

**The roles.** :mod:`.profiles` (``PROFILES``); the formats, one plain algorithm a module:
:mod:`.run_blocks` (the change blocks), :mod:`.run_search_replace`, :mod:`.run_unified_diff`,
:mod:`.run_failures` (the failure categories and ``ApplyError``) and :mod:`.run_formats` (the
``EditFormat`` protocol and the registry); :mod:`.run` (round trips, summaries and
``numbers``, the results dict); :mod:`.run_diff_overhead` (the coverage page's probe of the
diff's settings); :mod:`.show` (tables and the Pareto figure); :mod:`.text` (the generated
prose).
"""

from cadlib.record.card import lazy_roles

from .card import CARD

__all__ = ["CARD"]

__getattr__ = lazy_roles(__name__)
