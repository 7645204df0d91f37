"""A re-run on another CPU passes the results check; a count off by one fails it.

CI runs on whatever machine the last session had, and model floats are never bitwise equal
across CPUs (a KL divergence compared exactly failed on Intel after an AMD run, issue 30).
Another torch thread count is the stand-in for another CPU here: it reorders the matmuls'
reductions, so model floats may move in their last digits. This re-computes chapter 6's
boundary effect (a model chapter's model floats: KL divergences between two forwards, beside
counts) for the committed cpu run's cases on two threads instead of the committed one, and
checks it against ``results/decoding.json`` with the tolerances :mod:`cadlib.book.rerun_check`
declares.
"""

import copy
import json

import pytest
import torch

from cadlib.book.rerun_check import compare_records
from cadlib.chapters import decoding as D
from cadlib.decoding.token_boundaries import boundary_effect
from cadlib.paths import repo_root
from cadlib.record.params import choose

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads((repo_root() / "results" / "decoding.json").read_text())


@pytest.fixture(scope="module")
def rerun(committed) -> dict:
    """The committed record with ``numbers.boundary_effect`` re-computed on two threads."""
    params = choose(D.profiles.PROFILES, committed["profile"])
    assert params["threads"] == 1, "the committed run is the one-thread run"
    threads = torch.get_num_threads()
    try:
        setup = D.run.load_setup(params, "cpu")
        torch.set_num_threads(2)
        _, timed, _ = D.run.load_cases(params, None, setup.tokenizer, seed=0)
        effect = boundary_effect(setup.model, setup.tokenizer, timed[: params["effect_cases"]])
    finally:
        torch.set_num_threads(threads)
    record = copy.deepcopy(committed)
    record["numbers"]["boundary_effect"] = D.run.boundary_effect_numbers(effect)
    return record


def test_a_rerun_on_other_threads_reproduces_the_committed_results(committed, rerun):
    assert compare_records("decoding", committed, rerun) == []


def test_a_count_off_by_one_fails_the_check(committed, rerun):
    for field in ("boundaries", "top1_agree", "fsm_choice_agree"):
        changed = copy.deepcopy(rerun)
        changed["numbers"]["boundary_effect"][field] += 1
        (diff,) = compare_records("decoding", committed, changed)
        assert diff.path == f"numbers.boundary_effect.{field}" and diff.tolerance.kind == "exact"


def test_a_model_float_off_by_more_than_its_tolerance_fails_the_check(committed, rerun):
    changed = copy.deepcopy(rerun)
    changed["numbers"]["boundary_effect"]["max_kl"] *= 1.01
    (diff,) = compare_records("decoding", committed, changed)
    assert diff.path == "numbers.boundary_effect.max_kl" and diff.tolerance.kind == "close"
