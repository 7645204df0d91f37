"""Do a re-run's numbers match the committed ones? Field by field, with tolerances declared first.

nbval compares what a chapter *prints*; this compares what it *writes*: every leaf of
``numbers`` and ``paper`` in ``results/<chapter>.json`` against the same leaf in the file a
re-run wrote (``make test`` re-runs the chapters into ``_build/test-results``). A field is
compared exactly unless its chapter's ``headlines.TOLERANCES`` names it (:func:`tolerances`
collects them), and every tolerance there carries its reason: deterministic counts are exact;
timings (and what is computed from them) are ignored; floats a model computes get a small
relative tolerance, since another CPU's kernels may round differently. The tolerances a
chapter declares with are named here (:data:`EXACT`, :data:`TIMING`, :data:`TOOL`,
:data:`MODEL_FLOAT`, :data:`COUNT_RATIO`, :data:`DECISION_RATIO`, :data:`COMMITTED_CURVE`).
Structure counts too: a field or list entry present on one side only is a difference (except
under an ignored path).

Exact is the default for counts and strings only. A float under ``numbers`` must have a
*declared* tolerance (:func:`undeclared_floats`): exact for a ratio, mean or percentile of
counts, :data:`MODEL_FLOAT` for what a model computes. An undeclared float is a difference in
itself, so a model float can never be compared exactly by omission (a KL divergence once was,
and failed on the next CPU model), and ``tests/test_rerun_check.py`` checks every committed
results file for one.
"""

from __future__ import annotations

import fnmatch
import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "COMMITTED_CURVE",
    "COMPARED_FIELDS",
    "COUNT_RATIO",
    "DECISION_RATIO",
    "Difference",
    "EXACT",
    "Field",
    "MODEL_FLOAT",
    "TIMING",
    "TOOL",
    "Tolerance",
    "compare_fields",
    "compare_records",
    "declared_tolerance",
    "tolerance_for",
    "tolerances",
    "undeclared_floats",
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

COUNT_RATIO = Tolerance(
    "exact",
    "a ratio, mean, percentile or interval of counts (tokens, forwards, cases): no "
    "model computes it, so it is the same on every CPU",
)
DECISION_RATIO = Tolerance(
    "exact",
    "a rate or interval of counts of a model's greedy decisions or outputs: a count, "
    "the same on another CPU unless a near-tie flips, which this comparison exists to show",
)
COMMITTED_CURVE = Tolerance(
    "exact",
    "computed from token counts and the committed s(N) curve of results/kernel.json "
    "(or the paper's): deterministic",
)
UNDECLARED = Tolerance(
    "exact",
    "a float with no declared tolerance: declare it in the chapter's headlines.TOLERANCES "
    "(COUNT_RATIO for a ratio of counts, MODEL_FLOAT for what a model computes)",
)

#: The top-level fields compared; ``created``, ``hardware`` and ``params`` (which holds labels
#: naming the machine) describe the run rather than its results.
COMPARED_FIELDS = ("chapter", "profile", "model", "tokenizer", "numbers", "paper")


@functools.cache
def tolerances() -> dict[str, list[tuple[str, Tolerance]]]:
    """``{chapter: [(pattern, tolerance), ...]}``: each chapter's ``headlines.TOLERANCES``
    (:func:`cadlib.chapters.chapter_values`), read once; the same dict every call (a test may
    add a chapter to it). First match wins; a pattern is an :mod:`fnmatch` pattern over the
    dotted path of a field (list positions are numbers, e.g. ``numbers.fixed_costs.3.median``;
    ``*`` also matches dots). Unlisted ints, strings and booleans are exact; an unlisted float
    under ``numbers`` is a difference (:data:`UNDECLARED`)."""
    from cadlib.chapters import chapter_values  # the chapters' headlines import this module

    return dict(chapter_values("headlines", "TOLERANCES"))


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


def declared_tolerance(chapter: str, path: str) -> Tolerance | None:
    """The tolerance ``chapter`` declares for ``path`` (first match, :func:`tolerances`), or
    ``None`` where nothing is declared."""
    declared = tolerances()
    if chapter not in declared:
        raise KeyError(
            f"no tolerances declared for chapter {chapter!r}: declare TOLERANCES in its "
            "headlines module"
        )
    for pattern, tolerance in declared[chapter]:
        if fnmatch.fnmatchcase(path, pattern):
            return tolerance
    return None


def tolerance_for(chapter: str, path: str) -> Tolerance:
    """The declared tolerance of ``path`` in ``chapter``: exact where nothing is declared,
    except a float under ``numbers``, which must be declared (:data:`UNDECLARED`)."""
    return declared_tolerance(chapter, path) or EXACT


def _needs_declaring(path: str, value) -> bool:
    return isinstance(value, float) and path.startswith("numbers.")


def undeclared_floats(chapter: str, record: dict) -> list[str]:
    """The paths of the floats under ``numbers`` in ``record`` (a results file) that have no
    declared tolerance: each would be compared exactly by omission, which is right for a ratio
    of counts and wrong for a model float, so each must be declared."""
    numbers = {"numbers": record.get("numbers")}
    return [f.path for f in compare_fields(chapter, numbers, numbers) if f.tolerance is UNDECLARED]


@dataclass(frozen=True)
class Field:
    """One leaf of a results file compared with its re-run: ``verdict`` is ``same``,
    ``within tolerance``, ``differs``, ``timing`` (not compared: see :data:`TIMING`) or
    ``not compared`` (another ignored field)."""

    path: str
    committed: object
    rerun: object
    tolerance: Tolerance
    verdict: str


def _walk(committed, rerun, path: str, chapter: str) -> Iterator[Field]:
    tolerance = tolerance_for(chapter, path)
    if committed is _MISSING and rerun is _MISSING:
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
    else:
        yield _leaf(committed, rerun, path, chapter, tolerance)


def _leaf(committed, rerun, path: str, chapter: str, tolerance: Tolerance) -> Field:
    a = None if committed is _MISSING else committed
    b = None if rerun is _MISSING else rerun
    if tolerance.kind == "ignore":
        return Field(path, a, b, tolerance, "timing" if tolerance is TIMING else "not compared")
    if committed is _MISSING or rerun is _MISSING:
        return Field(path, a, b, tolerance, "differs")
    if declared_tolerance(chapter, path) is None and (
        _needs_declaring(path, committed) or _needs_declaring(path, rerun)
    ):
        return Field(path, a, b, UNDECLARED, "differs")
    if not tolerance.accepts(committed, rerun):
        return Field(path, a, b, tolerance, "differs")
    same = committed == rerun or EXACT.accepts(committed, rerun)
    return Field(path, a, b, tolerance, "same" if same else "within tolerance")


def compare_fields(chapter: str, committed: dict, rerun: dict) -> Iterator[Field]:
    """Every leaf of :data:`COMPARED_FIELDS` of two results files of ``chapter``, with its
    tolerance and verdict (what the reproduction report of ``make book`` counts)."""
    for field in COMPARED_FIELDS:
        yield from _walk(committed.get(field, _MISSING), rerun.get(field, _MISSING), field, chapter)


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def compare_records(chapter: str, committed: dict, rerun: dict) -> list[Difference]:
    """Every field of :data:`COMPARED_FIELDS` where ``rerun`` differs from ``committed``
    beyond the tolerance declared for it (an empty list: the re-run reproduces the file)."""
    return [
        Difference(f.path, f.committed, f.rerun, f.tolerance)
        for f in compare_fields(chapter, committed, rerun)
        if f.verdict == "differs"
    ]
