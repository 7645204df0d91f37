"""Choosing what a reuse copy recomputes by where the cache is wrong (issue 51).

:mod:`cadlib.decoding.kv_reuse` reuses the prompt's KV entries for copied ids and recomputes
fixed windows (line starts, the copy's tail). Two published rules select instead, and both need
the decode's context, which the fixed windows do not:

* **seams** (EPIC): recompute the first ``k`` ids of a copy that starts at a seam
  (:func:`cadlib.decoding.kv_reuse.is_seam`: it follows a ``gen``, a line jump or the prompt);
  a copy that continues the previous one continues the prompt's own context;
* **deviation** (CacheBlend): compute the copy's keys at a check layer ``L`` in the output's
  context (layers ``0..L-1`` over the whole feed, then layer ``L``'s key projection), compare
  them with the reused keys (:func:`key_deviations`), and recompute the top share.

:class:`SelectingDecoder` is :class:`cadlib.decoding.decoder.CopyDecoder` with these rules; it
records what deciding costs in ``trace.info``: ``check_ids`` (ids run through the check
layers), ``check_layers`` (``L``) and ``seams`` (copies that started at a seam). The check
forward is thrown away (the cache is restored), so the decisions stay those of the reuse mode.

It also runs the **margin-gated exact fallback** (``margin=X``): reuse makes every cache entry
from the first reused one on approximate (later ids attend to it), so where a masked decision's
top two allowed logits differ by less than ``X`` while the cache holds such entries, the cache
is cut back to the first of them and the ids since are fed again in one exact forward (a
``"fallback"`` forward); the decision is then made on exact logits, so a gated decision agrees
with the exact splice (up to float rounding). ``trace.info`` counts ``fallbacks``,
``fallback_ids`` (ids fed again) and ``fallback_reused`` (reused entries they replaced).
"""

from __future__ import annotations

import math
import time

import torch

from .cache import cache_kwarg, rerotate_keys
from .decoder import CopyDecoder, ForwardRecord
from .kv_reuse import is_seam, line_starts, parse_policy, select_sources

__all__ = ["SelectingDecoder", "key_deviations", "top_two_gap", "copy_decoder"]


class _Stop(Exception):
    """Raised by the check layer's hook: the forward has computed what the rule needs."""


def key_deviations(model, cache, ids: list[int], sources: list, layer: int) -> torch.Tensor:
    """Per id of ``ids`` (appended to ``cache`` at its end), the L2 distance between its key at
    ``layer`` computed in the output's context and the cached key of its source position
    ``sources[k]`` (both at the source's RoPE position: rotation keeps distances); 0 where an
    id has no source. The cache is left as it was."""
    held = int(cache.get_seq_length())
    saved = [(x.keys, x.values) for x in cache.layers]
    got = {}

    def hook(_module, _inputs, output):
        got["k"] = output
        raise _Stop

    attn = model.model.layers[layer].self_attn
    handle = attn.k_proj.register_forward_hook(hook)
    x = torch.tensor([ids], dtype=torch.long, device=model.device)
    pos = torch.arange(held, held + len(ids), device=model.device)[None]
    try:
        with torch.inference_mode():
            model(
                input_ids=x, position_ids=pos, use_cache=True, **{cache_kwarg(type(model)): cache}
            )
    except _Stop:
        pass
    finally:
        handle.remove()
        for x_layer, (k, v) in zip(cache.layers, saved, strict=True):
            x_layer.keys, x_layer.values = k, v
    out = torch.zeros(len(ids))
    have = [k for k, s in enumerate(sources) if s is not None]
    if not have:
        return out
    cached = saved[layer][0]  # (1, kv heads, T, head dim)
    heads, dim = cached.shape[1], cached.shape[3]
    new = got["k"][0, have].view(len(have), heads, dim).transpose(0, 1)[None]
    src = torch.tensor([sources[k] for k in have], device=cached.device)
    new = rerotate_keys(model, new, src)  # pre-RoPE key at the source's position
    diff = (new - cached[:, :, src]).float().pow(2).sum(dim=(0, 1, 3)).sqrt()
    out[have] = diff.cpu()
    return out


def top_two_gap(allowed, logits: torch.Tensor) -> float:
    """How far the best allowed logit leads the second best allowed one (``inf`` with fewer
    than two allowed): the margin gate's measure, over exactly the ids the decision may take
    (:class:`cadlib.decoding.fsm.Allowed`: an id set, or every id but the banned ones)."""
    if allowed.ids is not None:
        scores = logits[allowed.ids]
    else:
        scores = logits.masked_fill(~allowed.full_mask().to(logits.device), -math.inf)
    if scores.numel() < 2:
        return math.inf
    top = torch.topk(scores.float().reshape(-1), 2).values
    return float(top[0] - top[1])


