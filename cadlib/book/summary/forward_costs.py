"""One SmolLM2 forward, three chapters: does the book's cost of a one-id decode forward agree
with itself?

Chapters 2, 6 and 6b each time SmolLM2-135M-Instruct's one-id forward on the CPU, in their own
harness: chapter 2's fixed costs (``tau`` at context ``P``), chapter 6's forward-cost grid
(interpolated at the same context) and chapter 6b's ``transformers`` engine (one autoregressive
step of its s(N) sweep at its ``kernel_P``). :func:`one_id_forward_table` puts them side by side
with what differs between the harnesses (attention, torch threads) and the load each run
recorded (:mod:`cadlib.record.provenance`); :func:`forward_cost_reading` says whether they agree.
"""

from __future__ import annotations

import json

import pandas as pd

from cadlib.costs.cost_model import CostGrid
from cadlib.record.provenance import load_label
from cadlib.record.replay import decode, record_path
from cadlib.record.results import read_results_file

from .render import fit_table_html

__all__ = ["AGREEMENT_BAND", "forward_cost_html", "forward_cost_reading", "one_id_forward_table"]

#: Two harnesses "agree" when the slower one-id forward is at most this many times the faster
#: at the same context: 1.25 allows for a different attention kernel and timer, not for a busy
#: machine or another thread count.
AGREEMENT_BAND = 1.25


def _results(name: str) -> dict | None:
    return read_results_file(name)


def _row(
    chapter: str, source: str, record: dict, context: int, ms: float, attention: str, threads: int
) -> dict:
    return dict(
        chapter=chapter,
        source=source,
        context=context,
        one_id_forward_ms=ms,
        attention=attention,
        torch_threads=threads,
        load=load_label(record),
        recorded=str(record.get("created", ""))[:10],
    )


def _kernel_row(record: dict) -> dict | None:
    costs = record["numbers"].get("fixed_costs", {}).get("smollm2-135m-instruct")
    if not costs:
        return None
    p = record["params"]
    return _row(
        "2 (kernel)",
        "fixed costs: tau",
        record,
        costs["settings"]["P"],
        costs["tau_ms"]["median"],
        p["attn_implementation"],
        p["threads"],
    )


def _decoding_row(record: dict, context: int) -> dict | None:
    path = record_path("decoding", record["profile"], "timing", replay=True)
    if not path.exists():
        return None
    grid = CostGrid(decode(json.loads(path.read_text()))["grid"])
    p = record["params"]
    ms = float(grid.seconds([1], [context])[0]) * 1e3
    return _row(
        "6 (decoding)",
        "forward-cost grid at n = 1",
        record,
        context,
        ms,
        p["attn_implementation"],
        p["threads"],
    )


def _llama_row(record: dict) -> dict | None:
    curve = record["numbers"].get("curves", {}).get("transformers")
    if not curve or 1 not in curve["N"]:
        return None
    p = record["params"]
    ms = curve["T_AR_ms"][curve["N"].index(1)]
    return _row(
        "6b (llama.cpp)",
        "transformers engine, one AR step",
        record,
        p["kernel_P"],
        ms,
        "sdpa",
        p["threads"],
    )


def one_id_forward_table() -> pd.DataFrame:
    """One row per chapter that timed SmolLM2's one-id forward (committed cpu runs): its
    context, milliseconds, attention, torch threads, recorded load and date; chapter 6 is read
    from its grid at chapter 2's context, so the two compare at the same length."""
    kernel = _results("kernel.json")
    rows = [_kernel_row(kernel)] if kernel else []
    context = rows[0]["context"] if rows and rows[0] else 256
    decoding, llama = _results("decoding.json"), _results("llama_cpp.json")
    rows += [
        _decoding_row(decoding, context) if decoding else None,
        _llama_row(llama) if llama else None,
    ]
    return pd.DataFrame([r for r in rows if r])


def forward_cost_reading(table: pd.DataFrame) -> str:
    """One paragraph: the spread of the one-id forward across the chapters at one thread and
    the same context, whether it is within :data:`AGREEMENT_BAND`, and what differs where a
    run used other threads or a busy machine."""
    if len(table) < 2:
        return "Fewer than two chapters have timed SmolLM2's one-id forward yet."
    same = table[(table.torch_threads == 1) & (table.context == table.context.iloc[0])]
    parts = []
    if len(same) >= 2:
        lo, hi = same.one_id_forward_ms.min(), same.one_id_forward_ms.max()
        verdict = "agree" if hi / lo <= AGREEMENT_BAND else "do not agree"
        parts.append(
            f"On one torch thread at context {int(same.context.iloc[0])}, chapters "
            f"{' and '.join(c.split()[0] for c in same.chapter)} time the one-id forward at "
            f"{lo:.0f}–{hi:.0f} ms: they {verdict} (ratio {hi / lo:.2f}, band "
            f"{AGREEMENT_BAND})."
        )
    for r in table[~table.index.isin(same.index)].itertuples():
        parts.append(
            f"Chapter {r.chapter.split()[0]} runs {r.torch_threads} torch threads at "
            f"context {r.context} ({r.one_id_forward_ms:.0f} ms), so it is not "
            f"compared."
        )
    busy = table[table.load.str.startswith("busy")]
    if len(busy):
        parts.append(
            f"Recorded on a busy machine: chapter(s) "
            f"{', '.join(c.split()[0] for c in busy.chapter)}; their times are high."
        )
    return " ".join(parts)


def forward_cost_html(table: pd.DataFrame) -> str:
    """:func:`one_id_forward_table` as a table that fits the summary's article column."""
    view = table.assign(one_id_forward_ms=table.one_id_forward_ms.round(1)).rename(
        columns={"one_id_forward_ms": "ms", "torch_threads": "threads"}
    )
    widths = {
        "chapter": 12,
        "source": 24,
        "context": 8,
        "ms": 7,
        "attention": 9,
        "threads": 8,
        "load": 20,
        "recorded": 12,
    }
    return fit_table_html(view, widths)
