"""The automata of Python's literal lexemes: numbers and strings, f-strings included (§V).

:class:`cadlib.fim.lexer.LexemeDFA` is the union of every lexeme's automaton; its states are
descriptors (``("num", phase)``, ``("str", kind, phase)``, ``("fstr", kind, phase,
fstring_state)``) and this module holds the transitions of the literal ones, the lexer's largest
part: :func:`from_number`, :func:`from_string`, :func:`from_fstring`, and what their states
accept (:data:`NUMBER_STATES`, :func:`describe_string`). Names, operators, comments and the
union itself stay in :mod:`cadlib.fim.lexer`.

CPython's lexing of literals, where it differs from leftmost-longest matching (§V footnote 3):

* *commit* states: once CPython has read ``0x``/``0o``/``0b``, an ``_`` inside a number, or an
  exponent sign, it never backs up (``0or 1`` is an error, not ``0 or 1``);
* a string's ``kind`` is ``(raw, mode, quote, triple)`` (mode ``u``, ``b`` or ``f``): bytes take
  only ASCII; ``\\x``, ``\\u``, ``\\U`` and ``\\N{…}`` escapes must be complete in non-raw
  strings (the name inside ``\\N{…}`` is not looked up);
* f-strings: the string states run beside :mod:`cadlib.fim.fstring`'s parse of the content
  (replacement fields with CPython 3.11's rules); the quotes that may close a triple-quoted
  f-string are held back until a non-quote shows they were content.
"""

from __future__ import annotations

from cadlib.fim import fstring

__all__ = [
    "NUMBER_TERMINALS",
    "DIGITS",
    "NUMBER_STATES",
    "from_number",
    "describe_string",
    "from_string",
    "from_fstring",
]

NUMBER_TERMINALS = (
    "DEC_NUMBER",
    "HEX_NUMBER",
    "OCT_NUMBER",
    "BIN_NUMBER",
    "FLOAT_NUMBER",
    "IMAG_NUMBER",
)
DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_ALL_NUMBERS = frozenset(NUMBER_TERMINALS)
#: number phase -> (accept, commit, reach)
NUMBER_STATES = {
    "zero": (("DEC_NUMBER",), False, _ALL_NUMBERS),
    "zero_": (None, True, _ALL_NUMBERS),
    "zdigits": (None, False, _ALL_NUMBERS),
    "zdigits_": (None, True, _ALL_NUMBERS),
    "dec": (("DEC_NUMBER",), False, _ALL_NUMBERS),
    "dec_": (None, True, _ALL_NUMBERS),
    "frac": (("FLOAT_NUMBER",), False, _ALL_NUMBERS),
    "fracd": (("FLOAT_NUMBER",), False, _ALL_NUMBERS),
    "fracd_": (None, True, _ALL_NUMBERS),
    "exp": (None, False, _ALL_NUMBERS),
    "exps": (None, True, _ALL_NUMBERS),
    "expd": (("FLOAT_NUMBER",), False, _ALL_NUMBERS),
    "expd_": (None, True, _ALL_NUMBERS),
    "imag": (("IMAG_NUMBER",), False, _ALL_NUMBERS),
    **{f"{r}0": (None, True, _ALL_NUMBERS) for r in ("hex", "oct", "bin")},
    **{f"{r}_": (None, True, _ALL_NUMBERS) for r in ("hex", "oct", "bin")},
    "hex": (("HEX_NUMBER",), False, _ALL_NUMBERS),
    "oct": (("OCT_NUMBER",), False, _ALL_NUMBERS),
    "bin": (("BIN_NUMBER",), False, _ALL_NUMBERS),
}
_RADIX_DIGITS = {"hex": _HEX, "oct": frozenset("01234567"), "bin": frozenset("01")}


def from_number(phase: str, ch: str) -> tuple | None:
    """The number state after ``ch`` in ``phase`` (``None``: no number continues this way)."""

    def to(p):
        return ("num", p)

    if phase in ("zero", "zero_"):
        if ch == "0":
            return to("zero")
        if ch in DIGITS:
            return to("zdigits")
        if phase == "zero_":
            return None
        if ch == "_":
            return to("zero_")
        if ch in "xXoObB":
            return to({"x": "hex0", "o": "oct0", "b": "bin0"}[ch.lower()])
        return _after_integer(ch)
    if phase in ("zdigits", "dec"):
        if ch in DIGITS:
            return to(phase)
        if ch == "_":
            return to(phase + "_")
        return _after_integer(ch)
    if phase in ("zdigits_", "dec_", "fracd_", "expd_"):
        return to(phase[:-1]) if ch in DIGITS else None
    if phase in ("frac", "fracd"):
        if ch in DIGITS:
            return to("fracd")
        if ch == "_" and phase == "fracd":
            return to("fracd_")
        return to("exp") if ch in "eE" else to("imag") if ch in "jJ" else None
    if phase == "exp":
        return to("expd") if ch in DIGITS else to("exps") if ch in "+-" else None
    if phase == "exps":
        return to("expd") if ch in DIGITS else None
    if phase == "expd":
        if ch in DIGITS:
            return to("expd")
        return to("expd_") if ch == "_" else to("imag") if ch in "jJ" else None
    if phase == "imag":
        return None
    radix = phase.rstrip("0_")
    digits = _RADIX_DIGITS[radix]
    if ch in digits:
        return to(radix)
    if ch == "_" and not phase.endswith("_"):
        return to(radix + "_")
    return None


