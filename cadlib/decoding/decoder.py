"""The Copy-as-Decode decoder: FSM-masked greedy decoding with the copy splice (paper §2.3-2.4).

Loop (one ``model`` forward per decision, ``KV`` the cache of an engine session: a
``transformers.DynamicCache`` or llama.cpp's KV cache, see :mod:`cadlib.decoding.engines`)::

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
is :func:`cadlib.decoding.fsm.transcript` of the program (see :mod:`cadlib.decoding.fsm` for its
layout).

Modes (:mod:`cadlib.decoding.modes`: one loop, and a policy object per mode that says what to do
at the budget and what to keep of each argmax): free run (:meth:`CopyDecoder.decode`),
streaming (:meth:`CopyDecoder.stream`), forced
program (``program=``: the decoder is driven along a given program, every forward, mask and
argmax as in a free run: the mechanism under perfect span selection), localized edit
(``program=`` with ``free_gen=True``: the program's ops and copy spans are given, e.g. by a
user's selection or the oracle alignment, and the model writes every ``<gen>`` body, optionally
masked per body by ``gen_processor``, e.g. the FIM constraint of :mod:`cadlib.fim`), a minimum
span ``m`` (copies of fewer than ``m`` tokens are fed one id per forward), drafts (``drafts=``:
prompt lookup inside bodies and guessed op headers, :mod:`cadlib.decoding.drafts`, verified in the
forward that decides their first id, :mod:`cadlib.decoding.draft_verify`; the output is
unchanged, the forwards fewer). The constraint alone, for ``generate()``, is
:class:`cadlib.decoding.generate_processor.GrammarLogitsProcessor`.

The token budget ``max_new_tokens`` counts model decisions (structural choices and body
tokens). When it runs out, :meth:`cadlib.decoding.fsm.CopyGenFSM.closing_ids` completes the open op
minimally and appends ``</program>``, so the program still parses and resolves strictly. In
localized-edit mode it bounds each ``<gen>`` body instead: an exhausted body is closed with
``</gen>`` and the given program continues.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial

import torch

from cadlib.grammar import Program, parse_program
from cadlib.prompts import edit_prompt_ids
from cadlib.resolver import resolve

from .decode_run import DecodeRun, forward_chunks
from .draft_verify import next_draft, verify_draft
from .drafts import BODY_PLD, Drafter
from .engines import as_engine
from .fsm import CopyGenFSM, Transcript, token_table, transcript
from .kv_reuse import COPY_KV_MODES, PromptIndex, feed_sources, parse_policy
from .modes import decode_mode
from .streaming import DecodeStream, TextStream

__all__ = ["CopyDecoder", "DecodeResult", "ForwardRecord", "Trace"]


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
    # method-specific counts: prompt lookup's drafted / accepted ids; the decoder's drafts:
    # draft_ids, draft_accepted, draft_accepted_gen (accepted body ids)
    info: dict = field(default_factory=dict)

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
    the program's id (localized edit: of the planned decisions); ``budget_closed`` tells
    whether the budget closed the program (localized edit: a body); ``bodies`` holds the
    ``gen_processor`` masks of a localized edit, in body order.
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
    bodies: list = field(default_factory=list)  # localized edit: the body processors

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


# --------------------------------------------------------------------------------------------
# The decoder
# --------------------------------------------------------------------------------------------


class CopyDecoder:
    """FSM-constrained greedy decoding with copy splicing.

    Parameters
    ----------
    model : transformers.PreTrainedModel or cadlib.decoding.engines.Engine
        A causal LM in eval mode, or an engine (e.g.
        :class:`cadlib.decoding.engines.LlamaCppEngine`); a model is wrapped in
        :class:`cadlib.decoding.engines.TransformersEngine`.
    tokenizer : tokenizer
        Its tokenizer (Hugging Face, or a :class:`cadlib.models.tokenizer.Tokenizer`).
    max_new_tokens : int
        Budget of model decisions; then the program is closed validly (module docstring).
    min_span : int
        Copies of fewer than ``min_span`` tokens are fed one id per forward (Appendix J).
    drafts : iterable of str
        Speculative drafts verified in the forward that decides their first id (issue 17
        §3, :class:`cadlib.decoding.drafts.Drafter`): ``"pld"`` (prompt lookup inside ``<gen>``
        bodies, at ``body_pld`` = (K, n)), ``"cursor"`` (the same, looking first in the
        document lines the body stands in for) and/or ``"headers"`` (the next op's header
        guessed from the ops so far). Greedy verification keeps the longest prefix of a
        draft that the masked argmax (forced mode: the program) would have produced, plus
        the id after it: the output never changes, only the forwards. Needs
        ``min_span=0``; not in localized-edit mode.
    draft_max_ids : int, None or "engine"
        The longest draft verified in one forward (``None``: no cap); ``"engine"`` (default):
        the engine's draft policy (:attr:`cadlib.decoding.engines.Engine.draft_max_ids`).
    copy_kv : str
        ``"prefill"`` (default): the exact splice, copied ids fed in one forward.
        ``"reuse"`` (issue 32, beyond the paper; approximate): each copied id that matches the
        prompt's numbered document takes the prompt's cache entries, moved to its output
        position (:mod:`cadlib.decoding.kv_reuse`); the other ids of the feed run in one forward (a
        ``"reuse"`` forward; the trace's ``info["reused_ids"]`` counts the ids not computed).
        Needs ``min_span=0``, no drafts and an engine that can move cache entries.
    recompute : str or cadlib.decoding.kv_reuse.Policy
        Reuse mode: which matched ids are computed anyway
        (:func:`cadlib.decoding.kv_reuse.parse_policy`: ``"none"``, ``"first=K"``, ``"last=K"``,
        ``"first=K,last=M"``, ``"all"``).
    on_decision : callable, optional
        ``on_decision(allowed, logits)`` at every masked decision, before the argmax (the
        :class:`cadlib.decoding.fsm.Allowed` set and the (V,) logits): what the reuse chapter
        compares.
    """

    def __init__(
        self,
        model,
        tokenizer,
        max_new_tokens: int = 256,
        min_span: int = 0,
        drafts=(),
        body_pld=BODY_PLD,
        copy_kv: str = "prefill",
        recompute="none",
        on_decision=None,
        draft_max_ids="engine",
    ):
        self.model, self.tokenizer = model, tokenizer
        self.engine = as_engine(model)
        self.table = token_table(tokenizer)
        self.max_new_tokens, self.min_span = max_new_tokens, min_span
        self.vocab_size = self.engine.vocab_size
        self.drafts, self.body_pld = tuple(drafts), body_pld
        if self.drafts and min_span:
            raise ValueError("drafts are verified with whole splices: they need min_span=0")
        self.draft_max_ids = (
            self.engine.draft_max_ids if draft_max_ids == "engine" else draft_max_ids
        )
        Drafter(self.drafts, self.table, "", [], body_pld, self.draft_max_ids)  # fail here
        if copy_kv not in COPY_KV_MODES:
            raise ValueError(f"unknown copy_kv {copy_kv!r}; expected one of {COPY_KV_MODES}")
        if copy_kv == "reuse" and (min_span or self.drafts):
            raise ValueError("copy_kv='reuse' needs min_span=0 and no drafts")
        self.engine.check_copy_kv(copy_kv)
        self.copy_kv, self.recompute = copy_kv, parse_policy(recompute)
        self.on_decision, self._index = on_decision, None

    def fsm(self, doc: str) -> CopyGenFSM:
        return CopyGenFSM(self.table, doc, vocab_size=self.vocab_size, device=self.engine.device)

    def prompt_ids(self, doc: str, instruction: str) -> list[int]:
        """The edit prompt of :mod:`cadlib.prompts`."""
        return edit_prompt_ids(self.tokenizer, instruction, doc)

    # -- public API --------------------------------------------------------------------------

    def decode(
        self,
        doc: str,
        instruction: str | None = None,
        *,
        prompt_ids=None,
        program: Program | None = None,
        free_gen: bool = False,
        gen_processor=None,
    ) -> DecodeResult:
        """Decode an edit program for ``doc`` (greedy, FSM-masked, copies spliced).

        Parameters
        ----------
        doc : str
            The document ``D`` to edit.
        instruction : str, optional
            Builds the edit prompt of :mod:`cadlib.prompts` (unless ``prompt_ids`` is given).
        prompt_ids : list of int, optional
            The prompt, as ids; the decoder appends ``<program>\\n`` itself.
        program : Program, optional
            Forced-program mode: every decision takes this program's id (its transcript),
            after running the same forward, mask and argmax as a free run.
        free_gen : bool
            Localized-edit mode (needs ``program``): structural decisions and copies follow
            ``program``, but the model writes each ``<gen>`` body (masked greedy, at most
            ``max_new_tokens`` decisions per body; an exhausted body is closed by ``</gen>``).
        gen_processor : callable, optional
            Localized-edit mode: ``gen_processor(left, right)`` is called when a body opens,
            with the resolved output before the body (the ops so far, as decoded, and the
            newline that joins the next op) and after it (the newline and the rest of
            ``program``, later bodies as planned). It returns ``mask(body_ids, scores) ->
            scores``, applied at every step of that body after the grammar's mask (e.g. the
            FIM constraint of :mod:`cadlib.chapters.fim_constraint.run_edits`).
            ``DecodeResult.bodies`` lists the processors, in body order.

        Returns
        -------
        DecodeResult
            The program, its strict resolution, the transcript and the timings.
        """
        if (free_gen or gen_processor is not None) and (program is None or not free_gen):
            raise ValueError("free_gen=True needs program=; gen_processor needs free_gen=True")
        if free_gen and self.drafts:
            raise ValueError("drafts are not verified in localized-edit mode (free_gen=True)")
        steps = self._steps(
            doc, self._prompt(doc, instruction, prompt_ids), program, free_gen, gen_processor
        )
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                return stop.value

    def stream(
        self,
        doc: str,
        instruction: str | None = None,
        *,
        prompt_ids=None,
        program: Program | None = None,
        as_written: bool = False,
    ) -> DecodeStream:
        """Decode as :meth:`decode` does (a free run, or forced along ``program``), yielding the
        resolved text as it is decoded: each op's text as the op completes and, with
        ``as_written``, a ``<gen>`` body's text also while it is generated
        (:class:`cadlib.decoding.streaming.TextStream`). Joined, the pieces are the resolved
        output; once they are exhausted, the stream's ``result`` is the run's
        :class:`DecodeResult`."""
        steps = self._steps(doc, self._prompt(doc, instruction, prompt_ids), program)
        return DecodeStream(steps, TextStream(self.table, doc, as_written))

    # -- the loop ----------------------------------------------------------------------------

    def _prompt(self, doc, instruction, prompt_ids) -> list[int]:
        if prompt_ids is not None:
            return list(prompt_ids)
        if instruction is None:
            raise ValueError("give an instruction or prompt_ids")
        return self.prompt_ids(doc, instruction)

    def _steps(
        self,
        doc: str,
        prompt: list[int],
        program: Program | None,
        free_gen: bool = False,
        gen_processor=None,
    ):
        """Generator: yields the run after each forward; returns the :class:`DecodeResult`."""
        fsm, run, cache = self.fsm(doc), DecodeRun(Trace()), self.engine.new_session()
        self._index = (
            PromptIndex(prompt, doc, self.table.token_bytes) if self.copy_kv == "reuse" else None
        )
        plan = transcript(program, doc, self.table) if program is not None else None
        mode = decode_mode(plan, program, doc, free_gen, gen_processor, self.max_new_tokens)
        drafter = (
            Drafter(self.drafts, self.table, doc, prompt, self.body_pld, self.draft_max_ids)
            if self.drafts
            else None
        )
        state = fsm.initial()
        feed, kinds, feed_op = list(prompt), ["prompt"] * len(prompt), 0
        start = time.perf_counter()
        while True:
            state = self._absorb_forced(fsm, state, run, feed, kinds)
            if state.phase == "done":
                break
            state, then = mode.before_forward(fsm, state, run, feed, kinds)
            if then == "stop":
                break
            if then == "again":
                continue
            if drafter is not None:
                draft = next_draft(drafter, fsm, state, run, mode.plan)
                if self.engine.n_ctx is not None:  # what fits the cache after the feed
                    draft = draft[: max(0, self.engine.n_ctx - len(cache) - len(feed))]
                state, feed, kinds = yield from verify_draft(
                    fsm,
                    state,
                    run,
                    mode.plan,
                    draft,
                    session=cache,
                    n_feed=len(feed),
                    forward=partial(self._forward, feed, kinds, cache, run, feed_op, draft),
                    choose=partial(self._choose, fsm, mode=mode, run=run),
                    budget=self.max_new_tokens,
                )
                feed_op = len(run.ops) - 1
                continue
            logits = self._forward(feed, kinds, cache, run, feed_op)
            yield run
            tok, kind = self._choose(fsm, state, logits, mode, run), fsm.kind(state)
            state = run.append(fsm, state, tok, kind)
            mode.after_append(state, run)
            feed, kinds, feed_op = [tok], [kind], len(run.ops) - 1
        run.trace.wall_s = time.perf_counter() - start
        yield run
        return self._result(fsm, run, mode)

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

    def _forward(self, feed, kinds, session, run, op: int, draft=None) -> torch.Tensor:
        """Feed ``feed`` (ids of op record ``op`` onward) to the engine ``session``; return the
        last logits (V,). With a ``draft`` (drafts on: one forward, even for a short splice):
        feed the draft too and return the logits of the last ``1 + len(draft)`` positions."""
        if draft is not None:
            ids = [*feed, *draft]
            kind = "prefill" if "prompt" in kinds else "verify" if draft else None
            chunks = [(ids, kind or forward_chunks(feed, kinds)[0][1])]
        else:
            chunks = forward_chunks(feed, kinds, self.min_span)
        for ids, kind in chunks:
            if kind == "splice" and self._index is not None:
                logits = self._forward_reuse(ids, kinds, session, run, op)
                continue
            t0 = time.perf_counter()
            logits = session.forward(ids, keep=1 + len(draft) if draft else 1)
            self.engine.sync()
            dt = time.perf_counter() - t0
            run.trace.forwards.append(ForwardRecord(kind, len(ids), dt, op))
            run.ops[op]["forwards"] += 1
            run.ops[op]["seconds"] += dt
        return logits if draft is not None else logits[-1]

    def _forward_reuse(self, ids, kinds, session, run, op: int) -> torch.Tensor:
        """A splice feed in reuse mode (``min_span=0``: the feed is one chunk): the copied ids
        that match the prompt take its cache entries (plan and timing both inside the timed
        window), the rest run in one ``"reuse"`` forward of the computed ids."""
        t0 = time.perf_counter()
        lines = run.ops[op]["lines"]
        sources = feed_sources(ids, kinds, lines, self._index, self.recompute)
        logits = session.forward_reuse(ids, sources)
        self.engine.sync()
        dt = time.perf_counter() - t0
        reused = sum(s is not None for s in sources)
        run.trace.forwards.append(ForwardRecord("reuse", len(ids) - reused, dt, op))
        run.trace.info["reused_ids"] = run.trace.info.get("reused_ids", 0) + reused
        run.ops[op]["forwards"] += 1
        run.ops[op]["seconds"] += dt
        return logits

    def _choose(self, fsm, state, logits, mode, run) -> int:
        """Masked argmax; what the ``mode`` keeps of it (:meth:`cadlib.decoding.modes.FreeRun.
        pick`: the program's id in forced mode); an open localized body chooses its own id.

        Timed in two parts: ``sync`` = the argmax that any greedy decoder runs (over the
        allowed ids, or over all ids in a body) and its transfer to Python; ``mask`` = the
        rest (mask lookup, gather, the banned-id check and its rare fallback; a body
        processor's mask).
        """
        if mode.body_open():
            return mode.body.choose(fsm, state, logits, run)
        t0 = time.perf_counter()
        allowed = fsm.allowed(state)
        if self.on_decision is not None:
            self.on_decision(allowed, logits)
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
        return mode.pick(tok, run)

    def _result(self, fsm, run: DecodeRun, mode) -> DecodeResult:
        tr = Transcript(tuple(run.ids), tuple(run.kinds))
        mode.check(tr.ids)
        text_prog = tr.program_text(self.table)
        program = text = error = None
        try:
            program = parse_program(text_prog)
            text = resolve(program, fsm.doc, mode="strict")
        except ValueError as err:  # ProgramSyntaxError / ResolveError: ruled out by the FSM
            error = f"{type(err).__name__}: {err}"
        return DecodeResult(
            tr,
            text_prog,
            program,
            text,
            error,
            run.trace,
            run.ops,
            mode.agreement(run),
            mode.budget_closed,
            mode.processors,
        )
