"""What the book's pages read of chapter 6b (llama.cpp): the re-run tolerances of
``results/llama_cpp.json`` and its one-id forward for the summary's comparison across chapters
(the chapter is beyond the paper: no summary rows, no paper settings)."""

from __future__ import annotations

from cadlib.book import rerun_check as R

__all__ = ["TOLERANCES", "one_id_forward"]

#: Re-run tolerances (:mod:`cadlib.book.rerun_check`), first match wins: counts of cases, ids
#: and forwards are exact, timings ignored, the engines' agreement close.
TOLERANCES: list[tuple[str, R.Tolerance]] = [
    ("numbers.methods.*.cases", R.EXACT),
    ("numbers.methods.*.T", R.EXACT),
    ("numbers.methods.*.autoregressive.forwards", R.EXACT),
    ("numbers.methods.*.Copy-as-Decode.forwards", R.EXACT),
    ("numbers.methods.*.Copy-as-Decode +drafts.forwards", R.EXACT),
    ("numbers.methods.*", R.TIMING),
    ("numbers.curves.*.N", R.EXACT),
    ("numbers.curves.*", R.TIMING),
    ("numbers.lookup_best", R.TIMING),  # the grid's fastest setting: chosen by wall-clock
    ("numbers.lookup_grid*", R.TIMING),
    ("numbers.runtime_s", R.TIMING),
    ("numbers.seconds_by_kind*", R.TIMING),
    (
        "numbers.agreement.*",
        R.Tolerance(
            "close",
            "greedy decisions of two engines at near-ties: another CPU's kernels may "
            "round a near-tie the other way",
            abs=0.02,
        ),
    ),
]


def one_id_forward(record: dict, context: int) -> dict | None:
    """SmolLM2's one-id forward in this chapter's cpu run: one autoregressive step of its
    ``transformers`` engine's s(N) sweep at its own ``kernel_P`` (``context`` is not used), or
    None when not timed (:mod:`cadlib.book.summary.forward_costs`)."""
    from cadlib.book.summary.forward_costs import forward_row

    curve = record["numbers"].get("curves", {}).get("transformers")
    if not curve or 1 not in curve["N"]:
        return None
    p = record["params"]
    ms = curve["T_AR_ms"][curve["N"].index(1)]
    return forward_row(
        "6b (llama.cpp)",
        "transformers engine, one AR step",
        record,
        p["kernel_P"],
        ms,
        "sdpa",
        p["threads"],
    )
