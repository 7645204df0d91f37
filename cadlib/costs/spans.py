"""Line-level copy spans of a case: Table 2's definitions, in one place (paper §4.2).

The line-level cover of a case is its oracle program (:func:`cadlib.oracle.oracle_program`);
a copy span's length ``N_k`` is the number of tokens (Qwen2.5 BPE by default) of its lines
joined by newlines, ``T`` the tokens of the gold, ``T_copy = sum N_k`` and ``T_gen = T -
T_copy``. :mod:`cadlib.costs.bounds` turns these into bounds (chapter 3 shows them);
:mod:`cadlib.probeedit` reports them as its corpus statistics. Depends on no corpus loader,
so both can import it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from cadlib.cases import EditCase
from cadlib.models.tokenizer import QWEN25, Tokenizer, get_tokenizer
from cadlib.oracle import oracle_program
from cadlib.resolver import copied_text, doc_lines

__all__ = ["CaseSpans", "as_tokenizer", "line_spans", "line_cover", "summarize_line_cover"]


@dataclass(frozen=True)
class CaseSpans:
    """One case's line-level cover: gold tokens ``T`` and copy-span lengths ``spans``."""

    id: str
    T: int
    spans: tuple[int, ...]

    @property
    def T_copy(self) -> int:
        return sum(self.spans)

    @property
    def T_gen(self) -> int:
        return self.T - self.T_copy


def as_tokenizer(tokenizer: Tokenizer | str | None) -> Tokenizer:
    """A tokenizer object from a name, an object or ``None`` (Qwen2.5 BPE)."""
    return get_tokenizer(tokenizer or QWEN25) if not isinstance(tokenizer, Tokenizer) else tokenizer


def line_spans(case: EditCase, tokenizer: Tokenizer | str | None = None) -> CaseSpans:
    """The line-level cover of one case (Table 2's definitions, see the module docstring)."""
    tok = as_tokenizer(tokenizer)
    lines = doc_lines(case.doc)
    program = oracle_program(case.doc, case.gold)
    spans = tuple(tok.count(copied_text(lines, c.start, c.end)) for c in program.copies)
    return CaseSpans(case.id, tok.count(case.gold), spans)


def line_cover(
    cases: Sequence[EditCase], tokenizer: Tokenizer | str | None = None, progress: bool = True
) -> list[CaseSpans]:
    """:func:`line_spans` of every case."""
    tok = as_tokenizer(tokenizer)
    return [line_spans(c, tok) for c in tqdm(cases, desc="line cover", disable=not progress)]


def summarize_line_cover(covers: Sequence[CaseSpans]) -> dict:
    """Table 2's columns for a list of case covers: n, T, T_copy, T_gen, f_line, K and the
    mean / p50 / p95 copy-span length (numpy's default, linearly interpolated percentiles
    over all K spans; :func:`cadlib.chapters.ceiling.run_percentiles.percentile_variants`
    explores the alternatives)."""
    spans = np.array([n for c in covers for n in c.spans], dtype=float)
    T = sum(c.T for c in covers)
    T_copy = int(spans.sum())
    return {
        "n": len(covers),
        "T": T,
        "T_copy": T_copy,
        "T_gen": T - T_copy,
        "f_line": T_copy / T if T else float("nan"),
        "K": len(spans),
        "mean": T_copy / len(spans) if len(spans) else float("nan"),
        "p50": float(np.percentile(spans, 50)) if len(spans) else float("nan"),
        "p95": float(np.percentile(spans, 95)) if len(spans) else float("nan"),
    }