class SelectingDecoder(CopyDecoder):
    """:class:`~cadlib.decoding.decoder.CopyDecoder` in ``copy_kv="reuse"`` mode whose
    recompute policy may use the selection rules (``seams=K``, ``deviation=R[@L]``, with or
    without the fixed windows: :func:`cadlib.decoding.kv_reuse.parse_policy`) and the
    margin-gated exact fallback (``margin=X``)."""

    def __init__(self, model, tokenizer, **kw):
        kw.setdefault("copy_kv", "reuse")
        super().__init__(model, tokenizer, **kw)
        if self.copy_kv != "reuse":
            raise ValueError("SelectingDecoder runs copy_kv='reuse' only")
        self._fed_prompt, self._session, self._reused_at = [], None, []

    def _steps(self, doc, prompt, *args, **kw):
        """:meth:`CopyDecoder._steps`, remembering the prompt fed (a fallback feeds again what
        the cache holds) and forgetting the last run's reused entries."""
        self._fed_prompt, self._session, self._reused_at = list(prompt), None, []
        return (yield from super()._steps(doc, prompt, *args, **kw))

    def _forward_reuse(self, ids, kinds, session, run, op: int) -> torch.Tensor:
        """The reuse feed of :meth:`CopyDecoder._forward_reuse`, its sources chosen by
        :func:`cadlib.decoding.kv_reuse.select_sources` (the check forward inside the timed
        window: deciding is part of the copy's cost)."""
        t0 = time.perf_counter()
        sources = self._select(ids, kinds, session, run, op)
        held = len(session)
        logits = session.forward_reuse(ids, sources)
        self.engine.sync()
        dt = time.perf_counter() - t0
        self._session = session
        self._reused_at += [held + k for k, s in enumerate(sources) if s is not None]
        reused = sum(s is not None for s in sources)
        run.trace.forwards.append(ForwardRecord("reuse", len(ids) - reused, dt, op))
        run.trace.info["reused_ids"] = run.trace.info.get("reused_ids", 0) + reused
        run.ops[op]["forwards"] += 1
        run.ops[op]["seconds"] += dt
        return logits

    def _choose(self, fsm, state, logits, mode, run) -> int:
        """:meth:`CopyDecoder._choose`, on exact logits where the margin gate fires (the cache
        holds reused entries and the top two allowed logits are closer than the policy's
        ``margin``: :meth:`_exact_again`)."""
        if self.recompute.margin and self._reused_at and not mode.body_open():
            t0 = time.perf_counter()
            gap = top_two_gap(fsm.allowed(state), logits)
            run.trace.info["gate_s"] = run.trace.info.get("gate_s", 0.0) + time.perf_counter() - t0
            if gap < self.recompute.margin:
                logits = self._exact_again(run)
        return super()._choose(fsm, state, logits, mode, run)

    def _exact_again(self, run) -> torch.Tensor:
        """The fallback: cut the cache back to its first reused entry, feed every id since in
        one exact forward and return the last id's logits (V,)."""
        session, start = self._session, min(self._reused_at)
        fed = [*self._fed_prompt, *run.ids]
        if len(session) != len(fed):
            raise RuntimeError(f"the cache holds {len(session)} entries, {len(fed)} ids were fed")
        t0 = time.perf_counter()
        session.truncate(start)
        logits = session.forward(fed[start:])
        self.engine.sync()
        dt = time.perf_counter() - t0
        op = len(run.ops) - 1
        run.trace.forwards.append(ForwardRecord("fallback", len(fed) - start, dt, op))
        run.ops[op]["forwards"] += 1
        run.ops[op]["seconds"] += dt
        info = run.trace.info
        for key, n in (("fallbacks", 1), ("fallback_ids", len(fed) - start)):
            info[key] = info.get(key, 0) + n
        info["fallback_reused"] = info.get("fallback_reused", 0) + len(self._reused_at)
        self._reused_at = []
        return logits[-1]

    def _select(self, ids, kinds, session, run, op: int) -> list:
        """The source of every id of the feed (``None``: computed), and the decision's cost
        added to ``run.trace.info``."""
        policy, info = self.recompute, run.trace.info
        at = [k for k, kind in enumerate(kinds) if kind == "splice"]
        if not at or at != list(range(at[0], len(ids))):
            raise ValueError("a copy's splice ids must end the feed, in one run")
        splice, lines = ids[at[0] :], run.ops[op]["lines"]
        matches = self._index.matches(splice, *lines)
        seam = is_seam(run.ops[op - 1] if op > 0 else None, lines)
        info["seams"] = info.get("seams", 0) + int(seam)
        deviations = None
        if policy.deviation and not policy.every and any(s is not None for s in matches):
            full = [None] * at[0] + list(matches)
            dev = key_deviations(session.model, session.cache, list(ids), full, policy.layer)
            deviations = dev[at[0] :].tolist()
            info["check_ids"] = info.get("check_ids", 0) + len(ids)
            info["check_layers"] = policy.layer
        elif policy.deviation:
            deviations = [0.0] * len(splice)
        starts = line_starts(splice, self.table.token_bytes)
        chosen = select_sources(matches, starts, policy, seam, deviations)
        return [None] * at[0] + chosen


def copy_decoder(model, tokenizer, copy_kv: str = "prefill", recompute="none", **kw) -> CopyDecoder:
    """The decoder a copy mode and recompute rule need: :class:`SelectingDecoder` when the
    reuse mode's rule reads the decode's context (``seams=``, ``deviation=``, ``margin=``), else
    :class:`~cadlib.decoding.decoder.CopyDecoder` (what ``cad edit`` builds)."""
    if copy_kv == "reuse" and parse_policy(recompute).needs_context:
        return SelectingDecoder(model, tokenizer, copy_kv=copy_kv, recompute=recompute, **kw)
    return CopyDecoder(model, tokenizer, copy_kv=copy_kv, recompute=recompute, **kw)
