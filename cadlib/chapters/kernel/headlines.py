"""What the book's pages read of chapter 2 (the kernel): its summary rows (§4.1, Table 17), the
re-run tolerances of ``results/kernel.json``, the ``paper`` profile's settings beside the
paper's, its coverage rows, what it adds beyond the paper, and its one-id forward for the
summary's comparison across chapters."""

from __future__ import annotations

from collections.abc import Callable

from cadlib import paper as P
from cadlib.book import rerun_check as R
from cadlib.book import verdicts as V
from cadlib.book.coverage import Item
from cadlib.book.paper_settings import Setting
from cadlib.book.summary.spec import CPU, PAPERMILL, Headline, absent

__all__ = [
    "BEYOND_THE_PAPER",
    "COVERAGE",
    "HEADLINES",
    "PAPER_HARDWARE",
    "PAPER_SETTINGS",
    "TOLERANCES",
    "one_id_forward",
]

_KERNEL_MODELS = {"qwen2.5-0.5b-random": "Qwen2.5-0.5B shape", "smollm2-135m-instruct": "SmolLM2"}
_PAPER_15B = P.KERNEL_CURVES["paper:qwen2.5-1.5b"]
_GPU_KERNEL = V.not_run_here(
    "needs a GPU (the paper profile times the 1.5B and 7B shapes in bf16 at P = 1024)",
    PAPERMILL.format(*["02_kernel.ipynb"] * 2),
)


def _curve(model: str, column: str, at: int | None = None) -> Callable[[dict], float]:
    """``column`` of our measured kernel curve for ``model`` at span ``at`` (last if None)."""

    def get(numbers):
        curve = numbers["curves"][model]
        return curve[column][-1 if at is None else curve["N"].index(at)]

    return get


def _kernel_rows() -> tuple[Headline, ...]:
    """s(8), s at our largest N, m* strict and safe, per model, beside the paper's 1.5B (A100)."""
    rows = []
    for model, name in _KERNEL_MODELS.items():
        trials = f"curves.{model}.meta.trials"
        rows += [
            Headline(
                "kernel",
                f"{name}: s(8)",
                "§4.1 (1.5B, A100)",
                _PAPER_15B["s"][0],
                _curve(model, "s", 8),
                "×",
                CPU,
                n=trials,
            ),
            Headline(
                "kernel",
                f"{name}: s at the largest N (ours 256, paper 512)",
                "§4.1 (1.5B, A100)",
                _PAPER_15B["s"][-1],
                _curve(model, "s"),
                "×",
                CPU,
                n=trials,
            ),
            Headline(
                "kernel",
                f"{name}: m* strict (first N with s > 1)",
                "Table 17 (1.5B)",
                P.M_STAR["paper:qwen2.5-1.5b"]["strict"],
                f"m_star.{model}.strict",
                "tokens",
                CPU,
            ),
            Headline(
                "kernel",
                f"{name}: m* safe (first N with s > 1.5)",
                "Table 17 (1.5B)",
                P.M_STAR["paper:qwen2.5-1.5b"]["safe"],
                f"m_star.{model}.safe",
                "tokens",
                CPU,
            ),
        ]
    rows.append(
        Headline(
            "kernel",
            "Qwen2.5-1.5B shape on a GPU: s(8)",
            "§4.1 (1.5B, A100)",
            _PAPER_15B["s"][0],
            absent,
            "×",
            _GPU_KERNEL,
        )
    )
    return tuple(rows)


#: The summary's rows (§4.1, Table 17).
HEADLINES: tuple[Headline, ...] = _kernel_rows()

#: Re-run tolerances (:mod:`cadlib.book.rerun_check`): the model and span grid are exact, every
#: timing is ignored.
TOLERANCES: list[tuple[str, R.Tolerance]] = [
    ("numbers.*.model", R.EXACT),
    ("numbers.*.N", R.EXACT),
    ("numbers.*", R.TIMING),
]

_N_GRID = tuple(2**k for k in range(10))  # 1 ... 512 (= cadlib.costs.kernel_timing.N_GRID)
_RANDOM_SHAPES = ("qwen2.5-1.5b-random", "qwen2.5-7b-random")

#: The ``paper`` profile's settings beside the paper's (:mod:`cadlib.book.paper_settings`).
PAPER_SETTINGS: dict[str, Setting] = {
    "models": Setting(
        _RANDOM_SHAPES,
        ("Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-7B-Instruct"),
        "§3 Table 1 (backbones), §4.1",
        deviation="random-initialised models of the published Qwen2.5-1.5B / 7B shapes: "
        "speed does not depend on weight values, and no hub download is needed",
    ),
    "dtype": Setting("bfloat16", "bfloat16", "§3 Table 1 (bf16)"),
    "attn_implementation": Setting("eager", "eager", "§3 Table 1 (eager HF Transformers)"),
    "P": Setting(1024, 1024, "§3 Table 1 (prefix context P = 1024)"),
    "N_grid": Setting(_N_GRID, _N_GRID, "§3 Table 1 (N in {1, ..., 512}, 10 points)"),
    "trials": Setting(
        dict(zip(_RANDOM_SHAPES, (7, 5), strict=True)),
        dict(zip(_RANDOM_SHAPES, (7, 5), strict=True)),
        "§3 Table 1 (t = 7 for 1.5B, t = 5 for 7B; median reported)",
    ),
}

#: Where the paper ran this chapter's measurement.
PAPER_HARDWARE = "A100 80GB, single device (§3 Table 1)"

#: The coverage map's rows this chapter alone treats (:mod:`cadlib.book.coverage`).
COVERAGE: tuple[Item, ...] = (
    Item(
        "Table 1",
        "experimental setup (hardware, sweep, fixed costs, corpora)",
        ("02_kernel",),
        ("c_mask*",),
    ),
    Item("Table 16", "fixed costs per op (c_mask, c_sync, c_forced)", ("02_kernel",), ("c_mask*",)),
    Item("Table 17", "minimum-span policy m*", ("02_kernel",), ("*m* strict*", "*m* safe*")),
    Item("Figure 3", "kernel speedup s(N)", ("02_kernel",), ("*s(8)", "*s at the largest N*")),
)

#: What the chapter adds beyond the paper (the summary's list).
BEYOND_THE_PAPER: tuple[str, ...] = (
    "the splice checked against step-by-step decoding (logits and positions), and "
    "the cache restored between trials, shown",
)


def one_id_forward(record: dict, context: int) -> dict | None:
    """SmolLM2's one-id forward in this chapter's cpu run (its fixed costs' ``tau`` at context
    ``P``; ``context`` is not used: this row sets it for the others), or None when not timed
    (:mod:`cadlib.book.summary.forward_costs`)."""
    from cadlib.book.summary.forward_costs import forward_row

    costs = record["numbers"].get("fixed_costs", {}).get("smollm2-135m-instruct")
    if not costs:
        return None
    p = record["params"]
    return forward_row(
        "2 (kernel)",
        "fixed costs: tau",
        record,
        costs["settings"]["P"],
        costs["tau_ms"]["median"],
        p["attn_implementation"],
        p["threads"],
    )
