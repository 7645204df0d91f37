"""Failure categories, and the typed error every format's applier raises."""

from __future__ import annotations

from cadlib.metrics import equal_up_to_one_newline

__all__ = [
    "FAILURE_CATEGORIES",
    "ApplyError",
]

# ---------------------------------------------------------------------------------------------
# Failure categories and the typed error every applier raises
# ---------------------------------------------------------------------------------------------

FAILURE_CATEGORIES = {
    "anchor-ambiguous": "S/R: the SEARCH text also occurs before the intended place in the "
    "document as it stands when its block is applied; Aider rewrites the first exact match, "
    "so the edit lands in the wrong place (paper §4.4).",
    "anchor-not-found": "S/R: no exact line-sequence match of the SEARCH text.",
    "blank-anchor": "S/R: the document has no non-blank line to anchor on, and Aider reads a "
    "blank SEARCH as 'append to the file'.",
    "line-endings": "S/R: Aider normalises block text to LF (strip_quoted_wrapping), so a "
    "SEARCH taken from a CRLF document never matches it exactly, and a CR it should write is "
    "lost.",
    "marker-collision": "S/R: a line of the edit equals a block marker (=======, ...), so the "
    "block parses differently from what was rendered.",
    "block-syntax": "S/R: a block lacks its ======= or >>>>>>> REPLACE marker.",
    "fence-stripped": "S/R: the SEARCH or REPLACE text opens and closes with a code fence, "
    "which Aider strips (strip_quoted_wrapping), so it edits with other text than rendered.",
    "blank-line-dropped": "S/R: a SEARCH or REPLACE text ends with an empty line, which "
    "Aider drops (strip_quoted_wrapping); the renderer avoids this by growing the block by the "
    "following line, impossible at the end of the document.",
    "eof-newline": "the output differs from gold only by one final newline: the format or its "
    "tool cannot say 'no newline at end of file' (Aider appends one to every text it edits; "
    "git apply --unidiff-zero mishandles it when no context line follows).",
    "hunk-rejected": "UD: git apply rejects a hunk whose context or removed lines do not match.",
    "malformed-patch": "UD: the patch does not parse (unidiff) or git apply calls it corrupt.",
    "apply-error": "UD: git apply failed for another reason (message kept in the detail).",
    "program-syntax": "CaD: parse_program rejects the program text.",
    "range-error": "CaD: a copy range outside the document (strict resolver).",
    "wrong-output": "applied without error, but the output differs from gold otherwise.",
}


class ApplyError(ValueError):
    """A format's text could not be parsed or applied; ``category`` is a key of
    :data:`FAILURE_CATEGORIES` and ``detail`` says where and why."""

    def __init__(self, category: str, detail: str):
        if category not in FAILURE_CATEGORIES:
            raise ValueError(f"unknown failure category {category!r}")
        self.category, self.detail = category, detail
        super().__init__(f"{category}: {detail}")


def _first_difference(output: str, gold: str) -> str:
    got, want = output.split("\n"), gold.split("\n")
    for k, (g, w) in enumerate(zip(got, want, strict=False), start=1):
        if g != w:
            return f"line {k}: got {g!r}, want {w!r}"
    return f"got {len(got)} line(s), want {len(want)}"


def _diagnose_generic(doc: str, gold: str, output: str | None, error=None) -> tuple[str, str]:
    """Classify a failed round trip: the applier's error, else how the output is wrong."""
    if error is not None:
        return error.category, error.detail
    if equal_up_to_one_newline(output, gold):
        end = "ends" if output.endswith("\n") else "does not end"
        return "eof-newline", f"output {end} with a newline, gold the other way"
    return "wrong-output", _first_difference(output, gold)
