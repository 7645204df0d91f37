"""Engines: the seam a second model runtime plugs into (issue 18, issue 19's ``engines/``).

:class:`Engine` / :class:`Session` (:mod:`.base`) are what
:class:`cadlib.decoding.decoder.CopyDecoder` drives: forward ids into a KV cache in one call and
read the last (or every) position's logits, truncate the cache, its length, the vocabulary size, a
timing sync. Two engines:

* :class:`TransformersEngine` (:mod:`.hf`): a ``transformers`` model over
  :mod:`cadlib.decoding.cache`;
* :class:`LlamaCppEngine` (:mod:`.llamacpp`): the same GGUF run by llama.cpp
  (``llama-cpp-python``, the optional ``llama`` extra).

:func:`load_engine` builds either from a name or path (what ``cad edit --engine`` calls);
:func:`as_engine` wraps a bare ``transformers`` model and passes engines through.
"""

from __future__ import annotations

from pathlib import Path

from cadlib.models import (
    ENGINE_KINDS,
    SMOLLM2,
    STAND_INS,
    gguf_in,
    load_model,
    set_threads,
    smollm2_gguf_path,
)

from .base import Engine, Session
from .gguf_export import stand_in_gguf
from .hf import TransformersEngine, TransformersSession
from .llamacpp import (
    LlamaCppEngine,
    LlamaCppSession,
    converted_gguf,
    import_llama_cpp,
    vocab_mismatches,
)

__all__ = [
    "Engine",
    "Session",
    "TransformersEngine",
    "TransformersSession",
    "LlamaCppEngine",
    "LlamaCppSession",
    "converted_gguf",
    "as_engine",
    "load_engine",
    "gguf_path",
    "stand_in_gguf",
    "import_llama_cpp",
    "vocab_mismatches",
]


def as_engine(model_or_engine) -> Engine:
    """An :class:`Engine` as is; a ``transformers`` model wrapped in :class:`TransformersEngine`."""
    if isinstance(model_or_engine, Engine):
        return model_or_engine
    return TransformersEngine(model_or_engine)


def load_engine(
    name_or_path: str = SMOLLM2,
    kind: str = "transformers",
    device: str = "auto",
    threads: int | None = None,
    **kwargs,
) -> Engine:
    """Load a model into an engine.

    Parameters
    ----------
    name_or_path : str
        ``transformers``: a name :func:`cadlib.models.load_model` knows, or a model folder.
        ``llama.cpp``: a ``.gguf`` file (any model whose GGUF carries its tokenizer; a folder
        holding one), :data:`cadlib.models.SMOLLM2` for the packaged GGUF, or a local
        stand-in (:data:`cadlib.models.QWEN2_SMOKE`, exported to GGUF on first use).
    kind : str
        ``"transformers"`` or ``"llama.cpp"``.
    device : str
        ``transformers`` only (``"auto"``, ``"cpu"``, ``"cuda"``, ...); llama.cpp runs on the CPU
        here (``"auto"`` or ``"cpu"``).
    threads : int, optional
        CPU threads: torch's (``None`` keeps its default) or llama.cpp's (``None``: 1).
    **kwargs
        Passed to :func:`cadlib.models.load_model` or :class:`LlamaCppEngine` (e.g.
        ``gguf_type="f16"``: the file converted to F16 weights, :func:`converted_gguf`).
    """
    if kind not in ENGINE_KINDS:
        raise ValueError(f"unknown engine {kind!r}; expected one of {ENGINE_KINDS}")
    if kind == "transformers":
        set_threads(threads)
        return TransformersEngine(load_model(name_or_path, device=device, **kwargs))
    if device not in ("auto", "cpu"):
        raise ValueError(f"the llama.cpp engine runs on the CPU here, got device={device!r}")
    return LlamaCppEngine(gguf_path(name_or_path), threads=threads or 1, **kwargs)


def gguf_path(name_or_path: str) -> Path:
    """The GGUF file the llama.cpp engine runs for ``name_or_path``: the packaged SmolLM2's,
    a stand-in's (exported on first use), a ``.gguf`` file, or the only one in a folder."""
    if name_or_path == SMOLLM2:
        return smollm2_gguf_path()
    if name_or_path in STAND_INS:
        return stand_in_gguf(name_or_path)
    path = gguf_in(name_or_path)
    if path is None:
        raise ValueError(
            f"the llama.cpp engine loads a .gguf file (or a folder holding one), got "
            f"{name_or_path!r}"
        )
    return path
