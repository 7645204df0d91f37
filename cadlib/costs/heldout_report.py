"""Reading a held-out speed report (chapter 6's protocol, one part per engine): its per-group
table and its goals as tables.

A part is ``results/decoding.heldout.<engine>.json``, written by
``python -m cadlib.chapters.decoding.commands heldout --engine <engine>``. Chapter 6 shows every
part; chapter 6b shows the llama.cpp part. Both read it with these functions, so that a page
shows the same figures whichever chapter it is (chapters do not import each other: the shared
reading lives in this wing).
"""

from __future__ import annotations

import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.record.provenance import load_caption
from cadlib.record.results import read_results_file

__all__ = [
    "COMMAND",
    "part_name",
    "committed_part",
    "part_line",
    "group_frame",
    "heldout_table",
    "goal_table",
]

#: The command that records a part (``--engine`` names it).
COMMAND = "python -m cadlib.chapters.decoding.commands heldout"


def part_name(engine: str) -> str:
    """The file of ``engine``'s part: ``decoding.heldout.<engine>.json`` (``llama.cpp`` ->
    ``llama-cpp``)."""
    return f"decoding.heldout.{engine.replace('.', '-')}.json"


def committed_part(engine: str) -> dict | None:
    """``engine``'s committed part (``results/decoding.heldout.<engine>.json``), or ``None``
    while it is not recorded."""
    return read_results_file(part_name(engine))


def part_line(engine: str, part: dict | None) -> str:
    """What ``engine``'s recorded part timed (cases, the prompt-lookup setting its development
    cases chose, the load it ran under), or that it is not recorded yet and the command that
    records it."""
    if part is None:
        return f"{engine}: not recorded yet (`{COMMAND} --engine {engine}`)."
    k, n = part["rival_settings"][engine]
    cases = sum(len(ids) for ids in part["timed_cases"].values())
    return (
        f"{engine}: {cases} timed test cases; prompt lookup at K={k} n={n}, the fastest on the "
        f"development cases. {load_caption(part)}"
    )


def group_frame(report: dict) -> pd.DataFrame:
    """The report's per-group rows, with a display label per group."""
    frame = pd.DataFrame(report["groups"])
    return frame.assign(label=frame.group.map(lambda g: CORPUS_LABELS.get(g, g)))


def heldout_table(report: dict, engine: str) -> pd.DataFrame:
    """One engine's groups as a table: per group and method, the median-case speedup over
    autoregressive decoding [95 % interval], the cases slower than it, and for Copy-as-Decode the
    median-case ratio to the best rival."""
    f = group_frame(report)
    f = f[(f.engine == engine) & (f.method != "autoregressive")]
    out = pd.DataFrame(
        {
            "group": f.label,
            "method": f.method,
            "cases": f.cases,
            "speedup over AR (median case)": [
                f"{s:.2f}× [{lo:.2f}, {hi:.2f}]"
                for s, lo, hi in zip(f.speedup, f.lo, f.hi, strict=True)
            ],
            "slower than AR": f.slower_than_ar,
            "vs best rival": [
                "" if pd.isna(r) else f"{r:.2f}× {b}"
                for r, b in zip(f.vs_rival, f.best_rival, strict=True)
            ],
        }
    )
    return out.reset_index(drop=True)


def goal_table(report: dict, engine: str | None = None) -> pd.DataFrame:
    """The goals judged on the test cases, one row per goal, engine (only ``engine``'s when
    given) and group: met or missed, the figure with its interval, the target, the cases and
    how many of them go against it (slower than the best rival, or than autoregressive
    decoding)."""
    rows = []
    for g in report["goals"]:
        if engine is not None and g["engine"] != engine:
            continue
        share = g["goal"] == "slower-than-ar"
        figure = (
            f"{g['count']} of {g['cases']} ({g['figure']:.0%})"
            if share
            else f"{g['figure']:.2f}× [{g['lo']:.2f}, {g['hi']:.2f}]"
        )
        rows.append(
            {
                "goal": g["text"],
                "engine": g["engine"],
                "group": g["group"],
                "verdict": "met" if g["met"] else "missed",
                "figure": figure,
                "target": g["target"],
                "cases": g["cases"],
                "against it": g["count"],
            }
        )
    return pd.DataFrame(rows)
