"""Timing AR decode against parallel prefill over a KV cache: the s(N) sweep (paper §3, §4.1).

One timer for every engine (:mod:`cadlib.decoding.engines`: a ``transformers`` model through
:class:`~cadlib.decoding.engines.TransformersEngine`, or llama.cpp). After a ``P``-token
random-context prefill into a session (:func:`prefill_context`), :func:`measure_speedup` times
(i) ``N`` single-token forwards appending to the cache (AR) and (ii) one forward of the same
``N`` tokens (PP), sync-bookended (:meth:`~cadlib.decoding.engines.Session.sync`), with warm-up
and trials, restoring the cache to its ``P``-token state before every timed path and logging
each restore. The result is a :class:`SpeedupMeasurement`, whose
:meth:`~SpeedupMeasurement.summary` is the curve written to ``results/kernel.json`` (chapter 2,
and the GPU check :mod:`cadlib.cli.gpu_check`); :func:`engine_curve` is that curve with the
label of the engine that ran it (chapter 6b); :func:`timing_warnings` flags a run disturbed by
other processes.

The two timers (:func:`time_ar`, :func:`time_pp`) are shared with chapter 2's fixed costs
(:mod:`cadlib.chapters.kernel.run_fixed_costs`) and chapter 6's forward-cost grid
(:mod:`cadlib.costs.forward_grid`), so every kernel number is timed the same way.
"""

from __future__ import annotations

import gc
import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm import tqdm

from cadlib.costs.speedup_curve import N_GRID
from cadlib.decoding.engines import Engine, Session, as_engine

__all__ = [
    "random_ids",
    "random_feed",
    "prefill_context",
    "time_ar",
    "time_pp",
    "check_grid",
    "SpeedupMeasurement",
    "timing_warnings",
    "measure_speedup",
    "engine_curve",
]


def random_ids(vocab_size: int, n: int, seed: int, device="cpu") -> torch.Tensor:
    """``n`` seeded random token ids, shape (1, n): the paper's "random seeded" context (§3)."""
    if n < 1:
        raise ValueError(f"need at least one token, got n={n}")
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab_size, (1, n), generator=generator).to(device)


def random_feed(engine: Engine, n: int, seed: int):
    """:func:`random_ids` over ``engine``'s vocabulary in the engine's own form
    (:meth:`~cadlib.decoding.engines.Engine.prepare_ids`): converted once, before any clock
    starts; a slice ``[i:j]`` of it is ids ``i..j-1``."""
    return engine.prepare_ids(random_ids(engine.vocab_size, n, seed)[0])


def prefill_context(engine, P: int, seed: int = 0) -> tuple[Session, torch.Tensor]:
    """Prefill ``P`` random tokens into a new session of ``engine`` (a ``transformers`` model
    is wrapped, :func:`~cadlib.decoding.engines.as_engine`); return ``(session, last_logits)``.

    Returns
    -------
    session : cadlib.decoding.engines.Session
        Holds exactly ``P`` tokens.
    last_logits : torch.Tensor, shape (vocab,)
        Logits of the last context position (a realistic row for the mask benchmark).
    """
    engine = as_engine(engine)
    session = engine.new_session()
    with torch.inference_mode():
        logits = session.forward(random_feed(engine, P, seed))
    if len(session) != P:
        raise RuntimeError(f"prefill left {len(session)} tokens in the cache, not {P}")
    return session, logits[-1]


def time_ar(session: Session, span, checkpoints: Sequence[int]) -> list[float]:
    """Seconds after each checkpoint of ``len(span)`` single-token forwards, sync-bookended.

    ``span`` holds max(checkpoints) ids (:func:`random_feed`); ``checkpoints`` are increasing
    step counts.
    """
    marks, out = set(checkpoints), []
    session.sync()
    start = time.perf_counter()
    for i in range(len(span)):
        session.forward(span[i : i + 1])
        if i + 1 in marks:
            session.sync()
            out.append(time.perf_counter() - start)
    return out


def time_pp(session: Session, span, logits_to_keep: int = 0) -> float:
    """Seconds of one forward of ``span`` (``N`` ids, :func:`random_feed`) over the session's
    cache, sync-bookended. ``logits_to_keep``: ``0`` computes the logits of all ``N``
    positions (the paper's plain forward), ``k`` those of the last ``k`` only."""
    n = len(span)
    keep = min(logits_to_keep, n) or n
    session.sync()
    start = time.perf_counter()
    session.forward(span, keep=keep)
    session.sync()
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
    shared_ar_run, warmup, logits_to_keep, min_tokens
        The protocol's settings (:func:`measure_speedup`'s arguments of those names).
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
    warmup: int = 1
    logits_to_keep: int = 0
    min_tokens: int = 1

    @property
    def trials(self) -> int:
        return self.ar_s.shape[0]

    def protocol(self) -> dict:
        """The settings a curve's ``meta`` records: ``P``, ``trials``, ``warmup``,
        ``shared_ar_run``, ``logits_to_keep``, ``min_tokens``."""
        return dict(
            P=self.P,
            trials=self.trials,
            warmup=self.warmup,
            shared_ar_run=self.shared_ar_run,
            logits_to_keep=self.logits_to_keep,
            min_tokens=self.min_tokens,
        )

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
            T_AR_ms=ms(ar_med),
            T_AR_ms_min=ms(self.ar_s.min(0)),
            T_AR_ms_max=ms(self.ar_s.max(0)),
            T_PP_ms=ms(pp_med),
            T_PP_ms_min=ms(self.pp_s.min(0)),
            T_PP_ms_max=ms(self.pp_s.max(0)),
            AR_ms_per_token=ms(ar_med / np.asarray(self.N)),
        )

    @property
    def cache_always_restored(self) -> bool:
        """Every timed path started from, and was cropped back to, the ``P``-token cache."""
        return bool(self.cache_log) and all(
            row["before"] == self.P
            and row["after"] == self.P + row["N"]
            and row["restored"] == self.P
            for row in self.cache_log
        )


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


