"""The llama.cpp engine: the same GGUF file, decoded by llama.cpp (``llama-cpp-python``).

People who run a small GGUF model on a CPU use llama.cpp; this engine lets the decoder drive
it through the seam of :mod:`cadlib.decoding.engines.base`. One :meth:`Session.forward` is one
``llama_decode`` of a batch of ids at consecutive positions (the splice: a parallel prefill of
the ``N`` ids of lines ``i..j``), with logits requested for the last position only, or for
every position (a verifier). :meth:`Session.truncate` is ``llama_memory_seq_rm`` on sequence
0 (what rejected drafts and benchmark restores need). The ids come from the Hugging Face
tokenizer of the same model (:func:`cadlib.models.load_tokenizer`), so the FSM is unchanged;
:func:`vocab_mismatches` checks that the GGUF's vocabulary gives every id the same bytes.

The binding is imported lazily (``llama_cpp`` is an optional dependency: the ``llama`` extra);
a missing binding fails with a message that says how to install it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from pathlib import Path

import numpy as np
import torch

from cadlib.models import GGUF_TYPES, cache_dir, smollm2_gguf_path
from cadlib.vocab import token_bytes

from .base import Engine, Session

__all__ = [
    "LlamaCppEngine",
    "LlamaCppSession",
    "DRAFT_MAX_IDS",
    "converted_gguf",
    "gguf_piece",
    "vocab_mismatches",
    "import_llama_cpp",
]

#: Weight types :func:`converted_gguf` writes, as llama.cpp names its file types.

#: The draft policy per llama.cpp engine (its :attr:`Engine.draft_max_ids` by engine name):
#: the caps the committed run of :mod:`cadlib.costs.draft_policy` chose on its development
#: corpora (``results/llama_cpp.drafts.json``; a test checks that these are its choices).
DRAFT_MAX_IDS: dict[str, int | None] = {"llama.cpp": 8, "llama.cpp F16": 16}

INSTALL_HINT = (
    "llama.cpp's Python binding is missing: `make install` builds it, or "
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" pip install llama-cpp-python==0.3.36'
)


def import_llama_cpp():
    """The ``llama_cpp`` module (optional dependency, hence imported on demand)."""
    try:
        import llama_cpp  # optional heavy dependency: only the llama.cpp engine needs it
    except ImportError as err:
        raise ImportError(INSTALL_HINT) from err
    return llama_cpp


def converted_gguf(path: str | Path, gguf_type: str) -> Path:
    """``path`` rewritten with its weights in ``gguf_type`` (:data:`cadlib.models.GGUF_TYPES`) by
    llama.cpp's own ``llama_model_quantize``, cached beside the other generated models
    (``$CADLIB_CACHE``).

    Why: on a CPU, llama.cpp multiplies a batch of many ids far faster with float weights
    (a tiled GEMM) than with Q4_1 ones, and a copy splice is such a batch, while a one-id step
    reads every weight and prefers the smaller file (chapter 6b measures both). A quantized
    file is dequantized: the same weights, rounded to ``gguf_type``.
    """
    if gguf_type not in GGUF_TYPES:
        raise ValueError(f"unknown GGUF type {gguf_type!r}; use one of {sorted(GGUF_TYPES)}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no GGUF file at {path}")
    stat = path.stat()
    out = cache_dir() / "gguf" / f"{path.stem}-{stat.st_size}-{gguf_type}.gguf"
    if out.is_file():
        return out
    lib = import_llama_cpp()
    params = lib.llama_model_quantize_default_params()
    params.ftype = getattr(lib, GGUF_TYPES[gguf_type])
    params.allow_requantize = True
    params.nthread = 1
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_suffix(".part")
    with _quiet_c_output():  # llama.cpp prints every tensor it converts
        rc = lib.llama_model_quantize(str(path).encode(), str(part).encode(), params)
    if rc != 0 or not part.is_file():
        part.unlink(missing_ok=True)
        raise RuntimeError(f"llama.cpp could not convert {path.name} to {gguf_type} (code {rc})")
    part.replace(out)
    return out


@contextlib.contextmanager
def _quiet_c_output():
    """Send what C code writes to stdout and stderr to /dev/null meanwhile (C's own buffers
    flushed before the descriptors come back, so nothing buffered leaks out later)."""
    libc = ctypes.CDLL(None)
    libc.fflush(None)
    saved = [os.dup(fd) for fd in (1, 2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            os.dup2(null, fd)
        yield
    finally:
        libc.fflush(None)
        for fd, old in zip((1, 2), saved, strict=True):
            os.dup2(old, fd)
            os.close(old)
        os.close(null)


class LlamaCppSession(Session):
    """The (single) KV cache of a :class:`LlamaCppEngine`, sequence 0 of its context."""

    def __init__(self, engine: LlamaCppEngine):
        self.engine, self.n = engine, 0
        engine.llm._ctx.kv_cache_clear()
        engine._active = self

    def _check_active(self) -> None:
        if self.engine._active is not self:
            raise RuntimeError(
                "a newer session of this llama.cpp engine replaced this one "
                "(one KV cache per engine)"
            )

    def forward(self, ids, all_logits: bool = False, keep: int = 1) -> torch.Tensor:
        ids = self._check_ids(ids, keep)
        self._check_active()
        eng = self.engine
        if self.n + len(ids) > eng.n_ctx:
            raise ValueError(f"{self.n} cached + {len(ids)} new ids exceed n_ctx={eng.n_ctx}")
        first = 0 if all_logits else len(ids) - keep  # the first position whose logits we keep
        rows = []
        for i in range(0, len(ids), eng.n_batch):
            chunk = ids[i : i + eng.n_batch]
            eng.batch.set_batch(batch=chunk, n_past=self.n, logits_all=False)
            kept = [j for j in range(len(chunk)) if i + j >= first]
            for j in kept:  # llama.cpp computes logits only where the batch asks for them
                eng.batch.batch.logits[j] = True
            eng.llm._ctx.decode(eng.batch)
            self.n += len(chunk)
            for j in kept:
                ptr = eng.lib.llama_get_logits_ith(eng.ctx, j)
                rows.append(np.ctypeslib.as_array(ptr, shape=(1, eng.vocab_size)).copy())
        return torch.from_numpy(np.concatenate(rows) if len(rows) > 1 else rows[0])

    def truncate(self, length: int) -> None:
        self._check_active()
        length = int(length)
        if length < 0:
            raise ValueError(f"cannot truncate to {length} ids")
        if length < self.n:
            if not self.engine.llm._ctx.kv_cache_seq_rm(0, length, -1):
                raise RuntimeError(f"llama.cpp could not drop cache positions {length}..")
            self.n = length

    def __len__(self) -> int:
        return self.n


class LlamaCppEngine(Engine):
    """A GGUF model run by llama.cpp on the CPU.

    Parameters
    ----------
    path : str or Path
        The GGUF file (default: the packaged SmolLM2, :func:`cadlib.models.smollm2_gguf_path`).
    threads : int, optional
        llama.cpp threads for decoding and batches (default: 1, the book's cpu setting; timings
        say how many they used).
    n_ctx : int
        Context (KV cache) size in ids.
    n_batch : int
        Largest batch of one ``llama_decode`` call (longer forwards are split).
    gguf_type : str, optional
        Run the file converted to these weights (:func:`converted_gguf`, e.g. ``"f16"``); the
        engine is then named ``"llama.cpp F16"``. ``None``: the file as it is.
    """

    name = "llama.cpp"

    def __init__(
        self,
        path: str | Path | None = None,
        threads: int | None = 1,
        n_ctx: int = 8192,
        n_batch: int = 2048,
        seed: int = 0,
        gguf_type: str | None = None,
    ):
        path = Path(smollm2_gguf_path() if path is None else path)
        if not path.is_file():
            raise FileNotFoundError(f"no GGUF file at {path}")
        if gguf_type is not None:
            path = converted_gguf(path, gguf_type)
            self.name = f"llama.cpp {gguf_type.upper()}"
        if threads is not None and int(threads) < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.lib = import_llama_cpp()
        self.path, self.threads = path, int(threads or os.cpu_count() or 1)
        self.llm = self.lib.Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_batch=n_batch,
            n_ubatch=min(512, n_batch),
            n_threads=self.threads,
            n_threads_batch=self.threads,
            seed=seed,
            verbose=False,
        )
        self.ctx, self.batch = self.llm._ctx.ctx, self.llm._batch
        self.n_ctx, self.n_batch = self.llm.n_ctx(), self.llm.n_batch
        self.vocab_size = int(self.llm.n_vocab())
        self.device = torch.device("cpu")
        self.draft_max_ids = DRAFT_MAX_IDS.get(self.name)
        self._active = None

    def new_session(self) -> LlamaCppSession:
        """Clear the context's KV cache and start a session on it (earlier ones end)."""
        return LlamaCppSession(self)

    def lookup_drafter(self, num_tokens: int, max_ngram: int, max_length: int):
        """llama-cpp-python's own prompt-lookup drafter (``LlamaPromptLookupDecoding``): the
        ids that followed the latest earlier occurrence of the last n-gram, capped at the ids
        ``remaining``."""
        from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

        drafter = LlamaPromptLookupDecoding(max_ngram_size=max_ngram, num_pred_tokens=num_tokens)

        def draft(seq: list[int], remaining: int) -> list[int]:
            return drafter(np.asarray(seq, dtype=np.intc)).tolist()[:remaining]

        return draft

    def check_copy_kv(self, mode: str) -> None:
        """Only ``copy_kv="prefill"`` runs on llama.cpp: the reuse copy (issue 32) cannot be
        built cleanly on llama-cpp-python 0.3.36's API (``llama_memory_*``), for two reasons.

        * No cell duplication: ``llama_memory_seq_cp`` does not copy a cell's K/V rows; in the
          unified cache it adds the destination sequence to the *same* cell, which has one
          position. ``llama_memory_seq_add`` (the K-shift) then moves that cell for every
          sequence holding it, so a prompt cell cannot stay at its position and also appear
          at a copy's output position in sequence 0. What is missing: a call that copies the
          cells of ``[p0, p1)`` of one sequence to new cells at ``p0 + delta`` (keys
          re-rotated, as the K-shift does).
        * No gaps: ``llama_decode`` requires a sequence's new positions to continue its last
          cached one ("it is required that the sequence positions remain consecutive:
          Y = X + 1"), so the ids a copy must compute (line starts) cannot be decoded at
          positions between reused cells.

        The only route left is the raw state blob (``llama_state_seq_get_data`` /
        ``set_data``): editing its positions and re-rotating F16 keys by hand, tied to an
        undocumented layout. The reuse mode therefore stays on ``transformers``.
        """
        if mode != "prefill":
            raise NotImplementedError(
                f"copy_kv={mode!r} runs on the transformers engine only: llama.cpp cannot "
                "copy KV cells to new positions within one sequence (see "
                "LlamaCppEngine.check_copy_kv)"
            )

    def weight_type(self) -> str:
        """The GGUF file's weight type as llama.cpp names it (``general.file_type``): ``Q4_1``
        for the packaged SmolLM2, ``F16`` once converted, ``F32`` for an exported stand-in."""
        code = int(self.llm.metadata.get("general.file_type", -1))
        for name in dir(self.lib):
            if name.startswith("LLAMA_FTYPE_") and getattr(self.lib, name) == code:
                kind = name.removeprefix("LLAMA_FTYPE_")
                return kind.removeprefix("MOSTLY_").removeprefix("ALL_")
        return "?"

    def info(self) -> dict:
        """:meth:`Engine.info` with the threads, the file, its weights (``dtype``, e.g.
        ``"Q4_1 GGUF"``) and the binding's version."""
        return dict(
            super().info(),
            threads=self.threads,
            gguf=self.path.name,
            dtype=f"{self.weight_type()} GGUF",
            llama_cpp_python=self.lib.__version__,
        )


def gguf_piece(engine: LlamaCppEngine, token: int) -> bytes:
    """The bytes of one id in the GGUF's vocabulary (``llama_token_to_piece`` with a buffer
    large enough for any piece: the binding's own ``detokenize`` truncates at 32 bytes)."""
    size = 256
    buf = ctypes.create_string_buffer(size)
    n = engine.lib.llama_token_to_piece(engine.llm._model.vocab, int(token), buf, size, 0, True)
    if n < 0:
        raise ValueError(f"id {token}: piece longer than {size} bytes")
    return bytes(buf[:n])


def vocab_mismatches(engine: LlamaCppEngine, tokenizer, ids=None) -> list[int]:
    """Ids whose bytes differ between the GGUF vocabulary (:func:`gguf_piece`)
    and the Hugging Face tokenizer (:func:`cadlib.vocab.token_bytes`); special ids, which
    llama.cpp renders as empty pieces, are skipped. Empty list: same ids, same bytes."""
    pieces = token_bytes(tokenizer)
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    ids = range(min(engine.vocab_size, len(pieces))) if ids is None else ids
    out = []
    for i in ids:
        if i in special:
            continue
        if gguf_piece(engine, i) != pieces[i]:
            out.append(int(i))
    return out
