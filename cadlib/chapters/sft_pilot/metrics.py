"""Span-selection metrics: credit for choosing the right spans, apart from fixing the bug.

A 135M model will not write HumanEvalFix's fixes, so final-output exact match can only say 0
for it. These metrics ask the paper's §5 question ("can a model learn to select spans?")
directly, each on one attempt (issue 20):

* :func:`span_em` — the program's op sequence and copy ranges equal the oracle's, whatever
  the ``<gen>`` text (every op right in kind and order, every copy range right);
* :func:`span_iou` — per-op span IoU: the k-th copy of the prediction against the k-th copy
  of the oracle (the alignment of :func:`cadlib.chapters.sft_pilot.endpoint_hits`), intersection
  over union of their line sets, averaged over ``max(#predicted, #oracle)`` copies (a missing or
  extra copy scores 0); 1.0 when neither side copies;
* :func:`is_identity` — the degenerate policy: the output is the input document unchanged
  (for a program, typically ``<copy lines="1-N"/>``). Such an attempt gets the first copy's
  start and the last copy's end right *by construction* whenever the oracle keeps the first
  and last lines, so endpoint accuracies are also reported without these attempts.

Localized-edit EM (oracle spans given, the model writes the bodies, as chapter 8 does) is an
evaluation mode rather than a metric: :func:`cadlib.chapters.sft_pilot.evaluate_localized`.
"""

from __future__ import annotations

from cadlib.grammar import Copy, Program
from cadlib.metrics import equal_up_to_one_newline

__all__ = ["op_signature", "span_em", "span_iou", "is_identity"]


def op_signature(program: Program) -> tuple:
    """The program's ops with the gen text left out: ``("copy", i, j)`` or ``("gen",)``."""
    return tuple(
        ("copy", op.start, op.end) if isinstance(op, Copy) else ("gen",) for op in program.ops
    )


def span_em(pred: Program, oracle: Program) -> bool:
    """Span-only exact match: same op kinds in the same order and the same copy ranges."""
    return op_signature(pred) == op_signature(oracle)


def _iou(a: Copy, b: Copy) -> float:
    inter = min(a.end, b.end) - max(a.start, b.start) + 1
    union = max(a.end, b.end) - min(a.start, b.start) + 1
    return max(inter, 0) / union


def span_iou(pred: Program, oracle: Program) -> float:
    """Mean per-op IoU of index-aligned copy ranges (missing or extra copies score 0)."""
    p, o = pred.copies, oracle.copies
    n = max(len(p), len(o))
    if n == 0:
        return 1.0
    return sum(_iou(a, b) for a, b in zip(p, o, strict=False)) / n


def is_identity(output: str | None, doc: str) -> bool:
    """The output is the input document unchanged (up to one trailing newline)."""
    return output is not None and equal_up_to_one_newline(output, doc)
