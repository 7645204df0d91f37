"""The vLLM feasibility spike (issue 53): one engine configuration per run, in ``.venv-vllm``.

Run from the repository root (``make vllm`` builds the environment)::

    HF_HUB_OFFLINE=1 VLLM_ENABLE_V1_MULTIPROCESSING=0 \
        .venv-vllm/bin/python tests/decoding/vllm_spike.py plain

``plain``, ``ngram``, ``mask``, ``proposer``, ``both`` (the proposer and the mask) or
``proposer-v2`` (the proposer on vLLM's model runner v2); it prints one JSON line:
the output ids, the engine steps (``LLMEngine.step`` calls) and, where the engine could not be
built or run, the exception's type and message. ``tests/decoding/test_vllm_copy.py`` runs each
and checks what each must show (``book/vllm.md`` reads the findings). Nothing is timed.

The case is hand-made: a seven-line document and the program copy 1-2, gen, copy 5-6. The
prompt ends with the first copy header (``<copy lines="1-2"/>``), so the next ids, the copied
lines, are forced by the grammar; then the model decides. (The first new id is the prefill's
sample, which no proposer drafts; the proposer drafts from the second on.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's cadlib

from cadlib.decoding.fsm import transcript  # noqa: E402
from cadlib.decoding.vllm_copy import (  # noqa: E402
    DOC_KEY,
    PREFIX_KEY,
    PROPOSER_PATH,
    CopyMaskLogitsProcessor,
    register,
    vllm_model_folder,
)
from cadlib.grammar import Copy, Gen  # noqa: E402
from cadlib.models.tokenizer import load_tokenizer  # noqa: E402

DOC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
PROGRAM = [Copy(1, 2), Gen("# subtract\n"), Copy(5, 6)]
PROMPT = "Edit this file (copy its lines, write the new ones):\n" + DOC + "\n"
#: Program ids the prompt already holds: ``<program>`` and the first copy header.
PREFIX_LEN = 12
MAX_TOKENS = 24
K = 8  # draft length (num_speculative_tokens)
METHODS = ("plain", "ngram", "mask", "proposer", "both", "proposer-v2")


def case() -> dict:
    """Prompt ids (the instruction, then the program's first ids) and the full transcript."""
    tok = load_tokenizer()
    ids = transcript(PROGRAM, DOC, tok).ids
    base = tok.encode(PROMPT, add_special_tokens=False)
    return {"base": base, "prompt": base + list(ids[:PREFIX_LEN]), "transcript": list(ids)}


def engine_kwargs(method: str) -> dict:
    """vLLM's arguments for one method (the speculative config and the logits processors)."""
    spec = {
        "ngram": {"method": "ngram", "num_speculative_tokens": K, "prompt_lookup_min": 2},
        "proposer": {"method": "custom_class", "model": PROPOSER_PATH, "num_speculative_tokens": K},
    }
    kwargs = {}
    if method in ("ngram", "proposer", "both", "proposer-v2"):
        kwargs["speculative_config"] = spec.get(method, spec["proposer"])
    if method in ("mask", "both"):
        kwargs["logits_processors"] = [CopyMaskLogitsProcessor]
    return kwargs


def spec_counters(llm) -> dict:
    """vLLM's speculative-decoding counters (drafts, draft ids, accepted ids), if any."""
    names = ("num_drafts", "num_draft_tokens", "num_accepted_tokens")
    return {
        n: int(m.value)
        for m in llm.get_metrics()
        for n in names
        if m.name == f"vllm:spec_decode_{n}" and hasattr(m, "value")
    }


def run(method: str) -> dict:
    """Build the engine for ``method`` and decode the case greedily, counting engine steps."""
    if method not in METHODS:
        raise SystemExit(f"unknown method {method!r}: one of {', '.join(METHODS)}")
    from vllm import LLM, SamplingParams

    if method == "proposer-v2":
        os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "1"
    c = case()
    register(c["base"], DOC)
    out = {"method": method, "prompt_len": len(c["prompt"]), "transcript": c["transcript"]}
    try:
        llm = LLM(
            model=str(vllm_model_folder()),
            dtype="float32",
            enforce_eager=True,
            max_model_len=512,
            max_num_seqs=2,
            seed=0,
            disable_log_stats=False,  # for the speculative counters below
            **engine_kwargs(method),
        )
        extra = {DOC_KEY: DOC, PREFIX_KEY: c["transcript"][:PREFIX_LEN]}
        params = SamplingParams(temperature=0, max_tokens=MAX_TOKENS, extra_args=extra)
        engine = llm.llm_engine
        engine.add_request("0", {"prompt_token_ids": c["prompt"]}, params)
        steps, ids = 0, []
        while engine.has_unfinished_requests():
            steps += 1
            for o in engine.step():
                if o.finished:
                    ids = list(o.outputs[0].token_ids)
        out.update(ids=ids, steps=steps, spec=spec_counters(llm))
    except Exception as e:  # the finding is the error itself: type and message
        out.update(error=type(e).__name__, message=" ".join(str(e).split())[:600])
    return out


if __name__ == "__main__":
    print("SPIKE " + json.dumps(run(sys.argv[1])), flush=True)
