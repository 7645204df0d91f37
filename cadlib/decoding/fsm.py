r"""The token-level FSM of the two-primitive grammar (paper §2.3, Appendix "States").

The FSM works on token ids of one tokenizer and one document. Its id table
(:class:`TokenTable`) is resolved once per tokenizer: every structural literal is encoded with
the tokenizer itself, so literals that it splits into several tokens work (SmolLM2:
``'</gen>' -> [9617, 1639, 46]``; Qwen2.5: ``[522, 4370, 29]``).

States, as in the paper (``op`` below is the index of the op being decoded):

* ``AWAIT_OP`` — at an op boundary; the mask holds the first ids of the three op literals
  ``<copy lines="``, ``<gen>`` and ``</program>`` (``{<, </}`` on SmolLM2 and Qwen2.5; no
  ``</program>`` before the first op).
* ``AFTER_LT`` — inside that literal trie after a branching token (``{copy, gen}``).
* ``COPY_LINES`` — the range ``i-j``, digit token by digit token. Beyond the paper, only
  ``1 <= i <= j <= n_lines`` can be spelled: a digit token is allowed iff the digits so far
  stay a prefix of such a number (multi-digit tokens included), ``-``/``"/>`` iff the number
  is complete. Every program resolves in strict mode.
* ``GEN_BODY`` — free generation; ends when the ids of ``</gen>`` appear *as that exact id
  sequence*. A token is masked if it would make the body text contain any reserved literal
  of :mod:`cadlib.escape` (``</gen>`` spelled with other tokens, ``<copy``, ...), and special
  tokens (EOS included) are masked, so EOS never ends a program mid-op.
* ``CLOSE`` — ``</program>``; then ``DONE``.

A state whose mask holds a single id is *forced*: the decoder appends forced ids without a
model decision, so the fixed tails of each literal (``copy lines="``, ``gen>``,
``program>``, the rest of a range when ``n_lines`` leaves one choice) and the copied text
are fed in one forward.

**The transcript** — the exact id sequence the decoder produces, which SFT trains on — is
rendered by :func:`transcript`. As text it is always::

    <program>\n
    <copy lines="i-j"/>\n{lines i..j}\n          (the copied lines: spliced)
    <gen>\n{escaped body}\n</gen>\n
    </program>

so removing the tag literals (and the newline that ends each tag line) leaves the resolved
text plus one final newline. As ids, every piece is encoded where the tokenizer puts its
own boundaries, so the transcript is the tokenizer's canonical encoding of that text at
every copy boundary (chapter 6 measures this):

* ``"/>`` + ``\n{lines}\n`` is encoded as one text in front of the next ``<`` (Qwen2.5 has
  a ``"/>\n`` id; a copied line's trailing blanks split as in running text);
* a body is encoded in front of ``</gen>\n``; the closing literal is ``encode("</gen>\n")``
  up to the id that completes ``</gen>`` (SmolLM2 ``[</, gen, >]`` then a forced ``\n``;
  Qwen2.5 ``[</, gen, >\n]``), and that id sequence is the end-of-gen detector;
* the gen opener is ``<gen>\n`` if the tokenizer never merges that newline into the body
  (Qwen2.5), else ``<gen>`` and the body starts with the newline (SmolLM2 writes
  ``"\n   "`` + ``" return"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from cadlib.escape import encode_gen_body
from cadlib.grammar import COPY_OPEN, GEN_OPEN, PROGRAM_CLOSE, Copy
from cadlib.resolver import copied_text, doc_lines

from .token_table import TokenTable, token_table

__all__ = [
    "Transcript",
    "transcript",
    "TokenTable",
    "token_table",
    "Allowed",
    "FSMState",
    "CopyGenFSM",
    "KINDS",
    "DECISION_KINDS",
]

#: Token kinds in a transcript: prompt/forced literal/model choice/gen body/spliced copy text.
KINDS = ("forced", "choice", "gen", "splice")
#: The kinds the model decides (one forward before each); the other kinds (``forced``,
#: ``splice``) ride along in the forward after the decision (:mod:`cadlib.decoding.decoder`).
DECISION_KINDS = ("choice", "gen")


# --------------------------------------------------------------------------------------------
# States and masks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FSMState:
    """An immutable FSM state (hashable: masks are cached by state).

    ``pending`` holds forced ``(id, kind)`` pairs still to come before ``phase`` resumes;
    ``node`` is the path in the op-literal trie (AWAIT_OP/AFTER_LT/CLOSE); ``part``, ``digits``
    and ``lo`` describe the range being spelled (COPY_LINES: ``part`` 0 is ``i``, 1 is ``j``,
    ``lo`` the smallest admissible value); ``tail`` and ``closer`` the body (GEN_BODY: the
    partial reserved literal at the end of the body text, and how many ids of ``</gen>`` end
    it); ``op`` counts completed ops.
    """

    phase: str = "op"  # "op" | "copy" | "gen" | "done"
    pending: tuple = ()
    node: tuple = ()
    part: int = 0
    digits: str = ""
    lo: int = 1
    tail: bytes = b""
    closer: int = 0
    op: int = 0
    node_text: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        """The paper's state name."""
        if self.phase == "op":
            return "AWAIT_OP" if not self.node else "AFTER_LT"
        return {"copy": "COPY_LINES", "gen": "GEN_BODY", "done": "DONE"}[self.phase]

    def __repr__(self) -> str:
        where = {
            "op": self.node_text,
            "copy": COPY_OPEN + (f"{self.lo}-" if self.part else "") + self.digits,
            "gen": GEN_OPEN + "…" + self.tail.decode(errors="replace"),
            "done": PROGRAM_CLOSE,
        }[self.phase]
        forced = f" +{len(self.pending)} forced" if self.pending else ""
        return f"<{self.name} op={self.op}: {where}\u2588{forced}>"


