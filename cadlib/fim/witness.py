"""Witness completions: for a prefix the recognizer calls viable, a completion that ends it.

``viable()`` promises that *some* continuation of the middle makes ``left + middle +
continuation + right`` a program. :func:`witness` produces one, so the promise can be checked
(``ast.parse`` of the witnessed program, :mod:`cadlib.fim.witness_check`): a recognizer that
called every prefix viable would pass the prefix test of :mod:`cadlib.fim.differential`, but
its witnesses would not parse.

The search reads the recognizer's own state. Each :data:`~cadlib.fim.branching.Branch` says
what is still open: the symbol in progress (a string's quote and whether it is triple-quoted,
an f-string's replacement field, an unfinished number or operator), the bracket depth, the
column and the indentation stack. From it come the *pieces* tried next (:func:`pieces`): the
string's closing quote, the rest of a keyword the name in progress may become, closing
brackets, a filler atom, a colon, a newline, and a newline
indented to one of the stack's columns or one level deeper, with or without ``pass`` (a block
that needs a body). A best-first search over piece sequences, ordered by pieces used plus
what is still open (:func:`_open_count`), keeps only forks the recognizer calls viable and
stops at the first state where ``can_end()`` holds. The witness is short (a few pieces), not
necessarily the shortest string; ``None`` means the prefix is dead, or the search ran out of
expansions (which :mod:`cadlib.fim.witness_check` counts separately from a wrong witness).
"""

from __future__ import annotations

import heapq
from itertools import count

from .constraint import FIMConstraint
from .lexer import KEYWORDS, SOFT_KEYWORDS, dfa

__all__ = ["FILLERS", "pieces", "witness"]

#: Pieces tried in every state after the state-driven ones: closers, openers and separators
#: (a right context may start inside a call's arguments or a comment), atoms, the punctuation
#: a pending clause needs (``:``, ``in``, ``else``, ``=``), an f-string conversion, a body, a
#: function header (a right context may start inside one's name or parameters) and a block
#: header (a right context may start with an indented body).
FILLERS = (
    ")",
    "]",
    "}",
    "(",
    "[",
    ",",
    ".",
    "#",
    "x",
    "0",
    ":",
    " ",
    " in x",
    " else x",
    "=x",
    "r",
    "'",
    '"',
    "pass",
    "def f",
    "def f(",
    "def f(): pass",
    "if x:",
    "\\\n",
)
_INDENT = 4


def _string_closer(sip: int) -> str | None:
    """The closing quote of the string or f-string in progress (``None`` if none is open)."""
    desc = dfa.descs[sip]
    if desc[0] not in ("str", "fstr"):
        return None
    quote, triple = desc[1][2], desc[1][3]
    return quote * 3 if triple else quote


def _word_endings(sip: int) -> list[str]:
    """The rest of each keyword the name in progress could still become, and every prefix of
    that rest (``exc`` -> ``ept``; ``d`` -> ``e`` when the right context goes on ``f …``)."""
    desc = dfa.descs[sip]
    text = desc[1] if desc[0] == "name" else None
    if not text:
        return []
    words = sorted(w for w in KEYWORDS | SOFT_KEYWORDS if w.startswith(text) and w != text)
    rests = [w[len(text) :] for w in words]
    return list(dict.fromkeys(r[:k] for r in rests for k in range(len(r), 0, -1)))


def _columns(stack: tuple) -> list[int]:
    """The indentation columns a new line may start at: the stack's, and one level deeper."""
    cols = sorted({level[0] for level in stack})
    return [*cols, cols[-1] + _INDENT]


def pieces(c: FIMConstraint, hints: tuple[str, ...] = ()) -> list[str]:
    """The pieces to try after ``c``'s middle: ``hints`` (a caller's candidate endings, e.g.
    the rest of a known middle), then the state-driven ones (see the module's doc)."""
    out: list[str] = list(hints)
    for _chart, sip, _guards, _follow, line, _ftext in c.branches:
        if sip:
            closer = _string_closer(sip)
            if closer is not None:
                out += [closer, "}" + closer, "x}" + closer]
            out += _word_endings(sip)
        depth, _bol, _col, _alt, stack = line
        if depth == 0:
            for col in _columns(stack):
                out += ["\n" + " " * col, "\n" + " " * col + "pass", " " * col]
    out += ["\n", *FILLERS]
    return list(dict.fromkeys(out))


def _open_count(c: FIMConstraint) -> int:
    """What is still open, at best over the branches: brackets, plus one for a symbol in
    progress (the search's estimate of the pieces still needed)."""
    return min(line[0] + (1 if sip else 0) for _ch, sip, _g, _f, line, _t in c.branches)


def _key(c: FIMConstraint):
    try:
        return frozenset(c.branches)
    except TypeError:  # pragma: no cover - branches are tuples of hashable parts
        return None


def witness(
    c: FIMConstraint,
    max_expansions: int = 400,
    max_pieces: int = 10,
    hints: tuple[str, ...] = (),
) -> str | None:
    """A completion ``w`` with ``c.fork().feed(w)`` and ``can_end()`` true, or ``None``.

    ``hints`` are extra pieces tried first in every state (a right context that starts inside
    a statement header, `` cls.__mro__:``, needs the header's first words, which no state
    suggests; a caller that knows a nearby middle passes its rest).

    ``None`` when ``c`` is not viable (no witness exists), or when ``max_expansions`` states
    were expanded, or every sequence of up to ``max_pieces`` pieces died, without reaching an
    end (the search's limit, not a proof that none exists). ``c`` is not changed.
    """
    if not c.viable():
        return None
    if c.can_end():
        return ""
    tie = count()
    frontier = [(_open_count(c), next(tie), 0, "", c)]
    seen = {_key(c)}
    expanded = 0
    while frontier and expanded < max_expansions:
        _, _, used, text, state = heapq.heappop(frontier)
        expanded += 1
        if used >= max_pieces:
            continue
        for piece in pieces(state, hints):
            trial = state.fork()
            if not trial.feed(piece):
                continue
            if trial.can_end():
                return text + piece
            key = _key(trial)
            if key is not None and key in seen:
                continue
            seen.add(key)
            prio = used + 1 + _open_count(trial)
            heapq.heappush(frontier, (prio, next(tie), used + 1, text + piece, trial))
    return None
