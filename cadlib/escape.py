"""Reserved-literal escape for ``<gen>`` bodies (paper §2.2, Appendix I).

The five reserved substrings of the grammar are mapped to look-alike Unicode entities
(U+27E8 ``⟨`` for ``<``, U+27E9 ``⟩`` for ``>``, U+2024 ``․`` for ``/``) before a text is
placed in a ``<gen>`` body, and mapped back by the resolver. Both directions are single
left-to-right passes (one regular expression each), longest literal first, exactly as the
paper's ``str.replace`` chain on every input that contains no entity character.

Extension beyond the paper (needed for a byte-exact round trip on *every* text): the
paper's scheme is injective only on inputs free of the entities, so a gold text that
already contains, say, ``⟨gen⟩`` would come back as ``<gen>``. Every entity starts with
``⟨``, so we escape that one character by doubling it (``⟨`` → ``⟨⟨``). On entity-free
text this changes nothing, so the paper's form is kept wherever it suffices.
"""

from __future__ import annotations

import re

__all__ = ["RESERVED", "ENTITIES", "encode_gen_body", "decode_gen_body"]

LT, GT, SLASH = "\u27e8", "\u27e9", "\u2024"

#: The reserved substrings of the grammar (paper §2.2), longest first.
RESERVED: tuple[str, ...] = ("</program>", "</copy>", "</gen>", "<copy", "<gen>")

#: Reserved literal -> its entity form.
ENTITIES: dict[str, str] = {
    lit: lit.replace("<", LT).replace(">", GT).replace("/", SLASH) for lit in RESERVED
}

_ENCODE = {**ENTITIES, LT: LT + LT}
_DECODE = {v: k for k, v in _ENCODE.items()}


def _alternation(keys) -> re.Pattern:
    return re.compile("|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True)))


_ENCODE_RE = _alternation(_ENCODE)
_DECODE_RE = _alternation(_DECODE)


def encode_gen_body(text: str) -> str:
    """Escape ``text`` so that it can sit inside a ``<gen>`` body without ending it."""
    return _ENCODE_RE.sub(lambda m: _ENCODE[m.group()], text)


def decode_gen_body(body: str) -> str:
    """Invert :func:`encode_gen_body`: ``decode_gen_body(encode_gen_body(s)) == s`` for all s.

    A lone ``⟨`` that starts no entity (a body written by hand or by a model) is kept as is.
    """
    return _DECODE_RE.sub(lambda m: _DECODE[m.group()], body)
