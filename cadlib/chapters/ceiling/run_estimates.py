"""Two estimates of the paper's §5 computed on our spans and curves: the pointer-decoder cost
(Appendix L) and the composition with speculative decoding (Appendix M).

Both are arithmetic on a cost model in **forward-pass equivalents** (one decode step = 1), on
the line-level oracle covers of :mod:`cadlib.costs.spans` and an ``s(N)`` curve (the paper's
partly reconstructed Qwen2.5-7B curve, :func:`~cadlib.costs.bounds.paper_reference_curve`, or one
measured by the kernel chapter). Per case, with ``G`` gen ops, ``K`` copy ops of lengths
``N_k`` and ``T_gen`` generated tokens:

* full regeneration costs ``T`` (every gold token one step);
* Copy-as-Decode (§5, Appendix L) costs ``T_gen + g*G + sum_k (c + N_k / s(N_k))`` with
  ``g = 2`` steps per gen op (Appendix M: a gen region of ``n`` tokens costs ``2 + n``) and
  ``c = 3`` per copy op (2 FSM open/close + 1 forced prefill; Appendix L);
* a span-level pointer decoder costs ``T_gen + g*G + 3*K`` (op type, start, end);
* a token-level pointer costs ``T_gen + g*G + sum_k N_k`` (one forward per copied token);
* with speculative decoding at ``s_spec`` (Appendix M), ``T_gen`` becomes ``T_gen / s_spec``;
  copy regions are unchanged.

The speedup is ``T / cost``. ``c = 0`` and ``g = 0`` give Table 2's ``bnd_exact``. The paper
states the formula, not every constant it used (whether ``c`` enters Appendix M's figures is
not said), so :data:`READINGS` spells out the readings tried, and the chapter shows which, if
any, gives the paper's figures (:func:`.text.pointer_finding`, :func:`.text.composition_finding`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cadlib import paper as _paper
from cadlib.cases import EditCase
from cadlib.costs.speedup_curve import interpolate_loglinear
from cadlib.grammar import Gen
from cadlib.oracle import oracle_program

__all__ = [
    "OpStats",
    "op_stats",
    "pool",
    "READINGS",
    "spliced_steps",
    "composition_speedup",
    "composition_table",
    "pointer_table",
]


@dataclass(frozen=True)
class OpStats:
    """A corpus's line-level oracle cover as the cost model needs it: gold tokens ``T``,
    generated tokens ``T_gen`` (``T - sum spans``), gen ops ``G`` and copy-span lengths."""

    T: int
    T_gen: int
    G: int
    spans: tuple[int, ...]

    @property
    def K(self) -> int:
        return len(self.spans)


def op_stats(cases: Sequence[EditCase], covers: Sequence) -> OpStats:
    """:class:`OpStats` of ``cases`` from their line covers (:func:`cadlib.costs.spans.line_cover`,
    same order): the gen-op count is read from each case's oracle program."""
    if len(cases) != len(covers):
        raise ValueError(f"{len(cases)} cases but {len(covers)} covers")
    G = sum(isinstance(op, Gen) for c in cases for op in oracle_program(c.doc, c.gold).ops)
    spans = tuple(n for cv in covers for n in cv.spans)
    T = sum(cv.T for cv in covers)
    return OpStats(T=T, T_gen=T - sum(spans), G=G, spans=spans)


def pool(stats: Sequence[OpStats]) -> OpStats:
    """The pooled :class:`OpStats` of several corpora (sums; spans concatenated)."""
    return OpStats(
        T=sum(s.T for s in stats),
        T_gen=sum(s.T_gen for s in stats),
        G=sum(s.G for s in stats),
        spans=tuple(n for s in stats for n in s.spans),
    )


#: Readings of the cost model tried against Appendix M's figures: (g, c) = steps per gen op,
#: forwards per copy op besides the splice.
READINGS: dict[str, tuple[float, float]] = {
    "§5 formula: gen 2 + n, copy N/s(N)": (2.0, 0.0),
    "§5 formula + 3 forwards per copy op (App. L)": (2.0, 3.0),
    "no fixed costs (Table 2's bnd_exact)": (0.0, 0.0),
}


