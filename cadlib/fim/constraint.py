"""The FIM constraint: is ``left + middle + right`` still / already a Python program? (§III)

:class:`FIMConstraint` answers the two questions of the paper's Problem 1 for a middle that is
fed incrementally:

``viable()``
    the incremental recognizer of Definition 1 for the quotient language: some continuation of
    the middle makes ``left + middle + continuation + right`` a program (early rejection);
``can_end()``
    the membership query: ``left + middle + right`` is a program, so the middle may end here.

Construction parses the right context into quotient grammars (:mod:`cadlib.fim.right`), builds
the union grammar and feeds the left context through the branching lexer
(:mod:`cadlib.fim.branching`). Feeding the middle is then incremental: each character steps the
few lexer branches, and only characters that end a symbol touch the Earley charts, which are
memoised, so per-character work does not grow with the middle (the paper's linear-time goal).
:meth:`FIMConstraint.fork` copies the state in O(number of branches) for trial feeding.

Exactness. ``can_end`` follows CPython 3.11's tokenizer and the grammar of
:mod:`cadlib.fim.python_grammar` exactly, up to the differences listed there and in
:mod:`cadlib.fim.lexer` (``\\N{…}`` names, ``\\r``, tab/space
consistency across the cut: only columns are compared there). ``viable`` never
rejects a prefix of a valid middle; it may accept a prefix that only over-approximated
completions would finish: the end condition of a right-context branch (which lexeme the middle
ends in, which band its last line's column falls in) is checked by ``can_end`` only.
"""

from __future__ import annotations

from .branching import Branch, BranchingLexer
from .earley import Recognizer
from .fstring import lexeme_fields_valid
from .lexer import CONTINUATION, dfa
from .python_grammar import dedent, python_grammar
from .quotient import TOP
from .right import RightContext

__all__ = ["FIMConstraint", "UnconnectableContextError", "UnsupportedLanguageError"]


class UnconnectableContextError(ValueError):
    """No middle can join this left and right context into a program."""


class UnsupportedLanguageError(ValueError):
    """Only ``language="python"`` (Python 3.11 syntax) is implemented."""


class _Problem:
    """The parts of a constraint shared by all its forks (grammar, right context, lexer)."""

    def __init__(self, left: str, right: str):
        pg = python_grammar()
        self.right = RightContext(right, pg)
        if not self.right.starts:
            raise UnconnectableContextError(
                f"the right context cannot end any Python program (it starts {right[:40]!r})"
            )
        starts = sorted(set(self.right.starts.values()) - {TOP}, key=repr)
        self.rec = Recognizer(self.right.compiled(pg), starts=[TOP, *starts])
        self.lexer = BranchingLexer(self.rec, self.right.bands.band)

    def fresh(self) -> _Problem:
        """The same right context with a new recognizer (empty chart memo)."""
        twin = object.__new__(_Problem)
        twin.right = self.right
        twin.rec = Recognizer(self.rec.cg, starts=list(self.rec.start_ids))
        twin.lexer = BranchingLexer(twin.rec, self.right.bands.band)
        return twin


class FIMConstraint:
    """Constrain a fill-in-the-middle completion to keep ``left + middle + right`` Python.

    Parameters
    ----------
    left, right
        The contexts; either may be cut anywhere (mid-token, mid-string, mid-indentation).
    language
        Only ``"python"`` (CPython 3.11's syntax).

    Raises
    ------
    UnconnectableContextError
        When no middle can connect the two contexts (e.g. the right context has an
        unterminated string, or the left context is no prefix of any program that could end
        with the right one).

    Examples
    --------
    >>> c = FIMConstraint("def f(x):\\n    return x +", "\\n")
    >>> c.can_end()
    False
    >>> c.feed(" 1")
    True
    >>> c.can_end()
    True
    >>> c.fork().feed(")")
    False
    """

    def __init__(
        self,
        left: str,
        right: str = "",
        language: str = "python",
        *,
        _problem: _Problem | None = None,
        _branches: list | None = None,
    ):
        if language != "python":
            raise UnsupportedLanguageError(f"language {language!r} is not supported; use 'python'")
        if _problem is None:
            _problem = _Problem(left, right)
            _branches = _problem.lexer.feed(_problem.lexer.initial(), left)
            if not _branches:
                raise UnconnectableContextError(
                    "the left context is not the start of any Python program that can end "
                    f"with this right context (left ends {left[-40:]!r}, right starts "
                    f"{right[:40]!r})"
                )
        self.left, self.right = left, right
        self._problem = _problem
        self.branches: list[Branch] = _branches
        self.middle_length = 0

    def __repr__(self) -> str:
        return (
            f"<FIMConstraint middle_length={self.middle_length} "
            f"branches={len(self.branches)} viable={self.viable()}>"
        )

    def fork(self) -> FIMConstraint:
        """A copy that can be fed independently (cheap: the state is a short list)."""
        twin = FIMConstraint(
            self.left, self.right, _problem=self._problem, _branches=list(self.branches)
        )
        twin.middle_length = self.middle_length
        return twin

    clone = fork

    def feed(self, text: str) -> bool:
        """Append ``text`` to the middle; returns :meth:`viable`. A dead state stays dead."""
        self.branches = self._problem.lexer.feed(self.branches, text)
        self.middle_length += len(text)
        return bool(self.branches)

    def viable(self) -> bool:
        """Some continuation of the middle can still meet the right context (§III Def. 1)."""
        return bool(self.branches)

    def can_end(self) -> bool:
        """``left + middle + right`` is a program (the membership query of §III)."""
        return any(self._branch_can_end(b) for b in self.branches)

    def _branch_can_end(self, branch: Branch) -> bool:
        chart, sip, guards, follow, line, ftext = branch
        problem = self._problem
        lexer, right = problem.lexer, problem.right
        if not right.prefix_ok(guards, follow):
            return False
        j = 0
        if sip:
            tail = right.tail(sip)
            if tail is None:
                return False
            j, state = tail
            if state == CONTINUATION and j == len(right.text):
                return False  # "unexpected EOF while parsing"
            if ftext is not None and not lexeme_fields_valid(ftext + right.text[:j]):
                return False  # an f-string finished by the right context: its fields' syntax
            ended = lexer.emit(chart, line, dfa.accept[state])
            if ended is None:
                return False
            chart, line = ended
        depth, bol, col, alt, stack = line
        eof_key = ("E", j)
        if eof_key in right.starts:
            return self._accepts_at_eof(chart, line)
        if bol and j in right.l0:
            key, first_col = right.line_start_key(j, col, alt)
            if first_col is not None:
                done = lexer.indentation(chart, *first_col, stack)
                if done is None:
                    return False
                chart = done[0]
        else:
            key = ("A", j)
            if right.depth.get(key) != depth:
                return False
        start = right.starts.get(key)
        return start is not None and problem.rec.accepts(chart, start)

    def _accepts_at_eof(self, chart, line) -> bool:
        """The right context holds no symbol: end the file here (NEWLINE, DEDENTs)."""
        problem = self._problem
        depth, bol, _, _, stack = line
        if depth:
            return False
        if not bol:
            chart = problem.rec.scan(chart, problem.lexer.newline)
            if chart is None:
                return False
        for _, _, band in reversed(stack[1:]):
            chart = problem.rec.scan(chart, problem.lexer.ids((dedent(band),)))
            if chart is None:
                return False
        return problem.rec.accepts(chart, TOP)
