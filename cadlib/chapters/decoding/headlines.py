"""What the book's pages read of chapter 6 (decoding end to end): its summary rows (§2.3-2.4,
App. H; the paper never measured this), the re-run tolerances of ``results/decoding*.json``, the
``paper`` profile's settings, its coverage rows, what it adds beyond the paper, and its one-id
forward for the summary's comparison across chapters."""

from __future__ import annotations

from collections.abc import Callable

from cadlib import paper as P
from cadlib.book import rerun_check as R
from cadlib.book import verdicts as V
from cadlib.book.coverage import NOT_RUN_HERE, TEXT, Item
from cadlib.book.paper_settings import UNPUBLISHED, Setting
from cadlib.book.summary.spec import (
    CPU,
    FSM_PARSES,
    Headline,
    in_percent,
    lookup,
    percent_headline,
    row_value,
)

__all__ = [
    "BEYOND_THE_PAPER",
    "COVERAGE",
    "HEADLINES",
    "PAPER_HARDWARE",
    "PAPER_SETTINGS",
    "TOLERANCES",
    "one_id_forward",
]

_FSM_ROW = "FSM-constrained (untrained)"
_FSM_PARSE_RATE = in_percent(P.TABLE6[_FSM_ROW]["parsed"] / P.TABLE6[_FSM_ROW]["n"])
_DRAFTED = "m=0 +cursor +headers"  # the drafted decoder chapter 6 times (CopyDecoder drafts)


def _timed_cases(numbers: dict) -> int:
    """The cases of chapter 6's timed sample."""
    return len(numbers["timed_cases"])


def _accounted(
    table: str, column: str, method: str, setting: str, invert: bool = False
) -> Callable[[dict], float]:
    """``column`` of chapter 6's every-case accounting (``accounting.summary``) or predicted
    speedups (``cost_model.predicted_speedups``), pooled over every accounted corpus, for one
    method and setting (``invert``: 1 / the value, e.g. forwards per gold id -> forwards saved)."""

    def get(numbers):
        rows = lookup(numbers, table)
        value = next(
            r[column]
            for r in rows
            if r["corpus"] == "pooled" and r["method"] == method and r["setting"] == setting
        )
        return 1 / value if invert else value

    return get


def _every_case_rows() -> tuple[Headline, ...]:
    """Chapter 6's forwards and predicted speedups counted on every case of every accounted
    corpus (no model, so no timing noise and no small sample), pooled."""
    acc, pred = "accounting.summary", "cost_model.predicted_speedups"
    rows = []
    for name, method, setting in (
        ("Copy-as-Decode", "Copy-as-Decode", "m=0"),
        ("Copy-as-Decode with drafts", "Copy-as-Decode", _DRAFTED),
        ("prompt lookup (best setting)", "prompt lookup", "best"),
    ):
        n = _accounted(acc, "cases", method, setting)
        rows += [
            Headline(
                "decoding",
                f"forced-oracle {name}: forwards saved vs AR, every case (pooled)",
                "§2.4",
                None,
                _accounted(acc, "pooled_fpt", method, setting, invert=True),
                "×",
                V.beyond(),
                n=n,
            ),
            Headline(
                "decoding",
                f"forced-oracle {name}: predicted speedup over AR, every case (pooled)",
                "§4.6",
                None,
                _accounted(pred, "pooled_speedup", method, setting),
                "×",
                V.beyond(),
                n=n,
            ),
        ]
    return tuple(rows)


#: The summary's rows (§2.3-2.4, §4.6, App. H, App. M, Table 9).
HEADLINES: tuple[Headline, ...] = (
    percent_headline(
        "decoding",
        "free-run FSM decoding: parse rate (pooled)",
        "Table 6",
        _FSM_PARSE_RATE,
        row_value("free_run", "corpus", "pooled", "parse rate"),
        FSM_PARSES,
        n=row_value("free_run", "corpus", "pooled", "cases"),
    ),
    percent_headline(
        "decoding",
        "free-run FSM decoding: strict-resolve rate (pooled)",
        "§2.3",
        None,
        row_value("free_run", "corpus", "pooled", "strict-resolve rate"),
        V.beyond(),
        n=row_value("free_run", "corpus", "pooled", "cases"),
    ),
    *_every_case_rows(),
    Headline(
        "decoding",
        "forced-oracle Copy-as-Decode: wall-clock speedup, timed sample "
        "(pooled; led by its longest case, chapter 6 §1)",
        "§4.6",
        None,
        "speed.pooled/Copy-as-Decode.speedup",
        "×",
        V.beyond(),
        n=_timed_cases,
    ),
    Headline(
        "decoding",
        "forced-oracle Copy-as-Decode with drafts: wall-clock speedup, timed sample (pooled)",
        "App. M",
        None,
        "speed.pooled/Copy-as-Decode +drafts.speedup",
        "×",
        V.beyond(),
        n=_timed_cases,
    ),
    Headline(
        "decoding",
        "prompt lookup on the same outputs: wall-clock speedup, timed sample (pooled)",
        "Table 9",
        None,
        "speed.pooled/prompt lookup.speedup",
        "×",
        V.beyond(),
        n=_timed_cases,
    ),
    Headline(
        "decoding",
        "c_mask (decoder): FSM work per masked step",
        "App. H",
        P.FIXED_COSTS["c_mask_ms"][0],
        row_value("fixed_costs", "quantity", "c_mask: FSM work per masked step", "median"),
        "ms",
        CPU,
    ),
)

