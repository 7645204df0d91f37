"""Allowed-token masks for a Hugging Face tokenizer (paper §III, Fig. 1: "legal tokens").

A token is allowed when the text it adds keeps :meth:`FIMConstraint.viable`; the end of the
middle (an end-of-sequence token, or whatever ends a ``<gen>`` body) is allowed when
:meth:`FIMConstraint.can_end`. Trying 49,152 tokens one by one costs ~50k forks and ~250k
character steps per decoding step; :class:`TokenTrie` shares the work:

* the vocabulary's texts form a character trie, numbered depth-first, so a subtree is a
  contiguous range of tokens; the character sets of subtrees are precomputed as bit masks (one
  bit per ASCII character, one for non-ASCII identifier characters, one for other non-ASCII
  characters), so that below a node where a symbol in progress absorbs every character
  (inside a string body, comment, identifier or number; spaces mid-line) the whole subtree is
  taken as one range (:meth:`TokenTrie._absorbed`, memoised per ``(node, absorbed
  characters)``);
* the trie is not walked with the constraint's charts: a branch's step depends on its chart
  and line only through a few parser operations, so per *lexical key* (the branch without
  chart and line) the trie is walked once, symbolically, into an operation trie with the
  tokens filed under its nodes (:mod:`cadlib.fim.tokenlex`); a mask evaluates the operation
  tries of the branches' keys on their charts (memoised scans and set tests) and takes the
  tokens of the nodes that succeed. These tables are shared by every constraint and step, and
  grow lazily, as charts need them;
* byte tokens are grouped by their whole characters once, at construction;
* an f-string field's expression is checked where it ends, with its text
  (:mod:`cadlib.fim.fstring`), which the chart-free tables cannot see: so where a token could
  end a field (:meth:`TokenTrie._field_candidates`: inside an f-string, a token holding ``}``,
  ``:``, ``!`` or ``=``; elsewhere, one that also opens an f-string and a field, a handful of
  SmolLM2's tokens) the tables' answer is re-checked by feeding the token
  (:meth:`TokenTrie._fstring_fields`). Everywhere else no field can end within a token and the
  tables are exact.

Byte-level BPE tokens that are not valid UTF-8 on their own carry pieces of a multi-byte
character. The decoder keeps the *pending* bytes of an unfinished character and feeds the
constraint only whole characters (:class:`cadlib.fim.logits.IncrementalMask`). Such a token is
allowed when the pending bytes plus the token's bytes are valid UTF-8 up to an unfinished
character, the whole characters among them keep the state viable, and (approximation: the
unfinished character is not known yet) so does a non-ASCII letter (``"é"``) standing for it.

The masks that apply this to a model's logits are :mod:`cadlib.fim.logits`'.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from cadlib.fim import fstring
from cadlib.vocab import token_texts, token_texts_cached

from .constraint import FIMConstraint
from .lexer import dfa
from .tokenlex import LexTables, char_bit

__all__ = [
    "TokenTrie",
    "token_texts",
    "allowed_mask",
    "naive_allowed_mask",
    "end_ids",
    "utf8_split",
    "utf8_prefix",
    "token_raw",
    "byte_token_viable",
    "PendingBytes",
]

_PARTIAL = "é"
_FIELD_END = "}:!="  # the characters that may end an f-string field's expression
_OPENS_FSTRING = re.compile(r"[fF][rR]?['\"]|[rR][fF]['\"]")  # an f-string's prefix and quote
_FSTRING_PREFIXES = frozenset({"f", "r", "fr", "rf"})  # a name that a quote may make one


class TokenTrie:
    """Character trie over token texts, numbered depth-first (see the module docstring).

    Parameters
    ----------
    texts
        ``texts[token_id]`` as from :func:`token_texts`.
    """

    def __init__(self, texts: list):
        self.size = len(texts)
        self.byte_tokens = [(i, t) for i, t in enumerate(texts) if isinstance(t, bytes)]
        children: list[dict] = [{}]
        ends: list[list] = [[]]
        for tid, text in enumerate(texts):
            if not isinstance(text, str) or not text:
                continue
            node = 0
            for ch in text:
                nxt = children[node].get(ch)
                if nxt is None:
                    nxt = len(children)
                    children[node][ch] = nxt
                    children.append({})
                    ends.append([])
                node = nxt
            ends[node].append(tid)
        self.children = [list(c.items()) for c in children]
        self.ends = ends
        self._number()
        # per node: (char, char bit, (child,)) — the edge list the walk steps through
        self.edges = [
            [(ch, char_bit(ch), (child,)) for ch, child in kids] for kids in self.children
        ]
        self._absorbed_memo: dict = {}
        self.tables = LexTables(self)
        groups: dict = {}  # byte tokens by (whole characters, unfinished?): one trial each
        for tid, raw in self.byte_tokens:
            split = utf8_split(raw)
            if split is not None:
                groups.setdefault((split[0], bool(split[1])), []).append(tid)
        self.byte_groups = [(key, np.array(tids, dtype=np.int64)) for key, tids in groups.items()]
        self.texts = texts
        # token ids that may end an f-string field (see _field_candidates)
        strs = [t if isinstance(t, str) else "" for t in texts]
        ends = [any(c in t for c in _FIELD_END) for t in strs]
        quoted = [
            e and "{" in t and ("'" in t or '"' in t) for t, e in zip(strs, ends, strict=True)
        ]
        inside = [
            q and _OPENS_FSTRING.search(t) is not None for t, q in zip(strs, quoted, strict=True)
        ]
        self.field_enders = np.flatnonzero(ends)
        self.field_openers = np.flatnonzero(quoted)
        self.field_openers_inside = np.flatnonzero(inside)

    def _number(self) -> None:
        """Depth-first token order, subtree ranges and subtree character masks."""
        n = len(self.children)
        self.lo = [0] * n
        self.hi = [0] * n
        self.chars = [0] * n
        order: list[int] = []
        stack = [(0, False)]
        while stack:
            node, done = stack.pop()
            if done:
                self.hi[node] = len(order)
                bits = 0
                for ch, child in self.children[node]:
                    bits |= char_bit(ch) | self.chars[child]
                self.chars[node] = bits
                continue
            self.lo[node] = len(order)
            order.extend(self.ends[node])
            stack.append((node, True))
            for _, child in reversed(self.children[node]):
                stack.append((child, False))
        self.order = np.array(order, dtype=np.int64)

    @classmethod
    @functools.cache
    def for_tokenizer(cls, tokenizer) -> TokenTrie:
        """The trie of a tokenizer (cached per tokenizer object)."""
        return cls(token_texts(tokenizer))

    def allowed(self, constraint: FIMConstraint, pending: bytes = b"") -> np.ndarray:
        """Boolean mask over token ids: the token's text keeps ``constraint`` viable.

        ``pending`` are the bytes of an unfinished character already generated (then only
        tokens that continue it are candidates).
        """
        mask = np.zeros(self.size, dtype=bool)
        if not constraint.branches:
            return mask
        if pending:
            for tid, raw in self.byte_tokens:
                mask[tid] = byte_token_viable(constraint, raw, pending)
            return mask
        self._cover(mask, self.tables.allowed(constraint._problem.lexer, constraint.branches))
        self._fstring_fields(mask, constraint)
        self._byte_tokens(mask, constraint)
        return mask

    def _field_candidates(self, constraint: FIMConstraint) -> np.ndarray:
        """The ids of the tokens that may end an f-string field's expression from
        ``constraint``'s state (what the chart-free tables cannot judge). From a branch inside
        an f-string: tokens with ``}``, ``:``, ``!`` or ``=``; from one whose ``!`` or ``=``
        may end the expression at the token's first character (``{a!`` then ``r}``): those
        too if the expression so far is valid, else every token; from a name that a quote
        would make an f-string's prefix (``f``, ``r``, ``fr``, ``rf``): tokens that also hold
        ``{`` and a quote; from any other branch: tokens that also open an f-string
        themselves (``f"``, ``rf'`` …)."""
        parts = []
        for branch in constraint.branches:
            sip, ftext = branch[1], branch[5]
            kind = dfa.fstr[sip]
            if not kind:
                desc = dfa.descs[sip]
                prefix = desc[0] == "name" and (desc[1] or "").lower() in _FSTRING_PREFIXES
                parts.append(self.field_openers if prefix else self.field_openers_inside)
            elif kind == 2 and dfa.descs[sip][3][5] in ("!", "="):
                probe = ftext + ("r" if dfa.descs[sip][3][5] == "!" else "}")
                if not fstring.last_field_valid(probe):
                    return np.arange(self.size)
                parts.append(self.field_enders)
            else:
                parts.append(self.field_enders)
        return parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))

    def _fstring_fields(self, mask: np.ndarray, constraint: FIMConstraint) -> None:
        """Stage 2b of :meth:`allowed`: the tokens the tables allow that may end an f-string
        field are fed on their own (the expression's syntax needs its text; see the module
        docstring)."""
        candidates = self._field_candidates(constraint)
        texts = self.texts
        for tid in candidates[mask[candidates]]:
            text = texts[tid]
            if isinstance(text, str):
                mask[tid] = constraint.fork().feed(text)

    def _cover(self, mask: np.ndarray, parts: list) -> None:
        """Stage 2 of :meth:`allowed`: the token ids of :meth:`LexTables.allowed
        <cadlib.fim.tokenlex.LexTables.allowed>` into ``mask``, those handed to a boundary
        table only where their first character is kept."""
        plain = [a for arrays, keep in parts if keep is None for a in arrays]
        if plain:
            mask[np.concatenate(plain)] = True
        for arrays, keep in parts:
            if keep is not None and arrays:
                ids = np.concatenate(arrays)
                mask[ids[keep[ids]]] = True

    def _byte_tokens(self, mask: np.ndarray, constraint: FIMConstraint) -> None:
        """Stage 3 of :meth:`allowed`: tokens holding part of a multi-byte character, one
        trial per group of equal whole characters."""
        for (text, unfinished), tids in self.byte_groups:
            trial = constraint.fork()
            mask[tids] = trial.feed(text) and (not unfinished or trial.feed(_PARTIAL))

    def _absorbed(self, node: int, bits: int) -> tuple:
        """What a state that every character of ``bits`` leaves unchanged accepts below
        ``node`` without stepping (memoised per ``(node, bits)``): ``(range starts, range
        ends, single tokens, frontier)``; the frontier lists the edges ``(char, bit,
        children)`` leaving the absorbed paths, grouped by character."""
        key = (node, bits)
        got = self._absorbed_memo.get(key)
        if got is not None:
            return got
        edges, ends, chars, lo, hi = self.edges, self.ends, self.chars, self.lo, self.hi
        los: list = []
        his: list = []
        singles: list = []
        frontier: dict = {}
        stack = [node]
        while stack:
            for ch, cbit, (child,) in edges[stack.pop()]:
                if cbit & bits:
                    if chars[child] & ~bits:
                        singles.extend(ends[child])
                        stack.append(child)
                    else:
                        los.append(lo[child])
                        his.append(hi[child])
                else:
                    frontier.setdefault((ch, cbit), []).append(child)
        got = (
            los,
            his,
            singles,
            [(ch, cbit, tuple(kids)) for (ch, cbit), kids in frontier.items()],
        )
        self._absorbed_memo[key] = got
        return got


