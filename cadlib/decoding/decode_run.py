"""The state of one decode as :class:`cadlib.decoding.decoder.CopyDecoder` runs it: the ids and
kinds fed so far with their per-op records (:class:`DecodeRun`), the forwards that feed them
(:func:`forward_chunks`), and the localized-edit mode, where the model writes each ``<gen>``
body of a given program (:class:`LocalizedBodies`)."""

from __future__ import annotations

import time

import torch

from cadlib.grammar import Copy, Program, StreamingParser
from cadlib.resolver import doc_lines, op_text, resolve

from .fsm import CopyGenFSM, Transcript

__all__ = ["DecodeRun", "forward_chunks", "LocalizedBodies"]


class DecodeRun:
    """Mutable bookkeeping of one decode: ids, kinds, per-op records, the ``trace``
    (a :class:`cadlib.decoding.decoder.Trace`, which it fills)."""

    def __init__(self, trace):
        self.ids, self.kinds, self.trace = [], [], trace
        self.op_start: int | None = None  # position of the current op's first id
        self.ops = [dict(kind="prompt", lines=None, forwards=0, seconds=0.0)]
        self.agree = self.decisions = 0

    def append(self, fsm: CopyGenFSM, state, tok: int, kind: str):
        if fsm.at_op_start(state):
            self.ops.append(dict(kind="?", lines=None, forwards=0, seconds=0.0))
            self.op_start = len(self.ids)
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


def forward_chunks(feed: list, kinds: list[str], min_span: int = 0) -> list[tuple[list, str]]:
    """The forwards that feed ``feed`` (ids of ``kinds``, see :data:`cadlib.decoding.fsm.KINDS`,
    plus ``"prompt"``): usually one; a splice of fewer than ``min_span`` ids goes id by id
    (Appendix J). Each forward is ``(ids, kind)``, ``kind`` as in
    :class:`cadlib.decoding.decoder.ForwardRecord`.
    :mod:`cadlib.costs.accounting` predicts the decoder's forwards with it."""
    n_splice = kinds.count("splice")
    if "prompt" in kinds:
        return [(feed, "prefill")]
    if n_splice == 0:
        return [(feed, "forced" if len(feed) > 1 else kinds[0])]
    if n_splice >= min_span:
        return [(feed, "splice")]
    first = kinds.index("splice")
    head = [(feed[:first], "forced" if first > 1 else kinds[0])] if first else []
    return head + [([x], "copy-step") for x in feed[first:]]


class LocalizedBodies:
    """Localized-edit mode: the model writes each ``<gen>`` body of a given program.

    Keeps the offset between the run and the planned transcript (bodies differ in length from
    the planned ones), counts each body's decisions against the budget and applies the
    optional per-body ``gen_processor`` (see
    :meth:`cadlib.decoding.decoder.CopyDecoder.decode`).
    """

    def __init__(self, plan: Transcript, program: Program, doc: str, gen_processor):
        self.doc, self.factory = doc, gen_processor
        self.gen_ops = [k for k, op in enumerate(program.ops) if not isinstance(op, Copy)]
        lines = doc_lines(doc)
        self.texts = [op_text(op, lines) for op in program.ops]
        self.ends = [
            k
            for k in range(1, len(plan.kinds) + 1)  # end of each planned body
            if plan.kinds[k - 1] == "gen" and (k == len(plan.kinds) or plan.kinds[k] != "gen")
        ]
        self.n = self.shift = self.decisions = self.total_decisions = 0
        self.is_open, self.start, self.processor = False, 0, None
        self.processors: list = []

    def open(self, fsm, run) -> bool:
        """At a body step: open the body on its first step (build its processor)."""
        if not self.is_open:
            self.is_open, self.start, self.decisions = True, len(run.ids), 0
            if self.factory is not None:
                self.processor = self.factory(*self._contexts(fsm, run))
                self.processors.append(self.processor)
        return True

    def _contexts(self, fsm, run) -> tuple[str, str]:
        text = Transcript(tuple(run.ids), tuple(run.kinds)).program_text(fsm.table)
        done = StreamingParser().feed(text)  # the complete ops before this body
        left = resolve(Program(done), fsm.doc) + "\n" if done else ""
        after = self.texts[self.gen_ops[self.n] + 1 :]
        return left, "\n" + "\n".join(after) if after else ""

    def close(self, run, budget: bool) -> None:
        """The body ended (its ``</gen>`` ids are in ``run``): the plan resumes after it."""
        self.is_open, self.processor = False, None
        self.shift = len(run.ids) - self.ends[self.n]
        self.n += 1

    def choose(self, fsm, state, logits, run) -> int:
        """Greedy choice of a body id under the grammar's mask and the body processor's."""
        t0 = time.perf_counter()
        allowed = fsm.allowed(state)
        scores = logits.masked_fill(~allowed.full_mask(), float("-inf"))
        if self.processor is not None:
            masked = self.processor(run.ids[self.start :], scores)
            if torch.isfinite(masked).any():  # a dead processor leaves the grammar's mask
                scores = masked
        t1 = time.perf_counter()
        tok = int(scores.argmax())
        t2 = time.perf_counter()
        run.trace.mask_s.append(t1 - t0)
        run.trace.sync_s.append(t2 - t1)
        run.decisions += 1
        self.decisions += 1
        self.total_decisions += 1
        return tok
