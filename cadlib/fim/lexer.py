"""Python 3.11's lexemes as one deterministic automaton, and lexing a finished text (§V).

:class:`LexemeDFA` is the union of every Python lexeme's automaton over characters: names and
keywords (keyword prefixes are states, so ``"ret"`` knows it may become ``return``), string
literals with all prefixes / quotes / escapes, numbers, operators, comments and the backslash
line continuation. States are built lazily from small descriptors and their transitions cached,
so one step is a dict look-up. Whitespace and newlines are not lexemes here: the indentation
machinery (:mod:`cadlib.fim.indent`) handles them between symbols. The literals' transitions
(numbers, strings, f-strings) are :mod:`cadlib.fim.literals`'s; this module holds names,
keywords, operators, comments, the union and the lexing of a finished text.

Lexemes are named by their grammar terminals (see :mod:`cadlib.fim.python_grammar`): a literal
keyword or operator by its text (``"def"``, ``"+="``), the rest as in lark's grammar (``NAME``,
``STRING``, ``LONG_STRING``, ``DEC_NUMBER`` …; bytes literals as ``BYTES``, ``LONG_BYTES``).
A state's ``accept`` is a *class* of terminals, more than one for soft keywords
(``("match", "NAME")``), or :data:`IGNORE` for comments and line continuations.

CPython's observed lexing, where it differs from leftmost-longest matching (§V footnote 3):

* *commit* states: once CPython has read ``0x``/``0o``/``0b``, an ``_`` inside a number, or an
  exponent sign, it never backs up (``0or 1`` is an error, not ``0 or 1``); a symbol that a
  later commit state would extend can therefore not end early (the branch guard of Fig. 5
  deletes it).
* after a number, an identifier character is an error unless the text continues with one of
  ``and else for if in is or not`` (``verify_end_of_number``): :func:`number_follow`.
* string prefixes are ``r u b br rb f fr rf`` in any case; bytes take only ASCII; ``\\x``,
  ``\\u``, ``\\U`` and ``\\N{…}`` escapes must be complete in non-raw strings (the name inside
  ``\\N{…}`` is not looked up).

* f-strings: the tokenizer's string states run beside :mod:`cadlib.fim.fstring`'s parse of the
  content (replacement fields with CPython 3.11's rules, not 3.12's PEP 701): a state
  ``("fstr", kind, phase, fstring_state)``; the quotes that may close a triple-quoted f-string
  are held back until a non-quote shows they were content. An f-string whose fields are
  broken dies; an expression's own syntax is checked by the branching lexer when the
  expression ends (:attr:`LexemeDFA.fstr` marks the states inside one; see that module and
  :mod:`cadlib.fim.branching`), not by this automaton. Its states grow
  with the brackets open in a field, so :attr:`LexemeDFA.sip_states` leaves them out: a right
  context ends such a symbol where the plain string state of the same quotes and phase ends
  it, or nowhere.

Not modelled (documented disagreements): the name in ``\\N{…}`` is not looked up and ``\\r``
is whitespace.
"""

from __future__ import annotations

import functools
import keyword
from collections.abc import Iterator

from cadlib.fim import fstring

from .literals import (
    DIGITS,
    NUMBER_STATES,
    NUMBER_TERMINALS,
    describe_string,
    from_fstring,
    from_number,
    from_string,
)

__all__ = [
    "IGNORE",
    "KEYWORDS",
    "SOFT_KEYWORDS",
    "OPERATORS",
    "OPEN_BRACKETS",
    "CLOSE_BRACKETS",
    "LexemeDFA",
    "LexError",
    "dfa",
    "number_follow",
    "follows",
    "CONTINUATION",
    "NOT_ID",
    "lex_text",
    "Lexeme",
]

#: Accept class of lexemes that produce no symbol (comments, ``\\``-newline).
IGNORE = ("<ignore>",)
KEYWORDS = frozenset(keyword.kwlist)
SOFT_KEYWORDS = frozenset(keyword.softkwlist)
OPERATORS = frozenset(
    "+ - * ** / // % @ << >> & | ^ ~ := < > <= >= == != ( ) [ ] { } , : . ; = -> "
    "+= -= *= /= //= %= @= &= |= ^= >>= <<= **= ...".split()
)
_OP_PREFIXES = frozenset(op[:k] for op in OPERATORS for k in range(1, len(op) + 1)) | {"!"}
OPEN_BRACKETS = frozenset("([{")
CLOSE_BRACKETS = frozenset(")]}")
_STRING_PREFIXES = frozenset({"", "r", "u", "b", "br", "rb", "f", "fr", "rf"})
_WORDS = KEYWORDS | SOFT_KEYWORDS
_CASED_PREFIXES = frozenset(
    "".join(c.upper() if (mask >> i) & 1 else c for i, c in enumerate(p))
    for p in _STRING_PREFIXES
    for mask in range(1 << len(p))
)
_NAME_PREFIXES = frozenset(w[:k] for w in _WORDS for k in range(1, len(w) + 1)) | (
    _CASED_PREFIXES - {""}
)
#: After a number: identifier characters allowed only as the start of these words.
_FOLLOW = {"a": "nd", "e": "lse", "f": "or", "o": "r", "n": "ot"}
_PREFIX_TEXT = {  # lower-cased name text that is a valid string prefix -> (raw, mode)
    p: ("r" in p, "b" if "b" in p else "f" if "f" in p else "u") for p in _STRING_PREFIXES
}


