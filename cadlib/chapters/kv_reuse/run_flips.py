"""Where the reuse copy's decisions flip (issue 32: when no policy meets the threshold, show
where decisions differ from the exact splice's, by position after a copy and by kind).

A reused copy's cache entries were computed in the prompt's context, so the natural suspect is
the decision right after a copy: the model reads the copied entries with its next query. Each
decision of :func:`cadlib.chapters.kv_reuse.run.case_agreement` carries ``since_copy``, the ids
between the last copied id and the decision (0: the very next id; ``None`` before any copy),
and its ``kind`` (``choice``: the program's structure, i.e. the next op and a copy's range;
``gen``: a ``<gen>`` body id). :func:`flip_table` counts the flips per bucket (the sentence
that reads it: :func:`cadlib.chapters.kv_reuse.text.flip_markdown`).
"""

from __future__ import annotations

import math

import pandas as pd

from cadlib.decoding.fsm import DECISION_KINDS

__all__ = [
    "DISTANCE_BUCKETS",
    "BEFORE_ANY_COPY",
    "decision_distances",
    "distance_bucket",
    "flip_table",
]

#: Buckets of ``since_copy`` (inclusive bounds), in display order.
DISTANCE_BUCKETS = (
    ("0 ids", 0, 0),
    ("1-3 ids", 1, 3),
    ("4-15 ids", 4, 15),
    ("16+ ids", 16, math.inf),
)
BEFORE_ANY_COPY = "before any copy"


def decision_distances(kinds) -> list[int | None]:
    """For each decision of a transcript (its ``kinds``, in order; a decision is a ``choice``
    or ``gen`` position), the ids between the last spliced id before it and it (``None``:
    no copy yet)."""
    out, last = [], None
    for p, kind in enumerate(kinds):
        if kind == "splice":
            last = p
        elif kind in DECISION_KINDS:
            out.append(None if last is None else p - last - 1)
    return out


def distance_bucket(since_copy) -> str:
    """The :data:`DISTANCE_BUCKETS` label of one decision's ``since_copy``."""
    if since_copy is None or (isinstance(since_copy, float) and math.isnan(since_copy)):
        return BEFORE_ANY_COPY
    return next(name for name, lo, hi in DISTANCE_BUCKETS if lo <= since_copy <= hi)


def flip_table(rows: pd.DataFrame, split: str = "test") -> pd.DataFrame:
    """Per policy, decision kind and distance bucket of ``split``'s decisions: decisions,
    flips (greedy choice differs from the exact splice's) and the flip rate."""
    rows = rows[rows.split == split]
    rows = rows.assign(
        after_copy=[distance_bucket(d) for d in rows.since_copy], flip=~rows.agree.astype(bool)
    )
    order = [BEFORE_ANY_COPY, *(name for name, _, _ in DISTANCE_BUCKETS)]
    table = (
        rows.groupby(["policy", "kind", "after_copy"], sort=False)
        .agg(decisions=("flip", "size"), flips=("flip", "sum"))
        .reset_index()
    )
    table["flip_rate"] = table.flips / table.decisions
    table["after_copy"] = pd.Categorical(table.after_copy, order, ordered=True)
    return table.sort_values(["policy", "kind", "after_copy"], kind="stable").reset_index(drop=True)