def check_grid(N_grid: Sequence[int]) -> list[int]:
    grid = [int(n) for n in N_grid]
    if not grid or any(n < 1 for n in grid) or any(b <= a for a, b in itertools.pairwise(grid)):
        raise ValueError(f"N_grid must be increasing positive span lengths, got {list(N_grid)}")
    return grid


def measure_speedup(
    engine,
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
    the ``P``-token state with :meth:`~cadlib.decoding.engines.Session.restore`, and each
    restore is logged.

    Parameters
    ----------
    engine : cadlib.decoding.engines.Engine or transformers.PreTrainedModel
        What runs the model; a ``transformers`` model (eval mode, on its device, timed in its
        own dtype and attention) is wrapped in a
        :class:`~cadlib.decoding.engines.TransformersEngine`.
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
    grid = check_grid(N_grid)
    if trials < 1 or warmup < 0:
        raise ValueError(f"need trials >= 1 and warmup >= 0, got {trials}, {warmup}")
    engine = as_engine(engine)
    session, _ = prefill_context(engine, P, seed)
    span = random_feed(engine, grid[-1], seed + 1)
    ar = np.zeros((trials, len(grid)))
    pp = np.zeros((trials, len(grid)))
    log: list[dict] = []

    def restore(trial, path, n, rep=0):
        after = len(session)
        restored = session.restore(P)
        log.append(
            dict(trial=trial, path=path, N=n, rep=rep, before=P, after=after, restored=restored)
        )

    def ar_run(t, n):  # median over ceil(min_tokens / n) separate n-step runs
        samples = []
        for rep in range(-(-min_tokens // n)):
            samples.append(time_ar(session, span[:n], [n])[0])
            restore(t, "AR", n, rep)
        return float(np.median(samples))

    def pp_run(t, n):
        samples = []
        for rep in range(-(-min_tokens // n)):
            samples.append(time_pp(session, span[:n], logits_to_keep))
            restore(t, "PP", n, rep)
        return float(np.median(samples))

    with torch.inference_mode():
        for _ in range(warmup):
            time_ar(session, span[: min(16, grid[-1])], [min(16, grid[-1])])
            session.restore(P)
            for n in grid:
                time_pp(session, span[:n], logits_to_keep)
                session.restore(P)
        bar = tqdm(total=trials * len(grid), desc=desc, disable=not progress)
        for t in range(trials):
            gc.collect()
            if shared_ar_run:
                ar[t] = time_ar(session, span, grid)
                restore(t, "AR", grid[-1])
            for j, n in enumerate(grid):
                if not shared_ar_run or n < min_tokens:
                    ar[t, j] = ar_run(t, n)
                pp[t, j] = pp_run(t, n)
                bar.update()
        bar.close()
    return SpeedupMeasurement(
        grid,
        ar,
        pp,
        P,
        shared_ar_run,
        log,
        warmup=warmup,
        logits_to_keep=logits_to_keep,
        min_tokens=min_tokens,
    )


def engine_curve(engine: Engine, model: str, progress: bool = True, **protocol) -> dict:
    """:func:`measure_speedup` on ``engine`` (``protocol``: its keyword arguments), checked and
    summarised: :meth:`SpeedupMeasurement.summary` with the ``meta`` that
    :func:`cadlib.costs.speedup_curve.curve_label` labels a curve with: ``model`` (a label),
    what ran it (:meth:`~cadlib.decoding.engines.Engine.info`: weights' dtype, attention,
    device, threads) and :meth:`SpeedupMeasurement.protocol`. Raises when a timed path did not
    start from the ``P``-id cache."""
    m = measure_speedup(engine, progress=progress, desc=f"s(N) {engine.name}", **protocol)
    if not m.cache_always_restored:
        raise RuntimeError(f"{engine.name}: a timed path did not start from the P-id cache")
    info = engine.info()
    meta = dict(
        model=model,
        dtype=info.get("dtype", "?"),
        attn_implementation=info.get("attn_implementation") or engine.name,
        device=str(engine.device),
        hardware=dict(threads=info.get("threads")),
        **m.protocol(),
    )
    return dict(m.summary(), meta=meta)
