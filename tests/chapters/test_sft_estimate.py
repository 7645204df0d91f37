"""Chapter 7's training-time estimate (issue 35): a run's hours are its training ids over the
recorded runs' median throughput, for every train set of a profile, before any is started."""

from types import SimpleNamespace

import pytest

from cadlib.chapters.sft_pilot.run_training import recorded_train_runs, run_estimates
from cadlib.chapters.sft_pilot.text import estimate_markdown

P = {"train_sets": ("py", "combined"), "epochs": {"py": 8, "combined": 6}, "seeds": (0, 1, 2)}
IDS = {"py": (1000, 100_000), "combined": (5000, 2_000_000)}


def _run(train_set, seconds, epochs=8):
    return SimpleNamespace(train_set=train_set, epochs=epochs, train_seconds=seconds)


def test_hours_are_the_runs_ids_over_the_recorded_median_throughput():
    # recorded Py-only runs at 100, 80 and 200 ids/s: the median, 100, is the rate
    table = run_estimates(P, IDS, [_run("py", 80.0), _run("py", 100.0), _run("py", 40.0)])
    py, combined = table.set_index("train_set").loc[["py", "combined"]].itertuples()
    assert py.ids_per_s == combined.ids_per_s == 100.0
    assert (py.run_ids, combined.run_ids) == (8000, 30_000)
    assert combined.x_first == 3.75 and combined.squared_x_first == 20.0
    assert combined.hours == pytest.approx(300 / 3600) and combined.runs == 3
    text = estimate_markdown(table, 3, "Some CPU")
    assert "100 training ids/s on Some CPU" in text and "combined: 30,000 training ids" in text
    assert "0.1 h per run, 0.2 h for its 3 runs" in text


def test_no_recorded_run_of_the_profiles_sets_is_an_error():
    with pytest.raises(ValueError, match="no recorded training run"):
        run_estimates(P, IDS, [_run("other", 10.0)])


def test_the_committed_run_records_give_their_training_runs():
    runs = recorded_train_runs()
    assert runs and all(r.train_seconds > 0 and r.train_set in ("py", "combined") for r in runs)
