"""The KV cache and forwards over it, for the kernel benchmark and the decoder (paper §2.4).

One home for what both need from ``transformers``' ``DynamicCache``:

* :func:`new_cache` — an empty cache for a model;
* :func:`cache_length` and :func:`crop_cache` (lenient: never grows, no-op when short; the
  checked restore of the kernel benchmark is :meth:`cadlib.decoding.engines.Session.restore`);
* :func:`forward` (token ids in, logits out, under ``torch.inference_mode``: the decoder's
  step and, through :class:`cadlib.decoding.engines.TransformersEngine`, the kernel timer's)
  and :func:`forward_with_cache` (tensor in, the model's output out, other model arguments
  passed on: the splice check's shifted positions);
* :func:`cache_kwarg` — the keyword under which a model class takes its cache;
* :func:`sync_device` — wait for queued GPU work (timing bookends);
* :func:`forward_reusing` and :func:`rerotate_keys` — a forward that takes some ids' entries
  from earlier cache positions, keys re-rotated (issue 32's reuse copy,
  :mod:`cadlib.decoding.kv_reuse`).

These names are API (the kernel chapter, the decoder and the engines import them from here).
"""

from __future__ import annotations

import functools
import inspect

import torch

__all__ = [
    "new_cache",
    "cache_length",
    "crop_cache",
    "cache_kwarg",
    "forward",
    "forward_with_cache",
    "sync_device",
    "rerotate_keys",
    "forward_reusing",
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
    lenient crop). The kept entries are untouched by later appends (each append concatenates
    into a new tensor), so the cropped cache *is* the earlier state."""
    extra = int(cache.get_seq_length()) - length
    if extra > 0:
        cache.crop(-extra)


def forward(model, ids, cache, logits_to_keep: int = 1) -> torch.Tensor:
    """Append ``ids`` to ``cache`` in one forward; return logits of shape (logits_to_keep, V).

    ``ids``: a list of ints, or a 1-D long tensor already on the model's device (fed as it is,
    no copy from the host: what a timed loop feeds, :meth:`TransformersEngine.prepare_ids`).
    """
    if isinstance(ids, torch.Tensor):
        x = ids.view(1, -1)
    else:
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


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    """RoPE's ``rotate_half`` (the Llama / Qwen2 layout: halves, not interleaved pairs)."""
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rerotate_keys(model, keys: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    """Keys ``(batch, heads, r, head_dim)`` rotated by RoPE ``delta`` more positions (``r``
    ints): ``R(p + d) = R(d) R(p)``, so a key cached at position ``p`` becomes the key of the
    same input at ``p + d`` (issue 32's reuse copy). Uses the model's own rotary embedding,
    its attention scaling divided out (a pure rotation)."""
    rope = model.model.rotary_emb
    cos, sin = rope(keys, delta.view(1, -1).to(keys.device))
    scale = float(getattr(rope, "attention_scaling", 1.0) or 1.0)
    cos, sin = (cos / scale)[:, None], (sin / scale)[:, None]
    return keys * cos + _rotate_half(keys) * sin


def forward_reusing(model, ids: list[int], sources: list, cache) -> torch.Tensor:
    """Append ``ids`` to ``cache``, reusing cached entries: ``sources[k]`` is the cache position
    whose keys and values id ``k`` takes (keys re-rotated by :func:`rerotate_keys`), or
    ``None`` where id ``k`` is computed. The computed ids (the last one must be among them)
    run in ONE forward at their own positions under a 4-D mask (each sees the cache, and the
    reused and computed ids before it); the cache ends in position order, as if ``ids`` had
    been fed whole. Returns the last id's logits, shape (1, V)."""
    if len(ids) != len(sources) or sources[-1] is not None:
        raise ValueError("one source per id, and the last id must be computed")
    held, dev = cache_length(cache), model.device
    reused = [k for k, s in enumerate(sources) if s is not None]
    computed = [k for k, s in enumerate(sources) if s is None]
    if reused:
        src = torch.tensor([sources[k] for k in reused], device=dev)
        delta = torch.tensor([held + k - sources[k] for k in reused], device=dev)
        for layer in cache.layers:
            keys = rerotate_keys(model, layer.keys[:, :, src], delta)
            layer.keys = torch.cat([layer.keys, keys], dim=-2)
            layer.values = torch.cat([layer.values, layer.values[:, :, src]], dim=-2)
    order = torch.tensor(reused + computed, device=dev)  # new entries, in cache order
    col = torch.cat([torch.arange(held, device=dev), held + order])  # position of each key
    row = held + torch.tensor(computed, device=dev)
    mask = (col[None, :] <= row[:, None])[None, None]
    x = torch.tensor([[ids[k] for k in computed]], dtype=torch.long, device=dev)
    kw = {cache_kwarg(type(model)): cache}
    with torch.inference_mode():
        out = model(
            input_ids=x,
            position_ids=row[None],
            attention_mask=mask,
            use_cache=True,
            logits_to_keep=1,
            **kw,
        )
    if reused:
        perm = held + torch.argsort(order)
        keep = torch.cat([torch.arange(held, device=dev), perm])
        for layer in cache.layers:
            layer.keys, layer.values = layer.keys[:, :, keep], layer.values[:, :, keep]
    return out.logits[0]
