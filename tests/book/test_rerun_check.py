"""The comparison of a re-run's results with the committed ones (cadlib.book.rerun_check)."""

import json

import pytest

from cadlib.book.rerun_check import (
    COMPARED_FIELDS,
    TIMING,
    Tolerance,
    compare_fields,
    compare_records,
    tolerance_for,
    tolerances,
    undeclared_floats,
)
from cadlib.paths import repo_root

#: Every committed results file of a chapter (cpu runs and larger evidence runs alike).
RESULTS = sorted(
    p for p in (repo_root() / "results").glob("*.json") if "chapter" in json.loads(p.read_text())
)


def record(**numbers):
    return {
        "chapter": "x",
        "profile": "cpu",
        "model": None,
        "tokenizer": "qwen2.5",
        "created": "2026-01-01",
        "hardware": {"cpu": "A"},
        "params": {"label": "A"},
        "numbers": numbers,
        "paper": {},
    }


@pytest.fixture(autouse=True)
def chapter_x(monkeypatch):
    monkeypatch.setitem(
        tolerances(),
        "x",
        [
            ("numbers.timing.*", Tolerance("ignore", "clock")),
            ("numbers.loss", Tolerance("close", "model float", rel=1e-3)),
            ("numbers.f", Tolerance("exact", "a ratio of counts")),
            ("numbers.clock.*", TIMING),
        ],
    )


def test_identical_records_have_no_difference():
    assert compare_records("x", record(n=3, f=0.25), record(n=3, f=0.25)) == []


def test_run_metadata_is_not_compared():
    rerun = record(n=3) | {"created": "2027-05-05", "hardware": {"cpu": "B"}, "params": {}}
    assert compare_records("x", record(n=3), rerun) == []
    assert "hardware" not in COMPARED_FIELDS and "numbers" in COMPARED_FIELDS


def test_a_changed_count_is_a_difference_naming_its_path():
    (diff,) = compare_records(
        "x", record(table={"py": {"K": 295}}), record(table={"py": {"K": 296}})
    )
    assert diff.path == "numbers.table.py.K" and (diff.committed, diff.rerun) == (295, 296)
    assert "committed 295, re-run 296" in str(diff)


def test_exact_floats_allow_only_repr_noise():
    assert compare_records("x", record(f=0.1 + 0.2), record(f=0.30000000000000004)) == []
    assert compare_records("x", record(f=0.3), record(f=0.3001)) != []


def test_declared_tolerances_apply_first_match():
    committed = record(timing={"decode_s": 1.0}, loss=2.0)
    assert compare_records("x", committed, record(timing={"decode_s": 9.0}, loss=2.001)) == []
    assert [d.path for d in compare_records("x", committed, record(timing={}, loss=2.1))] == [
        "numbers.loss"
    ]


def test_missing_and_extra_fields_and_list_entries_are_differences():
    diffs = compare_records("x", record(a=1, xs=[1, 2]), record(b=1, xs=[1]))
    assert {d.path for d in diffs} == {"numbers.a", "numbers.b", "numbers.xs.1"}


def test_strings_booleans_and_none_compare_exactly():
    assert compare_records("x", record(s="a", b=True, z=None), record(s="a", b=True, z=None)) == []
    assert len(compare_records("x", record(b=True), record(b=1))) == 1
    assert len(compare_records("x", record(z=None), record(z=0))) == 1


def test_nan_equals_nan_only():
    assert compare_records("x", record(f=float("nan")), record(f=float("nan"))) == []
    assert len(compare_records("x", record(f=float("nan")), record(f=1.0))) == 1


def test_an_undeclared_float_is_a_difference_even_when_equal():
    """A model float compared exactly by omission failed CI on the next CPU model (a KL
    divergence, issue 30): a float under ``numbers`` must have a declared tolerance."""
    (diff,) = compare_records("x", record(kl=8.82), record(kl=8.82))
    assert diff.path == "numbers.kl" and "no declared tolerance" in str(diff)
    assert undeclared_floats("x", record(kl=8.82, f=0.5, n=3, s="a")) == ["numbers.kl"]


def test_an_undeclared_float_under_an_ignored_path_needs_no_declaration():
    assert undeclared_floats("x", record(timing={"decode_s": 1.5})) == []
    assert compare_records("x", record(timing={"t": 1.5}), record(timing={"t": 2.5})) == []


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.name)
def test_every_float_of_every_committed_results_file_has_a_declared_tolerance(path):
    """Exact is for counts, strings and ratios of counts, and each such float says so."""
    result = json.loads(path.read_text())
    assert undeclared_floats(result["chapter"], result) == []


def test_every_chapter_with_committed_results_declares_its_tolerances():
    chapters = {p.stem for p in (repo_root() / "results").glob("*.json") if "." not in p.stem}
    assert chapters <= set(tolerances())
    with pytest.raises(KeyError, match="no tolerances declared"):
        tolerance_for("no-such-chapter", "numbers.n")


def test_unknown_tolerance_kind_is_rejected():
    with pytest.raises(ValueError, match="exact, close or ignore"):
        Tolerance("roughly", "no")


def test_every_leaf_gets_a_verdict_for_the_reproduction_report():
    committed = record(n=3, loss=2.0, f=0.5, clock={"s": 1.0}, timing={"t": 1.0})
    rerun = record(n=3, loss=2.001, f=0.6, clock={"s": 2.0}, timing={"t": 9.0})
    verdicts = {
        f.path: f.verdict
        for f in compare_fields("x", committed, rerun)
        if f.path.startswith("numbers.")
    }
    assert verdicts == {
        "numbers.n": "same",
        "numbers.loss": "within tolerance",
        "numbers.f": "differs",
        "numbers.clock.s": "timing",
        "numbers.timing.t": "not compared",
    }
