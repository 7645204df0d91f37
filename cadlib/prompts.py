"""Prompts: the edit prompt of Copy-as-Decode and the full-regeneration prompt of the baselines.

One place for the exact text the model reads, so the decoder (chapter 6) and the SFT pilot
(chapter 7) use the same prompt. The edit prompt carries the instruction, a short statement of
the two-primitive grammar (paper §2.1, the prompt-level variant of Appendix Q) and the document
with its lines numbered from 1 as ``"{i}| {line}"`` (right-aligned), rendered with the model's
chat template. The decoder then appends ``<program>\\n`` itself (a forced literal).
"""

from __future__ import annotations

__all__ = [
    "SYSTEM",
    "number_lines",
    "edit_messages",
    "regen_messages",
    "render_chat",
    "chat_ids",
    "edit_prompt_ids",
    "regen_prompt_ids",
]

SYSTEM = "You are a precise editor of code and text."

_EDIT = """\
{instruction}

Do not rewrite the document. Write a program that builds the edited document from the \
numbered lines of the original:
- <copy lines="i-j"/> copies lines i to j (inclusive) of the original;
- <gen>
new text
</gen> writes new text.
Put the operations inside <program> and </program>. Example: to replace line 2 of a \
3-line document, write
<program>
<copy lines="1-1"/>
<gen>
the new line 2
</gen>
<copy lines="3-3"/>
</program>

Original document:
{numbered}"""

_REGEN = """\
{instruction}

Write out the complete edited document, and nothing else.

Original document:
{doc}"""


def number_lines(doc: str, sep: str = "| ") -> str:
    """The document with right-aligned 1-based line numbers (lines are ``doc.split("\\n")``).

    >>> number_lines("a\\nb")
    '1| a\\n2| b'
    """
    lines = doc.split("\n")
    width = len(str(len(lines)))
    return "\n".join(f"{k:>{width}}{sep}{line}" for k, line in enumerate(lines, start=1))


def edit_messages(instruction: str, doc: str) -> list[dict]:
    """Chat messages of the Copy-as-Decode edit prompt."""
    user = _EDIT.format(instruction=instruction, numbered=number_lines(doc))
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def regen_messages(instruction: str, doc: str) -> list[dict]:
    """Chat messages of the full-regeneration prompt (autoregressive and prompt-lookup
    baselines): the plain document, so prompt lookup can match its n-grams."""
    user = _REGEN.format(instruction=instruction, doc=doc)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def render_chat(messages: list[dict], tokenizer) -> str:
    """The prompt text: the tokenizer's chat template with the assistant turn opened, or
    ChatML (the Qwen2.5 and SmolLM2 format) for a tokenizer without a template."""
    hf = getattr(tokenizer, "hf", tokenizer)
    if getattr(hf, "chat_template", None):
        return hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


def chat_ids(messages: list[dict], tokenizer) -> list[int]:
    """Token ids of :func:`render_chat`, chat markers encoded as their special tokens."""
    text = render_chat(messages, tokenizer)
    hf = getattr(tokenizer, "hf", tokenizer)
    if hasattr(hf, "decode_single_token_bytes"):  # tiktoken (Qwen2.5 BPE)
        return hf.encode(text, allowed_special="all")
    return hf.encode(text, add_special_tokens=False)


def edit_prompt_ids(tokenizer, instruction: str, doc: str) -> list[int]:
    """Ids of the edit prompt; the decoder continues with ``<program>\\n``."""
    return chat_ids(edit_messages(instruction, doc), tokenizer)


def regen_prompt_ids(tokenizer, instruction: str, doc: str) -> list[int]:
    """Ids of the full-regeneration prompt."""
    return chat_ids(regen_messages(instruction, doc), tokenizer)
