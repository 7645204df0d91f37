"""The grammar's literals as ids of one tokenizer (paper Appendix K): :class:`TokenTable`.

Every structural literal (``<program>``, ``<copy lines="``, ``"/>``, ``<gen>``, ``</gen>``,
``</program>``, the digits and ``-`` of a range) is encoded with the tokenizer itself, once per
tokenizer, with the byte strings of its whole vocabulary; the FSM (:mod:`cadlib.decoding.fsm`) and
the transcript work on these ids. Literals that a tokenizer splits into several tokens work
(SmolLM2: ``'</gen>' -> [9617, 1639, 46]``; Qwen2.5: ``[522, 4370, 29]``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from cadlib.escape import RESERVED
from cadlib.grammar import COPY_CLOSE, COPY_OPEN, GEN_CLOSE, GEN_OPEN, PROGRAM_CLOSE, PROGRAM_OPEN
from cadlib.vocab import token_bytes

__all__ = ["TokenTable", "token_table"]

_RESERVED_B = tuple(lit.encode() for lit in RESERVED)
_MAX_PARTIAL = max(map(len, _RESERVED_B)) - 1


def _split_specials(tok) -> dict:
    """``encode`` keyword arguments that read special-token text as plain text, if supported."""
    try:
        tok.encode("<|im_end|>", add_special_tokens=False, split_special_tokens=True)
        return {"split_special_tokens": True}
    except TypeError:
        return {}


@dataclass(eq=False)
class TokenTable:
    """The ids of the structural literals of one tokenizer (resolved once, Appendix K).

    Parameters
    ----------
    name : str
        The tokenizer's name, for labels.
    token_bytes : list of bytes
        The bytes of every id (length = tokenizer vocabulary ``V_tok``).
    encode : callable
        ``str -> list[int]`` without special tokens, special-token text read as text.
    special_ids : frozenset of int
        Ids never allowed in a ``<gen>`` body (EOS, chat markers, added tokens).
    eos_ids : tuple of int
        End-of-sequence ids; the
        :class:`~cadlib.decoding.generate_processor.GrammarLogitsProcessor` allows the first
        after ``</program>``.
    """

    name: str
    token_bytes: list[bytes] = field(repr=False)
    encode: object = field(repr=False)
    special_ids: frozenset = field(repr=False)
    eos_ids: tuple = ()

    def __post_init__(self):
        enc = self.encode
        self.program_open = tuple(enc(PROGRAM_OPEN + "\n"))
        self.gen_open_text = self._aligned_gen_open()
        #: the three op literals of AWAIT_OP
        self.op_literals = {
            "copy": tuple(enc(COPY_OPEN)),
            "gen": tuple(enc(self.gen_open_text)),
            "close": tuple(enc(PROGRAM_CLOSE)),
        }
        self.dash, self.copy_close = tuple(enc("-")), tuple(enc(COPY_CLOSE))
        self.newline, self.lt = tuple(enc("\n")), tuple(enc("<"))
        # the body ends with "</gen>\n" encoded as a whole: the ids up to the one completing
        # "</gen>" are the detector sequence, the rest (if any) is forced
        closing = tuple(enc(GEN_CLOSE + "\n"))
        m = self._ids_covering(closing, len(GEN_CLOSE))
        self.gen_close, self.after_gen_close = closing[:m], closing[m:]
        self.digits = {
            i: b.decode()
            for i, b in enumerate(self.token_bytes)
            if b.isdigit() and b.isascii() and i not in self.special_ids
        }
        self.trie = self._build_trie()
        self._check()

    # -- construction ------------------------------------------------------------------------

    def _ids_covering(self, ids: tuple, n_bytes: int) -> int:
        """The number of leading ``ids`` whose bytes first reach ``n_bytes`` bytes."""
        total = 0
        for k, i in enumerate(ids, start=1):
            total += len(self.token_bytes[i])
            if total >= n_bytes:
                return k
        return len(ids)

    def _aligned_gen_open(self) -> str:
        """``"<gen>\n"`` if the tokenizer never merges its newline into a body's first token
        (Qwen2.5: ``>\n`` is one id), else ``"<gen>"`` and the body starts with the newline
        (SmolLM2 merges ``"\n   "`` with the indentation that follows)."""
        opener = tuple(self.encode(GEN_OPEN + "\n"))
        probes = ("    x", "x", "\tx")
        aligned = all(
            tuple(self.encode(GEN_OPEN + "\n" + p))[: len(opener)] == opener for p in probes
        )
        return GEN_OPEN + "\n" if aligned else GEN_OPEN

    def _build_trie(self) -> dict:
        """``{prefix ids: {next id: set of literal names reachable}}`` of the op literals."""
        trie: dict[tuple, dict[int, set]] = {}
        for name, ids in self.op_literals.items():
            for k in range(len(ids)):
                trie.setdefault(ids[:k], {}).setdefault(ids[k], set()).add(name)
        return trie

    def _check(self) -> None:
        lits = list(self.op_literals.values())
        for a in lits:
            for b in lits:
                if a is not b and b[: len(a)] == a:
                    raise ValueError(f"{self.name}: op literal ids {a} prefix {b}")
        if {str(d) for d in range(10)} - set(self.digits.values()):
            raise ValueError(f"{self.name}: the tokenizer lacks single-digit tokens")
        for lit in (self.dash, self.copy_close):
            if lit[0] in self.digits:
                raise ValueError(f"{self.name}: literal ids {lit} start with a digit token")
        if not self.gen_close:
            raise ValueError(f"{self.name}: '</gen>' encodes to no ids")

    # -- text pieces of the transcript -------------------------------------------------------

    def _with_lookahead(self, text: str, following: tuple) -> tuple[int, ...]:
        """``encode(text)`` as tokenized *in front of* ``following`` (re-tokenized across the
        boundary, so e.g. a trailing-whitespace line splits as it would in running text)."""
        following_text = b"".join(self.token_bytes[i] for i in following).decode()
        ids = self.encode(text + following_text)
        if tuple(ids[len(ids) - len(following) :]) == following:
            return tuple(ids[: len(ids) - len(following)])
        return tuple(self.encode(text))

    @functools.lru_cache(maxsize=1024)  # noqa: B019 -- tables live for life; drafts and
    # the accounting's variants ask again for the same copies' ends
    def copy_end(self, copied: str | None) -> tuple[tuple[int, str], ...]:
        """``(id, kind)`` pairs from the end of a range on: ``"/>`` and the splice.

        ``'"/>' + "\n" + copied + "\n"`` is encoded as one text in front of the next ``<``,
        so the tokenizer's own boundaries hold on both sides (Qwen2.5 writes ``"/>\n`` as one
        id). The first id is the model's decision (it ends the range); ids inside ``"/>``
        are ``forced``, the others ``splice``. ``copied=None`` (program-only mode): just
        ``"/>`` and a newline, all forced.
        """
        tail = "\n" if copied is None else "\n" + copied + "\n"
        ids = self._with_lookahead(COPY_CLOSE + tail, self.lt)
        if not self.token_bytes[ids[0]].startswith(b'"') or ids[0] in self.digits:
            ids = self.copy_close + self._with_lookahead(tail, self.lt)  # keep "/> apart
        n_close = self._ids_covering(ids, len(COPY_CLOSE))
        rest = "forced" if copied is None else "splice"
        kinds = ["choice"] + ["forced"] * (n_close - 1) + [rest] * (len(ids) - n_close)
        return tuple(zip(ids, kinds, strict=True))

    def splice_ids(self, copied: str) -> tuple[int, ...]:
        """The spliced ids of a copy of ``copied`` (see :meth:`copy_end`)."""
        return tuple(i for i, k in self.copy_end(copied) if k == "splice")

    def body_ids(self, escaped: str) -> tuple[int, ...]:
        """Ids of a gen body: ``escaped + "\n"`` (after a newline if the opener lacks it),
        tokenized in front of ``</gen>\n``."""
        lead = "" if self.gen_open_text.endswith("\n") else "\n"
        return self._with_lookahead(lead + escaped + "\n", self.gen_close + self.after_gen_close)

    @functools.cached_property
    def longest_token(self) -> int:
        """Bytes of the longest token: text of more than ``k * longest_token`` bytes takes
        more than ``k`` ids."""
        return max(map(len, self.token_bytes))

    # -- gen-body masks ----------------------------------------------------------------------

    @functools.cached_property
    def _lt_ids(self) -> tuple[int, ...]:
        return tuple(i for i, b in enumerate(self.token_bytes) if b"<" in b)

    @functools.cached_property
    def _by_first(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for i, b in enumerate(self.token_bytes):
            if b:
                out.setdefault(b[0], []).append(i)
        return out

    @functools.cache  # noqa: B019 -- one table per tokenizer, kept for life
    def dangerous(self, tail: bytes) -> frozenset:
        """Ids whose bytes, appended to a body ending in ``tail``, complete a reserved literal.

        ``tail`` is the longest suffix of the body that is a proper prefix of a reserved
        literal. Only ids containing ``<`` or continuing such a prefix can complete one.
        """
        candidates = set(self._lt_ids)
        for k in range(1, len(tail) + 1):
            for lit in _RESERVED_B:
                if lit.startswith(tail[-k:]) and len(lit) > k:
                    candidates.update(self._by_first.get(lit[k], ()))
        tb = self.token_bytes
        return frozenset(i for i in candidates if any(lit in tail + tb[i] for lit in _RESERVED_B))

    @staticmethod
    def next_tail(tail: bytes, piece: bytes) -> bytes:
        """The longest suffix of ``tail + piece`` that is a proper prefix of a reserved literal."""
        s = (tail + piece)[-_MAX_PARTIAL:]
        for k in range(len(s), 0, -1):
            if any(lit.startswith(s[-k:]) for lit in _RESERVED_B):
                return s[-k:]
        return b""


_TABLES: dict[int, tuple[object, TokenTable]] = {}


def token_table(tokenizer) -> TokenTable:
    """The :class:`TokenTable` of a tokenizer, built once and cached.

    Accepts a Hugging Face tokenizer, a :class:`cadlib.models.tokenizer.Tokenizer` (e.g.
    ``qwen25_tokenizer()``, whose ids come from ``tiktoken``) or a ``TokenTable``.
    """
    if isinstance(tokenizer, TokenTable):
        return tokenizer
    if id(tokenizer) in _TABLES:  # keyed by identity (the wrappers are unhashable)
        return _TABLES[id(tokenizer)][1]
    inner = getattr(tokenizer, "hf", None) if hasattr(tokenizer, "_encode") else tokenizer
    if hasattr(inner, "decode_single_token_bytes"):  # tiktoken (Qwen2.5 BPE)
        tb = token_bytes(inner)
        special = frozenset(inner._special_tokens.values())
        eos = tuple(
            inner._special_tokens[t]
            for t in ("<|im_end|>", "<|endoftext|>")
            if t in inner._special_tokens
        )
        table = TokenTable(
            getattr(tokenizer, "name", "tiktoken"), tb, tokenizer.encode, special, eos
        )
    else:
        kw = _split_specials(inner)
        special = set(inner.all_special_ids) | set(inner.added_tokens_decoder)
        eos = () if inner.eos_token_id is None else (inner.eos_token_id,)
        table = TokenTable(
            getattr(inner, "name_or_path", type(inner).__name__),
            token_bytes(inner),
            lambda text: inner.encode(text, add_special_tokens=False, **kw),
            frozenset(special),
            eos,
        )
    _TABLES[id(tokenizer)] = (tokenizer, table)  # holding the object keeps its id unique
    return table