@functools.cache
def is_id_start(ch: str) -> bool:
    """Whether ``ch`` can start a Python identifier."""
    return ch.isidentifier()


@functools.cache
def is_id_continue(ch: str) -> bool:
    """Whether ``ch`` can continue a Python identifier."""
    return ("a" + ch).isidentifier()


class _NotIdentifier:
    """Follow-guard element: any character that is not an identifier character."""

    def __contains__(self, ch: str) -> bool:
        return not is_id_continue(ch)

    def __repr__(self) -> str:
        return "NOT_ID"


NOT_ID = _NotIdentifier()


def number_follow(ch: str) -> tuple | None:
    """The follow-guard after a number whose next character is ``ch``.

    ``()`` when ``ch`` is no identifier character (nothing to check), a tuple of allowed
    character sets for the characters that must come next, or ``None`` when ``ch`` makes the
    number an error. CPython's ``verify_end_of_number`` accepts a number directly followed by
    ``and else for or not`` (ending there) or by ``if in is`` (not checked further).
    """
    if not is_id_continue(ch):
        return ()
    if ch == "i":
        return (frozenset("fns"),)
    rest = _FOLLOW.get(ch)
    return None if rest is None else (*(frozenset(c) for c in rest), NOT_ID)


def follows(text: str, i: int, need: tuple) -> bool:
    """Whether ``text[i:]`` satisfies the follow-guard ``need`` (the end of the text is no
    identifier character)."""
    for k, allowed in enumerate(need):
        if i + k >= len(text):
            return all(a is NOT_ID for a in need[k:])
        if text[i + k] not in allowed:
            return False
    return True


class LexError(ValueError):
    """The text is not a sequence of Python lexemes (unterminated string, ``$``, ``0or`` …)."""


class LexemeDFA:
    """The lazily built union automaton of Python's lexemes (see the module docstring).

    Tables indexed by state id: ``accept`` (terminal class or ``None``), ``commit`` (CPython
    never backs up from this state), ``reach`` (terminals some extension can still produce, or
    :data:`IGNORE`), and per-state transition dicts. State 0 is the start (empty symbol).
    """

    def __init__(self):
        self._ids: dict[tuple, int] = {}
        self.descs: list[tuple] = []
        self.accept: list = []
        self.commit: list[bool] = []
        self.reach: list = []
        self.trans: list[dict] = []
        #: per state: 0 no f-string, 1 an f-string outside a field's expression, 2 inside one
        self.fstr: list[int] = []
        self.state(("start",))

    def state(self, desc: tuple) -> int:
        """The id of a state descriptor, creating the state's table entries the first time."""
        sid = self._ids.get(desc)
        if sid is None:
            sid = self._ids[desc] = len(self.descs)
            self.descs.append(desc)
            acc, commit, reach = _describe(desc)
            self.accept.append(acc)
            self.commit.append(commit)
            self.reach.append(reach)
            self.trans.append({})
            self.fstr.append(0 if desc[0] != "fstr" else 2 if desc[3][0] == "E" else 1)
        return sid

    def step(self, sid: int, ch: str) -> int:
        """Next state after ``ch`` (-1: no lexeme continues this way)."""
        table = self.trans[sid]
        got = table.get(ch)
        if got is None:
            desc = _delta(self.descs[sid], ch)
            got = table[ch] = -1 if desc is None else self.state(desc)
        return got

    def run(self, sid: int, text: str) -> int:
        """State after ``text`` from ``sid`` (-1 once no lexeme continues)."""
        for ch in text:
            sid = self.step(sid, ch)
            if sid < 0:
                break
        return sid

    @functools.cached_property
    def sip_states(self) -> tuple:
        """Every state some non-empty text reaches: what a middle may end inside (§V-B).

        Found by breadth-first search over ASCII plus three non-ASCII representatives (the
        automaton treats all non-ASCII characters alike up to identifier-ness). f-string
        states are left out (bracket nesting makes them unbounded; see the module
        docstring): each one ends in a right context where the plain string state with its
        quotes and phase does.
        """
        alphabet = [chr(i) for i in range(128)] + ["é", "€", "中"]
        seen = {0}
        frontier = [0]
        while frontier:
            nxt = []
            for s in frontier:
                for ch in alphabet:
                    t = self.step(s, ch)
                    if t >= 0 and t not in seen and self.descs[t][0] != "fstr":
                        seen.add(t)
                        nxt.append(t)
            frontier = nxt
        return tuple(sorted(seen - {0}))


