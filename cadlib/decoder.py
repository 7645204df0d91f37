"""The Copy-as-Decode decoder: FSM-masked greedy decoding with the copy splice (paper §2.3-2.4).

Loop (one ``model`` forward per decision, ``KV`` a ``transformers.DynamicCache``)::

    feed = prompt ids
    repeat:
        append every forced id to feed         # literal tails, and after "/>: the N ids of
                                               # lines i..j (the splice)
        logits = model(feed, cache=KV)[-1]     # ONE forward for all of feed (parallel prefill)
        tok = argmax(logits masked by the FSM) # a decision: <,</ | copy,gen | digits | body
        feed = [tok]

so a copy op of ``N`` tokens costs one forward of ``1 + N`` ids instead of ``N`` decode steps
(§2.4: ``model(input_ids=[l_i..l_j], past_key_values=KV)``; transformers 5 names the argument
``cache``), and each fixed tail is fed with the decision before it. The transcript this produces
is :func:`cadlib.fsm.transcript` of the program (see :mod:`cadlib.fsm` for its layout).

Modes: free run (:meth:`CopyDecoder.decode`), streaming (:meth:`CopyDecoder.stream`), forced
program (``program=``: the decoder is driven along a given program, every forward, mask and
argmax as in a free run: the mechanism under perfect span selection), a minimum span ``m``
(copies of fewer than ``m`` tokens are fed one id per forward), and
:class:`GrammarLogitsProcessor`, the constraint alone for ``generate()``.

The token budget ``max_new_tokens`` counts model decisions (structural choices and body
tokens). When it runs out, :meth:`cadlib.fsm.CopyGenFSM.closing_ids` completes the open op
minimally and appends ``</program>``, so the program still parses and resolves strictly.
"""

from __future__ import annotations

import codecs
import functools
import inspect
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from transformers import LogitsProcessor

from .fsm import CopyGenFSM, Transcript, token_table, transcript
from .grammar import Copy, Program, StreamingParser, parse_program
from .prompts import edit_prompt_ids
from .resolver import resolve

__all__ = [
    "ForwardRecord",
    "Trace",
    "DecodeResult",
    "CopyDecoder",
    "GrammarLogitsProcessor",
    "new_cache",
    "model_vocab_size",
]


# --------------------------------------------------------------------------------------------
# Model plumbing
# --------------------------------------------------------------------------------------------


