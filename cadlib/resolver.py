"""The deterministic resolver (paper §2.2): expand a program against its input document.

Semantics, exactly as §2.2:

1. ``<copy lines="i-j"/>`` emits lines ``i..j`` of the document joined by newlines;
2. ``<gen>s</gen>`` emits ``s`` with at most one leading and one trailing newline stripped
   (done by :func:`cadlib.grammar.parse_program`, so a :class:`~cadlib.grammar.Gen` already
   holds the emitted text);
3. the ops' texts are joined with a single newline.

Lines are ``doc.split("\\n")``: a document that ends with a newline has an empty last line,
so ``"\\n".join(lines) == doc`` always holds. This is what makes the round trip byte-exact
(and it is the convention that reproduces the paper's Table 2 token counts exactly).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from .grammar import Copy, Gen, Program, parse_program

__all__ = [
    "resolve",
    "doc_lines",
    "copied_text",
    "op_text",
    "ResolveError",
    "RangeClippedWarning",
    "MODES",
]

MODES = ("strict", "clipped")


class ResolveError(ValueError):
    """A copy op whose range does not lie inside the document (strict mode)."""


class RangeClippedWarning(UserWarning):
    """A copy range was clipped to the document in ``mode="clipped"``."""


def doc_lines(doc: str) -> list[str]:
    """The document's lines, numbered from 1 in programs: ``doc.split("\\n")``."""
    return doc.split("\n")


def copied_text(lines: Sequence[str], start: int, end: int) -> str:
    """Lines ``start..end`` (1-based, inclusive) joined by newlines: rule 1, unchecked.

    The one home of the copy rule: the decoder, the drafts, the accounting and the figures
    call it; :func:`resolve` checks the range first."""
    return "\n".join(lines[start - 1 : end])


def op_text(op: Copy | Gen, lines: Sequence[str]) -> str:
    """The text one op emits (rules 1 and 2): a copy's lines, a gen's text."""
    return copied_text(lines, op.start, op.end) if isinstance(op, Copy) else op.text


def _copy_text(op: Copy, lines: list[str], mode: str, k: int) -> str:
    n = len(lines)
    i, j = op.start, op.end
    if 1 <= i <= j <= n:
        return copied_text(lines, i, j)
    problem = f"op {k} copies lines {i}-{j} but the document has {n} line(s)"
    if i > j:
        problem = f"op {k} has an inverted range {i}-{j}"
    if mode == "strict":
        raise ResolveError(problem)
    ci, cj = min(max(i, 1), n), min(max(j, 1), n)
    warnings.warn(
        f"{problem}; clipped to {ci}-{cj}" + (" (empty)" if ci > cj else ""),
        RangeClippedWarning,
        stacklevel=3,
    )
    return copied_text(lines, ci, cj)


def resolve(program: Program | str, doc: str, mode: str = "strict") -> str:
    """Expand ``program`` (a :class:`Program` or its text) against ``doc``.

    ``mode="strict"`` raises :class:`ResolveError` on an out-of-range or inverted copy
    range; ``mode="clipped"`` clips both indices to ``[1, n_lines]``, emits a
    :class:`RangeClippedWarning`, and copies ``lines[i-1:j]`` (nothing when the clipped
    range is still inverted), the best-effort answer of §2.2/Table 4.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; valid modes: {', '.join(MODES)}")
    if isinstance(program, str):
        program = parse_program(program)
    lines = doc_lines(doc)
    parts = [
        _copy_text(op, lines, mode, k) if isinstance(op, Copy) else op.text
        for k, op in enumerate(program.ops, start=1)
    ]
    return "\n".join(parts)
