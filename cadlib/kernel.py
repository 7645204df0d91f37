"""The kernel microbenchmark: autoregressive decode vs parallel prefill over a KV cache.

What a copy splice buys (paper §2.4, §3 "Kernel microbenchmark", §4.1): after a ``P``-token
random-context prefill, time

(i) **AR**: ``N`` successive forwards of one token each, appending to the KV cache, and
(ii) **PP**: one forward of the same ``N`` tokens over the same ``P``-token cache,

with a warm-up, ``t`` trials, the median (and the min–max spread) and
``torch.cuda.synchronize`` bookends on a GPU. The per-span speedup is
``s(N) = T_AR(N) / T_PP(N)`` (ratio of the medians) for ``N`` in ``{1, 2, 4, ..., 512}``.
Between trials the cache is cropped back to its ``P``-token state and every crop is logged.

Also here: the fixed costs of Appendix H / Table 1 (:func:`measure_fixed_costs`: ``c_mask``,
``c_sync``, ``c_forced`` and the decode step ``tau``), the minimum worthwhile span ``m*`` of
Table 17 (:func:`minimum_span`), the splice-equals-AR correctness check ("Position-encoding
correctness", :func:`check_splice_equals_ar`), and the results-file API that the ceiling chapter
uses for ``bnd_exact`` (:func:`load_curve`, :func:`interpolate_speedup`; both **(API)**, both
living in :mod:`cadlib.speedup_curve` with :func:`curve_label`).

Reading CPU numbers: speed does not depend on weight values, so random-init models of the
published shapes time exactly like the trained ones. On CPU, ``transformers`` spends a large
share of each decode step in Python overhead, so "one forward instead of N steps" looks better
there than it would in a lean engine (llama.cpp decodes the same GGUF ~6x faster per token).
"""

from __future__ import annotations

import gc
import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from . import paper as _paper
from .cache import cache_length, forward_with_cache, new_cache, restore_cache
from .cache import sync_device as _sync
from .models import SMOLLM2, is_random_init, load_model, model_info
from .results import hardware_info, write_results
from .speedup_curve import curve_label, load_curve
from .speedup_curve import speedup_at as interpolate_speedup

__all__ = [
    "PROFILES",
    "N_GRID",
    "PAPER_CURVES",
    "PAPER_FIXED_COSTS",
    "PAPER_M_STAR",
    "new_cache",
    "cache_length",
    "restore_cache",
    "forward_with_cache",
    "random_ids",
    "prefill_context",
    "SpeedupMeasurement",
    "timing_warnings",
    "measure_speedup",
    "measure_fixed_costs",
    "minimum_span",
    "minimum_span_with_overhead",
    "m_star",
    "check_splice_equals_ar",
    "trials_for",
    "benchmark_models",
    "kernel_numbers",
    "paper_numbers",
    "write_kernel_results",
    "run_summary",
    "load_curve",
    "interpolate_speedup",
    "curve_label",
    "curve_table",
    "fixed_cost_table",
    "m_star_table",
    "cache_log_table",
    "splice_check_table",
    "timing_sanity",
    "speedup_overview",
    "SPLICE_CHECK_FIELDS",
    "plot_speedup",
]

#: Span lengths of the paper's sweep (Table 1): 10 points, 1 ... 512.
N_GRID = tuple(2**k for k in range(10))

PROFILES = {
    # 2 CPU cores, a few minutes: the 0.5B shape (random init) and the packaged SmolLM2, P=256
    # instead of 1024 (attention over the prefix is a small share of a step at these sizes),
    # N up to 256, 3 trials, one shared AR run per trial, spans below 8 tokens timed
    # ceil(8/N) times per trial (see measure_speedup); one torch thread, like every cpu-profile
    # chapter that runs a model (cadlib.models.set_threads), so that its curve prices the
    # decoder's forwards in chapter 6.
    "cpu": dict(
        models=("qwen2.5-0.5b-random", SMOLLM2), attn_implementation="eager", dtype="float32",
        threads=1,
        P=256, N_grid=N_GRID[:9], trials=3, warmup=1, shared_ar_run=True, logits_to_keep=0,
        min_tokens=8,
        mask_reps=2000, forward_reps=5, check_model=SMOLLM2, check_P=64, check_N=32,
    ),
    # The paper's setup (§3, Table 1): 1.5B and 7B shapes, bf16, eager, P=1024, t=7/5, on a GPU.
    "paper": dict(
        models=("qwen2.5-1.5b-random", "qwen2.5-7b-random"), attn_implementation="eager",
        dtype="bfloat16", P=1024, N_grid=N_GRID, threads=None,
        trials={"qwen2.5-1.5b-random": 7, "qwen2.5-7b-random": 5}, warmup=1,
        shared_ar_run=False, logits_to_keep=0, min_tokens=1, mask_reps=2000, forward_reps=20,
        check_model=SMOLLM2, check_P=64, check_N=32,
    ),
    # CI's check of the paper path (make test-smoke): the paper profile's branches (a
    # random-init Qwen2 model, bf16, eager, per-model trials, no shared AR run, min_tokens=1)
    # on a 2-layer toy Qwen2, P=64, N up to 32, in seconds; timings are meaningless.
    "smoke": dict(
        models=("qwen2-tiny-random",), attn_implementation="eager", dtype="bfloat16",
        P=64, N_grid=N_GRID[:6], threads=1, trials={"qwen2-tiny-random": 2}, warmup=1,
        shared_ar_run=False, logits_to_keep=0, min_tokens=1, mask_reps=50, forward_reps=2,
        check_model="qwen2-smoke", check_P=16, check_N=8,
    ),
}  # fmt: skip

