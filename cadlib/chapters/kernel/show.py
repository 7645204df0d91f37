"""The kernel chapter's tables and its figure: curves, fixed costs, m*, cache log, splice check.

Each takes the ``bench`` of :func:`cadlib.chapters.kernel.benchmark_models` (or the ``numbers`` of
:func:`cadlib.chapters.kernel.kernel_numbers`) and returns a pandas DataFrame, a Markdown string or
a matplotlib figure, with the paper's figures beside ours where it has them.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from cadlib import paper as _paper
from cadlib.costs.kernel_timing import timing_warnings

__all__ = [
    "curve_table",
    "fixed_cost_table",
    "m_star_table",
    "cache_log_table",
    "SPLICE_CHECK_FIELDS",
    "splice_check_table",
    "timing_sanity",
    "speedup_overview",
]


def curve_table(bench: Mapping):
    """``T_AR``, ``T_PP`` (median ms) and ``s(N)`` [min–max] per model: a pandas DataFrame."""
    frames = []
    for name, entry in bench.items():
        c = entry["curve"]
        frames.append(
            pd.DataFrame(
                {
                    "model": name,
                    "N": c["N"],
                    "T_AR ms": c["T_AR_ms"],
                    "T_PP ms": c["T_PP_ms"],
                    "AR ms/token": c["AR_ms_per_token"],
                    "s(N)": c["s"],
                    "s best": c.get("s_best", [None] * len(c["N"])),
                    "s min–max": [
                        f"{a:.2f}–{b:.2f}" for a, b in zip(c["s_lo"], c["s_hi"], strict=True)
                    ],
                }
            )
        )
    return pd.concat(frames).set_index(["model", "N"])


def fixed_cost_table(bench: Mapping):
    """Measured fixed costs per model beside the paper's Table 1 (ms/op), and c_forced / tau,
    which Appendix H takes as about 1."""
    rows = {}
    for key in ("c_mask_ms", "c_sync_ms", "c_forced_ms", "tau_ms"):
        value, pm = _paper.FIXED_COSTS[key]
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

    rows = {
        f"{k} (paper, A100)": {
            "strict (s>1)": show(v["strict"]),
            "safe (s>1.5)": show(v["safe"]),
            "with fixed costs": "",
        }
        for k, v in _paper.M_STAR.items()
    }
    for name, entry in bench.items():
        m = entry["m_star"]
        rows[name] = {
            "strict (s>1)": show(m["strict"]),
            "safe (s>1.5)": show(m["safe"]),
            "with fixed costs": show(m.get("with_overhead")),
        }
    return pd.DataFrame(rows).T


def cache_log_table(bench: Mapping, trial: int | None = None):
    """The cache length before, after and restored for every timed path (or the first
    sample of each path in one trial), and whether every trial of that model restored it."""
    rows = [
        dict(model=name, **row)
        for name, entry in bench.items()
        for row in entry["cache_log"]
        if trial is None or (row["trial"] == trial and row["rep"] == 0)
    ]
    log = pd.DataFrame(rows)
    restored = {name: entry["cache_always_restored"] for name, entry in bench.items()}
    log["all trials restored"] = log.model.map(restored)
    return log


#: The fields of :func:`check_splice_equals_ar` that the chapter shows (no timings).
SPLICE_CHECK_FIELDS = (
    "passed",
    "argmax_equal",
    "logits_allclose",
    "keys_allclose",
    "len_before",
    "len_after_ar",
    "len_after_splice",
    "positions_advance_by_N",
    "atol",
    "rtol",
    "dtype",
    "attn_implementation",
)


def splice_check_table(check: Mapping, control: Mapping, model: str):
    """The splice-equals-AR check beside its control (positions shifted by one), field by
    field: the control must fail where the check passes, or the check proves nothing."""
    return pd.DataFrame(
        {
            f"{model}: splice": {k: str(check[k]) for k in SPLICE_CHECK_FIELDS},
            "control: positions shifted by 1": {k: str(control[k]) for k in SPLICE_CHECK_FIELDS},
        }
    )


def timing_sanity(bench: Mapping) -> str:
    """Markdown: per model, the :func:`timing_warnings` of its curve, and what to do when a
    run was disturbed."""
    found = {name: timing_warnings(entry["curve"]) for name, entry in bench.items()}
    lines = [
        f"* **{name}**: "
        + ("; ".join(w) if w else "no sign of interference (s(1) ≈ 1, steady decode step)")
        for name, w in found.items()
    ]
    if any(found.values()):
        lines.append(
            "\n**This run was disturbed** (on a shared machine other jobs slow the many "
            "short decode steps far more than one long forward, which inflates s(N)). "
            "Read the `s best` column (fastest AR over fastest PP), or rerun on a quiet "
            "machine."
        )
    return "**Timing sanity.**\n\n" + "\n".join(lines)


def speedup_overview(numbers: Mapping, paper: Mapping | None = None):
    """One row per measured curve (s at 1, 2, 8 and the largest N, the best-of-trials ratios,
    per-token costs) and one per paper curve (its A100 s(8) and s(512))."""
    paper = _paper.KERNEL_CURVES if paper is None else paper

    def at(c, n):
        return c["s"][c["N"].index(n)] if n in c["N"] else None

    rows = {}
    for name, c in numbers["curves"].items():
        ar_ms = sum(c["AR_ms_per_token"]) / len(c["N"])
        rows[name] = {
            "s(1)": at(c, 1),
            "s(2)": at(c, 2),
            "s(8)": at(c, 8),
            f"s({c['N'][-1]})": c["s"][-1],
            "max s": max(c["s"]),
            "s best(8)": c["s_best"][c["N"].index(8)] if 8 in c["N"] else None,
            "max s best": max(c["s_best"]),
            "AR ms/token (mean over N)": round(ar_ms, 2),
            "PP ms/token at max N": round(c["T_PP_ms"][-1] / c["N"][-1], 3),
            "device": c["meta"]["device"],
        }
    for name, c in paper.items():
        rows[name + " (A100)"] = {"s(8)": c["s"][0], "s(512)": c["s"][1], "device": "A100 (paper)"}
    return pd.DataFrame(rows).T
