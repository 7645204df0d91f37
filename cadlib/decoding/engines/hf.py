"""The ``transformers`` engine: :mod:`cadlib.decoding.cache` (the transformers home) behind
the seam."""

from __future__ import annotations

import torch
from transformers.generation.candidate_generator import PromptLookupCandidateGenerator

from cadlib.decoding.cache import (
    cache_length,
    crop_cache,
    forward,
    forward_reusing,
    new_cache,
    sync_device,
)
from cadlib.models import model_info, model_vocab_size

from .base import Engine, Session

__all__ = ["TransformersEngine", "TransformersSession"]


class TransformersSession(Session):
    """A ``DynamicCache`` of one model (``cache``: chapter 2's splice check reads its keys)."""

    def __init__(self, engine: TransformersEngine):
        self.engine, self.model, self.cache = engine, engine.model, new_cache(engine.model)

    def forward(self, ids, all_logits: bool = False, keep: int = 1) -> torch.Tensor:
        ids = self._check_ids(ids, keep)
        return forward(self.model, ids, self.cache, len(ids) if all_logits else keep)

    def forward_reuse(self, ids, sources) -> torch.Tensor:
        ids = self._check_ids(ids)
        return forward_reusing(self.model, ids, list(sources), self.cache)

    def truncate(self, length: int) -> None:
        """:func:`cadlib.decoding.cache.crop_cache`: the kept entries are untouched by later
        appends, so the truncated cache *is* the earlier state."""
        crop_cache(self.cache, int(length))

    def __len__(self) -> int:
        return cache_length(self.cache)


class TransformersEngine(Engine):
    """A ``transformers`` causal LM (eval mode) as an
    :class:`~cadlib.decoding.engines.base.Engine`."""

    name = "transformers"

    def __init__(self, model):
        if not hasattr(model, "config") or not hasattr(model, "device"):
            raise TypeError(f"expected a transformers model, got {type(model).__name__}")
        self.model = model
        self.vocab_size = model_vocab_size(model)
        self.device = torch.device(model.device)

    def new_session(self) -> TransformersSession:
        return TransformersSession(self)

    def prepare_ids(self, ids) -> torch.Tensor:
        """``ids`` as a 1-D long tensor on the model's device: a slice of it is fed with no
        copy from the host, so a timed loop of single-id forwards queues its work without
        waiting (the kernel timer's AR path, as ``model(input_ids=span[:, i:i+1])`` runs)."""
        return torch.as_tensor(ids, dtype=torch.long).reshape(-1).to(self.device)

    def check_copy_kv(self, mode: str) -> None:
        """Both copy modes run here (reuse: :func:`cadlib.decoding.cache.forward_reusing`)."""
        if mode not in ("prefill", "reuse"):
            raise ValueError(f"unknown copy_kv {mode!r}; expected 'prefill' or 'reuse'")

    def lookup_drafter(self, num_tokens: int, max_ngram: int, max_length: int):
        """``transformers``' own ``PromptLookupCandidateGenerator`` (what
        ``generate(prompt_lookup_num_tokens=...)`` drafts with); its drafts are not capped."""
        generator = PromptLookupCandidateGenerator(
            num_output_tokens=num_tokens, max_matching_ngram_size=max_ngram, max_length=max_length
        )

        def draft(seq: list[int], remaining: int) -> list[int]:
            candidates, _ = generator.get_candidates(torch.tensor([seq], device=self.device))
            return candidates[0, len(seq) :].tolist()

        return draft

    def sync(self) -> None:
        sync_device(self.device)

    def info(self) -> dict:
        return dict(super().info(), threads=torch.get_num_threads(), **model_info(self.model))