def _describe(desc: tuple) -> tuple:
    """``(accept, commit, reach)`` of a state descriptor."""
    kind = desc[0]
    if kind == "start":
        return None, False, frozenset()
    if kind == "name":
        text = desc[1]
        if text is None:
            return ("NAME",), False, frozenset({"NAME"})
        reach = {"NAME"} | {w for w in _WORDS if w.startswith(text)}
        low = text.lower()
        if low in _STRING_PREFIXES:  # the prefixes it may still become: "r" -> rb (bytes), rf
            for prefix in (p for p in _STRING_PREFIXES if p.startswith(low)):
                bytes_ = "b" in prefix
                reach |= {"BYTES", "LONG_BYTES"} if bytes_ else {"STRING", "LONG_STRING"}
        if text in KEYWORDS:
            acc = (text,)
        elif text in SOFT_KEYWORDS:
            acc = (text, "NAME")
        else:
            acc = ("NAME",)
        return acc, False, frozenset(reach)
    if kind in ("str", "fstr"):
        return describe_string(desc[1][3], desc[2], desc[1][1] == "b")
    if kind == "num":
        return NUMBER_STATES[desc[1]]
    if kind == "op":
        text = desc[1]
        reach = {op for op in OPERATORS if op.startswith(text)}
        if text == ".":
            reach |= {"FLOAT_NUMBER", "IMAG_NUMBER"}
        return ((text,) if text in OPERATORS else None), False, frozenset(reach)
    if kind in ("comment", "cont"):
        return IGNORE, False, IGNORE
    if kind == "bs":
        return None, False, IGNORE
    raise AssertionError(desc)


def _delta(desc: tuple, ch: str) -> tuple | None:
    kind = desc[0]
    if kind == "start":
        return _from_start(ch)
    if kind == "name":
        return _from_name(desc[1], ch)
    if kind == "str":
        return from_string(desc[1], desc[2], ch)
    if kind == "fstr":
        return from_fstring(desc[1], desc[2], desc[3], ch)
    if kind == "num":
        return from_number(desc[1], ch)
    if kind == "op":
        return _from_operator(desc[1], ch)
    if kind == "comment":
        return None if ch in "\n\r" else desc
    if kind == "bs":
        return ("cont",) if ch == "\n" else None
    return None


def _name_state(text: str) -> tuple:
    return ("name", text if text in _NAME_PREFIXES else None)


def _from_start(ch: str) -> tuple | None:
    if is_id_start(ch):
        return _name_state(ch)
    if ch in DIGITS:
        return ("num", "zero" if ch == "0" else "dec")
    if ch in "'\"":
        return ("str", (False, "u", ch, False), "open")
    if ch == "#":
        return ("comment",)
    if ch == "\\":
        return ("bs",)
    if ch in _OP_PREFIXES:
        return ("op", ch)
    return None


def _from_name(text: str | None, ch: str) -> tuple | None:
    if is_id_continue(ch):
        return _name_state(text + ch) if text is not None else ("name", None)
    if ch in "'\"" and text is not None and text.lower() in _PREFIX_TEXT:
        raw, mode = _PREFIX_TEXT[text.lower()]
        if mode == "f":
            return ("fstr", (raw, mode, ch, False), "open", fstring.START)
        return ("str", (raw, mode, ch, False), "open")
    return None


def _from_operator(text: str, ch: str) -> tuple | None:
    if text == "." and ch in DIGITS:
        return ("num", "fracd")
    longer = text + ch
    return ("op", longer) if longer in _OP_PREFIXES else None


#: The shared automaton (its tables grow as new states are met).
dfa = LexemeDFA()
#: The state of a complete ``\\``-newline; CPython rejects one that ends the file.
CONTINUATION = dfa.state(("cont",))


class Lexeme(tuple):
    """``(kind, accept, start, end)``: kind is ``"tok"``, ``"ws"``, ``"nl"`` or ``"ignore"``."""

    __slots__ = ()

    kind = property(lambda self: self[0])
    accept = property(lambda self: self[1])
    start = property(lambda self: self[2])
    end = property(lambda self: self[3])


def lex_text(text: str, start: int = 0) -> Iterator[Lexeme]:
    """Lex a finished text from a clean symbol boundary, as CPython would.

    Longest match, except that a commit state passed after the last accepting position makes
    the text an error, and numbers obey :func:`number_follow`. Raises :class:`LexError`.
    """
    i, n = start, len(text)
    step, accept, commit = dfa.step, dfa.accept, dfa.commit
    while i < n:
        ch = text[i]
        if ch in " \t\f\r":
            yield Lexeme(("ws", None, i, i + 1))
            i += 1
            continue
        if ch == "\n":
            yield Lexeme(("nl", None, i, i + 1))
            i += 1
            continue
        state, j, last, last_state = 0, i, None, 0
        while j < n:
            state = step(state, text[j])
            if state < 0:
                break
            j += 1
            if accept[state] is not None:
                last, last_state = j, state
            elif commit[state]:
                last = None
        if last is None:
            raise LexError(f"no Python lexeme at offset {i}: {text[i : i + 20]!r}")
        acc = accept[last_state]
        if acc[0] in NUMBER_TERMINALS and last < n:
            need = number_follow(text[last])
            if need is None or not follows(text, last + 1, need):
                raise LexError(f"invalid number literal at offset {i}: {text[i : last + 3]!r}")
        yield Lexeme(("ignore" if acc is IGNORE else "tok", acc, i, last))
        i = last