class Allowed:
    """The allowed ids of one state: a small id set, or "all but a few" (gen bodies).

    Parameters
    ----------
    ids : torch.LongTensor of shape (k,), optional
        Explicit allowed ids (structural decisions; ``k == 1`` means forced).
    banned : torch.LongTensor of shape (b,), optional
        For gen bodies: every id is allowed except these (special ids, ids that would
        complete a reserved literal, ids beyond the tokenizer's vocabulary).
    vocab_size : int
        Width ``V`` of the logits.

    Notes
    -----
    Semantics of :meth:`argmax`, as pseudo-code::

        if ids:    return ids[argmax(logits[ids])]
        t = argmax(logits)                        # what plain greedy decoding computes
        if t not in banned: return t              # the common case: one set lookup
        return argmax(logits with banned = -inf)  # rare fallback
    """

    __slots__ = ("ids", "banned", "vocab_size", "single", "_set", "_mask")

    def __init__(self, ids=None, banned=None, vocab_size: int = 0):
        self.ids, self.banned, self.vocab_size = ids, banned, vocab_size
        self.single = int(ids[0]) if ids is not None and len(ids) == 1 else None
        self._set = frozenset((ids if ids is not None else banned).tolist())
        self._mask = None

    def __contains__(self, tok: int) -> bool:
        return (tok in self._set) if self.ids is not None else (tok not in self._set)

    def __len__(self) -> int:
        return len(self._set) if self.ids is not None else self.vocab_size - len(self._set)

    def full_mask(self) -> torch.Tensor:
        """``True`` where allowed: a BoolTensor of shape (V,) (built once, on demand)."""
        if self._mask is None:
            on = self.ids is not None
            src = self.ids if on else self.banned
            self._mask = torch.full((self.vocab_size,), not on, dtype=torch.bool, device=src.device)
            self._mask[src] = on
        return self._mask

    def argmax(self, logits: torch.Tensor) -> int:
        """Masked greedy choice from ``logits`` of shape (V,)."""
        if self.ids is not None:
            return int(self.ids[logits[self.ids].argmax()])
        tok = int(logits.argmax())
        if tok not in self._set:
            return tok
        return int(logits.index_fill(0, self.banned, float("-inf")).argmax())


def _can_extend(p: str, lo: int, hi: int) -> bool:
    """Is the digit string ``p`` a prefix of some integer in ``[lo, hi]`` (no leading zero)?"""
    if not p or p[0] == "0" or len(p) > len(str(hi)):
        return False
    v = int(p)
    for k in range(len(str(hi)) - len(p) + 1):
        a = v * 10**k
        if a <= hi and a + 10**k - 1 >= lo:
            return True
    return False


