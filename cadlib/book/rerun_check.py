"""Do a re-run's numbers match the committed ones? Field by field, with tolerances declared first.

nbval compares what a chapter *prints*; this compares what it *writes*: every leaf of
``numbers`` and ``paper`` in ``results/<chapter>.json`` against the same leaf in the file a
re-run wrote (``make test`` re-runs the chapters into ``_build/test-results``). A field is
compared exactly unless :data:`TOLERANCES` names it, and every tolerance there carries its
reason: deterministic counts are exact; timings (and what is computed from them) are ignored;
floats a model computes get a small relative tolerance, since another CPU's kernels may round
differently. Structure counts too: a field or list entry present on one side only is a
difference (except under an ignored path).

Exact is the default for counts and strings only. A float under ``numbers`` must have a
*declared* tolerance (:func:`undeclared_floats`): exact for a ratio, mean or percentile of
counts, :data:`MODEL_FLOAT` for what a model computes. An undeclared float is a difference in
itself, so a model float can never be compared exactly by omission (a KL divergence once was,
and failed on the next CPU model), and ``tests/test_rerun_check.py`` checks every committed
results file for one.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "COMPARED_FIELDS",
    "Difference",
    "Field",
    "TIMING",
    "TOLERANCES",
    "Tolerance",
    "compare_fields",
    "compare_records",
    "declared_tolerance",
    "tolerance_for",
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
    "a float with no declared tolerance: declare it in cadlib.book.rerun_check.TOLERANCES "
    "(COUNT_RATIO for a ratio of counts, MODEL_FLOAT for what a model computes)",
)

STDLIB = Tolerance(
    "ignore",
    "drawn from the interpreter's own standard library, whose files differ between "
    "patch releases: only the number of cuts and of uncategorized disagreements are compared",
)

#: The top-level fields compared; ``created``, ``hardware`` and ``params`` (which holds labels
#: naming the machine) describe the run rather than its results.
COMPARED_FIELDS = ("chapter", "profile", "model", "tokenizer", "numbers", "paper")

#: Per chapter, ``(pattern, tolerance)`` pairs, first match wins; a pattern is an
#: :mod:`fnmatch` pattern over the dotted path of a field (list positions are numbers, e.g.
#: ``numbers.fixed_costs.3.median``; ``*`` also matches dots). Unlisted ints, strings and
#: booleans are exact; an unlisted float under ``numbers`` is a difference (:data:`UNDECLARED`).
TOLERANCES: dict[str, list[tuple[str, Tolerance]]] = {
    "losslessness": [("numbers.*", COUNT_RATIO)],
    "ceiling": [("numbers.*", COMMITTED_CURVE)],  # prices spans with the committed kernel.json
    "formats": [("numbers.git_version", TOOL), ("numbers.*", COUNT_RATIO)],
    "perturbation": [("numbers.*", COUNT_RATIO)],
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
        ("numbers.boundary_effect.*kl*", MODEL_FLOAT),  # KL divergences between two forwards
        ("numbers.speed.*.forward*", COUNT_RATIO),
        ("numbers.accounting.*", COUNT_RATIO),
        ("numbers.free_run.*", DECISION_RATIO),
        ("numbers.teacher_forced_agreement.*", DECISION_RATIO),
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
        (
            "numbers.agreement.*",
            Tolerance(
                "close",
                "greedy decisions of two engines at near-ties: another CPU's kernels may "
                "round a near-tie the other way",
                abs=0.02,
            ),
        ),
    ],
    "kv_reuse": [
        ("numbers.shares.*", COUNT_RATIO),  # no model: matched ids of the oracle programs
        ("numbers.agreement.*.kl_*", MODEL_FLOAT),
        ("numbers.agreement.*.recomputed", COUNT_RATIO),  # reused / spliced ids: counts
        ("numbers.agreement.*", DECISION_RATIO),  # rates and intervals of greedy decisions
        (
            "numbers.verdict.threshold",
            Tolerance("exact", "the acceptance threshold declared in cadlib.chapters.kv_reuse"),
        ),
        ("numbers.verdict.rates.*", DECISION_RATIO),
        ("numbers.timing*", TIMING),
        ("numbers.runtime_s", TIMING),
    ],
    "sft_pilot": [
        ("numbers.*wall_ms*", TIMING),
        ("numbers.*seconds*", TIMING),
        ("numbers.*loss*", MODEL_FLOAT),
        ("numbers.table6.*", DECISION_RATIO),
        ("numbers.comparisons.*", DECISION_RATIO),  # paired tests over those decisions
        ("numbers.expected_speedup.*", COMMITTED_CURVE),
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
        ("numbers.differential.*", COUNT_RATIO),  # the recognizer against ast.parse: no model
        ("numbers.localized_edit.*", DECISION_RATIO),
        ("numbers.fim.*", DECISION_RATIO),
        ("numbers.fim_by_cut.*", DECISION_RATIO),
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


def declared_tolerance(chapter: str, path: str) -> Tolerance | None:
    """The tolerance :data:`TOLERANCES` declares for ``path`` in ``chapter`` (first match), or
    ``None`` where nothing is declared."""
    if chapter not in TOLERANCES:
        raise KeyError(f"no tolerances declared for chapter {chapter!r}: add it to TOLERANCES")
    for pattern, tolerance in TOLERANCES[chapter]:
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
