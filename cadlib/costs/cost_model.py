"""Chapter 6's cost model: predicted decode time = the sum, over a run's forwards, of the
measured cost of a forward of ``n`` ids at context length ``L``.

The grid comes from :func:`cadlib.costs.forward_grid.measure_forward_costs` (the s(N) sweep's
timer), run in the same process, with the same model, dtype, attention implementation and threads as
the timed decodes it predicts. :class:`CostGrid` interpolates it (bilinear in ``n`` and ``L``,
linear beyond the grid), prices the forwards of :mod:`cadlib.costs.accounting` (every case, no
model), and so gives predicted wall-clock speedups for every accounted case and, from the
same grid, ``bnd_exact`` (what the paper charges: body ids and one forward per copy) and
``bnd_fsm`` (every forward the decoder runs). :func:`validation` sets predictions beside the
clock on the timed sample; what the prediction leaves out (Python work between forwards: the
FSM, the argmax, the drafter, cache crops) shows there as the error, per method.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cadlib.decoding.method_names import DRAFTED

from .accounting import BOUND, Accounting, bootstrap_median, headline_rows

__all__ = [
    "CostGrid",
    "validation",
    "validation_summary",
    "predicted_speedups",
    "timed_bounds",
    "best_copy_as_decode",
]


def _bracket(grid: np.ndarray, x: np.ndarray):
    """Left index and weight of ``x`` in increasing ``grid`` (weights outside [0, 1] beyond
    either end: linear extrapolation from the two nearest points)."""
    i = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, len(grid) - 2)
    return i, (x - grid[i]) / (grid[i + 1] - grid[i])


class CostGrid:
    """Seconds of a forward of ``n`` ids at context ``L`` with logits at the last position
    (``keep="last"``) or at every position (``keep="all"``), from a measured grid (a
    DataFrame with columns ``keep``, ``L``, ``n``, ``seconds``; a cell measured more than
    once, e.g. before and after the timed runs, takes the median)."""

    def __init__(self, table: pd.DataFrame):
        if table.empty or not {"keep", "L", "n", "seconds"} <= set(table.columns):
            raise ValueError(
                "need a grid with columns keep, L, n, seconds "
                "(cadlib.costs.forward_grid.measure_forward_costs)"
            )
        self.table = table
        self._grids = {}
        for keep, g in table.groupby("keep"):  # repeated cells (grids measured twice): median
            m = g.pivot_table(index="n", columns="L", values="seconds", aggfunc="median")
            m = m.sort_index().sort_index(axis=1)
            if m.isna().any().any() or m.shape[0] < 2 or m.shape[1] < 2:
                raise ValueError(f"grid {keep!r} needs >= 2 n and >= 2 L, all measured")
            self._grids[keep] = (m.index.to_numpy(float), m.columns.to_numpy(float), m.to_numpy())

    def seconds(self, n, L, keep: str = "last") -> np.ndarray:
        """Interpolated seconds of forwards of ``n`` ids at contexts ``L`` (arrays)."""
        ns, Ls, S = self._grids[keep]
        n, L = np.asarray(n, float), np.asarray(L, float)
        i, u = _bracket(ns, n)
        j, v = _bracket(Ls, L)
        out = (
            (1 - u) * (1 - v) * S[i, j]
            + u * (1 - v) * S[i + 1, j]
            + (1 - u) * v * S[i, j + 1]
            + u * v * S[i + 1, j + 1]
        )
        return np.maximum(out, S.min())

    def forward_seconds(self, forwards: Sequence) -> np.ndarray:
        """Seconds of each :class:`cadlib.costs.accounting.Forward`: a forward needing logits at
        ``k > 1`` positions costs ``last(n) + all(k) - last(k)`` (the extra lm-head rows)."""
        n = np.fromiter((f.n_ids for f in forwards), float, len(forwards))
        L = np.fromiter((f.context for f in forwards), float, len(forwards))
        k = np.fromiter((getattr(f, "logits", 1) for f in forwards), float, len(forwards))
        out = self.seconds(n, L, "last")
        many = k > 1
        if many.any():
            out[many] += self.seconds(k[many], L[many], "all") - self.seconds(
                k[many], L[many], "last"
            )
        return out

    def predict(self, acc: Accounting) -> float:
        """Predicted decode seconds of a run: every forward after the prompt prefill."""
        fw = [f for f in acc.forwards if f.kind != "prefill"]
        return float(self.forward_seconds(fw).sum()) if fw else 0.0


def validation(measured: pd.DataFrame, predicted: pd.DataFrame) -> pd.DataFrame:
    """Per timed case and method: measured decode seconds (median over repeats), the sum of
    the measured forwards alone, the prediction, and the errors in % ((pred - meas) / meas).

    ``measured``: one row per timed run (case, method, repeat) with ``decode_s`` and
    ``forward_s`` (chapter 6's timed sample, :mod:`cadlib.chapters.decoding.run_timing`);
    ``predicted``: accounting rows of the same cases with ``predicted_s`` (method and setting
    of the timed runs: autoregressive, prompt lookup at the timed setting, Copy-as-Decode
    m=0).
    """
    med = (
        measured.groupby(["corpus", "case", "method"], sort=False)
        .agg(
            T=("T", "first"),
            forwards=("forwards", "first"),
            measured_s=("decode_s", "median"),
            forward_s=("forward_s", "median"),
        )
        .reset_index()
    )
    out = med.merge(
        predicted[["case", "method", "predicted_s", "forwards"]].rename(
            columns={"forwards": "predicted_forwards"}
        ),
        on=["case", "method"],
        how="left",
    )
    out["error_pct"] = 100 * (out.predicted_s - out.measured_s) / out.measured_s
    out["error_vs_forwards_pct"] = 100 * (out.predicted_s - out.forward_s) / out.forward_s
    out["overhead_ms_per_forward"] = 1e3 * (out.measured_s - out.forward_s) / out.forwards
    return out


def validation_summary(val: pd.DataFrame) -> pd.DataFrame:
    """Per method (and pooled): cases, median and max absolute error % of the prediction
    against the clock and against the measured forwards, pooled error of the sums, and the
    median Python overhead per forward (ms) that the prediction does not charge."""
    rows = []
    for method, g in [*val.groupby("method", sort=False), ("all", val)]:
        rows.append(
            dict(
                method=method,
                cases=len(g),
                median_abs_error_pct=float(g.error_pct.abs().median()),
                max_abs_error_pct=float(g.error_pct.abs().max()),
                pooled_error_pct=float(100 * (g.predicted_s.sum() / g.measured_s.sum() - 1)),
                median_abs_error_vs_forwards_pct=float(g.error_vs_forwards_pct.abs().median()),
                overhead_ms_per_forward=float(g.overhead_ms_per_forward.median()),
            )
        )
    return pd.DataFrame(rows)


def predicted_speedups(rows: pd.DataFrame, best: pd.Series, seed: int = 0) -> pd.DataFrame:
    """Predicted wall-clock speedup over autoregressive decoding, per corpus and pooled, per
    headline method: the median per-case speedup with its bootstrap 95% interval and the
    pooled one (sum of AR seconds / sum of the method's); plus ``bnd_exact`` and ``bnd_fsm``
    rows priced on the same grid (``bnd_fsm``: Copy-as-Decode m=0's own forwards)."""
    if "predicted_s" not in rows:
        raise ValueError("rows need predicted_s (accounting.corpus_forwards(..., cost=...))")
    bound = rows[rows.method == BOUND].assign(method="bnd_exact (same grid)", setting="")
    head = pd.concat([headline_rows(rows, best), bound])
    key = ["corpus", "case"]
    ar = head[head.method == "autoregressive"].set_index(key)["predicted_s"]
    ar_s = ar.reindex(pd.MultiIndex.from_frame(head[key])).to_numpy()
    head = head.assign(ar_s=ar_s, speedup=ar_s / head.predicted_s.clip(lower=1e-12))
    head = head.assign(setting=head.setting.where(head.method != "prompt lookup", "best"))
    out = []
    for corpus, g in [*head.groupby("corpus", sort=False), ("pooled", head)]:
        for (method, setting), m in g.groupby(["method", "setting"], sort=False):
            if method == "autoregressive":
                continue
            med, lo, hi = bootstrap_median(m.speedup, seed)
            out.append(
                dict(
                    corpus=corpus,
                    method=method,
                    setting=setting,
                    cases=len(m),
                    median_speedup=med,
                    lo=lo,
                    hi=hi,
                    pooled_speedup=m.ar_s.sum() / m.predicted_s.sum(),
                )
            )
    return pd.DataFrame(out)


def timed_bounds(measured: pd.DataFrame, acc: pd.DataFrame) -> pd.DataFrame:
    """On the timed cases, per corpus and pooled: the realized wall-clock speedup of
    forced-oracle Copy-as-Decode (measured AR decode seconds / measured CaD, medians over
    repeats, summed over cases) beside ``bnd_exact`` and ``bnd_fsm`` priced on the forward-cost
    grid (same model, attention, threads and contexts as the timed runs), and realized /
    bnd_exact; the same for Copy-as-Decode with its drafts (:data:`DRAFTED`) when it was
    timed. ``acc``: accounting rows of the timed cases with ``predicted_s``."""
    med = measured.groupby(["corpus", "case", "method"]).decode_s.median().unstack("method")
    pred = acc.set_index(["corpus", "case", "method", "setting"]).predicted_s
    rows = []
    for corpus, g in [*med.groupby(level="corpus"), ("pooled", med)]:
        cases = list(g.index)

        def p(method, setting, cases=cases):
            return sum(float(pred[(c, k, method, setting)]) for c, k in cases)

        ar = p("autoregressive", "")
        realized = g["autoregressive"].sum() / g["Copy-as-Decode"].sum()
        bnd = ar / p(BOUND, "")
        row = dict(
            corpus=corpus,
            cases=len(cases),
            realized_wall=realized,
            bnd_exact_grid=bnd,
            bnd_fsm_grid=ar / p("Copy-as-Decode", "m=0"),
            realized_over_bnd_exact=realized / bnd,
        )
        if DRAFTED in g:
            drafted = g["autoregressive"].sum() / g[DRAFTED].sum()
            row.update(realized_drafts_wall=drafted, drafts_over_bnd_exact=drafted / bnd)
        rows.append(row)
    return pd.DataFrame(rows)


def best_copy_as_decode(summary: pd.DataFrame, corpus: str) -> pd.Series:
    """The row of ``summary`` (:func:`cadlib.costs.accounting.forwards_summary`) of the best
    Copy-as-Decode variant on ``corpus``: the fewest pooled forwards per gold id (the variant
    chapter 6's goals compare, and the one their explanations decompose)."""
    rows = summary[(summary.corpus == corpus) & (summary.method == "Copy-as-Decode")]
    if rows.empty:
        raise ValueError(f"no Copy-as-Decode row for corpus {corpus!r} in the summary")
    return rows.sort_values("pooled_fpt").iloc[0]