class CopyGenFSM:
    """The FSM of one (tokenizer, document) pair.

    Parameters
    ----------
    tokenizer : tokenizer or TokenTable
        See :func:`token_table`.
    doc : str
        The input document ``D``; ``n_lines = len(doc_lines(doc))`` bounds every range.
    vocab_size : int, optional
        Size of the model's logits (may exceed the tokenizer's vocabulary; extra ids are
        never allowed). Defaults to the tokenizer's.
    copy_text : bool
        ``True`` (the decoder): the copied lines are forced after ``"/>`` (spliced).
        ``False`` (program-only prompt-level variant, Appendix Q): a newline follows instead.
    device : torch.device or str
        Where the masks live (that of the logits).
    """

    def __init__(
        self,
        tokenizer,
        doc: str,
        vocab_size: int | None = None,
        copy_text: bool = True,
        device="cpu",
    ):
        self.table = t = token_table(tokenizer)
        self.doc, self.lines = doc, doc_lines(doc)
        self.n_lines = len(self.lines)
        self.vocab_size = vocab_size or len(t.token_bytes)
        self.copy_text, self.device = copy_text, torch.device(device)
        self._allowed_cache: dict = {}
        self._copy_end: dict = {}
        self._digit_items = sorted(t.digits.items())
        self._body_banned = set(t.special_ids) | set(range(len(t.token_bytes), self.vocab_size))

    # -- transitions -------------------------------------------------------------------------

    def initial(self) -> FSMState:
        """Before ``<program>\\n`` (forced)."""
        return FSMState(pending=tuple((i, "forced") for i in self.table.program_open))

    def copied_text(self, i: int, j: int) -> str:
        """Lines ``i..j`` joined by newlines (:func:`cadlib.resolver.copied_text`, §2.2)."""
        return copied_text(self.lines, i, j)

    def copy_end(self, i: int, j: int) -> tuple[tuple[int, str], ...]:
        """``(id, kind)`` pairs closing the range ``i-j`` (cached :meth:`TokenTable.copy_end`)."""
        key = (i, j)
        if key not in self._copy_end:
            text = self.copied_text(i, j) if self.copy_text else None
            self._copy_end[key] = self.table.copy_end(text)
        return self._copy_end[key]

    def _terminator(self, state: FSMState) -> int | None:
        """The id that ends the number being spelled, if it is a complete admissible value."""
        if not state.digits or not state.lo <= int(state.digits) <= self.n_lines:
            return None
        if state.part == 0:
            return self.table.dash[0]
        return self.copy_end(state.lo, int(state.digits))[0][0]

    def advance(self, state: FSMState, tok: int) -> FSMState:
        """The state after ``tok``; raises ``ValueError`` if ``tok`` is not allowed."""
        if state.pending:
            if tok != state.pending[0][0]:
                raise ValueError(f"{state!r}: forced id {state.pending[0][0]}, got {tok}")
            return replace(state, pending=state.pending[1:])
        step = {"op": self._advance_op, "copy": self._advance_copy, "gen": self._advance_gen}
        if state.phase not in step:
            raise ValueError(f"{state!r}: the program is complete, got id {tok}")
        return step[state.phase](state, tok)

    def _advance_op(self, state: FSMState, tok: int) -> FSMState:
        t = self.table
        if tok not in self._op_children(state):
            raise ValueError(f"{state!r}: id {tok} does not continue an op literal")
        node = state.node + (tok,)
        done = [name for name, ids in t.op_literals.items() if ids == node]
        if not done:
            text = state.node_text + t.token_bytes[tok].decode(errors="replace")
            return replace(state, node=node, node_text=text)
        if done[0] == "copy":
            return FSMState(phase="copy", op=state.op)
        if done[0] == "gen":
            return FSMState(phase="gen", op=state.op)
        return FSMState(phase="done", op=state.op)

    def _advance_copy(self, state: FSMState, tok: int) -> FSMState:
        t, hi = self.table, self.n_lines
        if tok in t.digits and _can_extend(state.digits + t.digits[tok], state.lo, hi):
            return replace(state, digits=state.digits + t.digits[tok])
        if tok == self._terminator(state):
            v = int(state.digits)
            if state.part == 1:  # "/> and the splice of lines lo..v follow
                pending = self.copy_end(state.lo, v)[1:]
                return FSMState(pending=pending, op=state.op + 1)
            rest = tuple((x, "forced") for x in t.dash[1:])
            return FSMState(phase="copy", pending=rest, part=1, lo=v, op=state.op)
        raise ValueError(f"{state!r}: id {tok} is not a valid range token (n_lines={hi})")

    def _closer_progress(self, k: int, tok: int) -> int:
        """Ids of ``</gen>`` that end the body after ``tok`` (KMP over ids, Appendix I)."""
        c = self.table.gen_close
        seq = c[:k] + (tok,)
        for j in range(min(len(seq), len(c)), 0, -1):
            if seq[-j:] == c[:j]:
                return j
        return 0

    def _advance_gen(self, state: FSMState, tok: int) -> FSMState:
        t = self.table
        k = self._closer_progress(state.closer, tok)
        if k == len(t.gen_close) and state.closer == k - 1:  # the exact id sequence: close
            sep = tuple((x, "forced") for x in t.after_gen_close)
            return FSMState(pending=sep, op=state.op + 1)
        if tok >= len(t.token_bytes) or tok in t.special_ids or tok in t.dangerous(state.tail):
            raise ValueError(f"{state!r}: id {tok} would put a reserved literal in the body")
        return replace(state, tail=t.next_tail(state.tail, t.token_bytes[tok]), closer=k)

    # -- masks -------------------------------------------------------------------------------

    def _op_children(self, state: FSMState) -> list[int]:
        names = {"copy", "gen"} if state.op == 0 else {"copy", "gen", "close"}
        return [x for x, reach in self.table.trie[state.node].items() if reach & names]

    def allowed(self, state: FSMState) -> Allowed:
        """The :class:`Allowed` ids of ``state`` (cached)."""
        if state.pending:
            key = ("forced", state.pending[0][0])
        elif state.phase == "op":
            key = ("op", state.node, state.op == 0)
        elif state.phase == "copy":
            key = ("copy", state.part, state.digits, state.lo)
        elif state.phase == "gen":
            key = ("gen", state.tail, state.closer)
        else:
            key = ("done",)
        hit = self._allowed_cache.get(key)
        if hit is None:
            hit = self._allowed_cache[key] = self._compute_allowed(state, key)
        return hit

    def _compute_allowed(self, state: FSMState, key: tuple) -> Allowed:
        t, kind = self.table, key[0]
        if kind == "forced":
            ids = [key[1]]
        elif kind == "op":
            ids = self._op_children(state)
        elif kind == "copy":
            ids = [
                i
                for i, d in self._digit_items
                if _can_extend(state.digits + d, state.lo, self.n_lines)
            ]
            if (term := self._terminator(state)) is not None:
                ids.append(term)
        elif kind == "gen":
            banned = self._body_banned | t.dangerous(state.tail)
            if state.closer == len(t.gen_close) - 1:  # the exact closer may complete </gen>
                banned.discard(t.gen_close[-1])
            banned = torch.tensor(sorted(banned), dtype=torch.long, device=self.device)
            return Allowed(banned=banned, vocab_size=self.vocab_size)
        else:
            ids = []
        ids = torch.tensor(ids, dtype=torch.long, device=self.device)
        return Allowed(ids=ids, vocab_size=self.vocab_size)

    def kind(self, state: FSMState) -> str:
        """Kind of the next id: ``forced``/``splice`` (pending), ``gen`` (body) or ``choice``."""
        if state.pending:
            return state.pending[0][1]
        if state.phase == "gen":
            return "gen"
        return "forced" if self.allowed(state).single is not None else "choice"

    def at_op_start(self, state: FSMState) -> bool:
        """True at AWAIT_OP with nothing forced pending: the next id opens an op."""
        return state.phase == "op" and not state.node and not state.pending

    # -- budget ------------------------------------------------------------------------------

    def closing_ids(self, state: FSMState) -> list[int]:
        """The shortest sensible id sequence that completes the program from ``state``.

        Used when the token budget runs out: pending ids; at AWAIT_OP ``</program>`` (or an
        empty ``<gen>`` if no op exists yet); a half-chosen op literal is finished (preferring
        ``<gen>``); a half-spelled range is completed to the smallest admissible ``i`` and
        ``j = i`` (one line); an open body is closed by ``</gen>``. Then ``</program>``.
        """
        t, out = self.table, []
        while state.phase != "done":
            if state.pending:
                tok = state.pending[0][0]
            elif state.phase == "op":
                kids = self._op_children(state)
                reach = self.table.trie[state.node]
                pref = (
                    [x for x in kids if "close" in reach[x]]
                    or [x for x in kids if "gen" in reach[x]]
                    or kids
                )
                tok = pref[0]
            elif state.phase == "copy":
                tok = self._closing_digit(state)
            else:  # continue the exact id sequence of </gen> from where the body ends
                tok = t.gen_close[state.closer]
            out.append(tok)
            state = self.advance(state, tok)
        return out

    def _closing_digit(self, state: FSMState) -> int:
        if (term := self._terminator(state)) is not None:
            return term
        target = next(
            str(x) for x in range(state.lo, self.n_lines + 1) if str(x).startswith(state.digits)
        )
        nxt = target[len(state.digits)]
        return next(i for i, d in self._digit_items if d == nxt)


