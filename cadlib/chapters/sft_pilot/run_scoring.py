"""Scoring one decoded program against its case, the span-selection metrics, and aggregating
attempts (Tables 6 and 7).

Span-selection metrics give credit for choosing the right spans, apart from fixing the bug. A
135M model will not write HumanEvalFix's fixes, so final-output exact match can only say 0 for
it. These metrics ask the paper's §5 question ("can a model learn to select spans?") directly,
each on one attempt (issue 20):

* :func:`span_em` — the program's op sequence and copy ranges equal the oracle's, whatever
  the ``<gen>`` text (every op right in kind and order, every copy range right);
* :func:`span_iou` — per-op span IoU: the k-th copy of the prediction against the k-th copy
  of the oracle (the alignment of :func:`endpoint_hits`), intersection over union of their
  line sets, averaged over ``max(#predicted, #oracle)`` copies (a missing or extra copy scores
  0); 1.0 when neither side copies;
* :func:`is_identity` — the degenerate policy: the output is the input document unchanged
  (for a program, typically ``<copy lines="1-N"/>``). Such an attempt gets the first copy's
  start and the last copy's end right *by construction* whenever the oracle keeps the first
  and last lines, so endpoint accuracies are also reported without these attempts.

Localized-edit EM (oracle spans given, the model writes the bodies, as chapter 8 does) is an
evaluation mode rather than a metric:
:func:`cadlib.chapters.sft_pilot.run_evaluation.evaluate_localized`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from cadlib.cases import EditCase
from cadlib.grammar import Copy, Program, ProgramSyntaxError, parse_program
from cadlib.metrics import equal_stripped, equal_up_to_one_newline, wilson_ci
from cadlib.oracle import oracle_program
from cadlib.resolver import RangeClippedWarning, doc_lines, resolve

__all__ = [
    "TAXONOMY",
    "CaseResult",
    "categorize",
    "endpoint_hits",
    "is_identity",
    "op_signature",
    "score_program",
    "span_em",
    "span_iou",
    "summarize",
    "summary_record",
    "taxonomy",
]


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


def endpoint_hits(pred: Program, oracle: Program) -> tuple[int, int, int]:
    """``(starts right, ends right, oracle copies)``: op-level endpoint accuracy.

    The k-th copy op of the prediction is compared with the k-th copy op of the oracle
    program (copies in order; gen ops ignored): its start is right when it equals the
    oracle's start, its end likewise. An oracle copy with no k-th predicted copy counts as
    wrong at both ends; extra predicted copies do not lower the accuracy (they show up as
    "spans right, text wrong" in :func:`categorize`, the paper's "op-count mismatch").
    The paper does not spell out its alignment; this index alignment is the simplest one
    consistent with Table 7's caption.
    """
    p, o = pred.copies, oracle.copies
    starts = sum(1 for a, b in zip(p, o, strict=False) if a.start == b.start)
    ends = sum(1 for a, b in zip(p, o, strict=False) if a.end == b.end)
    return starts, ends, len(o)


@dataclass
class CaseResult:
    """The score of one decoded program against its case (one row of the evaluation)."""

    id: str
    system: str
    text: str  # the raw program text (or the raw output of a free-form baseline)
    parsed: bool
    output: str | None  # the resolved (clipped) output; None on a parse failure
    em: bool
    trimmed_em: bool
    program_em: bool
    start_hits: int
    end_hits: int
    n_oracle_copies: int
    n_pred_copies: int
    out_of_range: bool  # some copy range fell outside the document (clipped, App. "anomaly")
    error: str = ""
    wall_s: float = math.nan
    new_tokens: int = 0
    passed: bool | None = None  # unit tests (cadlib.execution); None = not run
    test_detail: str = ""
    extra: dict = field(default_factory=dict)
    # ops and copy ranges equal the oracle's (span_em)
    span_em: bool = False
    span_iou: float = 0.0  # mean per-op copy IoU; nan for free-form outputs
    identity: bool = False  # the output is the input unchanged (degenerate policy)

    @property
    def start_acc(self) -> float:
        """Per-case span-start accuracy (1.0 when neither side copies anything)."""
        return _acc(self.start_hits, self.n_oracle_copies, self.n_pred_copies)

    @property
    def end_acc(self) -> float:
        return _acc(self.end_hits, self.n_oracle_copies, self.n_pred_copies)

    @property
    def category(self) -> str:
        return categorize(self)


def _acc(hits: int, n_oracle: int, n_pred: int) -> float:
    if n_oracle == 0:
        return 1.0 if n_pred == 0 else 0.0
    return hits / n_oracle


def score_program(case: EditCase, text: str, system: str = "", **extra) -> CaseResult:
    """Score a program text against ``case``: parse, resolve (clipped), compare.

    Copy ranges outside the document are clipped, as the paper's resolver does before
    splicing (App. "Implementation anomaly"), and flagged in ``out_of_range``.
    """
    oracle = oracle_program(case.doc, case.gold)
    try:
        program = parse_program(text)
    except ProgramSyntaxError as err:
        return CaseResult(
            case.id,
            system,
            text,
            False,
            None,
            False,
            False,
            False,
            0,
            0,
            len(oracle.copies),
            0,
            False,
            error=str(err),
            **extra,
        )
    n_lines = len(doc_lines(case.doc))
    out_of_range = any(not 1 <= c.start <= c.end <= n_lines for c in program.copies)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RangeClippedWarning)
        output = resolve(program, case.doc, mode="clipped")  # clipped mode never raises
    starts, ends, n = endpoint_hits(program, oracle)
    return CaseResult(
        id=case.id,
        system=system,
        text=text,
        parsed=True,
        output=output,
        em=output is not None and equal_up_to_one_newline(output, case.gold),
        trimmed_em=output is not None and equal_stripped(output, case.gold),
        program_em=program == oracle,
        start_hits=starts,
        end_hits=ends,
        n_oracle_copies=n,
        n_pred_copies=len(program.copies),
        out_of_range=out_of_range,
        span_em=span_em(program, oracle),
        span_iou=span_iou(program, oracle),
        identity=is_identity(output, case.doc),
        **extra,
    )


#: Table 7's failure modes, in the order they are tested (each attempt lands in exactly one).
TAXONOMY = (
    "EM (fully correct)",
    "Spans all correct, <gen>-text wrong",
    "Start correct, end off",
    "End correct, start off",
    "Both endpoints off",
    "Parse failure",
)


_SPAN_OK = 0.99  # Table 7 caption: "both per-case span accuracies >= 0.99"


def categorize(r: CaseResult) -> str:
    """Table 7's failure mode of one attempt.

    Parse failure first, then EM; otherwise by the per-case span accuracies: both >= 0.99
    means "spans all correct, <gen>-text wrong" (wrong gen text or op count); else which
    endpoint family is fully right.
    """
    if not r.parsed:
        return TAXONOMY[5]
    if r.em:
        return TAXONOMY[0]
    start_ok, end_ok = r.start_acc >= _SPAN_OK, r.end_acc >= _SPAN_OK
    if start_ok and end_ok:
        return TAXONOMY[1]
    if start_ok:
        return TAXONOMY[2]
    if end_ok:
        return TAXONOMY[3]
    return TAXONOMY[4]


def summarize(results: Sequence[CaseResult], by: str | None = "seed") -> dict:
    """Table 6's numbers for a list of attempts (pooled over seeds, like the paper's 99).

    Returns EM ``k/n`` with its Wilson CI, trimmed EM, program EM, parse rate, op-level
    span-start / span-end accuracy (hits over all oracle copies of all attempts; also over
    the attempts whose output is not the input, ``*_non_identity``), span-only EM, mean span
    IoU and the identity count (:func:`span_em`, :func:`span_iou`, :func:`is_identity`), their
    mean and standard deviation across ``extra[by]`` groups (the paper's ``0.59 ± 0.03``
    over seeds), functional pass rate where tests ran, and the median wall time per case.
    """
    n = len(results)
    em = sum(r.em for r in results)
    lo, hi = wilson_ci(em, n)
    n_copies = sum(r.n_oracle_copies for r in results)
    out = {
        "n": n,
        "em": em,
        "em_rate": em / n if n else math.nan,
        "em_ci": [lo, hi],
        "trimmed_em": sum(r.trimmed_em for r in results),
        "program_em": sum(r.program_em for r in results),
        "parsed": sum(r.parsed for r in results),
        "start_acc": sum(r.start_hits for r in results) / n_copies if n_copies else math.nan,
        "end_acc": sum(r.end_hits for r in results) / n_copies if n_copies else math.nan,
        "out_of_range": sum(r.out_of_range for r in results),
        "wall_ms_median": _median_ms([r.wall_s for r in results]),
    }
    groups: dict = {}
    for r in results:
        groups.setdefault(r.extra.get(by) if by else None, []).append(r)
    if by and len(groups) > 1:
        for key in ("start", "end"):
            accs = [
                sum(getattr(r, f"{key}_hits") for r in g)
                / max(1, sum(r.n_oracle_copies for r in g))
                for g in groups.values()
            ]
            out[f"{key}_acc_sd"] = float(np.std(accs, ddof=1))
    programs = [r for r in results if not r.extra.get("free_form")]
    out["span_em"] = sum(r.span_em for r in results)
    out["identity"] = sum(r.identity for r in results)
    out["span_iou"] = float(np.mean([r.span_iou for r in programs])) if programs else math.nan
    kept = [r for r in programs if not r.identity]  # endpoint hits not given by construction
    n_kept = sum(r.n_oracle_copies for r in kept)
    out["n_non_identity"] = len(kept)
    for key in ("start", "end"):
        hits = sum(getattr(r, f"{key}_hits") for r in kept)
        out[f"{key}_acc_non_identity"] = hits / n_kept if n_kept else math.nan
    tested = [r for r in results if r.passed is not None]
    if tested:
        k = sum(r.passed for r in tested)
        out["tests_passed"] = k
        out["tests_run"] = len(tested)
        out["tests_ci"] = list(wilson_ci(k, len(tested)))
    return out


def summary_record(results: Sequence[CaseResult]) -> dict:
    """:func:`summarize` for a results file: undefined figures (``nan``) become ``None``,
    so the file is strict JSON."""

    def clean(v):
        if isinstance(v, float) and math.isnan(v):
            return None
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v

    return {k: clean(v) for k, v in summarize(results).items()}


def taxonomy(results: Iterable[CaseResult]) -> dict[str, int]:
    """Counts of Table 7's failure modes (every mode listed, zeros included)."""
    counts = dict.fromkeys(TAXONOMY, 0)
    for r in results:
        counts[categorize(r)] += 1
    return counts


def _median_ms(seconds: Sequence[float]) -> float:
    known = [s for s in seconds if not math.isnan(s)]
    return float(np.median(known) * 1e3) if known else math.nan