def _after_integer(ch: str) -> tuple | None:
    if ch == ".":
        return ("num", "frac")
    if ch in "eE":
        return ("num", "exp")
    if ch in "jJ":
        return ("num", "imag")
    return None


def describe_string(triple: bool, phase, is_bytes: bool = False) -> tuple:
    """``(accept, commit, reach)`` of a string state (plain or f-string) by its quotes
    (``triple``) and phase. A bytes literal is its own terminal (``BYTES``, ``LONG_BYTES``):
    CPython rejects an implicit concatenation of bytes and text literals ("cannot mix bytes
    and nonbytes literals"), so the grammar keeps the two kinds apart."""
    short, long = ("BYTES", "LONG_BYTES") if is_bytes else ("STRING", "LONG_STRING")
    if phase == "done":
        acc = (long,) if triple else (short,)
        return acc, False, frozenset(acc)
    if phase == "q2":  # '' : the empty string, or the start of ''' …
        return (short,), False, frozenset({short, long})
    if phase == "open":
        return None, True, frozenset({short, long})
    return None, True, frozenset({long if triple else short})


def from_string(kind: tuple, phase, ch: str) -> tuple | None:
    """The string state after ``ch`` (``kind``: raw, mode, quote, triple; ``None``: the string
    breaks)."""
    raw, mode, quote, triple = kind
    if mode == "b" and ord(ch) > 127:
        return None

    def go(p, k=kind):
        return ("str", k, p)

    if phase == "done":
        return None
    if phase == "open":
        if ch == quote:
            return go("q2")
        return _string_body(kind, "body", ch)
    if phase == "q2":
        return go("tbody", (raw, mode, quote, True)) if ch == quote else None
    if isinstance(phase, tuple):  # ("hex", n) or ("nname", started)
        if phase[0] == "hex":
            if ch not in _HEX:
                return None
            return go("tbody" if triple else "body") if phase[1] == 1 else go(("hex", phase[1] - 1))
        if ch == "}":
            return go("tbody" if triple else "body") if phase[1] else None
        if ch == "\n" and not triple:
            return None
        return go(("nname", True))
    if phase == "nbrace":
        return go(("nname", False)) if ch == "{" else None
    if phase == "esc":
        if raw:
            return go("tbody" if triple else "body")
        if ch == "x":
            return go(("hex", 2))
        if mode != "b" and ch in "uUN":
            return go(("hex", 4)) if ch == "u" else go(("hex", 8)) if ch == "U" else go("nbrace")
        return go("tbody" if triple else "body")
    return _string_body(kind, phase, ch)


_HELD = {"tq1": 1, "tq2": 2}  # quotes a triple-quoted string's phase holds back


def from_fstring(kind: tuple, phase, fs: tuple, ch: str) -> tuple | None:
    """The tokenizer's string step, and :func:`cadlib.fim.fstring.step` on the content (the
    quotes a triple-quoted string may be closing are fed once a non-quote follows)."""
    tok = from_string(kind, phase, ch)
    if tok is None:
        return None
    _, kind2, phase2 = tok
    if phase2 == "done":
        return ("fstr", kind2, "done", fs) if fstring.can_end(fs) else None
    if phase == "q2" or phase2 == "q2" or phase2 in _HELD:  # no content yet, or held quotes
        return ("fstr", kind2, phase2, fs)
    return _feed_fstring(kind2, phase2, fs, kind[2] * _HELD.get(phase, 0) + ch)


def _feed_fstring(kind: tuple, phase, fs: tuple, text: str) -> tuple | None:
    """``("fstr", kind, phase, state)`` after feeding ``text`` to the content's parse."""
    for c in text:
        fs = fstring.step(fs, c, kind[0])
        if fs is None:
            return None
    return ("fstr", kind, phase, fs)


def _string_body(kind: tuple, phase: str, ch: str) -> tuple | None:
    raw, mode, quote, triple = kind
    if ch == "\\":
        return ("str", kind, "esc")
    if not triple:
        if ch == quote:
            return ("str", kind, "done")
        return None if ch == "\n" else ("str", kind, "body")
    if ch != quote:
        return ("str", kind, "tbody")
    return ("str", kind, {"tbody": "tq1", "tq1": "tq2", "tq2": "done"}[phase])
