"""One SmolLM2 forward, three chapters: does the book's cost of a one-id decode forward agree
with itself?

Chapters 2, 6 and 6b each time SmolLM2-135M-Instruct's one-id forward on the CPU, in their own
harness: chapter 2's fixed costs (``tau`` at context ``P``), chapter 6's forward-cost grid
(interpolated at the same context) and chapter 6b's ``transformers`` engine (one autoregressive
step of its s(N) sweep at its ``kernel_P``); each chapter's ``headlines.one_id_forward`` reads
its row from the results of the run the chapter shows (chapter 6's ``full`` run, not its cpu
profile). :func:`one_id_forward_table` puts them side by side
with what differs between the harnesses (attention, torch threads) and the load each run
recorded (:mod:`cadlib.record.provenance`); :func:`forward_cost_reading` says whether they agree.
"""

from __future__ import annotations

import pandas as pd

from cadlib.chapters import chapter_values, shown_results
from cadlib.record.provenance import load_label
from cadlib.record.results import read_results_file, results_name

from .render import fit_table_html

__all__ = [
    "AGREEMENT_BAND",
    "forward_cost_html",
    "forward_cost_reading",
    "forward_row",
    "one_id_forward_table",
]

#: Two harnesses "agree" when the slower one-id forward is at most this many times the faster
#: at the same context: 1.25 allows for a different attention kernel and timer, not for a busy
#: machine or another thread count.
AGREEMENT_BAND = 1.25
#: The context a later chapter's forward is read at when no earlier chapter timed one.
_DEFAULT_CONTEXT = 256


def forward_row(
    chapter: str, source: str, record: dict, context: int, ms: float, attention: str, threads: int
) -> dict:
    """One row of :func:`one_id_forward_table` (a chapter's ``headlines.one_id_forward`` builds
    it from its results record)."""
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


def one_id_forward_table(shown: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per chapter that timed SmolLM2's one-id forward (each chapter's
    ``headlines.one_id_forward``, in book order), read from the run the chapter shows
    (``shown``: ``{chapter: results file name}``, default
    :func:`cadlib.chapters.shown_results`, so chapter 6's row is its ``full`` run, not the cpu
    one): the results file, context, milliseconds, attention, torch threads, recorded load and
    date. The first row's context is handed to the later chapters (chapter 6 reads its grid at
    chapter 2's context, so the two compare at the same length)."""
    shown = shown_results() if shown is None else shown
    rows, context = [], None
    for chapter, reader in chapter_values("headlines", "one_id_forward").items():
        name = shown.get(chapter, results_name(chapter))
        record = read_results_file(name)
        row = reader(record, context or _DEFAULT_CONTEXT) if record else None
        if row:
            rows.append({**row, "run": name})
            context = context or row["context"]
    return pd.DataFrame(rows)


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
    if "run" in view:  # the profile of the run beside its chapter (kernel.json: cpu)
        profile = view.run.str.removesuffix(".json").str.partition(".")[2].replace("", "cpu")
        view = view.drop(columns="run").assign(profile=profile)
        view = view[["chapter", "profile", *(c for c in view if c not in ("chapter", "profile"))]]
    widths = {
        "chapter": 12,
        "profile": 8,
        "source": 24,
        "context": 8,
        "ms": 7,
        "attention": 9,
        "threads": 8,
        "load": 20,
        "recorded": 12,
    }
    return fit_table_html(view, widths)