def token_raw(text: str | bytes) -> bytes:
    """The bytes a token adds, from its :func:`token_texts` entry (``str`` or ``bytes``)."""
    return text if isinstance(text, bytes) else text.encode("utf-8")


def utf8_prefix(raw: bytes) -> tuple[str, bytes, bool]:
    """``(text, rest, valid)``: the whole characters of ``raw`` before its first undecodable
    byte, the bytes from there on, and whether ``rest`` is only an unfinished last character
    (``False``: ``raw`` holds invalid UTF-8)."""
    try:
        return raw.decode("utf-8"), b"", True
    except UnicodeDecodeError as err:
        head, rest = raw[: err.start], raw[err.start :]
        return head.decode("utf-8"), rest, err.reason == "unexpected end of data"


def utf8_split(raw: bytes) -> tuple | None:
    """``(text, unfinished)``: the whole characters of ``raw`` and the bytes of an unfinished
    last character, or ``None`` when ``raw`` is not valid UTF-8 up to its end."""
    text, rest, valid = utf8_prefix(raw)
    return (text, rest) if valid else None


class PendingBytes:
    """Generated token texts to whole characters: keeps the bytes of an unfinished multi-byte
    character between tokens (the one home of this for
    :class:`cadlib.fim.logits.IncrementalMask`, so for
    :class:`~cadlib.fim.logits.FIMLogitsProcessor` and chapter 8's ``<gen>`` body mask,
    :class:`cadlib.chapters.fim_constraint.run_edits.GenBodyMask`)."""

    def __init__(self):
        self.bytes = b""

    def __bool__(self) -> bool:
        return bool(self.bytes)

    def push(self, text: str | bytes) -> str | None:
        """The whole characters that ``text`` (a :func:`token_texts` entry) completes, keeping
        an unfinished last character; ``None`` (and nothing kept) on invalid UTF-8, which only
        an unmasked token can produce: the caller's constraint is then dead."""
        chars, rest, valid = utf8_prefix(self.bytes + token_raw(text))
        self.bytes = rest if valid else b""
        return chars if valid else None


