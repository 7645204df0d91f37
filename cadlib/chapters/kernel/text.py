"""Chapter 2's generated prose: the Answer (:func:`answer`), the run's headline figures
(:func:`run_summary`), the timing sanity check (:func:`timing_sanity`) and the paragraph on
the GPU check (:func:`gpu_evidence_markdown`), each from the chapter's numbers."""

from __future__ import annotations

import json
from collections.abc import Mapping

from cadlib.costs.kernel_timing import timing_warnings
from cadlib.record.provenance import load_caption
from cadlib.record.results import find_results_file

__all__ = ["answer", "run_summary", "timing_sanity", "gpu_evidence_markdown"]


def answer(numbers: Mapping, where: str) -> str:
    """The chapter's question answered with its own numbers (the opening's **Answer.**): the
    splice check, then s(8), s at the largest N and m* of the primary model."""
    check, name = numbers.get("splice_check"), numbers["primary"]
    c, m = numbers["curves"][name], numbers["m_star"][name]
    s = dict(zip(c["N"], c["s"], strict=True))
    if check is None:
        same = "The splice-equals-decode check did not run in this profile."
    elif check["passed"]:
        same = (
            f"A splice is exactly {check['N']} decode steps here: same logits (largest "
            f"difference {check['max_abs_logit_diff']:.0e}), same keys, and the cache grows by "
            f"{check['len_after_splice'] - check['len_before']} on both paths."
        )
    else:
        same = "**The splice check failed**: a splice is not the decode steps it replaces here."
    s8 = f"s(8) = {s[8]:.1f}× and " if 8 in s else ""
    return (
        f"{same} On {name} ({where}) one forward of N ids is {s8}s({c['N'][-1]}) = "
        f"{c['s'][-1]:.1f}× faster than N decode steps, and a splice pays from N = "
        f"{m['strict']} (s > 1; s > 1.5 from N = {m['safe']})."
    )


def run_summary(numbers: Mapping, where: str) -> str:
    """Markdown of a run's headline figures per model (s(8), s at the largest N, m*,
    c_forced / tau): what a chapter's conclusion cites, since they change from run to run."""
    lines = []
    for name, c in numbers["curves"].items():
        s = dict(zip(c["N"], c["s"], strict=True))
        s8 = f"s(8) = {s[8]:.1f}×, " if 8 in s else ""
        m, ratio = numbers["m_star"][name], numbers["fixed_costs"][name]["c_forced_over_tau"]
        lines.append(
            f"* **{name}**: {s8}s({c['N'][-1]}) = {c['s'][-1]:.1f}× (max "
            f"{max(c['s']):.1f}×); m* strict / safe = {m['strict']} / {m['safe']}; "
            f"c_forced / tau = {ratio:.2f}"
        )
    return f"**This run** ({where}):\n\n" + "\n".join(lines)


def timing_sanity(bench: Mapping) -> str:
    """Markdown: per model, the :func:`~cadlib.costs.kernel_timing.timing_warnings` of its
    curve, and what to do when a run was disturbed."""
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


def gpu_evidence_markdown(record: Mapping | None = None) -> str:
    """One paragraph on the GPU check: where it ran and under what load, or how to record it."""
    path = find_results_file("kernel.gpu.json")
    if record is None and not path.exists():
        return (
            "**GPU evidence: not recorded yet.** `make gpu-check` measures this chapter's "
            "s(N) at the paper's 1.5B and 7B shapes on one GPU in a few minutes (the "
            "reproduce page says how); its results are shown here once committed."
        )
    record = record or json.loads(path.read_text())
    hw = record["hardware"]
    return (
        f"**GPU evidence** (`make gpu-check`, random-init weights with the published "
        f"shapes, {record['params']['dtype']}, {record['params']['attn_implementation']}; "
        f"{hw.get('gpu', 'no GPU named')}; {record['created'][:10]}). " + load_caption(record)
    )