@functools.cache
def _cache_kwarg(model_class: type) -> str:
    params = inspect.signature(model_class.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def new_cache(model):
    """An empty ``DynamicCache`` for ``model``."""
    from transformers import DynamicCache

    try:
        return DynamicCache(config=model.config)
    except TypeError:  # older transformers
        return DynamicCache()


def model_vocab_size(model) -> int:
    """Width of the model's logits (may exceed the tokenizer's vocabulary)."""
    return int(model.get_output_embeddings().weight.shape[0])


def forward(model, ids: list[int], cache, logits_to_keep: int = 1) -> torch.Tensor:
    """Append ``ids`` to ``cache`` in one forward; return logits of shape (logits_to_keep, V)."""
    x = torch.tensor([ids], dtype=torch.long, device=model.device)
    kw = {_cache_kwarg(type(model)): cache}
    with torch.inference_mode():
        out = model(input_ids=x, use_cache=True, logits_to_keep=logits_to_keep, **kw)
    return out.logits[0]


def _sync(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass
class ForwardRecord:
    """One forward: ``kind`` (prefill/choice/gen/forced/splice/copy-step/verify), tokens fed,
    seconds (synchronised), and the op it belongs to (0 = prompt)."""

    kind: str
    n_tokens: int
    seconds: float
    op: int = 0


@dataclass
class Trace:
    """Timings of one decoding run (any method): forwards, mask and sync time per step."""

    forwards: list[ForwardRecord] = field(default_factory=list)
    mask_s: list[float] = field(default_factory=list)  # FSM mask fill + apply, per masked step
    sync_s: list[float] = field(default_factory=list)  # argmax -> Python int, per step
    fsm_s: float = 0.0  # FSM state transitions
    wall_s: float = 0.0

    @property
    def n_forwards(self) -> int:
        return len(self.forwards)

    @property
    def prefill_s(self) -> float:
        return sum(f.seconds for f in self.forwards if f.kind == "prefill")

    @property
    def decode_s(self) -> float:
        """Wall time after the prompt prefill (what the paper's cost model counts)."""
        return self.wall_s - self.prefill_s

    def seconds_by_kind(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for f in self.forwards:
            out[f.kind] = out.get(f.kind, 0.0) + f.seconds
        out["mask"], out["sync"], out["fsm"] = sum(self.mask_s), sum(self.sync_s), self.fsm_s
        return out

    def forwards_by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.forwards:
            out[f.kind] = out.get(f.kind, 0) + 1
        return out


@dataclass
class DecodeResult:
    """What :meth:`CopyDecoder.decode` returns.

    ``transcript`` holds the output ids and their kinds; ``program_text`` is the transcript
    without spliced text; ``program`` and ``text`` are its parse and strict resolution
    (``None`` with ``error`` set if either fails, which the FSM rules out). ``ops`` has one
    dict per op after a first ``prompt`` record (kind, lines, forwards, forward seconds and
    the count of ids of each kind);
    ``agreement`` (forced mode) is the share of decisions where the model's masked argmax was
    the program's id; ``budget_closed`` tells whether the budget closed the program.
    """

    transcript: Transcript
    program_text: str
    program: Program | None
    text: str | None
    error: str | None
    trace: Trace
    ops: list[dict]
    agreement: float | None = None
    budget_closed: bool = False

    @property
    def n_spliced(self) -> int:
        return self.transcript.count("splice")

    @property
    def n_chosen(self) -> int:
        return self.transcript.count("choice") + self.transcript.count("gen")

    @property
    def copy_fraction(self) -> float:
        """Spliced / (spliced + body) ids: the realized copy fraction of the output text."""
        body = self.transcript.count("gen")
        return self.n_spliced / max(1, self.n_spliced + body)


def _runs(steps) -> Iterator:
    """Iterate a ``_steps`` generator, dropping its return value."""
    yield from steps


class _Run:
    """Mutable bookkeeping of one decode: ids, kinds, per-op records, the trace."""

    def __init__(self):
        self.ids, self.kinds, self.trace = [], [], Trace()
        self.ops = [dict(kind="prompt", lines=None, forwards=0, seconds=0.0)]
        self.agree = self.decisions = 0

    def append(self, fsm: CopyGenFSM, state, tok: int, kind: str):
        if fsm.at_op_start(state):
            self.ops.append(dict(kind="?", lines=None, forwards=0, seconds=0.0))
        op = self.ops[-1]
        op[kind] = op.get(kind, 0) + 1
        self.ids.append(tok)
        self.kinds.append(kind)
        t0 = time.perf_counter()
        new = fsm.advance(state, tok)
        self.trace.fsm_s += time.perf_counter() - t0
        if new.phase != state.phase and new.phase in ("copy", "gen", "done"):
            op["kind"] = {"copy": "copy", "gen": "gen", "done": "close"}[new.phase]
        if state.phase == "copy" and new.phase == "op":
            op["lines"] = (state.lo, int(state.digits))
        return new


# --------------------------------------------------------------------------------------------
# The decoder
# --------------------------------------------------------------------------------------------


class CopyDecoder:
    """FSM-constrained greedy decoding with copy splicing.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A causal LM in eval mode.
    tokenizer : tokenizer
        Its tokenizer (Hugging Face, or a :class:`cadlib.tokenizers.Tokenizer`).
    max_new_tokens : int
        Budget of model decisions; then the program is closed validly (module docstring).
    min_span : int
        Copies of fewer than ``min_span`` tokens are fed one id per forward (Appendix J).
    """

    def __init__(self, model, tokenizer, max_new_tokens: int = 256, min_span: int = 0):
        self.model, self.tokenizer = model, tokenizer
        self.table = token_table(tokenizer)
        self.max_new_tokens, self.min_span = max_new_tokens, min_span
        self.vocab_size = model_vocab_size(model)

    def fsm(self, doc: str) -> CopyGenFSM:
        return CopyGenFSM(self.table, doc, vocab_size=self.vocab_size, device=self.model.device)

    def prompt_ids(self, doc: str, instruction: str) -> list[int]:
        """The edit prompt of :mod:`cadlib.prompts`."""
        return edit_prompt_ids(self.tokenizer, instruction, doc)

    # -- public API --------------------------------------------------------------------------

    def decode(self, doc: str, instruction: str | None = None, *, prompt_ids=None,
               program: Program | None = None) -> DecodeResult:  # fmt: skip
        """Decode an edit program for ``doc``; ``program=`` drives it along that program."""
        steps = self._steps(doc, self._prompt(doc, instruction, prompt_ids), program)
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                return stop.value

    def stream(self, doc: str, instruction: str | None = None, *, prompt_ids=None,
               program: Program | None = None) -> Iterator[str]:  # fmt: skip
        """Yield the resolved text op by op, as each op completes (joined, they are the
        resolved output)."""
        parser, utf8 = StreamingParser(), codecs.getincrementaldecoder("utf-8")("replace")
        tb, lines, fed, first = self.table.token_bytes, doc.split("\n"), 0, True
        for run in _runs(self._steps(doc, self._prompt(doc, instruction, prompt_ids), program)):
            new = [tb[i] for i, k in zip(run.ids[fed:], run.kinds[fed:], strict=True)
                   if k != "splice"]  # fmt: skip
            fed = len(run.ids)
            for op in parser.feed(utf8.decode(b"".join(new))):
                text = "\n".join(lines[op.start - 1 : op.end]) if isinstance(op, Copy) else op.text
                yield text if first else "\n" + text
                first = False

    # -- the loop ----------------------------------------------------------------------------

    def _prompt(self, doc, instruction, prompt_ids) -> list[int]:
        if prompt_ids is not None:
            return list(prompt_ids)
        if instruction is None:
            raise ValueError("give an instruction or prompt_ids")
        return self.prompt_ids(doc, instruction)

    def _steps(self, doc: str, prompt: list[int], program: Program | None):
        """Generator: yields the run after each forward; returns the :class:`DecodeResult`."""
        fsm, run, cache = self.fsm(doc), _Run(), new_cache(self.model)
        plan = transcript(program, doc, self.table).ids if program is not None else None
        state, budget_closed = fsm.initial(), False
        feed, kinds, feed_op = list(prompt), ["prompt"] * len(prompt), 0
        start = time.perf_counter()
        while True:
            state = self._absorb_forced(fsm, state, run, feed, kinds)
            if state.phase == "done":
                break
            if plan is None and run.decisions >= self.max_new_tokens:
                for tok in fsm.closing_ids(state):
                    kind = state.pending[0][1] if state.pending else "forced"
                    state = run.append(fsm, state, tok, kind)
                budget_closed = True
                break
            logits = self._forward(feed, kinds, cache, run, feed_op)
            yield run
            tok, kind = self._choose(fsm, state, logits, plan, run), fsm.kind(state)
            state = run.append(fsm, state, tok, kind)
            feed, kinds, feed_op = [tok], [kind], len(run.ops) - 1
        run.trace.wall_s = time.perf_counter() - start
        yield run
        return self._result(fsm, run, plan, budget_closed)

    def _absorb_forced(self, fsm, state, run, feed, kinds):
        """Append the forced ids (singleton masks, pending literals and splices) to ``feed``."""
        while state.phase != "done":
            single = state.pending[0][0] if state.pending else fsm.allowed(state).single
            if single is None:
                return state
            kind = fsm.kind(state)
            state = run.append(fsm, state, single, kind)
            feed.append(single)
            kinds.append(kind)
        return state

    def _chunks(self, feed: list[int], kinds: list[str]) -> list[tuple[list[int], str]]:
        """Forwards for one feed: usually one; a splice under ``min_span`` goes id by id."""
        n_splice = kinds.count("splice")
        if "prompt" in kinds:
            return [(feed, "prefill")]
        if n_splice == 0:
            return [(feed, "forced" if len(feed) > 1 else kinds[0])]
        if n_splice >= self.min_span:
            return [(feed, "splice")]
        first = kinds.index("splice")
        head = [(feed[:first], "forced" if first > 1 else kinds[0])] if first else []
        return head + [([x], "copy-step") for x in feed[first:]]

    def _forward(self, feed, kinds, cache, run, op: int) -> torch.Tensor:
        """Feed ``feed`` (ids of op record ``op`` onward); return the last logits (V,)."""
        device = self.model.device
        for ids, kind in self._chunks(feed, kinds):
            t0 = time.perf_counter()
            logits = forward(self.model, ids, cache)[-1]
            _sync(device)
            dt = time.perf_counter() - t0
            run.trace.forwards.append(ForwardRecord(kind, len(ids), dt, op))
            run.ops[op]["forwards"] += 1
            run.ops[op]["seconds"] += dt
        return logits

    def _choose(self, fsm, state, logits, plan, run) -> int:
        """Masked argmax; the plan's id in forced mode.

        Timed in two parts: ``sync`` = the argmax that any greedy decoder runs (over the
        allowed ids, or over all ids in a body) and its transfer to Python; ``mask`` = the
        rest (mask lookup, gather, the banned-id check and its rare fallback).
        """
        t0 = time.perf_counter()
        allowed = fsm.allowed(state)
        scores = logits[allowed.ids] if allowed.ids is not None else logits
        t1 = time.perf_counter()
        k = int(scores.argmax())
        t2 = time.perf_counter()
        if allowed.ids is not None:
            tok = int(allowed.ids[k])
        else:
            tok = k if k in allowed else allowed.argmax(logits)
        run.trace.mask_s.append(t1 - t0 + time.perf_counter() - t2)
        run.trace.sync_s.append(t2 - t1)
        run.decisions += 1
        if plan is not None:
            want = plan[len(run.ids)]
            run.agree += tok == want
            tok = want
        return tok

    def _result(self, fsm, run: _Run, plan, budget_closed: bool) -> DecodeResult:
        tr = Transcript(tuple(run.ids), tuple(run.kinds))
        if plan is not None and tr.ids != tuple(plan):
            raise RuntimeError("forced decoding left the program's transcript")
        text_prog = tr.program_text(self.table)
        program = text = error = None
        try:
            program = parse_program(text_prog)
            text = resolve(program, fsm.doc, mode="strict")
        except ValueError as err:  # ProgramSyntaxError / ResolveError: ruled out by the FSM
            error = f"{type(err).__name__}: {err}"
        agreement = run.agree / run.decisions if plan is not None and run.decisions else None
        return DecodeResult(tr, text_prog, program, text, error, run.trace, run.ops, agreement,
                            budget_closed)  # fmt: skip


# --------------------------------------------------------------------------------------------
# The constraint alone, for generate() (prompt-level variant, Appendix Q)
# --------------------------------------------------------------------------------------------


class GrammarLogitsProcessor(LogitsProcessor):
    """Enforce the grammar inside ``model.generate()``: a pure function of ``input_ids``.

    The FSM state is derived from the ids after ``prompt_length`` (cached by prefix), never
    kept between calls, so the processor is correct when ``generate`` calls it on candidate
    sequences (prompt lookup, assisted decoding) in any order. After ``</program>`` only EOS
    is allowed. A sequence the grammar rejects (a draft candidate past a masked id, which the
    verifier discards anyway) is left unmasked.

    Parameters
    ----------
    tokenizer : tokenizer
        The model's tokenizer.
    doc : str
        The document being edited (its line count bounds the ranges).
    prompt_length : int
        Number of prompt ids before the program; the program starts with ``<program>\\n``.
    copy_text : bool
        ``True``: the copied lines follow each copy tag (the decoder's transcript, decoded
        step by step); ``False``: program only (tags, then a newline).
    """

    def __init__(self, tokenizer, doc: str, prompt_length: int, copy_text: bool = True,
                 max_cached: int = 100_000):  # fmt: skip
        self.table = token_table(tokenizer)
        self.doc, self.prompt_length, self.copy_text = doc, prompt_length, copy_text
        self.max_cached = max_cached
        self._fsm = None
        self._states: dict = {}

    def _fsm_for(self, scores: torch.Tensor) -> CopyGenFSM:
        if self._fsm is None or self._fsm.vocab_size != scores.shape[-1]:
            self._fsm = CopyGenFSM(self.table, self.doc, scores.shape[-1], self.copy_text,
                                   scores.device)  # fmt: skip
            self._states = {(): self._fsm.initial()}
        return self._fsm

    def state(self, out: tuple):
        """The FSM state after output ids ``out`` (``None`` if the grammar rejects them)."""
        if out in self._states:
            return self._states[out]
        if len(self._states) > self.max_cached:
            self._states = {(): self._fsm.initial()}
        k = len(out) - 1
        while out[:k] not in self._states:
            k -= 1
        st = self._states[out[:k]]
        for i in range(k, len(out)):
            try:
                st = None if st is None else self._fsm.advance(st, out[i])
            except ValueError:
                st = None
            self._states[out[: i + 1]] = st
        return st

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor):
        """``input_ids`` (batch, seq), ``scores`` (batch, V) -> masked scores (batch, V)."""
        fsm = self._fsm_for(scores)
        out = scores.clone()
        for b in range(input_ids.shape[0]):
            st = self.state(tuple(input_ids[b, self.prompt_length :].tolist()))
            if st is None:
                continue
            if st.phase == "done":
                allowed = torch.zeros_like(scores[b], dtype=torch.bool)
                allowed[list(self.table.eos_ids[:1])] = True
            else:
                allowed = fsm.allowed(st).full_mask()
            out[b] = out[b].masked_fill(~allowed, float("-inf"))
        return out
