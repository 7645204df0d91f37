"""f-string replacement fields with CPython 3.11's rules, one character at a time (§V).

Python 3.11 lexes an f-string as one ``STRING`` token (the tokenizer only finds its end, as
for any string) and parses its content afterwards (``Parser/string_parser.c``:
``fstring_find_literal``, ``fstring_find_expr``, ``fstring_compile_expr``). This module is
that second pass as a streaming state machine over the string's *content*, which
:mod:`cadlib.fim.lexer` runs beside the tokenizer's string states, so an f-string whose
replacement fields are broken is no lexeme and the FIM constraint rejects it like CPython.

These are **3.11's rules, not 3.12's** (PEP 701 made f-strings a grammar of tokens and lifted
the restrictions below):

* literal parts: ``{{`` and ``}}`` are braces, a single ``}`` is an error; a backslash escape
  (non-raw strings) consumes the next character, which still counts as a brace (``\\{``), and
  ``\\N{…}`` is skipped whole;
* an expression runs to a ``!``, ``:``, ``=`` or ``}`` outside brackets and nested strings
  (``!=``, ``==``, ``<=``, ``>=`` do not end it); brackets must match (at most 200 deep); it
  may hold strings in other quotes than the f-string's (the tokenizer ends the f-string at its
  own quote), but no backslash and no ``#`` anywhere, and it must not be blank;
* after the expression: ``=`` (self-documenting, then whitespace), ``!s`` / ``!r`` / ``!a``,
  then ``:`` and a format spec, then ``}``; a format spec is literal text and replacement
  fields up to its ``}`` (no ``{{`` escapes there), nested one level only
  (``f"{x:{y:{z}}}"`` is "expressions nested too deeply").

**The expression's own syntax** (CPython compiles ``(expression)``: ``{a b}``, ``{,a}``,
``{*a}``, ``{lambda x: x}`` are errors) is checked when a field's expression *ends* (its ``}``,
``:``, ``!`` + conversion or ``=`` is read), not in these states: keeping the expression's text
in the state made every character of an expression a new state, and the mask's lexical tables
(:mod:`cadlib.fim.tokenlex`) then walked the whole vocabulary at every step inside a field
(about two minutes a mask and millions of states with SmolLM2's tokenizer). Instead the
branching lexer keeps the f-string's text so far *beside* its automaton state (a branch's sixth
element, :mod:`cadlib.fim.branching`) and, when a step leaves an expression, asks
:func:`last_field_valid` (:func:`valid_expression` on the expression just closed); a right
context that finishes an f-string is checked whole (:func:`lexeme_fields_valid`). A prefix such
as ``{a b`` stays alive until its field ends (``{a b if c else d}`` is no more valid, but
``{x if y`` may still become ``{x if y != 1 else z}``), so no completable prefix is rejected.

States are hashable tuples (the lexer's automaton caches its transitions on them), few:
``("L", level, sub)`` in literal text at nesting ``level`` (0: the f-string, 1 and 2: format
specs), ``sub`` one of ``"" "esc" "N" "Nname" "{" "}"``; ``("E", level, seen, brackets,
quote, pending)`` inside an expression (whether a non-blank character was seen, the open
brackets, the nested string's ``(quote, kind)`` or ``None``, a one-character lookahead
``pending``); ``("Q", level)`` after a self-documenting ``=``; ``("V", level)`` expecting a
conversion character; ``("C", level)`` after one.
"""

from __future__ import annotations

import ast
import functools
import warnings

__all__ = [
    "START",
    "step",
    "can_end",
    "valid_expression",
    "MAX_BRACKETS",
    "closed_expressions",
    "last_field_valid",
    "lexeme_fields_valid",
    "split_lexeme",
]

#: State at the start of an f-string's content.
START = ("L", 0, "")
#: CPython 3.11's ``MAXLEVEL`` for brackets inside one replacement field.
MAX_BRACKETS = 200
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(")]}")
_BLANK = frozenset(" \t\n\f")  # what fstring_compile_expr skips before "empty expression"
_SPACE = frozenset(" \t\n\r\x0b\x0c")  # Py_ISSPACE, skipped after a self-documenting "="


