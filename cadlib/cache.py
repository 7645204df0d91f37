"""The KV cache and forwards over it, for the kernel benchmark and the decoder (paper §2.4).

One home for what both need from ``transformers``' ``DynamicCache``:

* :func:`new_cache` — an empty cache for a model;
* :func:`cache_length`, :func:`crop_cache` (lenient: never grows, no-op when short) and
  :func:`restore_cache` (checked: fails loudly when it cannot restore, returns the length);
* :func:`forward` (token ids in, logits out, under ``torch.inference_mode``: the decoder's
  step) and :func:`forward_with_cache` (tensor in, the model's output out: the benchmark's
  timed call);
* :func:`cache_kwarg` — the keyword under which a model class takes its cache;
* :func:`sync_device` — wait for queued GPU work (timing bookends).

``cadlib.models`` and ``cadlib.kernel`` re-export these names (API).
"""

from __future__ import annotations

import functools
import inspect

import torch

__all__ = [
    "new_cache",
    "cache_length",
    "crop_cache",
    "restore_cache",
    "cache_kwarg",
    "forward",
    "forward_with_cache",
    "sync_device",
]


@functools.cache
def cache_kwarg(model_class: type) -> str:
    """The name under which ``model_class.forward`` takes its KV cache: ``cache`` in newer
    ``transformers``, ``past_key_values`` before."""
    params = inspect.signature(model_class.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def new_cache(model):
    """An empty ``DynamicCache`` for ``model``."""
    from transformers import DynamicCache  # lazy: transformers takes seconds to import

    try:
        return DynamicCache(config=model.config)
    except TypeError:  # older transformers
        return DynamicCache()


def cache_length(cache) -> int:
    """Tokens held by the cache (its ``get_seq_length()``)."""
    return int(cache.get_seq_length())


def crop_cache(cache, length: int) -> None:
    """Keep the first ``length`` tokens of ``cache`` (``crop(-k)`` drops the last ``k`` in
    transformers 4.x and 5.x alike); a cache already that short is left alone (the decoder's
    lenient crop; :func:`restore_cache` is the checked one of the kernel benchmark)."""
    extra = int(cache.get_seq_length()) - length
    if extra > 0:
        cache.crop(-extra)


def restore_cache(cache, length: int) -> int:
    """Crop ``cache`` back to its first ``length`` tokens, in place; return the new length.

    Uses ``DynamicCache.crop(-k)`` (drop the last ``k`` tokens), which means the same in
    ``transformers`` 4.x and 5.x. The kept entries are untouched by later appends (each append
    concatenates into a new tensor), so the cropped cache *is* the earlier state. Unlike
    :func:`crop_cache` it fails loudly when the cache holds fewer than ``length`` tokens or the
    crop misses, since the benchmark logs every restore.
    """
    held = cache_length(cache)
    if held < length:
        raise ValueError(f"cache holds {held} tokens, cannot restore it to {length}")
    if held > length:
        cache.crop(-(held - length))
    restored = cache_length(cache)
    if restored != length:
        raise RuntimeError(f"crop left {restored} tokens in the cache, expected {length}")
    return restored


def forward(model, ids: list[int], cache, logits_to_keep: int = 1) -> torch.Tensor:
    """Append ``ids`` to ``cache`` in one forward; return logits of shape (logits_to_keep, V)."""
    x = torch.tensor([ids], dtype=torch.long, device=model.device)
    kw = {cache_kwarg(type(model)): cache}
    with torch.inference_mode():
        out = model(input_ids=x, use_cache=True, logits_to_keep=logits_to_keep, **kw)
    return out.logits[0]


def forward_with_cache(model, input_ids: torch.Tensor, cache, **kwargs):
    """``model(input_ids, cache)``: append ``input_ids`` to ``cache`` and return the output.

    Parameters
    ----------
    input_ids : torch.LongTensor, shape (1, n)
        Tokens to append; their positions continue from ``cache_length(cache)``.
    cache : transformers.DynamicCache
        Updated in place (grows by ``n``).
    **kwargs
        Passed to the model, e.g. ``logits_to_keep`` or ``position_ids``.
    """
    kwargs[cache_kwarg(type(model))] = cache
    return model(input_ids=input_ids, use_cache=True, **kwargs)


def sync_device(device) -> None:
    """Wait for queued GPU work (timing bookends); nothing to do on a CPU."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
