"""Do two engines decide alike? Greedy next-id agreement along the gold (chapter 6b).

Two engines running the same model (``transformers`` in fp32, llama.cpp on the same GGUF as
shipped or converted) need not pick the same greedy id everywhere: quantized weights and other
kernels round differently. :func:`greedy_agreement` counts where they do along each case's gold;
:func:`greedy_agreements` compares every other engine with the first.
"""

from __future__ import annotations

from .engines import Engine
from .methods import prepare

__all__ = ["greedy_agreement", "greedy_agreements"]


def greedy_agreement(a: Engine, b: Engine, tokenizer, cases: list) -> tuple[float, int]:
    """Share of positions along each case's gold (after its regen prompt) where the greedy
    next id of engine ``a`` equals that of ``b``: one forward of prompt + gold per engine, the
    logits of the gold's positions. Returns ``(rate, n positions)``."""
    agree = n = 0
    for case in cases:
        x = prepare("", case, tokenizer)
        feed = list(x.regen_prompt) + list(x.target[:-1])
        first = len(x.regen_prompt) - 1
        picks = []
        for eng in (a, b):
            logits = eng.new_session().forward(feed, keep=len(feed) - first)
            picks.append(logits.argmax(-1))
        agree += int((picks[0] == picks[1]).sum())
        n += len(picks[0])
    return agree / max(n, 1), n


def greedy_agreements(engines: list, tokenizer, cases: list) -> dict:
    """:func:`greedy_agreement` of each engine after the first with the first (chapter 6b:
    each llama.cpp engine with ``transformers``), by engine name."""
    first, rest = engines[0], engines[1:]
    return {e.name: greedy_agreement(first, e, tokenizer, cases) for e in rest}
