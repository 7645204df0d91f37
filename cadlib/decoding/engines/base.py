"""The engine seam: what the decoder needs from a model runtime (issue 18/19, paper §2.4).

Copy-as-Decode needs four things from whatever runs the model:

* forward ``n`` ids into a KV cache in **one** call (the splice is a parallel prefill of the
  ``N`` ids of lines ``i..j``) and return the logits of the last position (or of all ``n``
  positions, for a speculative verifier);
* truncate the cache to its first ``L`` ids (rejected drafts, benchmark restores);
* the cache's current length and the logits' width (vocabulary size);
* a synchronisation point for timing (queued GPU work must finish inside a timed window).

The kernel timer (:mod:`cadlib.costs.kernel_timing`) times every engine through this seam: it
feeds ids in the engine's own form (:meth:`Engine.prepare_ids`, converted before the clock
starts), restores the cache with the checked :meth:`Session.restore` and bookends each timed
window with :meth:`Session.sync`.

:class:`Engine` makes sessions (:meth:`Engine.new_session`), each a :class:`Session` owning one
KV cache. Logits come back as a float32 ``torch.Tensor`` on the engine's ``device`` whatever the
engine, so the FSM masks (:mod:`cadlib.decoding.fsm`, :mod:`cadlib.decoding.processors`) apply
unchanged.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch

__all__ = ["Engine", "Session"]


class Session(ABC):
    """One KV cache of an :class:`Engine` (its ``engine``): feed ids, read logits, truncate."""

    engine: Engine

    @abstractmethod
    def forward(self, ids: list[int], all_logits: bool = False, keep: int = 1) -> torch.Tensor:
        """Append ``ids`` (non-empty; a list, or what :meth:`Engine.prepare_ids` made of one)
        to the cache in one call; return the logits of its last ``keep`` positions, shape
        ``(keep, V)`` (a verify forward's draft), or of all of them, ``(len(ids), V)``, when
        ``all_logits``."""

    @abstractmethod
    def truncate(self, length: int) -> None:
        """Keep the first ``length`` cached ids (a no-op when the cache is not longer)."""

    @abstractmethod
    def __len__(self) -> int:
        """Ids held by the cache."""

    def restore(self, length: int) -> int:
        """Truncate the cache back to its first ``length`` ids, checked; return the length.

        Unlike :meth:`truncate` it fails loudly when the cache holds fewer than ``length`` ids
        or the truncation misses: the kernel timer restores the cache before every timed path
        and logs each restore, so a restore that did not happen must not pass unnoticed.
        """
        held = len(self)
        if held < length:
            raise ValueError(f"cache holds {held} tokens, cannot restore it to {length}")
        self.truncate(length)
        if len(self) != length:
            raise RuntimeError(f"crop left {len(self)} tokens in the cache, expected {length}")
        return length

    def sync(self) -> None:
        """Wait until the queued work of this session's engine is done (:meth:`Engine.sync`)."""
        self.engine.sync()

    def forward_reuse(self, ids: list[int], sources: list) -> torch.Tensor:
        """Append ``ids``, taking the cache entries of id ``k`` from cache position
        ``sources[k]`` (moved to its new position) where it is not ``None``, computing the
        others in one forward; return the last id's logits, shape ``(1, V)`` (the reuse copy
        of :mod:`cadlib.decoding.kv_reuse`). Engines that cannot move cache entries raise."""
        raise NotImplementedError(f"{type(self).__name__} cannot reuse cache entries")

    def _check_ids(self, ids, keep: int = 1):
        """``ids`` as a list of ints, or as they are when they are a 1-D tensor (the form
        :meth:`Engine.prepare_ids` gives, read without a copy to the host); checks ``keep``."""
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(f"tensor ids must be 1-D, got shape {tuple(ids.shape)}")
        else:
            ids = [int(i) for i in ids]
        if not len(ids):
            raise ValueError("forward needs at least one token id")
        if not 1 <= keep <= len(ids):
            raise ValueError(f"keep={keep}: logits of 1 to {len(ids)} positions can be kept")
        return ids


class Engine(ABC):
    """A model runtime the decoder can drive (see the module docstring).

    Attributes
    ----------
    name : str
        ``"transformers"`` or ``"llama.cpp"``: the label every timing carries.
    vocab_size : int
        Width of the logits.
    device : torch.device
        Where the returned logits live (the FSM builds its masks there).
    draft_max_ids : int or None
        The longest draft the decoder verifies in one forward on this engine (``None``: no
        cap; :class:`cadlib.decoding.drafts.Drafter`'s ``max_ids``): the engine's draft policy,
        measured per engine by :mod:`cadlib.costs.draft_policy`.
    n_ctx : int or None
        The most ids a session's cache holds (``None``: no cap). The decoder cuts a draft to
        what fits after the feed: a draft past it could not be verified.
    """

    name: str = "engine"
    vocab_size: int
    device: torch.device
    draft_max_ids: int | None = None
    n_ctx: int | None = None

    @abstractmethod
    def new_session(self) -> Session:
        """A session with an empty KV cache."""

    def check_copy_kv(self, mode: str) -> None:
        """Raise when this engine cannot run copy mode ``mode`` (``"prefill"`` always runs;
        ``"reuse"`` needs :meth:`Session.forward_reuse`)."""
        if mode != "prefill":
            raise NotImplementedError(f"the {self.name} engine supports copy_kv='prefill' only")

    def lookup_drafter(self, num_tokens: int, max_ngram: int, max_length: int):
        """This engine's prompt-lookup drafter: ``draft(seq, remaining) -> ids``, up to
        ``num_tokens`` ids that followed an earlier occurrence of the last n-gram of ``seq``
        (n <= ``max_ngram``), at most ``remaining`` of them where the engine's own drafter
        caps them (``max_length``: the longest ``seq`` it will see). Each engine drafts as its
        runtime does (:func:`cadlib.decoding.methods.prompt_lookup_along` runs it)."""
        raise NotImplementedError(f"the {self.name} engine has no prompt-lookup drafter")

    def prepare_ids(self, ids) -> list[int]:
        """``ids`` in the form this engine's :meth:`Session.forward` takes without converting
        them: a list of ints here. A timed loop prepares its ids once, before the clock starts
        (on a GPU, building a tensor from a list inside the window would copy it to the device
        and wait for the queued work at every step)."""
        return [int(i) for i in ids]

    def sync(self) -> None:  # noqa: B027 (a CPU engine has nothing to wait for)
        """Wait until queued work is done (timing bookends); nothing to do on a CPU."""

    def info(self) -> dict:
        """What runs the model (engine, threads, weights; ``dtype`` and ``attn_implementation``
        where the engine has them): the label of every timing."""
        return dict(engine=self.name, vocab_size=self.vocab_size, device=str(self.device))
