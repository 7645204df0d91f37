"""Load a model by name (the packaged SmolLM2, a random-init shape, a local stand-in, a hub
name), check first that it can load here, and label what loaded."""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
from pathlib import Path

import torch

from cadlib.record.provenance import monitor as monitor_load

from .registry import (
    _QWEN25_COMMON,
    MODEL_NAMES,
    QWEN2_SMOKE,
    QWEN25_SHAPES,
    SMOLLM2,
    STAND_INS,
    TINY,
    TINY_SHAPES,
    ModelUnavailableError,
    _hub_offline,
    _tiny_config,
    cache_dir,
    gguf_in,
    hub_reachable,
    is_random_init,
    offline_names,
    smollm2_gguf_path,
)
from .tokenizer import load_tokenizer

__all__ = [
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
]


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
        raise ValueError(
            f"device {device!r}: this torch ({torch.__version__}) {why}; use --device cpu or auto"
        )
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
    keys = (
        "model_type",
        "num_hidden_layers",
        "hidden_size",
        "intermediate_size",
        "num_attention_heads",
        "num_key_value_heads",
        "vocab_size",
    )
    info = {key: getattr(config, key, None) for key in keys}
    info["parameters"] = sum(p.numel() for p in model.parameters())
    info["dtype"] = str(next(model.parameters()).dtype).removeprefix("torch.")
    info["device"] = str(next(model.parameters()).device)
    info["attn_implementation"] = getattr(config, "_attn_implementation", None)
    return info


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