#: Figure 3 / §4.1 points, Appendix H fixed costs and Table 17 (their home is :mod:`cadlib.paper`).
PAPER_CURVES = _paper.KERNEL_CURVES
PAPER_FIXED_COSTS = _paper.FIXED_COSTS
PAPER_M_STAR = _paper.M_STAR


def random_ids(vocab_size: int, n: int, seed: int, device="cpu") -> torch.Tensor:
    """``n`` seeded random token ids, shape (1, n): the paper's "random seeded" context (§3)."""
    if n < 1:
        raise ValueError(f"need at least one token, got n={n}")
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab_size, (1, n), generator=generator).to(device)


def prefill_context(model, P: int, seed: int = 0):
    """Prefill ``P`` random tokens; return ``(cache, last_logits)``.

    Returns
    -------
    cache : transformers.DynamicCache
        Holds exactly ``P`` tokens.
    last_logits : torch.Tensor, shape (vocab,)
        Logits of the last context position (a realistic row for the mask benchmark).
    """
    cache = new_cache(model)
    ids = random_ids(model.config.vocab_size, P, seed, model.device)
    with torch.inference_mode():
        out = forward_with_cache(model, ids, cache)
    if cache_length(cache) != P:
        raise RuntimeError(f"prefill left {cache_length(cache)} tokens in the cache, not {P}")
    return cache, out.logits[0, -1]


# --------------------------------------------------------------------------------------------
# s(N): AR vs parallel prefill (§3, §4.1)
# --------------------------------------------------------------------------------------------


def _time_ar(model, cache, span: torch.Tensor, checkpoints: Sequence[int]) -> list[float]:
    """Seconds after each checkpoint of ``len(span)`` single-token forwards, sync-bookended.

    ``span`` has shape (1, max(checkpoints)); ``checkpoints`` are increasing step counts.
    """
    device, marks, out = model.device, set(checkpoints), []
    _sync(device)
    start = time.perf_counter()
    for i in range(span.shape[1]):
        forward_with_cache(model, span[:, i : i + 1], cache)
        if i + 1 in marks:
            _sync(device)
            out.append(time.perf_counter() - start)
    return out


def _time_pp(model, cache, span: torch.Tensor, logits_to_keep: int = 0) -> float:
    """Seconds of one forward of ``span`` (shape (1, N)) over ``cache``, sync-bookended."""
    device = model.device
    _sync(device)
    start = time.perf_counter()
    forward_with_cache(model, span, cache, logits_to_keep=logits_to_keep)
    _sync(device)
    return time.perf_counter() - start


@dataclass
class SpeedupMeasurement:
    """Raw timings of :func:`measure_speedup`.

    Attributes
    ----------
    N : list[int]
        Span lengths, increasing.
    ar_s, pp_s : numpy.ndarray, shape (trials, len(N))
        Seconds of the AR path and of the parallel-prefill path, per trial and span length.
    P : int
        Context length the cache is restored to before every timed path.
    cache_log : list[dict]
        One row per timed path: ``trial``, ``path`` (AR/PP), ``N``, cache length ``before``,
        ``after`` the forward(s) and ``restored`` after the crop.
    """

    N: list[int]
    ar_s: np.ndarray
    pp_s: np.ndarray
    P: int
    shared_ar_run: bool
    cache_log: list[dict] = field(default_factory=list)

    @property
    def trials(self) -> int:
        return self.ar_s.shape[0]

    def summary(self) -> dict:
        """Medians, min–max spreads and ``s(N)`` as lists (ms), ready for JSON.

        ``s`` is the ratio of the medians (§3); ``s_lo``/``s_hi`` are the smallest and largest
        per-trial ratios ``T_AR/T_PP`` (AR and PP of one trial are timed back to back);
        ``s_best`` is the ratio of the fastest times (``min T_AR / min T_PP``), the estimate
        least disturbed by other processes on a shared machine (interference only adds time).
        """
        ratio = self.ar_s / self.pp_s
        ar_med, pp_med = np.median(self.ar_s, 0), np.median(self.pp_s, 0)

        def ms(a):
            return [round(float(x) * 1e3, 4) for x in a]

        return dict(
            N=list(self.N),
            s=[round(float(x), 4) for x in ar_med / pp_med],
            s_lo=[round(float(x), 4) for x in ratio.min(0)],
            s_hi=[round(float(x), 4) for x in ratio.max(0)],
            s_best=[round(float(x), 4) for x in self.ar_s.min(0) / self.pp_s.min(0)],
            T_AR_ms=ms(ar_med), T_AR_ms_min=ms(self.ar_s.min(0)), T_AR_ms_max=ms(self.ar_s.max(0)),
            T_PP_ms=ms(pp_med), T_PP_ms_min=ms(self.pp_s.min(0)), T_PP_ms_max=ms(self.pp_s.max(0)),
            AR_ms_per_token=ms(ar_med / np.asarray(self.N)),
        )  # fmt: skip

    @property
    def cache_always_restored(self) -> bool:
        """Every timed path started from, and was cropped back to, the ``P``-token cache."""
        return bool(self.cache_log) and all(
            row["before"] == self.P and row["after"] == self.P + row["N"]
            and row["restored"] == self.P
            for row in self.cache_log
        )  # fmt: skip


