"""The forward-cost grid of chapter 6's cost model (:mod:`cadlib.costs.cost_model`).

Seconds of one forward of ``n`` ids over a cache of ``L`` ids, timed exactly as the s(N)
sweep times its parallel prefill, so that the decoder's forwards are priced on the machine,
model and threads that ran them.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from cadlib.decoding.engines import as_engine

from .kernel_timing import check_grid, prefill_context, random_feed, time_pp

__all__ = ["FORWARD_GRID_N", "measure_forward_costs"]

#: Ids per forward of the cost grid: ``last`` (logits of the last position only: a decode
#: step, a decision with its forced tail, a splice) and ``all`` (logits at every position: a
#: prompt-lookup verify forward, ``K + 1 <= 41`` ids).
FORWARD_GRID_N = {
    "last": (1, 2, 3, 4, 6, 8, 12, 16, 32, 64, 128, 256),
    "all": (1, 2, 3, 4, 6, 8, 11, 16, 21, 32, 41),
}


def measure_forward_costs(
    engine,
    contexts: Sequence[int],
    n_grid: Mapping | None = None,
    trials: int = 2,
    warmup: int = 1,
    seed: int = 0,
    progress: bool = True,
) -> pd.DataFrame:
    """Seconds of one forward of ``n`` ids over a cache of ``L`` ids, for every ``L`` of
    ``contexts`` and ``n`` of ``n_grid`` (default :data:`FORWARD_GRID_N`), with logits at the
    last position (``keep="last"``) or at all ``n`` (``keep="all"``).

    The same timer as the s(N) sweep (:func:`time_pp`: one forward over a restored cache,
    sync-bookended), so a prediction built from this grid uses the model, dtype, attention
    implementation and threads of the timed runs it is compared with (``engine``: an
    :class:`~cadlib.decoding.engines.Engine`, or a ``transformers`` model, wrapped). One
    random-context prefill of ``max(contexts)`` ids; contexts are visited longest first, the
    cache cropped to each. Trials are interleaved over the whole grid (a disturbance hits every
    cell alike).
    Returns one row per (keep, L, n): ``seconds`` (median over trials), ``s_min``, ``s_max``.
    """
    grid = {k: check_grid(v) for k, v in (n_grid or FORWARD_GRID_N).items()}
    if not contexts or min(contexts) < 1 or trials < 1:
        raise ValueError(f"need positive contexts and trials >= 1, got {contexts}, {trials}")
    Ls = sorted({int(L) for L in contexts}, reverse=True)
    engine = as_engine(engine)
    session, _ = prefill_context(engine, Ls[0], seed)
    span = random_feed(engine, max(max(v) for v in grid.values()), seed + 1)
    cells = [(keep, n) for keep, ns in grid.items() for n in ns]
    times: dict = {}
    with torch.inference_mode():
        bar = tqdm(
            total=(len(Ls) * trials + warmup) * len(cells),
            desc="forward-cost grid",
            disable=not progress,
        )
        for L in Ls:
            session.restore(L)
            for t in range((warmup if L == Ls[0] else 0) + trials):  # warm once, at the top
                gc.collect()
                for keep, n in cells:
                    dt = time_pp(session, span[:n], 1 if keep == "last" else n)
                    session.restore(L)
                    if t >= (warmup if L == Ls[0] else 0):
                        times.setdefault((keep, L, n), []).append(dt)
                    bar.update()
        bar.close()
    return pd.DataFrame(
        [
            dict(
                keep=k,
                L=L,
                n=n,
                seconds=float(np.median(v)),
                s_min=float(min(v)),
                s_max=float(max(v)),
            )
            for (k, L, n), v in sorted(times.items())
        ]
    )
