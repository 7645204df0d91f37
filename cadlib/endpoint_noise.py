"""Endpoint noise on the copy ranges of a program, and the trials that resolve what it gives
(paper §3 "Span-selection sensitivity", Tables 8 and 4; used by chapters 1 and 5).

The noise model, as the paper states it (§3 "Span-selection sensitivity", Table 8 caption):
every endpoint of every ``<copy lines="i-j"/>`` op of the oracle program is offset
*independently* by an integer ``eps ~ Uniform{-eps_max, ..., +eps_max}`` and clipped to
``[1, n_lines]`` of the document; the perturbed program is resolved and compared with the gold.

Choices made here, and why:

* **No swap of an inverted range.** Noise can turn a short span ``i-j`` into ``i' > j'``. The
  paper describes independent offsets plus clipping and nothing else, so we keep the
  inverted range. The strict resolver rejects it (a strict rejection, like an out-of-range
  index); the clipped resolver copies ``lines[i'-1:j']``, i.e. *nothing*, and the op still
  contributes an empty part to the newline join (so the output gains an empty line where
  the copy was). ``swap_inverted=True`` reorders such endpoints instead, to measure how much
  that choice matters; it is not the paper's protocol.
* **Clamping before resolving** (``clamp=True``) is the paper's protocol; with
  ``clamp=False`` the raw indices go to the resolver: strict then also rejects every
  out-of-range index, while clipped mode clips exactly as the clamp does (same outputs).
* **Common random numbers.** Both offsets of every copy are always drawn, then the endpoint
  that ``which`` leaves alone is reset, so ``which="start"`` / ``"end"`` / ``"both"`` see the
  same noise. Each (case, eps_max, trial) gets its own generator seeded from
  ``(seed, crc32(case id), eps_max, trial)``: results do not depend on the order or the
  selection of cases, and the same seed gives the same numbers on every run.

EM: trimmed (:func:`cadlib.metrics.equal_stripped`, ``a.strip() == b.strip()``, Table 8's
metric) and byte-exact (:func:`cadlib.metrics.byte_equal`, ``a == b``).
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from .cases import EditCase
from .grammar import Copy, Program
from .metrics import byte_equal, equal_stripped
from .oracle import oracle_program
from .resolver import RangeClippedWarning, ResolveError, doc_lines, resolve

__all__ = ["WHICH", "TRIAL_COLUMNS", "perturb_program", "case_rng", "perturbation_trials"]

#: Which endpoints of a copy the noise moves.
WHICH = ("both", "start", "end")


def _check_which(which: str) -> None:
    if which not in WHICH:
        raise ValueError(f"unknown which {which!r}; valid: {', '.join(map(repr, WHICH))}")


def _check_eps(eps_max) -> int:
    if isinstance(eps_max, bool) or not isinstance(eps_max, (int, np.integer)) or eps_max < 0:
        raise ValueError(f"eps_max must be an integer >= 0, got {eps_max!r}")
    return int(eps_max)


def perturb_program(
    program: Program,
    n_lines: int,
    eps_max: int,
    rng: np.random.Generator,
    which: str = "both",
    *,
    clamp: bool = True,
    swap_inverted: bool = False,
) -> Program:
    """``program`` with every copy endpoint offset by integer noise in ``[-eps_max, eps_max]``.

    ``which`` picks the noisy endpoints (``"both"``, ``"start"`` or ``"end"``); ``clamp``
    clips the noisy indices into ``[1, n_lines]``; an inverted result is kept unless
    ``swap_inverted`` (see the module docstring). Gen ops are unchanged.
    """
    eps_max = _check_eps(eps_max)
    _check_which(which)
    if isinstance(n_lines, bool) or not isinstance(n_lines, (int, np.integer)) or n_lines < 1:
        raise ValueError(f"n_lines must be an integer >= 1, got {n_lines!r}")
    ops = []
    for op in program.ops:
        if not isinstance(op, Copy):
            ops.append(op)
            continue
        d_start, d_end = (int(x) for x in rng.integers(-eps_max, eps_max, size=2, endpoint=True))
        i = op.start + (d_start if which in ("both", "start") else 0)
        j = op.end + (d_end if which in ("both", "end") else 0)
        if clamp:
            i, j = min(max(i, 1), n_lines), min(max(j, 1), n_lines)
        if swap_inverted and i > j:
            i, j = j, i
        ops.append(Copy(i, j))
    return Program(ops)


def case_rng(seed: int, case_id: str, eps_max: int, trial: int) -> np.random.Generator:
    """The generator of one (case, eps_max, trial): independent of every other case."""
    return np.random.default_rng([seed, zlib.crc32(case_id.encode("utf-8")), eps_max, trial])


def _out_of_range(program: Program, n_lines: int) -> bool:
    return any(not (1 <= op.start <= n_lines and 1 <= op.end <= n_lines) for op in program.copies)


def _inverted(program: Program) -> bool:
    return any(op.start > op.end for op in program.copies)


TRIAL_COLUMNS = (
    "corpus",
    "case",
    "eps_max",
    "which",
    "trial",
    "n_copies",
    "out_of_range",
    "inverted",
    "strict_rejected",
    "em_exact",
    "em_trimmed",
    "strict_em_trimmed",
)


def perturbation_trials(
    cases: Sequence[EditCase],
    eps_values: Iterable[int] = (0, 1, 2, 3, 5),
    trials: int = 5,
    seed: int = 0,
    which: Iterable[str] = ("both",),
    *,
    clamp: bool = True,
    swap_inverted: bool = False,
    corpus: str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """One row per (case, eps_max, which, trial): the perturbed program's outcome.

    Columns: ``corpus, case, eps_max, which, trial, n_copies, out_of_range`` (noise pushed an
    index outside the document; clamped when ``clamp``), ``inverted``, ``strict_rejected``,
    ``em_exact``, ``em_trimmed`` (clipped resolver) and ``strict_em_trimmed`` (a rejection
    counts as a miss).
    """
    corpus = corpus or getattr(cases, "name", "corpus")
    eps_values = [_check_eps(e) for e in eps_values]
    which = list(which)
    for w in which:
        _check_which(w)
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    rows = []
    for case in tqdm(cases, desc=f"perturb {corpus}", disable=not progress):
        program = oracle_program(case.doc, case.gold)
        n_lines = len(doc_lines(case.doc))
        for eps in eps_values:
            for trial in range(trials):
                for w in which:
                    rng = case_rng(seed, case.id, eps, trial)
                    raw = perturb_program(program, n_lines, eps, rng, w, clamp=False)
                    noisy = perturb_program(
                        program,
                        n_lines,
                        eps,
                        case_rng(seed, case.id, eps, trial),
                        w,
                        clamp=clamp,
                        swap_inverted=swap_inverted,
                    )
                    rows.append(
                        _outcome(case, noisy, n_lines)
                        | dict(
                            corpus=corpus,
                            case=case.id,
                            eps_max=eps,
                            which=w,
                            trial=trial,
                            n_copies=len(program.copies),
                            out_of_range=_out_of_range(raw, n_lines),
                        )
                    )
    return pd.DataFrame(rows, columns=TRIAL_COLUMNS)


def _outcome(case: EditCase, program: Program, n_lines: int) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RangeClippedWarning)
        out = resolve(program, case.doc, mode="clipped")
    try:
        resolve(program, case.doc, mode="strict")
        rejected = False
    except ResolveError:
        rejected = True
    trimmed = equal_stripped(out, case.gold)
    return dict(
        inverted=_inverted(program),
        strict_rejected=rejected,
        em_exact=byte_equal(out, case.gold),
        em_trimmed=trimmed,
        strict_em_trimmed=trimmed and not rejected,
    )