def timing_warnings(summary: Mapping, s1_range=(0.8, 1.25), max_step_spread=1.5) -> list[str]:
    """Signs that a timing run was disturbed (e.g. by other jobs on a shared machine).

    * ``s(1)`` outside ``s1_range``: at ``N = 1`` both paths run the same single-token forward,
      so their ratio measures nothing but the noise of the timer;
    * the AR time per token varies across ``N`` by more than ``max_step_spread`` (max / min of
      the medians): a decode step costs about the same at every ``N``.

    Returns the list of findings (empty: no sign of interference).
    """
    found = []
    N, s = list(summary["N"]), list(summary["s"])
    if 1 in N and not s1_range[0] <= s[N.index(1)] <= s1_range[1]:
        found.append(f"s(1) = {s[N.index(1)]:.2f}, outside {s1_range[0]}–{s1_range[1]}")
    per_token = np.asarray(summary["AR_ms_per_token"])
    spread = float(per_token.max() / per_token.min())
    if spread > max_step_spread:
        found.append(f"AR ms/token varies {spread:.1f}x across N (expected about 1x)")
    return found


def _check_grid(N_grid: Sequence[int]) -> list[int]:
    grid = [int(n) for n in N_grid]
    if not grid or any(n < 1 for n in grid) or any(b <= a for a, b in itertools.pairwise(grid)):
        raise ValueError(f"N_grid must be increasing positive span lengths, got {list(N_grid)}")
    return grid


