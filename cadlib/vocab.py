"""Token id -> bytes / text tables of a tokenizer's whole vocabulary (paper App. K).

Both token-level constraints need to know what each id adds to the text: the Copy-as-Decode
FSM (:mod:`cadlib.decoding.fsm`: bytes, to find the structural literals and digits) and the FIM
constraint's mask (:mod:`cadlib.fim.mask`: text, with the pieces of a multi-byte character
kept as bytes). One home for the reading of a vocabulary:

* :func:`byte_decoder` — GPT-2's byte-level alphabet, inverted (the printable stand-in
  characters of byte-level BPE -> the bytes they stand for);
* :func:`token_bytes` — the bytes of every id of a ``tiktoken`` encoding or a Hugging Face
  tokenizer (byte-level BPE or SentencePiece), special tokens as their own text;
* :func:`token_texts` (and :func:`token_texts_cached`) — the text every id adds: ``str``,
  ``bytes`` for a piece of a multi-byte character, ``None`` for a special token.

The two tables answer different questions and differ on purpose where the FSM and the mask
always did: :func:`token_bytes` gives special tokens their text (the FSM bans them by id) and
maps a byte-level piece with a character outside the alphabet to zero bytes;
:func:`token_texts` gives special ids ``None`` and decodes such a piece with the tokenizer.
"""

from __future__ import annotations

import functools

__all__ = ["byte_decoder", "token_bytes", "token_texts", "token_texts_cached"]


@functools.cache
def byte_decoder() -> dict:
    """GPT-2's byte-level alphabet, inverted (printable stand-ins → bytes); the inverse of
    ``transformers.convert_slow_tokenizer.bytes_to_unicode()``."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def _hf_token_bytes(tok) -> list[bytes]:
    """Bytes of every id of a Hugging Face tokenizer (byte-level BPE or SentencePiece)."""
    pieces = tok.convert_ids_to_tokens(list(range(len(tok))))
    decoder = str(getattr(getattr(tok, "backend_tokenizer", None), "decoder", ""))
    special = set(tok.all_special_tokens) | {str(t) for t in tok.added_tokens_decoder.values()}
    if "ByteLevel" in decoder:
        byte_of = byte_decoder()
        return [p.encode() if p in special else bytes(byte_of.get(c, 0) for c in p) for p in pieces]
    out = []
    for p in pieces:  # SentencePiece: "▁" is a space, "<0x0A>" a byte
        if p.startswith("<0x") and p.endswith(">") and len(p) == 6:
            out.append(bytes([int(p[3:5], 16)]))
        else:
            out.append(p.replace("\u2581", " ").encode())
    return out


def token_bytes(tokenizer) -> list[bytes]:
    """The bytes of every id: ``tokenizer`` is a ``tiktoken`` encoding (e.g. Qwen2.5 BPE, its
    special tokens included) or a Hugging Face tokenizer."""
    if hasattr(tokenizer, "decode_single_token_bytes"):  # tiktoken
        return [tokenizer.decode_single_token_bytes(i) for i in range(tokenizer.n_vocab)]
    return _hf_token_bytes(tokenizer)


def token_texts(tokenizer) -> list:
    """The text each token id adds: ``str``, ``None`` for special tokens, or ``bytes`` when the
    token is part of a multi-byte character (byte-level BPE)."""
    special = set(getattr(tokenizer, "all_special_ids", []))
    pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    decoder = byte_decoder()
    out: list = []
    for i, piece in enumerate(pieces):
        if i in special or piece is None:
            out.append(None)
            continue
        if all(ch in decoder for ch in piece):
            raw = bytes(decoder[ch] for ch in piece)
            try:
                out.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                out.append(raw)
        else:  # not a byte-level vocabulary entry
            out.append(tokenizer.convert_tokens_to_string([piece]))
    return out


@functools.cache
def token_texts_cached(tokenizer) -> list:
    """:func:`token_texts`, cached per tokenizer object."""
    return token_texts(tokenizer)
