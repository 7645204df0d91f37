"""Decoding held-out cases: FSM-constrained greedy decoding, the untrained free-form baselines."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence

import torch
from tqdm import tqdm

from cadlib.cases import EditCase
from cadlib.decoding.decoder import CopyDecoder
from cadlib.execution import run_humaneval_tests
from cadlib.metrics import equal_stripped, equal_up_to_one_newline
from cadlib.prompts import regen_prompt_ids

from .run_examples import prompt_ids, target_program
from .run_scoring import CaseResult, is_identity, score_program

__all__ = [
    "evaluate_baseline",
    "evaluate_fsm",
    "evaluate_localized",
    "extract_document",
    "extract_program",
    "generate_greedy",
    "score_output",
]


def _is_humaneval(case: EditCase) -> bool:
    return case.meta.get("language") in ("python", "js") and "test" in case.meta


def _run_tests(r: CaseResult, case: EditCase, timeout: float) -> CaseResult:
    """Attach the unit-test verdict of ``r.output`` (HumanEvalPack cases only; a parse
    failure has no output and fails)."""
    if not _is_humaneval(case):
        return r
    if r.output is None:
        r.passed, r.test_detail = False, "no output (parse failure)"
    else:
        r.passed, r.test_detail = run_humaneval_tests(case, r.output, timeout=timeout)
    return r


def evaluate_fsm(
    model,
    tokenizer,
    cases: Sequence[EditCase],
    *,
    system: str,
    max_new_tokens: int,
    test_timeout: float | None = 10.0,
    progress: bool = True,
    **extra,
) -> list[CaseResult]:
    """FSM-constrained greedy decoding with the copy splice (:class:`cadlib.decoding.decoder.
    CopyDecoder`) on ``cases``, scored by :func:`score_program` (paper §5: "FSM-constrained
    greedy decoding"; App. "Deterministic decoding": argmax over the allowed set).

    The prompt is :func:`prompt_ids`, the one the model was trained on. One untimed warm-up
    decode (4 decisions) precedes the timed ones (book/design.md, "Measuring honestly");
    ``wall_s`` is the whole decode of a case, prompt prefill included. ``extra`` (e.g.
    ``seed=0``) is stored on every result; ``test_timeout=None`` skips the unit tests.
    """
    return _decode_cases(
        model,
        tokenizer,
        cases,
        system,
        max_new_tokens,
        test_timeout,
        progress,
        localized=False,
        **extra,
    )


def evaluate_localized(
    model,
    tokenizer,
    cases: Sequence[EditCase],
    *,
    system: str,
    max_new_tokens: int,
    test_timeout: float | None = 10.0,
    progress: bool = True,
    **extra,
) -> list[CaseResult]:
    """Localized-edit decoding: the oracle program's ops and copy spans are given, the model
    writes only the ``<gen>`` bodies (:meth:`cadlib.decoding.decoder.CopyDecoder.decode` with
    ``program=`` and ``free_gen=True``, greedy, the grammar's own body mask; chapter 8's
    setting without its syntax constraint).

    Its EM ("localized-edit EM") isolates bug fixing from span selection: every span is right
    by construction (``span_em`` is true unless the budget cuts a body), so a miss is the
    body text. ``max_new_tokens`` bounds the body ids of the whole program. Same prompt,
    warm-up, timing, ``extra`` and tests as :func:`evaluate_fsm`.
    """
    return _decode_cases(
        model,
        tokenizer,
        cases,
        system,
        max_new_tokens,
        test_timeout,
        progress,
        localized=True,
        **extra,
    )


def _decode_cases(
    model,
    tokenizer,
    cases: Sequence[EditCase],
    system: str,
    max_new_tokens: int,
    test_timeout: float | None,
    progress: bool,
    *,
    localized: bool,
    **extra,
) -> list[CaseResult]:
    """The loop both evaluations share: one untimed warm-up decode, then per case the timed
    decode (free, or ``localized`` along the case's target program with the model writing the
    bodies), its score, and the unit tests."""
    decoder = CopyDecoder(model, tokenizer, max_new_tokens=max_new_tokens)
    if cases:
        CopyDecoder(model, tokenizer, max_new_tokens=4).decode(
            cases[0].doc, prompt_ids=prompt_ids(cases[0], tokenizer)
        )
    results = []
    for case in tqdm(cases, desc=system, disable=not progress):
        ids = prompt_ids(case, tokenizer)
        along = dict(program=target_program(case), free_gen=True) if localized else {}
        start = time.perf_counter()
        out = decoder.decode(case.doc, prompt_ids=ids, **along)
        wall = time.perf_counter() - start
        r = score_program(case, out.program_text, system, wall_s=wall, new_tokens=out.n_chosen)
        r.extra.update(
            extra,
            budget_closed=out.budget_closed,
            forwards=out.trace.n_forwards,
            **({"localized": True} if localized else {}),
        )
        if test_timeout is not None:
            _run_tests(r, case, test_timeout)
        results.append(r)
    return results


def generate_greedy(model, tokenizer, ids: Sequence[int], max_new_tokens: int) -> tuple[str, int]:
    """Unconstrained greedy continuation of ``ids`` (``model.generate``, no sampling):
    ``(text, number of new ids)``; stops at the tokenizer's EOS."""
    x = torch.tensor([list(ids)], dtype=torch.long, device=model.device)
    with torch.inference_mode():
        out = model.generate(
            input_ids=x,
            attention_mask=torch.ones_like(x),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
        )
    new = out[0, x.shape[1] :].tolist()
    return tokenizer.decode(new, skip_special_tokens=True), len(new)


def extract_program(text: str) -> str:
    """The program in a free-form reply: from the first ``<program>`` to the first
    ``</program>`` after it (prose or a code fence around it is ignored); the whole text when
    there is no ``<program>`` (it then fails to parse)."""
    start = text.find("<program>")
    if start < 0:
        return text
    end = text.find("</program>", start)
    return text[start:] if end < 0 else text[start : end + len("</program>")]


_FENCE = re.compile(r"```[\w+-]*\n(.*?)(?:\n```|$)", re.DOTALL)


def extract_document(text: str) -> str:
    """The edited document in a free-form reply: the body of the first fenced code block if
    there is one, else the reply itself (the regeneration prompt asks for nothing else)."""
    m = _FENCE.search(text)
    return m.group(1) if m else text


def score_output(case: EditCase, output: str, system: str = "", **extra) -> CaseResult:
    """Score a full-regeneration output: EM only (no program, so no parse or endpoints)."""
    return CaseResult(
        case.id,
        system,
        output,
        True,
        output,
        equal_up_to_one_newline(output, case.gold),
        equal_stripped(output, case.gold),
        False,
        0,
        0,
        0,
        0,
        False,
        extra={"free_form": True},
        span_iou=math.nan,
        identity=is_identity(output, case.doc),
        **extra,
    )


def evaluate_baseline(
    model,
    tokenizer,
    cases: Sequence[EditCase],
    kind: str,
    *,
    max_new_tokens: int,
    test_timeout: float | None = 10.0,
    progress: bool = True,
) -> list[CaseResult]:
    """The untrained free-form baselines of paper App. "Baselines on the same split".

    ``kind="regen"`` (R003): full-document regeneration, the prompt of
    :func:`cadlib.prompts.regen_prompt_ids`, greedy, budget ``1.25 x`` the document's ids
    ``+ 32``; the reply (or its first code block) is the output.
    ``kind="crp"`` (R004): prompt-level grammar, no FSM: the same edit prompt the FSM
    decoder sees (it states the grammar and gives a worked example), unconstrained greedy
    generation of at most ``max_new_tokens`` ids, then :func:`extract_program` and
    :func:`cadlib.grammar.parse_program`; a reply that does not parse is a parse failure.
    """
    if kind not in ("regen", "crp"):
        raise ValueError(f"unknown baseline {kind!r}; valid: 'regen', 'crp'")
    system = {"regen": "Full regeneration (untrained)", "crp": "Prompt-level CRP (untrained)"}[kind]
    results = []
    for k, case in enumerate(tqdm(cases, desc=system, disable=not progress)):
        if kind == "regen":
            ids = regen_prompt_ids(tokenizer, case.instruction, case.doc)
            budget = math.ceil(1.25 * len(tokenizer.encode(case.doc, add_special_tokens=False)))
            budget += 32
        else:
            ids, budget = prompt_ids(case, tokenizer), max_new_tokens
        if k == 0:  # untimed warm-up
            generate_greedy(model, tokenizer, ids, 4)
        start = time.perf_counter()
        text, n_new = generate_greedy(model, tokenizer, ids, budget)
        wall = time.perf_counter() - start
        if kind == "regen":
            r = score_output(case, extract_document(text), system, wall_s=wall, new_tokens=n_new)
        else:
            r = score_program(case, extract_program(text), system, wall_s=wall, new_tokens=n_new)
        r.extra["reply"] = text
        if test_timeout is not None:
            _run_tests(r, case, test_timeout)
        results.append(r)
    return results
