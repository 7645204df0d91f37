"""The FIM constraint's masks on a model's logits (paper §III, Fig. 1: "legal tokens").

:mod:`cadlib.fim.mask` computes which of a tokenizer's ids keep a :class:`FIMConstraint`
viable; this module applies such masks to logits, on
:class:`cadlib.decoding.processors.MaskProcessor`, the base and call convention of the copy/gen
grammar's :class:`~cadlib.decoding.processors.GrammarMask`: :class:`IncrementalMask`, the
stateful base of the FIM masks, with :class:`FIMLogitsProcessor` (and chapter 8's ``<gen>`` body
mask, :class:`cadlib.chapters.fim_constraint.run_edits.GenBodyMask`) on it. :func:`keep_mask`
and :func:`apply_mask` fit a mask over the tokenizer's ids to the model's (possibly wider)
vocabulary.
"""

from __future__ import annotations

import numpy as np
import torch

from cadlib.decoding.processors import MaskProcessor, as_tensor
from cadlib.vocab import token_texts_cached

from .constraint import FIMConstraint
from .mask import PendingBytes, TokenTrie, end_ids

__all__ = ["FIMLogitsProcessor", "IncrementalMask", "apply_mask", "keep_mask"]


def keep_mask(mask: np.ndarray, scores) -> torch.Tensor:
    """The boolean tensor of ``scores``' width (its last axis, the model's vocabulary) and
    device that allows what ``mask`` (over the tokenizer's ids) allows; ids beyond the
    tokenizer's (``mask`` is shorter than the logits) are not allowed."""
    keep = np.zeros(scores.shape[-1], dtype=bool)
    n = min(len(mask), len(keep))
    keep[:n] = mask[:n]
    return torch.from_numpy(keep).to(scores.device)


def apply_mask(scores, mask: np.ndarray):
    """``scores`` (a torch tensor, last axis = the model's vocabulary) with every id that
    ``mask`` does not allow set to ``-inf``; ids beyond the tokenizer's (``mask`` is shorter
    than the logits) stay masked."""
    return scores.masked_fill(~keep_mask(mask, scores), float("-inf"))


class IncrementalMask(MaskProcessor):
    """Base of the FIM constraint's masks: a :class:`~cadlib.decoding.processors.MaskProcessor` that
    advances a :class:`FIMConstraint` in place over the ids it has not seen yet.

    Stateful, unlike :class:`~cadlib.decoding.processors.GrammarMask`: each call's ids must extend
    the previous call's (greedy or sampled ``generate``, the decoder's body hook), and the batch
    holds one row. Generated tokens are decoded byte-exactly and fed as whole characters
    (:class:`PendingBytes`). Two call conventions: the base's ``(input_ids (1, seq), scores
    (1, V)) -> scores (1, V)`` and one row as is, ``(ids, scores (V,)) -> scores (V,)``
    (:meth:`~cadlib.decoding.processors.MaskProcessor.mask_row`). Subclasses implement
    :meth:`allowed_ids` (the boolean mask over the tokenizer's ids after the ids seen) and may
    refine how a token's text is taken (:meth:`_take`, :meth:`_feed`, :meth:`_dead`).

    Parameters
    ----------
    constraint
        The state before the first generated token (it is advanced in place).
    tokenizer
        The model's tokenizer.
    seen
        Number of leading ids of each row that are not fed (the prompt; ``0``: none).
    """

    def __init__(self, constraint: FIMConstraint, tokenizer, seen: int = 0):
        self.constraint = constraint
        self.tokenizer = tokenizer
        self.trie = TokenTrie.for_tokenizer(tokenizer)
        self.texts = token_texts_cached(tokenizer)
        self.seen = seen
        self.utf8 = PendingBytes()

    @property
    def pending(self) -> bytes:
        """Bytes of an unfinished character at the end of the generated text."""
        return self.utf8.bytes

    def _advance(self, ids) -> None:
        """Feed the ids after the ones already seen."""
        for tid in ids[self.seen :]:
            self._take(int(tid))
        self.seen = len(ids)

    def _take(self, tid: int) -> None:
        text = self.texts[tid] if tid < len(self.texts) else None
        if text is None:
            return
        chars = self.utf8.push(text)
        if chars is None:  # invalid UTF-8 (an unmasked token): nothing can follow
            self._dead()
        else:
            self._feed(chars)

    def _feed(self, chars: str) -> None:
        self.constraint.feed(chars)

    def _dead(self) -> None:
        self.constraint.branches = []

    def allowed_ids(self) -> np.ndarray:
        """Boolean mask over the tokenizer's ids for the next token."""
        raise NotImplementedError

    def allowed_mask(self, row_ids: tuple, scores) -> torch.Tensor:
        """The base's hook: advance over ``row_ids``, then :meth:`allowed_ids` at ``scores``'
        width (ids beyond the tokenizer's are not allowed, :func:`keep_mask`)."""
        self._advance(row_ids)
        return keep_mask(self.allowed_ids(), scores)

    def __call__(self, input_ids, scores):
        """``(input_ids (1, seq), scores (1, V))`` or one row ``(ids, scores (V,))`` ->
        masked scores of the same shape."""
        if as_tensor(scores).dim() == 1:
            return self.mask_row(input_ids, scores)
        if len(input_ids) != 1:
            raise ValueError(f"{type(self).__name__} supports batch size 1")
        return super().__call__(input_ids, scores)


class FIMLogitsProcessor(IncrementalMask):
    """The FIM constraint as a logits mask: tokens breaking it are set to ``-inf``.

    An :class:`IncrementalMask` (so a :class:`~cadlib.decoding.processors.MaskProcessor`) whose rows
    hold the prompt, then the generated middle.

    Parameters
    ----------
    constraint, tokenizer
        As for :class:`IncrementalMask`.
    prompt_length
        Number of prompt tokens in ``input_ids``; later ids are the generated middle.
    end_token_ids
        Tokens that end the middle (default: EOS); allowed only when ``can_end()``.

    Notes
    -----
    Batch size 1. Generated tokens are decoded byte-exactly and fed as whole characters. Pass
    it to ``model.generate(..., logits_processor=[processor])`` (it follows the
    ``transformers`` logits-processor call convention ``(input_ids, scores) -> scores``, the
    base's). If every token is masked (the state is dead), all logits are ``-inf``.
    """

    def __init__(
        self, constraint: FIMConstraint, tokenizer, prompt_length: int, end_token_ids=None
    ):
        super().__init__(constraint, tokenizer, seen=prompt_length)
        self.prompt_length = prompt_length
        self.end_ids = end_ids(tokenizer, end_token_ids)

    def allowed_ids(self) -> np.ndarray:
        """The trie's mask for the constraint; the end ids exactly when it can end."""
        mask = self.trie.allowed(self.constraint, self.pending)
        mask[self.end_ids] = self.constraint.can_end() and not self.pending
        return mask