def measure_speedup(
    model,
    *,
    P: int,
    N_grid: Sequence[int] = N_GRID,
    trials: int = 3,
    warmup: int = 1,
    seed: int = 0,
    shared_ar_run: bool = False,
    logits_to_keep: int = 0,
    min_tokens: int = 1,
    progress: bool = True,
    desc: str = "s(N)",
) -> SpeedupMeasurement:
    """Time AR decode vs parallel prefill of ``N`` tokens over a ``P``-token cache (§3, §4.1).

    One ``P``-token random-context prefill; the span is ``max(N_grid)`` further random tokens,
    of which each ``N`` uses the first ``N``. Before every timed path the cache is restored to
    the ``P``-token state with :func:`restore_cache`, and each restore is logged.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        In eval mode on its device; timing uses the model's own dtype and attention.
    P : int
        Prefix (context) length; the paper uses 1024.
    N_grid : sequence of int
        Increasing span lengths.
    trials : int
        Timed repetitions; medians are reported (paper: 7 for 1.5B, 5 for 7B).
    warmup : int
        Untimed rounds before the trials, each 16 AR steps plus one PP forward per ``N``
        (first calls allocate memory and pick kernels; a cold first call fakes speedups).
    seed : int
        Seeds the random context and span tokens.
    shared_ar_run : bool
        ``False`` (the paper): a separate AR run of ``N`` steps per ``N``. ``True``: one AR run
        of ``max(N_grid)`` steps per trial, read off at every ``N`` (the first ``N`` steps of a
        longer run are exactly an ``N``-step run: same tokens, same cache; on a GPU each reading
        adds one synchronisation). Halves the AR time of a sweep; used by the cpu profile.
    logits_to_keep : int
        Passed to the PP forward: ``0`` (the paper's plain forward) computes logits for all
        ``N`` positions, ``1`` only for the last, which is all a splice needs.
    min_tokens : int
        Within a trial, a span with ``N < min_tokens`` is timed ``ceil(min_tokens / N)`` times
        on each path (separate AR runs, also in shared mode) and the median kept, so that a
        short span, one forward of a few ms, is not a single draw of the timer on a busy
        machine. ``1`` (the paper): one sample per trial.
    """
    grid = _check_grid(N_grid)
    if trials < 1 or warmup < 0:
        raise ValueError(f"need trials >= 1 and warmup >= 0, got {trials}, {warmup}")
    cache, _ = prefill_context(model, P, seed)
    span = random_ids(model.config.vocab_size, grid[-1], seed + 1, model.device)
    ar = np.zeros((trials, len(grid)))
    pp = np.zeros((trials, len(grid)))
    log: list[dict] = []

    def restore(trial, path, n, rep=0):
        after = cache_length(cache)
        restored = restore_cache(cache, P)
        log.append(dict(trial=trial, path=path, N=n, rep=rep, before=P, after=after,
                        restored=restored))  # fmt: skip

    def ar_run(t, n):  # median over ceil(min_tokens / n) separate n-step runs
        samples = []
        for rep in range(-(-min_tokens // n)):
            samples.append(_time_ar(model, cache, span[:, :n], [n])[0])
            restore(t, "AR", n, rep)
        return float(np.median(samples))

    def pp_run(t, n):
        samples = []
        for rep in range(-(-min_tokens // n)):
            samples.append(_time_pp(model, cache, span[:, :n], logits_to_keep))
            restore(t, "PP", n, rep)
        return float(np.median(samples))

    with torch.inference_mode():
        for _ in range(warmup):
            _time_ar(model, cache, span[:, : min(16, grid[-1])], [min(16, grid[-1])])
            restore_cache(cache, P)
            for n in grid:
                _time_pp(model, cache, span[:, :n], logits_to_keep)
                restore_cache(cache, P)
        bar = tqdm(total=trials * len(grid), desc=desc, disable=not progress)
        for t in range(trials):
            gc.collect()
            if shared_ar_run:
                ar[t] = _time_ar(model, cache, span, grid)
                restore(t, "AR", grid[-1])
            for j, n in enumerate(grid):
                if not shared_ar_run or n < min_tokens:
                    ar[t, j] = ar_run(t, n)
                pp[t, j] = pp_run(t, n)
                bar.update()
        bar.close()
    return SpeedupMeasurement(grid, ar, pp, P, shared_ar_run, log)


# --------------------------------------------------------------------------------------------
# Fixed costs (Appendix H, Table 1) and the minimum worthwhile span (Table 17)
# --------------------------------------------------------------------------------------------


def _per_op_seconds(fn, reps: int, device) -> float:
    """Seconds per call of ``fn`` over ``reps`` back-to-back calls, sync-bookended."""
    _sync(device)
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    _sync(device)
    return (time.perf_counter() - start) / reps


def _stats_ms(values) -> dict:
    a = np.asarray(values) * 1e3
    return dict(median=round(float(np.median(a)), 5), min=round(float(a.min()), 5),
                max=round(float(a.max()), 5), n=len(a))  # fmt: skip


def measure_fixed_costs(
    model,
    *,
    P: int,
    seed: int = 0,
    trials: int = 3,
    mask_reps: int = 2000,
    forward_reps: int = 5,
    n_allowed: int = 12,
    forced_lens: Sequence[int] = (3, 5),
) -> dict:
    """The per-op fixed costs of Appendix H (Table 1), in ms: median, min, max over samples.

    * ``c_mask``: add a precomputed allowed-id mask (``n_allowed`` ids, the FSM's largest set,
      App. A) to a vocab-sized logits row and take the argmax, on the model's device and dtype.
      Per op, over ``mask_reps`` back-to-back ops; one sample per trial.
    * ``c_sync``: the extra cost per op of reading the argmax back to the host (``.item()``),
      i.e. (mask + argmax + item) minus (mask + argmax). On a GPU this is the CPU<->GPU round
      trip; on CPU the tensor is already in host memory and the cost is a few microseconds.
    * ``c_forced``: one forward of ``k`` forced-template tokens over the ``P``-token cache,
      for each ``k`` in ``forced_lens`` (the paper: 3-5 tokens), cache restored after each.
    * ``tau``: one single-token decode step over the same cache (the unit of Eq. (1)).

    Returns
    -------
    dict
        ``c_mask_ms``, ``c_sync_ms``, ``c_forced_ms`` (all forced lengths pooled),
        ``c_forced_ms_by_len`` ({k: stats}), ``tau_ms``: each ``{median, min, max, n}``;
        plus ``c_forced_over_tau`` and the settings used.
    """
    device = model.device
    cache, row = prefill_context(model, P, seed)
    vocab = row.shape[0]
    allowed = torch.randperm(vocab, generator=torch.Generator().manual_seed(seed))[:n_allowed]
    bias = torch.full((vocab,), float("-inf"), dtype=row.dtype, device=device)
    bias[allowed.to(device)] = 0

    def mask_op():
        return (row + bias).argmax()

    def mask_sync_op():
        return (row + bias).argmax().item()

    mask, mask_sync = [], []
    forced: dict[int, list[float]] = {k: [] for k in forced_lens}
    tau: list[float] = []
    with torch.inference_mode():
        for k in forced_lens:  # warm-up: first calls of each shape
            forward_with_cache(model, random_ids(vocab, k, seed, device), cache)
            restore_cache(cache, P)
        mask_op(), mask_sync_op()
        for t in range(trials):
            mask.append(_per_op_seconds(mask_op, mask_reps, device))
            mask_sync.append(_per_op_seconds(mask_sync_op, mask_reps, device))
            for r in range(forward_reps):
                ids = random_ids(vocab, max([1, *forced_lens]), seed + 1000 * t + r, device)
                tau.append(_time_pp(model, cache, ids[:, :1]))
                restore_cache(cache, P)
                for k in forced_lens:
                    forced[k].append(_time_pp(model, cache, ids[:, :k]))
                    restore_cache(cache, P)
    sync = np.asarray(mask_sync) - np.asarray(mask)
    pooled = [x for k in forced_lens for x in forced[k]]
    return dict(
        c_mask_ms=_stats_ms(mask),
        c_sync_ms=_stats_ms(sync),
        c_forced_ms=_stats_ms(pooled),
        c_forced_ms_by_len={int(k): _stats_ms(v) for k, v in forced.items()},
        tau_ms=_stats_ms(tau),
        c_forced_over_tau=round(float(np.median(pooled) / np.median(tau)), 3),
        settings=dict(P=P, trials=trials, mask_reps=mask_reps, forward_reps=forward_reps,
                      n_allowed=n_allowed, forced_lens=list(forced_lens), vocab=vocab,
                      logits_dtype=str(row.dtype).removeprefix("torch.")),
    )  # fmt: skip


def minimum_span(
    N: Sequence[int], s: Sequence[float], threshold: float = 1.0, min_n: int = 2
) -> int | None:
    """First span length ``N >= min_n`` with ``s(N) > threshold`` (Table 17: 1 = strict,
    1.5 = safe).

    ``N = 1`` is skipped by default: both paths are then the same single-token forward, so
    ``s(1)`` is timer noise around 1 and a one-token "splice" cannot gain anything (the paper's
    strict ``m* = 2``). ``None`` when no measured ``N`` clears the threshold.
    """
    for n, value in zip(N, s, strict=True):
        if n >= min_n and value > threshold:
            return int(n)
    return None


def minimum_span_with_overhead(
    N: Sequence[int], s: Sequence[float], tau_ms: float, c_ms: float, min_n: int = 2
) -> int | None:
    """First ``N >= min_n`` with ``N*tau > N*tau/s(N) + c`` (App. J's definition of ``m*``).

    ``c`` is the fixed cost a splice adds over decoding the same tokens (ms); ``None`` when no
    measured ``N`` pays for it.
    """
    for n, value in zip(N, s, strict=True):
        if n >= min_n and n * tau_ms > n * tau_ms / value + c_ms:
            return int(n)
    return None


def m_star(summary: Mapping, fixed: Mapping | None = None) -> dict:
    """``m*`` of Table 17 from a curve summary, plus the fixed-cost-aware variant.

    The overhead ``c`` charged to a splice is one forced-template prefill plus one masked,
    synchronised decision step: ``c = c_forced + c_mask + c_sync`` (medians, App. H).
    """
    out = dict(strict=minimum_span(summary["N"], summary["s"], 1.0),
               safe=minimum_span(summary["N"], summary["s"], 1.5))  # fmt: skip
    if fixed is not None:
        c = sum(fixed[k]["median"] for k in ("c_forced_ms", "c_mask_ms", "c_sync_ms"))
        tau = fixed["tau_ms"]["median"]
        out["with_overhead"] = minimum_span_with_overhead(summary["N"], summary["s"], tau, c)
        out["overhead_c_ms"] = round(c, 4)
        out["tau_ms"] = tau
    return out


# --------------------------------------------------------------------------------------------
# Correctness: a splice equals N decode steps ("Position-encoding correctness", App. H)
# --------------------------------------------------------------------------------------------


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

    Parameters
    ----------
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
    vocab = model.config.vocab_size
    cache, _ = prefill_context(model, P, seed)
    span = random_ids(vocab, N, seed + 1, model.device)
    with torch.inference_mode():
        ar_logits = torch.cat(
            [forward_with_cache(model, span[:, i : i + 1], cache).logits[0] for i in range(N)]
        )  # (N, vocab)
        len_after_ar = cache_length(cache)
        ar_keys = [k[..., P:, :].clone() for k in _layer_keys(cache)]
        restore_cache(cache, P)
        kwargs = {}
        if position_offset:
            pos = torch.arange(P + position_offset, P + position_offset + N, device=model.device)
            kwargs["position_ids"] = pos[None]
        pp_logits = forward_with_cache(model, span, cache, **kwargs).logits[0]  # (N, vocab)
        len_after_splice = cache_length(cache)
        pp_keys = [k[..., P:, :] for k in _layer_keys(cache)]
    ar_logits, pp_logits = ar_logits.float(), pp_logits.float()
    logit_diff = float((ar_logits - pp_logits).abs().max())
    pairs = list(zip(ar_keys, pp_keys, strict=True))
    key_diff = max(float((a.float() - b.float()).abs().max()) for a, b in pairs)
    argmax_equal = bool((ar_logits.argmax(-1) == pp_logits.argmax(-1)).all())
    close = bool(torch.allclose(ar_logits, pp_logits, atol=atol, rtol=rtol))
    keys_close = all(
        torch.allclose(a.float(), b.float(), atol=atol, rtol=rtol)
        for a, b in pairs
    )  # fmt: skip
    advance = len_after_ar == len_after_splice == P + N
    return dict(
        passed=close and keys_close and argmax_equal and advance,
        logits_allclose=close, keys_allclose=keys_close, argmax_equal=argmax_equal,
        max_abs_logit_diff=logit_diff, max_abs_key_diff=key_diff,
        len_before=P, len_after_ar=len_after_ar, len_after_splice=len_after_splice,
        positions_advance_by_N=advance, P=P, N=N, atol=atol, rtol=rtol,
        dtype=str(next(model.parameters()).dtype).removeprefix("torch."),
        attn_implementation=getattr(model.config, "_attn_implementation", None),
        position_offset=position_offset,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# The chapter's driver and its results file
# --------------------------------------------------------------------------------------------


def trials_for(params: Mapping, model_name: str) -> int:
    """The trial count of ``model_name``: ``params["trials"]`` is an int or a per-model map."""
    trials = params["trials"]
    if isinstance(trials, Mapping):
        if model_name not in trials:
            raise ValueError(
                f"no trial count for {model_name!r} in trials={dict(trials)}; pass trials=<int>"
            )
        return int(trials[model_name])
    return int(trials)


def benchmark_models(
    params: Mapping, device: str = "auto", seed: int = 0, loaded: Mapping | None = None,
    progress: bool = True,
) -> dict:  # fmt: skip
    """Run the sweep and the fixed costs for every model of ``params`` (a ``PROFILES`` entry).

    ``loaded`` maps model names to models already loaded with the same dtype and attention
    (reused instead of loading again). Returns ``{name: {"curve", "fixed_costs", "m_star",
    "cache_log", "cache_always_restored"}}``, where ``curve`` is the summary of
    :meth:`SpeedupMeasurement.summary` plus a ``meta`` label.
    """
    out = {}
    for name in params["models"]:
        model = (loaded or {}).get(name)
        if model is None:
            model = load_model(
                name, device=device, dtype=params["dtype"],
                attn_implementation=params["attn_implementation"], seed=seed,
            )  # fmt: skip
        trials = trials_for(params, name)
        measurement = measure_speedup(
            model, P=params["P"], N_grid=params["N_grid"], trials=trials,
            warmup=params["warmup"], seed=seed, shared_ar_run=params["shared_ar_run"],
            logits_to_keep=params["logits_to_keep"], min_tokens=params["min_tokens"],
            progress=progress, desc=name,
        )  # fmt: skip
        fixed = measure_fixed_costs(
            model, P=params["P"], seed=seed, trials=trials, mask_reps=params["mask_reps"],
            forward_reps=params["forward_reps"],
        )  # fmt: skip
        curve = measurement.summary()
        curve["meta"] = dict(
            model=name, source="measured", random_init=is_random_init(name),
            shape=model_info(model), dtype=str(model.dtype).removeprefix("torch."),
            device=str(model.device), hardware=hardware_info(str(model.device)),
            attn_implementation=getattr(model.config, "_attn_implementation", None),
            P=params["P"], trials=trials, warmup=params["warmup"],
            shared_ar_run=params["shared_ar_run"], logits_to_keep=params["logits_to_keep"],
            min_tokens=params["min_tokens"], profile=params.get("profile"),
        )  # fmt: skip
        out[name] = dict(
            curve=curve, fixed_costs=fixed, m_star=m_star(curve, fixed),
            cache_log=measurement.cache_log,
            cache_always_restored=measurement.cache_always_restored,
        )  # fmt: skip
        del model
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return out


def paper_numbers() -> dict:
    """The paper's figures in the layout of :func:`kernel_numbers` (the results ``paper`` key)."""
    return dict(
        curves={k: dict(v) for k, v in PAPER_CURVES.items()},
        s_small_N_range=[1.1, 1.3],
        fixed_costs={k: {"value": v, "pm": pm} for k, (v, pm) in PAPER_FIXED_COSTS.items()},
        m_star=dict(PAPER_M_STAR),
    )


def kernel_numbers(bench: Mapping, check: Mapping | None = None) -> dict:
    """The ``numbers`` of ``results/kernel.json``: every curve, fixed costs, ``m*``, checks.

    ``primary`` names the default curve of :func:`load_curve`: the largest measured model (the
    paper's ``bnd_exact`` uses its largest, 7B).
    """
    names = list(bench)
    primary = max(names, key=lambda n: bench[n]["curve"]["meta"]["shape"]["parameters"])
    return dict(
        primary=primary,
        curves={n: bench[n]["curve"] for n in names},
        fixed_costs={n: bench[n]["fixed_costs"] for n in names},
        m_star={n: bench[n]["m_star"] for n in names},
        cache_always_restored={n: bench[n]["cache_always_restored"] for n in names},
        splice_check=dict(check) if check is not None else None,
    )


def run_summary(numbers: Mapping, where: str) -> str:
    """Markdown of a run's headline figures per model (s(8), s at the largest N, m*,
    c_forced / tau): what a chapter's conclusion cites, since they change from run to run."""
    lines = []
    for name, c in numbers["curves"].items():
        s = dict(zip(c["N"], c["s"], strict=True))
        s8 = f"s(8) = {s[8]:.1f}×, " if 8 in s else ""
        m, ratio = numbers["m_star"][name], numbers["fixed_costs"][name]["c_forced_over_tau"]
        lines.append(f"* **{name}**: {s8}s({c['N'][-1]}) = {c['s'][-1]:.1f}× (max "
                     f"{max(c['s']):.1f}×); m* strict / safe = {m['strict']} / {m['safe']}; "
                     f"c_forced / tau = {ratio:.2f}")  # fmt: skip
    return f"**This run** ({where}):\n\n" + "\n".join(lines)


def write_kernel_results(bench: Mapping, check: Mapping | None, params: Mapping,
                         device: str | None = None) -> Path:  # fmt: skip
    """Write ``results/kernel.json`` (via :func:`cadlib.results.write_results`)."""
    numbers = kernel_numbers(bench, check)
    return write_results(
        "kernel", numbers, paper_numbers(), profile=params.get("profile", "?"),
        model=numbers["primary"], tokenizer="none (random token ids)",
        params=dict(params), device=device,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# Tables and the figure
# --------------------------------------------------------------------------------------------


def curve_table(bench: Mapping):
    """``T_AR``, ``T_PP`` (median ms) and ``s(N)`` [min–max] per model: a pandas DataFrame."""
    frames = []
    for name, entry in bench.items():
        c = entry["curve"]
        frames.append(pd.DataFrame({
            "model": name, "N": c["N"], "T_AR ms": c["T_AR_ms"], "T_PP ms": c["T_PP_ms"],
            "AR ms/token": c["AR_ms_per_token"], "s(N)": c["s"],
            "s best": c.get("s_best", [None] * len(c["N"])),
            "s min–max": [f"{a:.2f}–{b:.2f}" for a, b in zip(c["s_lo"], c["s_hi"], strict=True)],
        }))  # fmt: skip
    return pd.concat(frames).set_index(["model", "N"])


def fixed_cost_table(bench: Mapping):
    """Measured fixed costs per model beside the paper's Table 1 (ms/op), and c_forced / tau,
    which Appendix H takes as about 1."""
    rows = {}
    for key in ("c_mask_ms", "c_sync_ms", "c_forced_ms", "tau_ms"):
        value, pm = PAPER_FIXED_COSTS[key]
        row = {"paper (A100, 1.5B; tau 7B)": f"{value}" + (f" ± {pm}" if pm else "")}
        for name, entry in bench.items():
            st = entry["fixed_costs"][key]
            row[name] = f"{st['median']:.4g} [{st['min']:.3g}–{st['max']:.3g}]"
        rows[key.removesuffix("_ms")] = row
    rows["c_forced / tau"] = {"paper (A100, 1.5B; tau 7B)": "≈ 1 (App. H)"} | {
        name: f"{entry['fixed_costs']['c_forced_over_tau']:.2f}" for name, entry in bench.items()
    }
    return pd.DataFrame(rows).T


def m_star_table(bench: Mapping):
    """``m*`` per model (first N with s > 1, s > 1.5, and with fixed costs) beside Table 17."""

    def show(n):  # None: no measured N clears the bar
        return "—" if n is None else str(n)

    rows = {f"{k} (paper, A100)": {"strict (s>1)": show(v["strict"]),
                                   "safe (s>1.5)": show(v["safe"]), "with fixed costs": ""}
            for k, v in PAPER_M_STAR.items()}  # fmt: skip
    for name, entry in bench.items():
        m = entry["m_star"]
        rows[name] = {"strict (s>1)": show(m["strict"]), "safe (s>1.5)": show(m["safe"]),
                      "with fixed costs": show(m.get("with_overhead"))}  # fmt: skip
    return pd.DataFrame(rows).T


def cache_log_table(bench: Mapping, trial: int | None = None):
    """The cache length before, after and restored for every timed path (or the first
    sample of each path in one trial), and whether every trial of that model restored it."""
    rows = [dict(model=name, **row) for name, entry in bench.items() for row in entry["cache_log"]
            if trial is None or (row["trial"] == trial and row["rep"] == 0)]  # fmt: skip
    log = pd.DataFrame(rows)
    restored = {name: entry["cache_always_restored"] for name, entry in bench.items()}
    log["all trials restored"] = log.model.map(restored)
    return log


#: The fields of :func:`check_splice_equals_ar` that the chapter shows (no timings).
SPLICE_CHECK_FIELDS = ("passed", "argmax_equal", "logits_allclose", "keys_allclose", "len_before",
                       "len_after_ar", "len_after_splice", "positions_advance_by_N", "atol",
                       "rtol", "dtype", "attn_implementation")  # fmt: skip


def splice_check_table(check: Mapping, control: Mapping, model: str):
    """The splice-equals-AR check beside its control (positions shifted by one), field by
    field: the control must fail where the check passes, or the check proves nothing."""
    return pd.DataFrame({
        f"{model}: splice": {k: str(check[k]) for k in SPLICE_CHECK_FIELDS},
        "control: positions shifted by 1": {k: str(control[k]) for k in SPLICE_CHECK_FIELDS},
    })  # fmt: skip


def timing_sanity(bench: Mapping) -> str:
    """Markdown: per model, the :func:`timing_warnings` of its curve, and what to do when a
    run was disturbed."""
    found = {name: timing_warnings(entry["curve"]) for name, entry in bench.items()}
    lines = [f"* **{name}**: " + ("; ".join(w) if w else "no sign of interference "
             "(s(1) ≈ 1, steady decode step)") for name, w in found.items()]  # fmt: skip
    if any(found.values()):
        lines.append("\n**This run was disturbed** (on a shared machine other jobs slow the many "
                     "short decode steps far more than one long forward, which inflates s(N)). "
                     "Read the `s best` column (fastest AR over fastest PP), or rerun on a quiet "
                     "machine.")  # fmt: skip
    return "**Timing sanity.**\n\n" + "\n".join(lines)


def speedup_overview(numbers: Mapping, paper: Mapping | None = None):
    """One row per measured curve (s at 1, 2, 8 and the largest N, the best-of-trials ratios,
    per-token costs) and one per paper curve (its A100 s(8) and s(512))."""
    paper = PAPER_CURVES if paper is None else paper

    def at(c, n):
        return c["s"][c["N"].index(n)] if n in c["N"] else None

    rows = {}
    for name, c in numbers["curves"].items():
        ar_ms = sum(c["AR_ms_per_token"]) / len(c["N"])
        rows[name] = {"s(1)": at(c, 1), "s(2)": at(c, 2), "s(8)": at(c, 8),
                      f"s({c['N'][-1]})": c["s"][-1], "max s": max(c["s"]),
                      "s best(8)": c["s_best"][c["N"].index(8)] if 8 in c["N"] else None,
                      "max s best": max(c["s_best"]),
                      "AR ms/token (mean over N)": round(ar_ms, 2),
                      "PP ms/token at max N": round(c["T_PP_ms"][-1] / c["N"][-1], 3),
                      "device": c["meta"]["device"]}  # fmt: skip
    for name, c in paper.items():
        rows[name + " (A100)"] = {"s(8)": c["s"][0], "s(512)": c["s"][1], "device": "A100 (paper)"}
    return pd.DataFrame(rows).T


def plot_speedup(curves: Mapping, paper: Mapping | None = None, ax=None, title: str | None = None):
    """``s(N)`` on log-log axes, one line per measured curve, the paper's points marked.

    ``curves`` maps names to ``{"N", "s", "s_lo", "s_hi", "s_best", "meta"}``
    (``kernel_numbers(...)["curves"]``): the median ratio as a line, the per-trial min–max as a
    band, the best-of-trials ratio dashed; ``paper`` maps names to ``{"N", "s", "meta"}``
    (default: ``PAPER_CURVES``). Returns the figure.
    """
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib (~1 s to import)

    paper = PAPER_CURVES if paper is None else paper
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
    else:
        fig = ax.figure
    for c in curves.values():
        line = ax.plot(c["N"], c["s"], marker="o", label=curve_label(c["meta"]))[0]
        if "s_lo" in c:
            ax.fill_between(c["N"], c["s_lo"], c["s_hi"], color=line.get_color(), alpha=0.15)
        if "s_best" in c:
            best = f"{c['meta']['model']}: best of trials (min T_AR / min T_PP)"
            ax.plot(c["N"], c["s_best"], ls="--", lw=1, color=line.get_color(), label=best)
    for i, (name, c) in enumerate(paper.items()):
        ax.scatter(c["N"], c["s"], marker="s^Dv"[i % 4], s=70, zorder=3, edgecolor="k",
                   label=f"{curve_label(c['meta'])}: A100 figures")  # fmt: skip
        for n, v in zip(c["N"], c["s"], strict=True):
            ax.annotate(f"{v:.1f}× ({name.removeprefix('paper:')}, A100)", (n, v),
                        textcoords="offset points", xytext=(-8, 8 if i % 2 == 0 else -14),
                        ha="right", fontsize=7)  # fmt: skip
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted({int(n) for c in [*curves.values(), *paper.values()] for n in c["N"]})
    ax.set_xticks(ticks, [str(n) for n in ticks])
    ax.set_xlabel("span length N (tokens)")
    ax.set_ylabel("s(N) = T_AR / T_PP")
    ax.set_title(title or "Parallel-prefill speedup over N decode steps")
    ax.legend(fontsize=6.5, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------------
# Forward-cost grid for chapter 6's cost model (cadlib.cost_model)
# --------------------------------------------------------------------------------------------

#: Ids per forward of the cost grid: ``last`` (logits of the last position only: a decode
#: step, a decision with its forced tail, a splice) and ``all`` (logits at every position: a
#: prompt-lookup verify forward, ``K + 1 <= 41`` ids).
__all__ += ["FORWARD_GRID_N", "measure_forward_costs"]

FORWARD_GRID_N = {"last": (1, 2, 3, 4, 6, 8, 12, 16, 32, 64, 128, 256),
                  "all": (1, 2, 3, 4, 6, 8, 11, 16, 21, 32, 41)}  # fmt: skip


def measure_forward_costs(model, contexts: Sequence[int], n_grid: Mapping | None = None,
                          trials: int = 2, warmup: int = 1, seed: int = 0,
                          progress: bool = True) -> pd.DataFrame:  # fmt: skip
    """Seconds of one forward of ``n`` ids over a cache of ``L`` ids, for every ``L`` of
    ``contexts`` and ``n`` of ``n_grid`` (default :data:`FORWARD_GRID_N`), with logits at the
    last position (``keep="last"``) or at all ``n`` (``keep="all"``).

    The same timer as the s(N) sweep (:func:`_time_pp`: one forward over a restored cache,
    sync-bookended), so a prediction built from this grid uses the model, dtype, attention
    implementation and threads of the timed runs it is compared with. One random-context
    prefill of ``max(contexts)`` ids; contexts are visited longest first, the cache cropped
    to each. Trials are interleaved over the whole grid (a disturbance hits every cell alike).
    Returns one row per (keep, L, n): ``seconds`` (median over trials), ``s_min``, ``s_max``.
    """
    grid = {k: _check_grid(v) for k, v in (n_grid or FORWARD_GRID_N).items()}
    if not contexts or min(contexts) < 1 or trials < 1:
        raise ValueError(f"need positive contexts and trials >= 1, got {contexts}, {trials}")
    Ls = sorted({int(L) for L in contexts}, reverse=True)
    cache, _ = prefill_context(model, Ls[0], seed)
    span = random_ids(model.config.vocab_size, max(max(v) for v in grid.values()), seed + 1,
                      model.device)  # fmt: skip
    cells = [(keep, n) for keep, ns in grid.items() for n in ns]
    times: dict = {}
    with torch.inference_mode():
        bar = tqdm(total=(len(Ls) * trials + warmup) * len(cells), desc="forward-cost grid",
                   disable=not progress)  # fmt: skip
        for L in Ls:
            restore_cache(cache, L)
            for t in range((warmup if L == Ls[0] else 0) + trials):  # warm once, at the top
                gc.collect()
                for keep, n in cells:
                    dt = _time_pp(model, cache, span[:, :n], 1 if keep == "last" else n)
                    restore_cache(cache, L)
                    if t >= (warmup if L == Ls[0] else 0):
                        times.setdefault((keep, L, n), []).append(dt)
                    bar.update()
        bar.close()
    return pd.DataFrame([dict(keep=k, L=L, n=n, seconds=float(np.median(v)),
                              s_min=float(min(v)), s_max=float(max(v)))
                         for (k, L, n), v in sorted(times.items())])  # fmt: skip
