"""Where a disagreement with ``ast.parse`` is, and the known difference that explains it.

The differential check at scale (:mod:`cadlib.fim.stdlib`) perturbs a true middle and compares
the constraint's ``can_end()`` with ``ast.parse`` on the edited program. Every disagreement is
placed by *where the edit is* in the valid program (:func:`edit_location`: inside an f-string's
replacement field, read with :func:`fstring_fields`, or elsewhere; the edit's span is
:func:`edit_span`) and gets a category by what is at that place (:func:`categorize`: one of
:data:`cadlib.fim.differential.KNOWN_DIFFERENCES`, else ``"uncategorized"``, a failure).
"""

from __future__ import annotations

import io
import re
import tokenize

from cadlib.fim import fstring

__all__ = ["categorize", "edit_location", "edit_span", "fstring_fields"]


def fstring_fields(program: str) -> list[tuple[int, int]]:
    """``[(start, end)]``: the replacement fields (``{`` to its ``}``, format specs included) of
    every f-string in a valid ``program``, as offsets (read with :mod:`cadlib.fim.fstring`)."""
    starts = [0]
    for line in program.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(program).readline):
        if tok.type != tokenize.STRING:
            continue
        text = tok.string
        prefix = text[: len(text) - len(text.lstrip("rRbBuUfF"))]
        if "f" not in prefix.lower():
            continue
        quote = 3 if text[len(prefix) : len(prefix) + 3] in ('"""', "'''") else 1
        base = starts[tok.start[0] - 1] + tok.start[1] + len(prefix) + quote
        state, field = fstring.START, None
        for k, ch in enumerate(text[len(prefix) + quote : len(text) - quote]):
            state = fstring.step(state, ch, "r" in prefix.lower())
            inside = state is not None and not (
                state[0] == "L" and state[1] == 0 and state[2] != "{"
            )
            if inside and field is None:
                field = base + k
            elif not inside and field is not None:
                out.append((field, base + k + 1))
                field = None
    return out


def edit_span(middle: str, edited: str, i: int) -> tuple[int, int]:
    """``(start, end)`` in ``middle`` of what an edit at ``i`` changed (an insertion: the
    characters on either side)."""
    k = 0
    while k < min(len(middle), len(edited)) - i and middle[-1 - k] == edited[-1 - k]:
        k += 1
    end = max(len(middle) - k, i)
    return (max(i - 1, 0), min(i + 1, len(middle))) if end == i else (i, end)


def edit_location(program: str, start: int, end: int) -> str:
    """Where ``program[start:end]`` (an edit's span in a valid program) is: ``"f-string
    field"`` when it touches a replacement field, else ``"elsewhere"``."""
    touches = any(a < max(end, start + 1) and start < b for a, b in fstring_fields(program))
    return "f-string field" if touches else "elsewhere"


_N_ESCAPE = re.compile(r"\\N\{[^}\n]*\}?")


def categorize(program: str, start: int, end: int, edit: str = "") -> str:
    """The known difference (:data:`cadlib.fim.differential.KNOWN_DIFFERENCES`) a disagreement
    can be put down to by what is where the edit is (``program[start:end]``, the valid
    program's span it changed; ``edit``: its description), or ``"uncategorized"`` (a
    failure)."""
    if "\r" in program or "\\r" in edit:
        return "carriage return"
    if any(
        m.start() < max(end, start + 1) and start < m.end() for m in _N_ESCAPE.finditer(program)
    ):
        return "unicode escape"
    line_start = program.rfind("\n", 0, start) + 1
    line_end = program.find("\n", end)
    lines = program[line_start : len(program) if line_end < 0 else line_end]
    if "\\t" in edit or re.search(r"^[ ]*\t|^\t*[ ]+\t", lines, re.M):
        return "tabs"
    return "uncategorized"
