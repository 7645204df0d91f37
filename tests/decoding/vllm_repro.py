"""Minimal reproduction of the vLLM gap that blocks Copy-as-Decode in vLLM (issue 53).

vLLM 0.32's v1 model runner refuses any custom logits processor once speculative decoding is
on, whatever the proposer; here the built-in ``ngram`` one and a processor that changes
nothing. Run in ``make vllm``'s environment, from the repository root::

    HF_HUB_OFFLINE=1 VLLM_ENABLE_V1_MULTIPROCESSING=0 \\
        .venv-vllm/bin/python tests/decoding/vllm_repro.py [MODEL_FOLDER]

It prints the exception vLLM raises at engine start (vLLM 0.32.0: ``ValueError: Custom logits
processors are not supported when speculative decoding is enabled.``). Without a folder it
uses the packaged SmolLM2 (``cadlib.decoding.vllm_copy.vllm_model_folder``); the reproduction
itself uses vLLM only.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vllm import LLM
from vllm.v1.sample.logits_processor import LogitsProcessor


class NoOp(LogitsProcessor):
    """A custom logits processor that leaves every row as it is."""

    def __init__(self, vllm_config, device, is_pin_memory):
        pass

    def is_argmax_invariant(self) -> bool:
        return False

    def update_state(self, batch_update) -> None:
        pass

    def apply(self, logits):
        return logits


def main(model: str) -> None:
    try:
        LLM(
            model=model,
            enforce_eager=True,
            max_model_len=256,
            logits_processors=[NoOp],
            speculative_config={"method": "ngram", "num_speculative_tokens": 4},
        )
    except Exception as e:
        print(f"REPRO {type(e).__name__}: {e}")
        return
    print("REPRO none: the engine started (the gap is closed)")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        folder = sys.argv[1]
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's cadlib
        from cadlib.decoding.vllm_copy import vllm_model_folder

        folder = str(vllm_model_folder())
    main(folder)
