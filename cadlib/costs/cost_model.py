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

from cadlib.decoding.methods import COPY_AS_DECODE, DRAFTED
from cadlib.record.style import PALETTE

from .accounting import BOUND, Accounting, bootstrap_median, headline_rows

__all__ = [
    "CostGrid",
    "validation",
    "validation_summary",
    "predicted_speedups",
    "timed_bounds",
    "plot_validation",
    "best_copy_as_decode",
    "goals",
    "goals_markdown",
    "outcome_line",
    "bound_ratio",
    "corpus_set",
    "DEVELOPMENT_CORPORA",
    "TEST_CORPORA",
    "GOAL_CORPORA",
    "BOUND_GOAL",
    "MET",
    "MISSED",
    "UNDECIDED",
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

    ``measured``: :func:`cadlib.chapters.decoding.measure.time_on_gold` rows (``decode_s``,
    ``forward_s``); ``predicted``: accounting rows of the same cases with ``predicted_s`` (method
    and setting of the timed runs: autoregressive, prompt lookup at the timed setting,
    Copy-as-Decode m=0).
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


def plot_validation(val: pd.DataFrame, title: str | None = None):
    """Predicted vs measured decode seconds per timed case and method (log-log, the diagonal
    drawn) beside the error in % per method. Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    for method, g in val.groupby("method", sort=False):
        color = PALETTE.get(method)
        ax.scatter(g.measured_s, g.predicted_s, label=method, s=22, color=color)
        bx.scatter([method] * len(g), g.error_pct, s=22, color=color)
    both = val[["measured_s", "predicted_s"]]
    lo, hi = both.min().min(), both.max().max()
    ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls=":")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="measured decode s (median of repeats)",
        ylabel="predicted s (Σ grid cost of its forwards)",
    )
    ax.legend(fontsize=7)
    bx.axhline(0, color="grey", lw=0.8)
    bx.set(ylabel="error % (predicted − measured) / measured")
    bx.tick_params(axis="x", labelsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def best_copy_as_decode(summary: pd.DataFrame, corpus: str) -> pd.Series:
    """The row of ``summary`` (:func:`cadlib.costs.accounting.forwards_summary`) of the best
    Copy-as-Decode variant on ``corpus``: the fewest pooled forwards per gold id (the variant
    the goals compare, and the one their explanations decompose)."""
    rows = summary[(summary.corpus == corpus) & (summary.method == "Copy-as-Decode")]
    if rows.empty:
        raise ValueError(f"no Copy-as-Decode row for corpus {corpus!r} in the summary")
    return rows.sort_values("pooled_fpt").iloc[0]


#: The development set: the corpora the book's choices were made on, so a goal met there is
#: labelled as such. The drafts' rules were designed by looking at HumanEvalFix-Python cases,
#: their body setting was tried on the headline corpora, and the timed setting (sample, caps,
#: grid) was built and run on these three.
DEVELOPMENT_CORPORA = ("heval-fix-py", "heval-fix-js", "probeedit")
#: The test set: corpora nothing was designed or tuned on (the four other HumanEvalFix
#: languages and real Flask commits). Only the accounting covers them (no timed runs), so a
#: goal that needs the clock is reported on the development set only.
TEST_CORPORA = (
    "heval-fix-java",
    "heval-fix-go",
    "heval-fix-cpp",
    "heval-fix-rust",
    "realedits-flask",
)
#: Corpora named by issue 17's goals (development first, then test).
GOAL_CORPORA = DEVELOPMENT_CORPORA + TEST_CORPORA
#: A goal's outcomes: met, missed, or undecided (its margin lies within the error of the
#: cost model that predicts it).
MET, MISSED, UNDECIDED = "met", "missed", "undecided"
#: The goal on the bound, named once: it is judged on plain Copy-as-Decode, the mechanism
#: ``bnd_exact`` bounds (drafts speed up ``<gen>`` bodies, which the bound charges one step per
#: id, so the drafted decoder can exceed it: it is shown beside the goal, not judged by it).
BOUND_GOAL = "pooled realized (plain Copy-as-Decode) ≥ 0.8 × bnd_exact (same grid)"


def corpus_set(corpus: str) -> str:
    """``"development"`` or ``"test"`` for a goal corpus (:data:`DEVELOPMENT_CORPORA`)."""
    if corpus in DEVELOPMENT_CORPORA or corpus == "timed":
        return "development"
    if corpus in TEST_CORPORA:
        return "test"
    raise ValueError(f"corpus {corpus!r} is in neither the development nor the test set")


def bound_ratio(pooled_bounds: pd.Series) -> float:
    """The quantity the bound goal names: pooled realized speedup of plain Copy-as-Decode over
    ``bnd_exact`` on the same grid (``realized_over_bnd_exact`` of
    :func:`timed_bounds`' pooled row), never the drafted decoder's."""
    if "realized_over_bnd_exact" not in pooled_bounds:
        raise ValueError("the pooled bounds row needs realized_over_bnd_exact")
    return float(pooled_bounds["realized_over_bnd_exact"])


def _outcome(margin: float, error_pct: float | None) -> str:
    """Met / missed by ``margin`` (ours over the target, > 1: met), or undecided when the
    margin lies within the model's relative error ``error_pct`` (None: not a predicted goal)."""
    if error_pct is not None and abs(margin - 1) <= error_pct / 100:
        return UNDECIDED
    return MET if margin > 1 else MISSED


def goals(
    summary: pd.DataFrame,
    speedups: pd.DataFrame,
    speed: pd.DataFrame | None,
    bounds: pd.Series | None,
    model_error_pct: float | None = None,
) -> pd.DataFrame:
    """Issue 17's goals, each with the figure, the target, its set (development or test) and
    its outcome (met, missed or undecided); ``met`` is true only for a met goal.

    ``summary``: :func:`cadlib.costs.accounting.forwards_summary`; ``speedups``:
    :func:`predicted_speedups`; ``speed``: :func:`cadlib.chapters.decoding.measure.speed_table` of
    the timed sample (measured; ``None``: not timed); ``bounds``: the pooled row of
    :func:`timed_bounds` from the same grid (``None``: not timed); ``model_error_pct``: the
    cost model's largest error against the clock (:func:`validation_summary`, all methods),
    within which a predicted goal is undecided. Every goal is judged on the quantity it names:
    the forwards and predicted goals on the best Copy-as-Decode variant (fewest pooled
    forwards per corpus), the measured goal on the faster decoder as built, the bound goal on
    plain Copy-as-Decode (:func:`bound_ratio`)."""
    rows = []
    for corpus in [c for c in GOAL_CORPORA if c in set(summary.corpus)]:
        s, part = summary[summary.corpus == corpus], corpus_set(corpus)
        cad = best_copy_as_decode(summary, corpus)
        pld = s[s.method == "prompt lookup"].iloc[0]
        rows.append(
            dict(
                goal="fewer forwards than best prompt lookup",
                corpus=corpus,
                set=part,
                ours=cad.pooled_fpt,
                rival=pld.pooled_fpt,
                target="ours < rival",
                outcome=_outcome(pld.pooled_fpt / cad.pooled_fpt, None),
                note=f"CaD {cad.setting} vs PLD {pld.setting} (forwards / gold id)",
            )
        )
        need = 2.0 if corpus == "probeedit" else 1.0
        target = f"ours / rival > {need:g}" if need > 1 else "ours > rival"
        p = speedups[speedups.corpus == corpus].set_index(["method", "setting"]).pooled_speedup
        cad_p, pld_p = p.get(("Copy-as-Decode", cad.setting)), p.get(("prompt lookup", "best"))
        if cad_p is not None and pld_p is not None:
            band = (
                ""
                if model_error_pct is None
                else f"; undecided band ±{model_error_pct:.1f} %, the cost model's largest error"
            )
            rows.append(
                dict(
                    goal="faster than best prompt lookup (predicted)",
                    corpus=corpus,
                    set=part,
                    ours=cad_p,
                    rival=pld_p,
                    target=target,
                    outcome=_outcome(cad_p / (need * pld_p), model_error_pct),
                    note=f"pooled predicted speedup over AR, CaD {cad.setting}{band}",
                )
            )
        if speed is not None and corpus in set(speed.corpus):
            by = speed[speed.corpus == corpus].set_index("method").speedup
            best = max((m for m in COPY_AS_DECODE if m in by), key=by.get)
            rows.append(
                dict(
                    goal="faster than prompt lookup (measured, timed sample)",
                    corpus=corpus,
                    set=part,
                    ours=by[best],
                    rival=by["prompt lookup"],
                    target=target,
                    outcome=_outcome(by[best] / (need * by["prompt lookup"]), None),
                    note=f"the faster decoder as built: {best}; PLD at the timed setting",
                )
            )
    if bounds is not None:
        ratio = bound_ratio(bounds)
        drafts = bounds.get("drafts_over_bnd_exact")
        shown = (
            ""
            if drafts is None or pd.isna(drafts)
            else (
                f"; +drafts reaches {drafts:.2f} × a bound that charges its bodies one step per id"
            )
        )
        rows.append(
            dict(
                goal=BOUND_GOAL,
                corpus="timed",
                set="development",
                ours=ratio,
                rival=0.8,
                target="ours ≥ 0.8",
                outcome=MET if ratio >= 0.8 else MISSED,
                note=f"plain CaD / bound priced on grid{shown}",
            )
        )
    out = pd.DataFrame(rows)
    if len(out):
        out["met"] = out.outcome == MET
    return out


def goals_markdown(table: pd.DataFrame, label: str) -> str:
    """The goals as a Markdown list, development set first, each met, missed or undecided
    and by how much (ours / rival), then the count per outcome and set."""
    lines = [f"*Issue 17's goals, this run ({label}):*", ""]
    for part in ("development", "test"):
        sub = table[table.set == part]
        if sub.empty:
            continue
        lines.append(f"*{part.capitalize()} set* ({_SET_NOTE[part]}):")
        lines.append("")
        for r in sub.itertuples():
            ratio = r.ours / r.rival if r.rival else float("nan")
            lines.append(
                f"* {r.goal}, {r.corpus}: **{r.outcome}** — ours {r.ours:.3f} vs "
                f"{r.rival:.3f} (ratio {ratio:.2f}; target {r.target}; {r.note})"
            )
        lines.append("")
    lines.append(outcome_line(table))
    return "\n".join(lines)


_SET_NOTE = {
    "development": "the corpora the drafts and the timed setting were designed on; the only "
    "ones timed, so the measured and bound goals are development-set only",
    "test": "corpora nothing was designed or tuned on; counted and priced, not timed",
}


def outcome_line(table: pd.DataFrame) -> str:
    """How many goals are met, missed and undecided, per set."""
    parts = []
    for part in ("development", "test"):
        sub = table[table.set == part]
        if len(sub):
            counts = ", ".join(
                f"{int((sub.outcome == o).sum())} {o}" for o in (MET, MISSED, UNDECIDED)
            )
            parts.append(f"{part} set: {counts} (of {len(sub)})")
    return "Goals, " + "; ".join(parts) + "."
