"""Logit masks that do not depend on any engine (issue 18: the llama.cpp backend; issue 19).

A mask here is a pure function of the output ids so far: ``mask(input_ids, scores) ->
scores`` with banned ids set to ``-inf``. It takes and returns ``torch`` tensors (numpy arrays
are accepted and converted), needs no ``transformers``, and so applies to the logits of any
engine in :mod:`cadlib.decoding.engines` as well as inside ``transformers``' ``generate()``,
where :class:`cadlib.decoding.generate_processor.GrammarLogitsProcessor` is the thin
``LogitsProcessor`` adapter of :class:`GrammarMask`.

* :class:`MaskProcessor` — the base: per batch row, an allowed-id boolean mask or ``None``
  (leave the row as is); :meth:`MaskProcessor.mask_row` masks one row on its own;
* :class:`GrammarMask` — the copy/gen grammar (paper §2.3, Appendix Q): the FSM state derived
  from the ids after the prompt, cached by prefix, never kept between calls.

The FIM constraint's masks are on the same base: :class:`cadlib.fim.logits.FIMLogitsProcessor`
and :class:`cadlib.chapters.fim_constraint.run_edits.GenBodyMask` (through
:class:`cadlib.fim.logits.IncrementalMask`: stateful, batch 1, each call's ids extending the
last's).
"""

from __future__ import annotations

import numpy as np
import torch

from .fsm import CopyGenFSM, token_table

__all__ = ["MaskProcessor", "GrammarMask", "as_tensor", "mask_scores"]


def as_tensor(x) -> torch.Tensor:
    """``x`` as a ``torch`` tensor (numpy arrays and lists converted; tensors as they are)."""
    if isinstance(x, torch.Tensor):
        return x
    return torch.from_numpy(np.asarray(x))


def mask_scores(scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """``scores`` with every id outside the boolean ``allowed`` set to ``-inf`` (a copy)."""
    if allowed.shape != scores.shape:
        raise ValueError(f"mask of shape {tuple(allowed.shape)} for scores {tuple(scores.shape)}")
    return scores.masked_fill(~allowed, float("-inf"))


class MaskProcessor:
    """Base of the masks: ``self(input_ids, scores)`` masks each row of ``scores``.

    Subclasses implement :meth:`allowed_mask`: the allowed ids of one row (a boolean tensor of
    the vocabulary's width) given that row's ids, or ``None`` to leave the row unmasked.
    """

    def allowed_mask(self, row_ids: tuple, scores: torch.Tensor) -> torch.Tensor | None:
        raise NotImplementedError

    def __call__(self, input_ids, scores):
        """``input_ids`` (batch, seq), ``scores`` (batch, V) -> masked scores (batch, V)."""
        input_ids, scores = as_tensor(input_ids), as_tensor(scores)
        if input_ids.dim() != 2 or scores.dim() != 2 or input_ids.shape[0] != scores.shape[0]:
            raise ValueError(
                f"expected input_ids (batch, seq) and scores (batch, V), got "
                f"{tuple(input_ids.shape)} and {tuple(scores.shape)}"
            )
        out = scores.clone()
        for b in range(input_ids.shape[0]):
            allowed = self.allowed_mask(tuple(input_ids[b].tolist()), scores[b])
            if allowed is not None:
                out[b] = mask_scores(out[b], allowed)
        return out

    def mask_row(self, row_ids, scores):
        """One row on its own: ``row_ids`` (the row's ids, any sequence of ints),
        ``scores`` (V,) -> masked scores (V,) (a copy; as :meth:`__call__` does per row)."""
        scores = as_tensor(scores)
        ids = row_ids.tolist() if hasattr(row_ids, "tolist") else row_ids
        allowed = self.allowed_mask(tuple(int(i) for i in ids), scores)
        return scores.clone() if allowed is None else mask_scores(scores, allowed)


class GrammarMask(MaskProcessor):
    """The copy/gen grammar as a pure mask of the ids after ``prompt_length``.

    The FSM state is derived from the ids after ``prompt_length`` (cached by prefix), never
    kept between calls, so the mask is correct when a caller applies it to candidate
    sequences (prompt lookup, assisted decoding) in any order. After ``</program>`` only EOS
    is allowed. A sequence the grammar rejects (a draft candidate past a masked id, which the
    verifier discards anyway) is left unmasked.

    Parameters
    ----------
    tokenizer : tokenizer
        The model's tokenizer.
    doc : str
        The document being edited (its line count bounds the ranges).
    prompt_length : int
        Number of prompt ids before the program; the program starts with ``<program>\\n``.
    copy_text : bool
        ``True``: the copied lines follow each copy tag (the decoder's transcript, decoded
        step by step); ``False``: program only (tags, then a newline).
    """

    def __init__(
        self,
        tokenizer,
        doc: str,
        prompt_length: int,
        copy_text: bool = True,
        max_cached: int = 100_000,
    ):
        self.table = token_table(tokenizer)
        self.doc, self.prompt_length, self.copy_text = doc, prompt_length, copy_text
        self.max_cached = max_cached
        self._fsm = None
        self._states: dict = {}

    def _fsm_for(self, scores: torch.Tensor) -> CopyGenFSM:
        if self._fsm is None or self._fsm.vocab_size != scores.shape[-1]:
            self._fsm = CopyGenFSM(
                self.table, self.doc, scores.shape[-1], self.copy_text, scores.device
            )
            self._states = {(): self._fsm.initial()}
        return self._fsm

    def state(self, out: tuple):
        """The FSM state after output ids ``out`` (``None`` if the grammar rejects them)."""
        if out in self._states:
            return self._states[out]
        if len(self._states) > self.max_cached:
            self._states = {(): self._fsm.initial()}
        k = len(out) - 1
        while out[:k] not in self._states:
            k -= 1
        st = self._states[out[:k]]
        for i in range(k, len(out)):
            try:
                st = None if st is None else self._fsm.advance(st, out[i])
            except ValueError:
                st = None
            self._states[out[: i + 1]] = st
        return st

    def allowed_mask(self, row_ids: tuple, scores: torch.Tensor) -> torch.Tensor | None:
        fsm = self._fsm_for(scores)
        st = self.state(row_ids[self.prompt_length :])
        if st is None:
            return None
        if st.phase == "done":
            allowed = torch.zeros_like(scores, dtype=torch.bool)
            allowed[list(self.table.eos_ids[:1])] = True
            return allowed
        return fsm.allowed(st).full_mask()
