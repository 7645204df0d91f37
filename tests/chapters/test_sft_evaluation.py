"""Chapter 7's decoding of held-out cases (tiny random Llama on CPU): the free FSM run and the
localized edit share one loop; the localized one is driven by the oracle program, so its spans
are right unless the budget cuts a body, and each result says which mode made it."""

import pytest

from cadlib.cases import EditCase
from cadlib.chapters.sft_pilot.run_evaluation import evaluate_fsm, evaluate_localized

pytestmark = pytest.mark.usefixtures("one_torch_thread")

CASES = [
    EditCase(
        "add",
        "def add(a, b):\n    return a - b\n",
        "def add(a, b):\n    return a + b\n",
        "Fix the bug.",
    ),
    EditCase("one", "x = 1\ny = 2\nz = 3\n", "x = 1\ny = 20\nz = 3\n", "Fix the bug."),
]


def test_free_run_scores_every_case_with_its_own_program(model, tok):
    results = evaluate_fsm(
        model,
        tok,
        CASES,
        system="fsm",
        max_new_tokens=24,
        test_timeout=None,
        progress=False,
        seed=7,
    )
    assert [r.id for r in results] == ["add", "one"]
    for r in results:
        assert r.system == "fsm" and r.parsed  # the FSM makes every program parse
        assert r.extra["seed"] == 7 and "localized" not in r.extra
        assert r.extra["forwards"] >= 1 and r.wall_s > 0 and r.new_tokens <= 24
        assert r.passed is None  # no tests asked for


def test_localized_edit_follows_the_oracle_spans(model, tok):
    results = evaluate_localized(
        model, tok, CASES, system="loc", max_new_tokens=64, test_timeout=None, progress=False
    )
    for r in results:
        assert r.extra["localized"] is True and r.parsed
        assert r.span_em or r.extra["budget_closed"]  # spans are given: only a budget cuts them