def spliced_steps(spans: Sequence[int], N: Sequence[float], s: Sequence[float]) -> np.ndarray:
    """``N_k / s(N_k)`` for every span (zero for a zero-token span): its splice in steps."""
    spans = np.asarray(spans, dtype=float)
    safe = np.maximum(spans, 1.0)
    return np.where(spans > 0, spans / interpolate_loglinear(N, s, safe), 0.0)


def composition_speedup(
    stats: OpStats, N, s, s_spec: float = 1.0, gen_fixed: float = 2.0, copy_fixed: float = 0.0
) -> float:
    """``T / (T_gen / s_spec + g*G + c*K + sum_k N_k / s(N_k))`` (module docstring)."""
    if s_spec <= 0:
        raise ValueError(f"s_spec must be positive, got {s_spec}")
    cost = (
        stats.T_gen / s_spec
        + gen_fixed * stats.G
        + copy_fixed * stats.K
        + float(spliced_steps(stats.spans, N, s).sum())
    )
    return stats.T / cost


def composition_table(
    stats: Mapping[str, OpStats],
    curves: Mapping[str, tuple],
    s_spec: float = _paper.APPENDIX_M["s_spec"],
    readings: Mapping[str, tuple] = READINGS,
) -> pd.DataFrame:
    """Appendix M: per corpus, curve and reading, the predicted speedup over full
    regeneration without and with speculation at ``s_spec``, their ratio, the limit
    ``s_spec -> inf`` (the composition's ceiling), and the paper's two figures."""
    rows = []
    for name, st in stats.items():
        for curve, (N, s) in curves.items():
            for reading, (g, c) in readings.items():
                without = composition_speedup(st, N, s, 1.0, g, c)
                with_ = composition_speedup(st, N, s, s_spec, g, c)
                rows.append(
                    {
                        "corpus": name,
                        "curve": curve,
                        "reading": reading,
                        "without": without,
                        "with": with_,
                        "gain": with_ / without,
                        "s_spec -> inf": composition_speedup(st, N, s, float("inf"), g, c),
                        "paper without": _paper.APPENDIX_M["without"].get(name),
                        "paper with": _paper.APPENDIX_M["with"].get(name),
                    }
                )
    return pd.DataFrame(rows)


def pointer_table(stats: Mapping[str, OpStats], curves: Mapping[str, tuple]) -> pd.DataFrame:
    """Appendix L: per corpus and curve, the pointer's advantage per copy op (the mean of
    ``N_k / s(N_k)``, since both pay 3 fixed forwards) and its median, the share of
    Copy-as-Decode's whole cost that the pointer saves, and the speedups over full
    regeneration of Copy-as-Decode, a span-level and a token-level pointer."""
    p, fixed = (
        _paper.APPENDIX_L["pointer_forwards_per_op"],
        _paper.APPENDIX_L["cad_fixed_forwards_per_op"],
    )
    g = _paper.APPENDIX_M["gen_fixed_steps"]
    rows = []
    for name, st in stats.items():
        for curve, (N, s) in curves.items():
            steps = spliced_steps(st.spans, N, s)
            base = st.T_gen + g * st.G
            cad = base + fixed * st.K + steps.sum()
            rows.append(
                {
                    "corpus": name,
                    "curve": curve,
                    "K": st.K,
                    "advantage per op (mean)": float(steps.mean()) if st.K else float("nan"),
                    "advantage per op (median)": float(np.median(steps)) if st.K else float("nan"),
                    "advantage share of cost": float(steps.sum() / cad),
                    "Copy-as-Decode": st.T / cad,
                    "span pointer": st.T / (base + p * st.K),
                    "token pointer": st.T / (base + sum(st.spans)),
                    "paper advantage per op": _paper.APPENDIX_L["pointer_advantage_per_op"],
                }
            )
    return pd.DataFrame(rows)