@functools.lru_cache(maxsize=65536)
def valid_expression(text: str) -> bool:
    """Whether ``text`` is a replacement field's valid expression: not blank, and
    ``(text)`` parses (what ``fstring_compile_expr`` asks CPython's parser)."""
    if all(c in _BLANK for c in text):
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(f"({text})", mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


def can_end(state: tuple) -> bool:
    """Whether the f-string's content may end in ``state`` (top-level literal text)."""
    return state == START


def step(state: tuple, ch: str, raw: bool) -> tuple | None:
    """The state after the content character ``ch`` (``None``: an error for CPython 3.11);
    ``raw``: an ``rf``-string (a backslash is no escape in its literal text)."""
    kind = state[0]
    if kind == "L":
        return _literal(state[1], state[2], ch, raw)
    if kind == "E":
        return _expression(state, ch)
    level = state[1]
    if kind == "Q":
        if ch in _SPACE:
            return state
        return ("V", level) if ch == "!" else _after_conversion(level, ch)
    if kind == "V":
        return ("C", level) if ch in "sra" else None
    return _after_conversion(level, ch)  # "C"


def _after_conversion(level: int, ch: str) -> tuple | None:
    """After the expression (and its conversion): a format spec or the field's end."""
    if ch == ":":
        return ("L", level + 1, "")
    return ("L", level, "") if ch == "}" else None


def _literal(level: int, sub: str, ch: str, raw: bool) -> tuple | None:
    if sub == "":
        if ch == "\\" and not raw:
            return ("L", level, "esc")
        if ch in "{}":
            return _brace(level, ch)
        return ("L", level, "")
    if sub == "esc":
        if ch == "N":
            return ("L", level, "N")
        return _brace(level, ch) if ch in "{}" else ("L", level, "")
    if sub == "N":  # "\N" consumes the next character; "{" starts a name skipped whole
        return ("L", level, "Nname" if ch == "{" else "")
    if sub == "Nname":
        return ("L", level, "" if ch == "}" else "Nname")
    if sub == "{":  # level 0: "{{" is a brace, anything else starts an expression
        return ("L", 0, "") if ch == "{" else _expression(("E", 0, False, (), None, ""), ch)
    return ("L", 0, "") if ch == "}" else None  # sub "}": only "}}" is allowed


def _brace(level: int, ch: str) -> tuple | None:
    """A brace in literal text (escaped or not)."""
    if ch == "{":
        if level == 0:
            return ("L", 0, "{")
        return ("E", level, False, (), None, "") if level == 1 else None  # nested too deeply
    if level == 0:
        return ("L", 0, "}")
    return ("L", level - 1, "")  # "}" ends the format spec and its field


def _expression(state: tuple, ch: str) -> tuple | None:
    _, level, seen, brackets, quote, pending = state
    seen = seen or ch not in _BLANK
    if ch == "\\":
        return None
    if pending:
        if pending == "!" or pending == "=":
            if ch == "=":
                return ("E", level, True, brackets, None, "")
            if not state[2]:  # blank: "expression required before '!'"
                return None
            if pending == "!":
                return ("C", level) if ch in "sra" else None
            return step(("Q", level), ch, False)
        if pending == "<":
            if ch == "=":
                return ("E", level, seen, brackets, None, "")
        elif ch == pending:  # a closed empty string and its quote again: a triple quote
            return ("E", level, seen, brackets, (ch, "3"), "")
        # otherwise (a "<" or ">" without "=", an empty string) ch is read as usual
    if quote is not None:
        return _in_string(level, seen, brackets, quote, ch)
    if ch in "'\"":
        return ("E", level, seen, brackets, (ch, "1e"), "")
    if ch in _OPEN:
        if len(brackets) >= MAX_BRACKETS:
            return None
        return ("E", level, seen, brackets + (_OPEN[ch],), None, "")
    if ch == "#":
        return None
    if not brackets:
        if ch in "<>":
            return ("E", level, seen, brackets, None, "<")
        if ch in "!=":
            return ("E", level, state[2], brackets, None, ch)
        if ch in ":}":
            if not state[2]:  # blank: "empty expression not allowed"
                return None
            return _after_conversion(level, ch)
        if ch in _CLOSE:
            return None  # unmatched
    elif ch in _CLOSE:
        if ch != brackets[-1]:
            return None
        return ("E", level, seen, brackets[:-1], None, "")
    return ("E", level, seen, brackets, None, "")


def _in_string(level: int, seen: bool, brackets: tuple, quote: tuple, ch: str) -> tuple:
    """A character inside a string nested in an expression."""
    q, kind = quote
    if kind in ("1e", "1"):
        if ch == q:  # closed; an empty one may be the start of q*3
            return ("E", level, seen, brackets, None, q if kind == "1e" else "")
        return ("E", level, seen, brackets, (q, "1"), "")
    if ch != q:
        return ("E", level, seen, brackets, (q, "3"), "")
    if kind == "3b":
        return ("E", level, seen, brackets, None, "")
    return ("E", level, seen, brackets, (q, "3b" if kind == "3a" else "3a"), "")


def closed_expressions(content: str, raw: bool) -> list[str] | None:
    """The expressions of the replacement fields that end in an f-string's ``content`` (its
    text between the quotes, or a prefix of it), in order; ``None`` when the content breaks a
    structural rule (:func:`step` fails). An expression starts after its field's ``{`` and ends
    before the character that ends it (a ``!`` or ``=`` that turned out not to be ``!=`` /
    ``==`` is not part of it)."""
    state, start, out = START, 0, []
    for i, ch in enumerate(content):
        prev, state = state, step(state, ch, raw)
        if state is None:
            return None
        if state[0] == "E" and prev[0] != "E":
            start = i if prev == ("L", 0, "{") else i + 1
        elif prev[0] == "E" and state[0] != "E":
            out.append(content[start : i - 1 if prev[5] in ("!", "=") else i])
    return out


def split_lexeme(text: str) -> tuple[bool, str, str]:
    """``(raw, quote, content)`` of an f-string lexeme's text (finished or not): its prefix
    says raw or not, ``quote`` is its opening quote (one or three characters), ``content``
    what follows it (with the closing quote, when finished)."""
    prefix = text[: len(text) - len(text.lstrip("rRfF"))]
    rest = text[len(prefix) :]
    quote = rest[:3] if rest[:3] in ('"""', "'''") else rest[:1]
    return "r" in prefix.lower(), quote, rest[len(quote) :]


def last_field_valid(text: str) -> bool:
    """Whether the field that the last character of ``text`` (an f-string lexeme so far, inside
    its quotes) ended has a valid expression (:func:`valid_expression`); the lexer asks this
    when a step leaves an expression, so the earlier fields were asked already."""
    raw, _, content = split_lexeme(text)
    found = closed_expressions(content, raw)
    return bool(found) and valid_expression(found[-1])


def lexeme_fields_valid(text: str) -> bool:
    """Whether every replacement field of a finished f-string lexeme ``text`` has a valid
    expression (and the fields' structure holds)."""
    raw, quote, content = split_lexeme(text)
    if not content.endswith(quote) or len(content) < len(quote):
        return False
    found = closed_expressions(content[: len(content) - len(quote)], raw)
    return found is not None and all(valid_expression(e) for e in found)
