"""Correctness of the copy splice: ``N`` tokens in one forward equal ``N`` decode steps
("Position-encoding correctness", paper App. H).

:func:`check_splice_equals_ar` compares the logits and the RoPE'd keys the two paths append to
the cache; with ``position_offset`` it is its own negative control (shifted positions must
fail, or the check proves nothing).
"""

from __future__ import annotations

import torch

from cadlib.costs.kernel_timing import prefill_context, random_feed
from cadlib.decoding.cache import forward_with_cache
from cadlib.decoding.engines import TransformersEngine

__all__ = ["check_splice_equals_ar"]


def _layer_keys(cache) -> list[torch.Tensor]:
    """Key tensors per layer, shape (batch, kv_heads, seq, head_dim), after RoPE."""
    if hasattr(cache, "layers"):
        return [layer.keys for layer in cache.layers]
    return list(cache.key_cache)  # transformers < 4.56


def check_splice_equals_ar(
    model,
    *,
    P: int = 64,
    N: int = 32,
    seed: int = 0,
    atol: float = 1e-4,
    rtol: float = 1e-4,
    position_offset: int = 0,
) -> dict:
    """Do ``N`` tokens spliced in one forward give the logits of ``N`` single-token steps?

    From the same ``P``-token cache, run (a) ``N`` single-token forwards, collecting each step's
    logits, and (b) one forward of the same ``N`` tokens. Compare the ``N`` logit rows and the
    keys the two paths appended to every layer's cache: keys carry RoPE at their absolute
    positions, so equal keys mean the splice advanced positions exactly as decoding did.

    It runs on the ``transformers`` model itself, not through the engine seam alone: it reads
    the keys every layer appended to the ``DynamicCache`` (the transformers session's
    ``cache``) and its negative control feeds shifted ``position_ids``, neither of which an
    engine offers. The prefill, the decode steps and the restore go through the session.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The model checked, in eval mode.
    atol, rtol : float
        ``torch.allclose`` tolerance for the logits (fp32: reductions in a batched GEMM and in N
        GEMVs round differently, so equality is to ~1e-5, not bit-exact).
    position_offset : int
        Shift the splice's ``position_ids`` by this much: a negative control that must fail.

    Returns
    -------
    dict
        ``passed``, ``argmax_equal``, ``max_abs_logit_diff``, ``max_abs_key_diff``,
        cache lengths ``len_before``, ``len_after_ar``, ``len_after_splice``,
        ``positions_advance_by_N``, and the settings.
    """
    engine = TransformersEngine(model)
    session, _ = prefill_context(engine, P, seed)
    span = random_feed(engine, N, seed + 1)
    with torch.inference_mode():
        ar_logits = torch.cat([session.forward(span[i : i + 1]) for i in range(N)])  # (N, V)
        len_after_ar = len(session)
        ar_keys = [k[..., P:, :].clone() for k in _layer_keys(session.cache)]
        session.restore(P)
        kwargs = {}
        if position_offset:
            pos = torch.arange(P + position_offset, P + position_offset + N, device=model.device)
            kwargs["position_ids"] = pos[None]
        pp_logits = forward_with_cache(model, span[None], session.cache, **kwargs).logits[0]
        len_after_splice = len(session)
        pp_keys = [k[..., P:, :] for k in _layer_keys(session.cache)]
    ar_logits, pp_logits = ar_logits.float(), pp_logits.float()
    logit_diff = float((ar_logits - pp_logits).abs().max())
    pairs = list(zip(ar_keys, pp_keys, strict=True))
    key_diff = max(float((a.float() - b.float()).abs().max()) for a, b in pairs)
    argmax_equal = bool((ar_logits.argmax(-1) == pp_logits.argmax(-1)).all())
    close = bool(torch.allclose(ar_logits, pp_logits, atol=atol, rtol=rtol))
    keys_close = all(torch.allclose(a.float(), b.float(), atol=atol, rtol=rtol) for a, b in pairs)
    advance = len_after_ar == len_after_splice == P + N
    return dict(
        passed=close and keys_close and argmax_equal and advance,
        logits_allclose=close,
        keys_allclose=keys_close,
        argmax_equal=argmax_equal,
        max_abs_logit_diff=logit_diff,
        max_abs_key_diff=key_diff,
        len_before=P,
        len_after_ar=len_after_ar,
        len_after_splice=len_after_splice,
        positions_advance_by_N=advance,
        P=P,
        N=N,
        atol=atol,
        rtol=rtol,
        dtype=str(next(model.parameters()).dtype).removeprefix("torch."),
        attn_implementation=getattr(model.config, "_attn_implementation", None),
        position_offset=position_offset,
    )
