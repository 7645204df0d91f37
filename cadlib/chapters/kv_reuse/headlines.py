"""What the book's pages read of chapter 6c (copies without prefill): the re-run tolerances of
``results/kv_reuse*.json`` (the chapter is beyond the paper: no summary rows, no paper
settings)."""

from __future__ import annotations

from cadlib.book import rerun_check as R

__all__ = ["TOLERANCES"]

#: Re-run tolerances (:mod:`cadlib.book.rerun_check`), first match wins.
TOLERANCES: list[tuple[str, R.Tolerance]] = [
    ("numbers.shares.*", R.COUNT_RATIO),  # no model: matched ids of the oracle programs
    ("numbers.agreement.*.kl_*", R.MODEL_FLOAT),
    ("numbers.agreement.*.recomputed", R.COUNT_RATIO),  # reused / spliced ids: counts
    ("numbers.agreement.*", R.DECISION_RATIO),  # rates and intervals of greedy decisions
    (
        "numbers.verdict.threshold",
        R.Tolerance(
            "exact", "the acceptance threshold declared in cadlib.chapters.kv_reuse.profiles"
        ),
    ),
    ("numbers.verdict.rates.*", R.DECISION_RATIO),
    ("numbers.timing*", R.TIMING),
    ("numbers.runtime_s", R.TIMING),
]