# --------------------------------------------------------------------------------------------
# The transcript of a program
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Transcript:
    """The id sequence the decoder produces for a program (after the prompt).

    ``ids[k]`` has kind ``kinds[k]`` (:data:`KINDS`): ``forced`` (a literal tail or separator:
    the mask had one id), ``choice`` (a structural decision the model makes: ``<``/``</``,
    ``copy``/``gen``, range digits and terminators), ``gen`` (a ``<gen>`` body id, the closing
    ``</gen>`` ids included) or ``splice`` (copied text, one forward per copy op).
    """

    ids: tuple
    kinds: tuple

    def __len__(self) -> int:
        return len(self.ids)

    def count(self, kind: str) -> int:
        return sum(k == kind for k in self.kinds)

    def text(self, tokenizer) -> str:
        """The transcript as text (see the module docstring for its layout)."""
        tb = token_table(tokenizer).token_bytes
        return b"".join(tb[i] for i in self.ids).decode(errors="replace")

    def program_text(self, tokenizer) -> str:
        """The program: the transcript without the spliced text (parses with
        :func:`cadlib.grammar.parse_program`)."""
        tb = token_table(tokenizer).token_bytes
        parts = (tb[i] for i, k in zip(self.ids, self.kinds, strict=True) if k != "splice")
        return b"".join(parts).decode(errors="replace")