def byte_token_viable(constraint: FIMConstraint, raw: bytes, pending: bytes = b"") -> bool:
    """Whether a token's bytes, after ``pending`` bytes, keep the constraint viable (see the
    module docstring for the stand-in of an unfinished character)."""
    split = utf8_split(pending + raw)
    if split is None:
        return False
    text, rest = split
    trial = constraint.fork()
    return trial.feed(text) and (not rest or trial.feed(_PARTIAL))


def allowed_mask(
    constraint: FIMConstraint, tokenizer, end_token_ids=None, pending: bytes = b""
) -> np.ndarray:
    """Allowed tokens of ``tokenizer`` for ``constraint``; ``end_token_ids`` (default: the
    tokenizer's EOS) are allowed exactly when :meth:`FIMConstraint.can_end` and no character
    is unfinished."""
    mask = TokenTrie.for_tokenizer(tokenizer).allowed(constraint, pending)
    ends = end_ids(tokenizer, end_token_ids)
    mask[ends] = constraint.can_end() and not pending
    return mask


def end_ids(tokenizer, end_token_ids=None) -> list:
    """The ids that end a middle: ``end_token_ids``, or the tokenizer's EOS when ``None``."""
    if end_token_ids is None:
        end_token_ids = [tokenizer.eos_token_id]
    return [int(i) for i in end_token_ids]


def naive_allowed_mask(
    constraint: FIMConstraint, tokenizer, end_token_ids=None, token_ids=None, pending: bytes = b""
) -> np.ndarray:
    """The same mask by forking and feeding every token separately (the baseline the trie
    replaces; ``token_ids`` restricts it to a sample)."""
    all_texts = token_texts_cached(tokenizer)
    mask = np.zeros(len(all_texts), dtype=bool)
    ids = range(len(all_texts)) if token_ids is None else token_ids
    for tid in ids:
        text = all_texts[tid]
        if text is None or text == "":
            continue
        raw = token_raw(text)
        if pending or isinstance(text, bytes):
            mask[tid] = byte_token_viable(constraint, raw, pending)
        else:
            mask[tid] = constraint.fork().feed(text)
    ends = end_ids(tokenizer, end_token_ids)
    if token_ids is None or set(ends) & set(token_ids):
        mask[ends] = constraint.can_end() and not pending
    return mask