#: Re-run tolerances (:mod:`cadlib.book.rerun_check`), first match wins: timings and all they
#: price are ignored, KL divergences are model floats, counts of forwards and of greedy
#: decisions exact.
TOLERANCES: list[tuple[str, R.Tolerance]] = [
    ("numbers.speed.*.decode_s*", R.TIMING),
    ("numbers.speed.*.speedup*", R.TIMING),
    ("numbers.bounds.*", R.TIMING),
    ("numbers.fixed_costs.*", R.TIMING),
    ("numbers.mask_costs.*_us", R.TIMING),
    ("numbers.runtime_s", R.TIMING),
    ("numbers.kernel_curve", R.TIMING),
    ("numbers.cost_model.*", R.TIMING),  # the forward-cost grid and all it prices
    ("numbers.goals.*", R.TIMING),  # mixes forward counts with predicted/measured speed
    ("numbers.boundary_effect.*kl*", R.MODEL_FLOAT),  # KL divergences between two forwards
    ("numbers.speed.*.forward*", R.COUNT_RATIO),
    ("numbers.accounting.*", R.COUNT_RATIO),
    ("numbers.free_run.*", R.DECISION_RATIO),
    ("numbers.teacher_forced_agreement.*", R.DECISION_RATIO),
]

_ALL = {"heval-fix-py": None, "heval-fix-js": None, "probeedit": None}

#: The ``paper`` profile's settings beside the paper's (:mod:`cadlib.book.paper_settings`).
PAPER_SETTINGS: dict[str, Setting] = {
    "model": Setting(
        "Qwen/Qwen2.5-7B-Instruct",
        "Qwen/Qwen2.5-7B-Instruct",
        "§3 'end-to-end smoke test' (App. P: the untrained 7B base)",
    ),
    "dtype": Setting("bfloat16", "bfloat16", "§3 Table 1 (bf16 runtime)"),
    "attn_implementation": Setting("eager", "eager", "§3 Table 1 (eager HF Transformers)"),
    "timing_cases": Setting(
        _ALL,
        UNPUBLISHED,
        "App. P ('a controlled subset')",
        deviation="App. P is not in our copy of the paper: every case of the three corpora",
    ),
}

#: Where the paper ran this chapter's measurement.
PAPER_HARDWARE = "A100 80GB (§3 Table 1)"

#: The coverage map's rows this chapter alone treats (:mod:`cadlib.book.coverage`).
COVERAGE: tuple[Item, ...] = (
    Item(
        "Table 9",
        "Copy-as-Decode vs prompt-lookup decoding (architecture)",
        ("06_decoding",),
        ("prompt lookup*",),
        TEXT,
    ),
    Item("Figure 7", "the FSM", ("06_decoding",), ("free-run FSM*",)),
    Item(
        "App. P",
        "end-to-end smoke test on an untrained 7B",
        ("06_decoding",),
        (),
        NOT_RUN_HERE,
        "the 7B base needs a GPU and the hub; chapter 6 runs the same decoder on SmolLM2",
    ),
)

#: What the chapter adds beyond the paper (the summary's list).
BEYOND_THE_PAPER: tuple[str, ...] = (
    "the decoder measured end to end on a real model against autoregressive "
    "decoding and prompt lookup on the same outputs; range-valid line masks; tokenization at "
    "splice boundaries measured and handled",
)


def one_id_forward(record: dict, context: int) -> dict | None:
    """SmolLM2's one-id forward in this chapter's cpu run: its recorded forward-cost grid read
    at n = 1 and ``context`` (the kernel chapter's, so the two compare at the same length), or
    None when the grid is not recorded (:mod:`cadlib.book.summary.forward_costs`)."""
    import json

    from cadlib.book.summary.forward_costs import forward_row
    from cadlib.costs.cost_model import CostGrid
    from cadlib.record.replay import decode, record_path

    path = record_path("decoding", record["profile"], "timing", replay=True)
    if not path.exists():
        return None
    grid = CostGrid(decode(json.loads(path.read_text()))["grid"])
    p = record["params"]
    ms = float(grid.seconds([1], [context])[0]) * 1e3
    return forward_row(
        "6 (decoding)",
        "forward-cost grid at n = 1",
        record,
        context,
        ms,
        p["attn_implementation"],
        p["threads"],
    )