def program_ids(program, table: TokenTable) -> list[int]:
    """The canonical ids of ``program`` in the transcript layout (numbers via ``encode``)."""
    out = list(table.program_open)
    for op in program:
        if isinstance(op, Copy):  # ranges are checked by the FSM walk in transcript()
            out += table.op_literals["copy"] + tuple(table.encode(str(op.start))) + table.dash
            out += tuple(table.encode(str(op.end)))
            out.append(None)  # "/> and the splice, taken from the FSM walk
        else:
            out += table.op_literals["gen"] + table.body_ids(encode_gen_body(op.text))
            out += table.gen_close + table.after_gen_close
    return out + list(table.op_literals["close"])


def walk_ids(fsm: CopyGenFSM, state: FSMState, ids) -> FSMState:
    """Advance ``state`` over ``ids`` (raises ``ValueError`` at the first refused id)."""
    for i in ids:
        state = fsm.advance(state, i)
    return state


def transcript(program, doc: str, tokenizer) -> Transcript:
    """The ids (and their kinds) the decoder produces for ``program`` on ``doc``.

    The single source of truth for SFT targets and forced-program decoding: it walks the FSM
    over the program's canonical ids, so every id is one the FSM allows (raises
    ``ValueError`` otherwise, e.g. for a range outside the document), and the ids after
    each range are exactly :meth:`CopyGenFSM.copy_end` (``"/>`` and the splice).
    """
    fsm = CopyGenFSM(tokenizer, doc)
    state, ids, kinds = fsm.initial(), [], []
    for planned in program_ids(program, fsm.table):
        if planned is None:  # a range is complete: "/> and the splice come from the FSM
            end = fsm.copy_end(state.lo, int(state.digits))
            ids.extend(i for i, _ in end)
            kinds.extend(k if n else fsm.kind(state) for n, (_, k) in enumerate(end))
            state = walk_ids(fsm, state, [i for i, _ in end])
            continue
        kinds.append(fsm.kind(state))
        ids.append(planned)
        state = fsm.advance(state, planned)
    if state.phase != "done":
        raise ValueError(f"program ends in {state!r}")
    return Transcript(tuple(ids), tuple(kinds))
