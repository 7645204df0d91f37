"""Chapter 2's tables: curves, fixed costs, m*, cache log, splice check, and the GPU check's
s(N) beside the paper's A100 figures.

Each takes the ``bench`` of :func:`.run.benchmark_models` (or the ``numbers`` of
:func:`.run.numbers`) and returns a pandas DataFrame, with the paper's figures beside ours
where it has them; the figure of s(N) is :func:`cadlib.record.style.plot_speedup`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd

from cadlib import paper as _paper
from cadlib.record.results import find_results_file

__all__ = [
    "curve_table",
    "fixed_cost_table",
    "m_star_table",
    "cache_log_table",
    "SPLICE_CHECK_FIELDS",
    "splice_check_table",
    "speedup_overview",
    "GPU_PAIRS",
    "gpu_evidence",
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


#: The fields of :func:`.run_splice_check.check_splice_equals_ar` that the chapter shows (no
#: timings).
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


#: The GPU check's shapes beside the paper's A100 curves of the same shapes (§4.1).
GPU_PAIRS = {"qwen2.5-1.5b-random": "paper:qwen2.5-1.5b", "qwen2.5-7b-random": "paper:qwen2.5-7b"}


def gpu_evidence(record: Mapping | None = None):
    """s(N) of the committed GPU check (``results/kernel.gpu.json``, ``make gpu-check``) at
    the paper's two N beside the paper's A100 figures, one row per shape and N; ``None`` when
    no GPU run is committed."""
    if record is None:
        path = find_results_file("kernel.gpu.json")
        if not path.exists():
            return None
        record = json.loads(path.read_text())
    rows = []
    for name, paper_name in GPU_PAIRS.items():
        curve, paper = record["numbers"]["curves"].get(name), _paper.KERNEL_CURVES[paper_name]
        if curve is None:
            continue
        ours = dict(zip(curve["N"], curve["s"], strict=True))
        for n, theirs in zip(paper["N"], paper["s"], strict=True):
            rows.append(
                {
                    "shape (random init)": name,
                    "N": n,
                    "s(N) ours": ours.get(n),
                    "s(N) paper, A100": theirs,
                    "ours / paper": ours[n] / theirs if n in ours else None,
                }
            )
    return pd.DataFrame(rows)
