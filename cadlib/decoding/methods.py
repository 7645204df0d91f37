"""Decoding methods as objects: one protocol for every method a chapter times along the gold.

A case is first made ready for every method (:func:`prepare` -> :class:`CaseInputs`: the
same document, instruction and gold for all). A :class:`DecodingMethod` has a ``name`` (the
display name in tables) and one call, ``run(x)``, that decodes ``x``'s gold and returns a
:class:`MethodRun` (the :class:`~cadlib.decoding.decoder.Trace`, the
:class:`~cadlib.decoding.decoder.DecodeResult` where there is one, and whether the output is the
gold).

* :class:`Autoregressive`: one forward per output id (:func:`ar_along`);
* :class:`PromptLookup`: drafts from the prompt verified in one forward
  (:func:`prompt_lookup_along`, drafts from the engine's own drafter:
  ``transformers``' ``PromptLookupCandidateGenerator``, or llama.cpp's);
* :class:`CopyAsDecode`: :class:`~cadlib.decoding.decoder.CopyDecoder` forced along the
  oracle program; as :data:`DRAFTED` the same decoder with its drafts on (cursor lookup inside
  bodies and speculative op headers, :mod:`cadlib.decoding.drafts`), the accounting's
  ``m=0 +cursor +headers``.

:func:`make_methods` builds them by name (:data:`METHODS`, in that order, and
:data:`DRAFTED`) for a model or any engine (:mod:`cadlib.decoding.engines`): the same loops
time every engine (chapter 6 on ``transformers``, chapter 6b on llama.cpp beside it); the
baselines' loops are arguments all the same, so a test can count their calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import torch

from cadlib.grammar import Program
from cadlib.oracle import oracle_program
from cadlib.prompts import edit_prompt_ids, regen_prompt_ids

from .decoder import CopyDecoder, DecodeResult, ForwardRecord, Trace
from .drafts import composition_drafts
from .engines import as_engine
from .fsm import token_table
from .method_names import COPY_AS_DECODE, DRAFTED, DRAFTED_SETTING, METHODS, TIMED

__all__ = [
    "METHODS",
    "DRAFTED",
    "DRAFTED_SETTING",
    "TIMED",
    "COPY_AS_DECODE",
    "CaseInputs",
    "prepare",
    "timed_sample",
    "fits",
    "ar_along",
    "prompt_lookup_along",
    "MethodRun",
    "DecodingMethod",
    "Autoregressive",
    "PromptLookup",
    "CopyAsDecode",
    "make_methods",
]


# --------------------------------------------------------------------------------------------
# A case made ready for every method
# --------------------------------------------------------------------------------------------


@dataclass
class CaseInputs:
    """One case made ready for every method: identical document, instruction and gold.

    ``edit_prompt`` (numbered document, grammar) feeds Copy-as-Decode; ``regen_prompt``
    (plain document) feeds the autoregressive and prompt-lookup baselines; ``target`` is
    the gold's ids plus EOS, the output both baselines produce.
    """

    corpus: str
    case: object
    edit_prompt: list
    regen_prompt: list
    program: Program
    target: list


def prepare(corpus: str, case, tokenizer) -> CaseInputs:
    """Prompts, oracle program and gold ids of ``case`` (see :class:`CaseInputs`)."""
    table = token_table(tokenizer)
    target = list(table.encode(case.gold)) + list(table.eos_ids[:1])
    return CaseInputs(
        corpus,
        case,
        edit_prompt_ids(tokenizer, case.instruction, case.doc),
        regen_prompt_ids(tokenizer, case.instruction, case.doc),
        oracle_program(case.doc, case.gold),
        target,
    )


def timed_sample(
    name: str,
    cases: list,
    n: int | None,
    tokenizer,
    max_ids: int | None = None,
    seed: int = 0,
    context: int | None = None,
) -> list[CaseInputs]:
    """The timed cases of one corpus: among the cases whose gold has at most ``max_ids`` ids
    (``None``: all) and, given a ``context``, whose longer prompt and gold fit it together,
    ``n`` strata of equal size by gold length, one seeded case from each
    (``n=None``: every eligible case). Stratified, so a sample of a few cases spans short and
    long outputs instead of letting one long case dominate the pooled time."""
    xs = [prepare(name, c, tokenizer) for c in cases]
    xs = sorted(
        (
            x
            for x in xs
            if (max_ids is None or len(x.target) - 1 <= max_ids)
            and (context is None or fits(x, context))
        ),
        key=lambda x: (len(x.target), x.case.id),
    )
    if n is None or n >= len(xs):
        return xs
    if n < 1:
        raise ValueError(f"need at least one timed case per corpus, got {n}")
    rng = np.random.default_rng(seed)
    edges = np.linspace(0, len(xs), n + 1).astype(int)
    return [xs[int(rng.integers(a, b))] for a, b in zip(edges, edges[1:], strict=False)]


def fits(x: CaseInputs, context: int) -> bool:
    """Whether ``x``'s longer prompt and its gold ids fit a model's ``context`` together."""
    return max(len(x.edit_prompt), len(x.regen_prompt)) + len(x.target) <= context


# --------------------------------------------------------------------------------------------
# Baselines driven along the same output, on any engine
# --------------------------------------------------------------------------------------------


def _timed_forward(engine, session, ids, trace: Trace, kind: str, all_logits: bool = False):
    t0 = time.perf_counter()
    logits = session.forward(ids, all_logits=all_logits)
    engine.sync()
    trace.forwards.append(ForwardRecord(kind, len(ids), time.perf_counter() - t0))
    return logits


def _timed_argmax(logits: torch.Tensor, trace: Trace):
    t0 = time.perf_counter()
    out = logits.argmax(-1).tolist()
    trace.sync_s.append(time.perf_counter() - t0)
    return out


def ar_along(model, prompt_ids, target_ids) -> Trace:
    """Autoregressive greedy decoding of ``target_ids``, one forward per token (``L = tau T``),
    on ``model``: a ``transformers`` model or any :class:`cadlib.decoding.engines.Engine`.

    Teacher-forced: each step runs the forward and the argmax of a greedy decoder, then
    appends the target id, so the output is ``target_ids`` whatever the model prefers (the
    comparison assumes, as forced-oracle Copy-as-Decode does, a model that agrees with it).
    Forwards: the prompt prefill, then one per target id except the last.
    """
    engine = as_engine(model)
    trace, session, feed = Trace(), engine.new_session(), list(prompt_ids)
    start = time.perf_counter()
    for k, tok in enumerate(target_ids):
        logits = _timed_forward(engine, session, feed, trace, "prefill" if k == 0 else "step")
        _timed_argmax(logits[-1], trace)
        feed = [tok]
    trace.wall_s = time.perf_counter() - start
    return trace


def prompt_lookup_along(
    model, prompt_ids, target_ids, num_output_tokens: int = 10, max_matching_ngram_size: int = 2
) -> Trace:
    """Prompt-lookup decoding driven along ``target_ids``, on ``model`` (a ``transformers``
    model or any engine), with the engine's own drafter
    (:meth:`cadlib.decoding.engines.Engine.lookup_drafter`: ``transformers``'
    ``PromptLookupCandidateGenerator``, what ``generate(prompt_lookup_num_tokens=...)`` uses,
    or llama-cpp-python's ``LlamaPromptLookupDecoding``).

    Each round drafts up to ``num_output_tokens`` ids by matching the last n-gram (n <=
    ``max_matching_ngram_size``) in prompt + output; one forward verifies ``[last id] + draft``
    with logits at every position and the greedy argmax per position (the work a verifier
    does). The accepted prefix is the longest run of draft ids equal to the target (what greedy
    verification accepts when the model agrees with the target), plus one bonus id; the
    rejected tail is cropped from the cache. ``trace.info`` counts drafted and accepted ids and
    the rounds.
    """
    engine, target = as_engine(model), list(target_ids)
    draft_ids = engine.lookup_drafter(
        num_output_tokens, max_matching_ngram_size, len(prompt_ids) + len(target)
    )
    trace, session, seq = Trace(), engine.new_session(), list(prompt_ids)
    drafted = accepted = 0
    start = time.perf_counter()
    _timed_argmax(_timed_forward(engine, session, seq, trace, "prefill")[-1], trace)
    seq.append(target[0])
    k = 1
    while k < len(target):
        draft = draft_ids(seq, len(target) - k)
        feed = [seq[-1], *draft]
        _timed_argmax(
            _timed_forward(engine, session, feed, trace, "verify", all_logits=True), trace
        )
        n = 0
        while n < len(draft) and k + n < len(target) and draft[n] == target[k + n]:
            n += 1
        drafted, accepted = drafted + len(draft), accepted + n
        seq += target[k : k + n + 1]
        k += n + 1
        session.truncate(len(seq) - 1)
    trace.wall_s = time.perf_counter() - start
    trace.info.update(drafted=drafted, accepted=accepted, rounds=trace.n_forwards - 1)
    return trace


# --------------------------------------------------------------------------------------------
# The protocol and its three methods
# --------------------------------------------------------------------------------------------


@dataclass
class MethodRun:
    """What one run of a method along a case gives: its ``trace``, the decoder's ``result``
    (Copy-as-Decode only), and whether the output ``reproduced`` the gold (the teacher-forced
    baselines emit the target by construction)."""

    trace: Trace
    result: DecodeResult | None = None
    reproduced: bool = True


@runtime_checkable
class DecodingMethod(Protocol):
    """A decoding method: a display ``name`` and ``run(x)`` along a prepared case."""

    name: str

    def run(self, x: CaseInputs) -> MethodRun: ...


@dataclass
class Autoregressive:
    """One forward per output id, along ``x.target`` after the regen prompt.
    ``along(model, prompt_ids, target_ids) -> Trace``: :func:`ar_along` or an engine's loop."""

    model: object
    along: Callable = ar_along
    name = "autoregressive"

    def run(self, x: CaseInputs) -> MethodRun:
        return MethodRun(self.along(self.model, x.regen_prompt, x.target))


@dataclass
class PromptLookup:
    """Prompt-lookup drafts (up to ``num_tokens`` ids, n-gram <= ``max_ngram``) verified one
    forward per round, along ``x.target`` after the regen prompt. ``along(model, prompt_ids,
    target_ids, num_tokens, max_ngram) -> Trace``: :func:`prompt_lookup_along` or an engine's."""

    model: object
    num_tokens: int = 10
    max_ngram: int = 2
    along: Callable = prompt_lookup_along
    name = "prompt lookup"

    def run(self, x: CaseInputs) -> MethodRun:
        trace = self.along(self.model, x.regen_prompt, x.target, self.num_tokens, self.max_ngram)
        return MethodRun(trace)


@dataclass
class CopyAsDecode:
    """Forced-oracle Copy-as-Decode: ``decoder`` driven along ``x.program`` after the edit
    prompt (the mechanism under perfect span selection); ``name``: :data:`DRAFTED` for a
    decoder with drafts."""

    decoder: CopyDecoder
    name: str = "Copy-as-Decode"

    def run(self, x: CaseInputs) -> MethodRun:
        res = self.decoder.decode(x.case.doc, prompt_ids=x.edit_prompt, program=x.program)
        return MethodRun(res.trace, res, res.text == x.case.gold)


def make_methods(
    model,
    decoder: CopyDecoder,
    lookup_setting: tuple[int, int] = (10, 2),
    names: Sequence[str] = METHODS,
    *,
    ar: Callable = ar_along,
    lookup: Callable = prompt_lookup_along,
) -> tuple[DecodingMethod, ...]:
    """The methods called ``names`` (in that order) on ``model``: the baselines run the loops
    ``ar`` / ``lookup`` (``lookup_setting`` = (draft ids, max n-gram)), Copy-as-Decode runs
    ``decoder``, :data:`DRAFTED` a copy of it with both drafts on. An unknown name is a
    ``ValueError`` that lists the valid ones."""
    build = {
        "autoregressive": lambda: Autoregressive(model, ar),
        "prompt lookup": lambda: PromptLookup(model, *lookup_setting, along=lookup),
        "Copy-as-Decode": lambda: CopyAsDecode(decoder),
        DRAFTED: lambda: CopyAsDecode(
            CopyDecoder(
                decoder.model,
                decoder.tokenizer,
                decoder.max_new_tokens,
                drafts=composition_drafts(DRAFTED_SETTING),
            ),
            DRAFTED,
        ),
    }
    unknown = [n for n in names if n not in build]
    if unknown:
        raise ValueError(f"unknown decoding method {unknown[0]!r}; valid: {', '.join(build)}")
    return tuple(build[n]() for n in names)
