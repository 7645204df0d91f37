"""The copy/gen grammar as a ``transformers`` logits processor, for ``model.generate()``
(the prompt-level variant of Appendix Q: the constraint alone, one decode step per id).

:class:`GrammarLogitsProcessor` adapts :class:`cadlib.decoding.processors.GrammarMask` (the
engine-neutral mask, which needs no ``transformers``) to ``transformers``' ``LogitsProcessor``.
It masks every step of a plain ``generate()`` but splices nothing; the whole decoder through
``generate()`` is :mod:`cadlib.decoding.custom_generate`.
"""

from __future__ import annotations

import torch
from transformers import LogitsProcessor

from .processors import GrammarMask

__all__ = ["GrammarLogitsProcessor"]


class GrammarLogitsProcessor(GrammarMask, LogitsProcessor):
    """Enforce the grammar inside ``model.generate()``: a pure function of ``input_ids``.

    The ``transformers`` adapter of :class:`cadlib.decoding.processors.GrammarMask` (the
    engine-neutral mask, which holds the logic and documents the parameters): ``tokenizer``,
    ``doc``, ``prompt_length``, ``copy_text``. The FSM state is derived from the ids after
    ``prompt_length`` (cached by prefix), never kept between calls, so the processor is correct
    when ``generate`` calls it on candidate sequences (prompt lookup, assisted decoding) in any
    order. After ``</program>`` only EOS is allowed.
    """

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor):
        """``input_ids`` (batch, seq), ``scores`` (batch, V) -> masked scores (batch, V)."""
        return GrammarMask.__call__(self, input_ids, scores)
