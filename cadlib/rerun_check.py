"""Do a re-run's numbers match the committed ones? Field by field, with tolerances declared first.

nbval compares what a chapter *prints*; this compares what it *writes*: every leaf of
``numbers`` and ``paper`` in ``results/<chapter>.json`` against the same leaf in the file a
re-run wrote (``make test`` re-runs the chapters into ``_build/test-results``). A field is
compared exactly unless :data:`TOLERANCES` names it, and every tolerance there carries its
reason: deterministic counts are exact; timings (and what is computed from them) are ignored;
floats a model computes get a small relative tolerance, since another CPU's kernels may round
differently. Structure counts too: a field or list entry present on one side only is a
difference (except under an ignored path).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "COMPARED_FIELDS",
    "Difference",
    "TOLERANCES",
    "Tolerance",
    "compare_records",
    "tolerance_for",
]


@dataclass(frozen=True)
class Tolerance:
    """How one field is compared: ``exact``, ``close`` (within ``rel``/``abs``) or ``ignore``."""

    kind: str
    why: str
    rel: float = 0.0
    abs: float = 0.0

    def __post_init__(self):
        if self.kind not in ("exact", "close", "ignore"):
            raise ValueError(f"tolerance kind must be exact, close or ignore, not {self.kind!r}")

    def accepts(self, committed, rerun) -> bool:
        if self.kind == "ignore":
            return True
        if isinstance(committed, bool) or isinstance(rerun, bool):
            return committed is rerun
        both_numbers = isinstance(committed, (int, float)) and isinstance(rerun, (int, float))
        if both_numbers:
            if math.isnan(committed) and math.isnan(rerun):
                return True
            rel = self.rel if self.kind == "close" else 1e-12  # float repr round trips only
            return math.isclose(committed, rerun, rel_tol=rel, abs_tol=self.abs)
        return committed == rerun


EXACT = Tolerance("exact", "a deterministic recount: the same code on the same data")
TIMING = Tolerance(
    "ignore", "wall-clock time, or computed from it: differs between runs and machines"
)
TOOL = Tolerance("ignore", "the version of an external tool: names the machine, not a result")
MODEL_FLOAT = Tolerance(
    "close",
    "a float computed by a model on one torch thread: repeatable on one CPU, but another CPU's "
    "kernels may round the last digits differently",
    rel=1e-3,
    abs=1e-6,
)

STDLIB = Tolerance(
    "ignore", "drawn from the interpreter's own standard library, whose files differ between "
    "patch releases: only the number of cuts and of uncategorized disagreements are compared"
)

#: The top-level fields compared; ``created``, ``hardware`` and ``params`` (which holds labels
#: naming the machine) describe the run rather than its results.
COMPARED_FIELDS = ("chapter", "profile", "model", "tokenizer", "numbers", "paper")

#: Per chapter, ``(pattern, tolerance)`` pairs, first match wins; a pattern is an
#: :mod:`fnmatch` pattern over the dotted path of a field (list positions are numbers, e.g.
#: ``numbers.fixed_costs.3.median``; ``*`` also matches dots). Unlisted fields are exact.
TOLERANCES: dict[str, list[tuple[str, Tolerance]]] = {
    "losslessness": [],
    "ceiling": [],  # prices its spans with the committed results/kernel.json: deterministic
    "formats": [("numbers.git_version", TOOL)],
    "perturbation": [],
    "kernel": [
        ("numbers.*.model", EXACT),
        ("numbers.*.N", EXACT),
        ("numbers.*", TIMING),
    ],
    "decoding": [
        ("numbers.speed.*.decode_s*", TIMING),
        ("numbers.speed.*.speedup*", TIMING),
        ("numbers.bounds.*", TIMING),
        ("numbers.fixed_costs.*", TIMING),
        ("numbers.mask_costs.*_us", TIMING),
        ("numbers.runtime_s", TIMING),
        ("numbers.kernel_curve", TIMING),
        ("numbers.cost_model.*", TIMING),  # the forward-cost grid and all it prices
        ("numbers.goals.*", TIMING),  # mixes forward counts with predicted/measured speed
        ("numbers.boundary_effect.kl_differing*", MODEL_FLOAT),
    ],
    "llama_cpp": [
        ("numbers.methods.*.cases", EXACT),
        ("numbers.methods.*.T", EXACT),
        ("numbers.methods.*.autoregressive.forwards", EXACT),
        ("numbers.methods.*.Copy-as-Decode.forwards", EXACT),
        ("numbers.methods.*.Copy-as-Decode +drafts.forwards", EXACT),
        ("numbers.methods.*", TIMING),
        ("numbers.curves.*.N", EXACT),
        ("numbers.curves.*", TIMING),
        ("numbers.lookup_best", TIMING),  # the grid's fastest setting: chosen by wall-clock
        ("numbers.lookup_grid*", TIMING),
        ("numbers.runtime_s", TIMING),
        ("numbers.seconds_by_kind*", TIMING),
        ("numbers.agreement.*", Tolerance(
            "close", "greedy decisions of two engines at near-ties: another CPU's kernels may "
            "round a near-tie the other way", abs=0.02)),
    ],
    "sft_pilot": [
        ("numbers.*wall_ms*", TIMING),
        ("numbers.*seconds*", TIMING),
        ("numbers.*loss*", MODEL_FLOAT),
    ],
    "fim": [
        ("numbers.*_cost_ms.*ms*", TIMING),
        ("numbers.*_cost_ms.*/ forward", TIMING),
        ("numbers.*cost*", TIMING),
        ("numbers.mask_stages*", TIMING),
        ("numbers.stdlib_differential.cuts", EXACT),
        ("numbers.stdlib_differential.uncategorized", EXACT),
        ("numbers.stdlib_differential.false_rejections", EXACT),
        ("numbers.stdlib_differential.failures", EXACT),
        ("numbers.stdlib_differential.*", STDLIB),
    ],
}


@dataclass(frozen=True)
class Difference:
    """One field where the re-run is outside its tolerance (``None``: absent on that side)."""

    path: str
    committed: object
    rerun: object
    tolerance: Tolerance

    def __str__(self) -> str:
        return (
            f"{self.path}: committed {self.committed!r}, re-run {self.rerun!r} "
            f"({self.tolerance.kind}: {self.tolerance.why})"
        )


_MISSING = object()


def tolerance_for(chapter: str, path: str) -> Tolerance:
    """The declared tolerance of ``path`` in ``chapter`` (exact where nothing is declared)."""
    if chapter not in TOLERANCES:
        raise KeyError(f"no tolerances declared for chapter {chapter!r}: add it to TOLERANCES")
    for pattern, tolerance in TOLERANCES[chapter]:
        if fnmatch.fnmatchcase(path, pattern):
            return tolerance
    return EXACT


def _walk(committed, rerun, path: str, chapter: str) -> Iterator[Difference]:
    tolerance = tolerance_for(chapter, path)
    if tolerance.kind == "ignore" or (committed is _MISSING and rerun is _MISSING):
        return
    if isinstance(committed, dict) and isinstance(rerun, dict):
        for key in [*committed, *(k for k in rerun if k not in committed)]:
            yield from _walk(
                committed.get(key, _MISSING), rerun.get(key, _MISSING), _join(path, key), chapter
            )
    elif isinstance(committed, list) and isinstance(rerun, list):
        for i in range(max(len(committed), len(rerun))):
            yield from _walk(
                committed[i] if i < len(committed) else _MISSING,
                rerun[i] if i < len(rerun) else _MISSING,
                _join(path, i),
                chapter,
            )
    elif committed is _MISSING or rerun is _MISSING:
        yield Difference(
            path, None if committed is _MISSING else committed,
            None if rerun is _MISSING else rerun, tolerance,
        )  # fmt: skip
    elif not tolerance.accepts(committed, rerun):
        yield Difference(path, committed, rerun, tolerance)


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def compare_records(chapter: str, committed: dict, rerun: dict) -> list[Difference]:
    """Every field of :data:`COMPARED_FIELDS` where ``rerun`` differs from ``committed``
    beyond the tolerance declared for it (an empty list: the re-run reproduces the file)."""
    return [
        difference
        for field in COMPARED_FIELDS
        for difference in _walk(
            committed.get(field, _MISSING), rerun.get(field, _MISSING), field, chapter
        )
    ]
