"""Chapter 7's displayed tables, its run's records and its evidence-run sections
(cadlib.chapters.sft_pilot.show, .run, .run_pilot, .text): the notebook only calls these, so what
they show is tested here."""

import pandas as pd
import pytest

from cadlib.chapters import sft_pilot as sft
from cadlib.corpora import EditCase
from cadlib.grammar import Copy, Gen, Program

DOC = "\n".join(f"line {k}" for k in range(1, 11))
GOLD = DOC.replace("line 5", "line five")
CASES = [EditCase(f"toy/{k}", DOC, GOLD, "Spell out five.") for k in range(4)]
ORACLE = Program([Copy(1, 4), Gen("line five"), Copy(6, 10)])
IDENTITY = Program([Copy(1, 10)])


def _results(program, system):
    out = [sft.run_scoring.score_program(c, program.render(), system=system) for c in CASES]
    for k, r in enumerate(out):
        r.wall_s, r.new_tokens = (100.0 + k) / 1000, 10 + k
    return out


@pytest.fixture()
def ours():
    return {
        sft.run_pilot.FSM_UNTRAINED: _results(IDENTITY, sft.run_pilot.FSM_UNTRAINED),
        sft.run_pilot.sft_system("py"): _results(ORACLE, sft.run_pilot.sft_system("py")),
    }


def test_tests_and_wall_tables_count_every_system(ours):
    for r in ours[sft.run_pilot.sft_system("py")]:
        r.passed = True
    ours[sft.run_pilot.FSM_UNTRAINED][0].passed = True  # passes without EM
    for r in ours[sft.run_pilot.FSM_UNTRAINED][1:]:
        r.passed = False
    table = sft.show.tests_table(ours)
    assert table.loc[sft.run_pilot.sft_system("py"), ["n", "EM", "tests passed"]].tolist() == [
        4,
        4,
        4,
    ]
    assert table.loc[sft.run_pilot.FSM_UNTRAINED, "passed without EM"] == 1
    assert table.loc[sft.run_pilot.FSM_UNTRAINED, "EM"] == 0
    wall = sft.show.wall_table(ours)
    assert list(wall.index) == list(ours) and (wall["budget hit"] == 0).all()
    assert wall["median wall (ms)"].tolist() == [102, 102]  # median of 100..103, rounded
    assert wall["median decisions"].tolist() == [11, 11]


def test_pairs_put_the_question_first_and_program_systems_drop_free_form(ours):
    P = sft.profiles.choose("cpu")
    assert sft.run_paired.chapter_pairs(P)[0] == (
        sft.run_pilot.sft_system("py"),
        sft.run_pilot.FSM_UNTRAINED,
    )
    regen = _results(IDENTITY, sft.run_pilot.REGEN)
    for r in regen:
        r.extra["free_form"] = True
    assert set(sft.run_paired.program_systems({**ours, sft.run_pilot.REGEN: regen})) == set(ours)


def test_table22_says_when_no_combined_model_was_trained():
    note, table = sft.show_tables.table22_outputs({}, "ours", "cpu")
    assert "Not run in profile cpu" in note and isinstance(table, pd.DataFrame)
    assert (table["Source"].str.startswith("paper")).all()


def test_full_profile_section_without_a_record(monkeypatch):
    for role in (sft.text, sft.show):
        monkeypatch.setattr(role, "profile_record", lambda profile: None)
    monkeypatch.setattr(sft.text, "profile_summary", lambda profile: f"no {profile} yet")
    assert sft.text.full_profile_summary("cpu") == "no full yet"
    assert sft.show.full_profile_figures("cpu") == (None, None)
    assert "full run" in sft.text.full_profile_summary("full")
    assert sft.show.full_profile_figures("full") == (None, None)


def test_the_cpu_chapter_shows_the_largest_committed_evidence_run(monkeypatch):
    committed = {"full"}
    monkeypatch.setattr(
        sft.run, "profile_record", lambda p: {"profile": p} if p in committed else None
    )
    assert sft.run.evidence_profile() == "full"
    committed.add("seeds")
    assert sft.run.evidence_profile() == "seeds"
    committed.clear()
    assert sft.run.evidence_profile() == "full"  # none yet: the one to record first
    assert (
        "RESUME=1" in sft.text.REGENERATE["seeds"] and "make record" in sft.text.REGENERATE["full"]
    )


def test_recipe_differences_give_the_declared_reasons_in_the_full_profile():
    diff = sft.show.recipe_differences(sft.profiles.choose("full"))
    assert set(diff.index) <= set(sft.profiles.FULL_DEVIATIONS)
    assert (diff["why"] == [sft.profiles.FULL_DEVIATIONS[k] for k in diff.index]).all()
    cpu = sft.show.recipe_differences(sft.profiles.choose("cpu"))
    assert "n_train" in cpu.index and (cpu["why"] == "CI time budget").all()


@pytest.fixture()
def fake_training(monkeypatch, tmp_path):
    """run_pilot with training and scoring replaced by a counter; records under tmp_path."""
    from cadlib.record.replay import REPLAY_ENV

    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    trained = []

    def fine_tune(model_name, train_set, seed, *args, **kwargs):
        trained.append((train_set, seed))
        return (
            None,
            None,
            sft.run_training.TrainRun(
                train_set,
                seed,
                n_examples=1,
                n_loss_tokens=1,
                epochs=1.0,
                optimizer_steps=1,
                losses=[1.0],
                train_seconds=0.0,
                output_dir=None,
            ),
        )

    def evaluate(model, tokenizer, run, P, split, corpora, held, progress):
        return sft.run_pilot.PilotRun(train=run, held=[f"{run.train_set}-{run.seed}"])

    monkeypatch.setattr(sft.run_pilot, "fine_tune", fine_tune)
    monkeypatch.setattr(sft.run_pilot, "_evaluate_run", evaluate)
    monkeypatch.setattr(sft.run_pilot, "eval_cases", lambda split, corpora, P: [])
    return trained, tmp_path / "records"


def test_an_evidence_pilot_records_each_run_and_resumes_without_retraining(fake_training):
    import json

    from cadlib.record.replay import Recorder, decode

    trained, records = fake_training
    split = {"corpora": {}}
    P = {**sft.profiles.choose("seeds"), "seeds": (0, 1)}
    first = sft.run_pilot.recorded_pilot(Recorder("sft_pilot", "seeds"), "m", P, split, {})
    assert trained == [("py", 0), ("py", 1), ("combined", 0), ("combined", 1)]
    assert len(list((records / "sft_pilot.runs").glob("run-*.json"))) == 4
    assert not (records / "sft_pilot.seeds" / "pilot.json").exists()  # run by run, not whole
    one = json.loads(next((records / "sft_pilot.runs").glob("run-*.json")).read_text())
    assert {"started", "commit", "load", "busy"} <= set(decode(one["fields"]["provenance"]))
    (
        records
        / "sft_pilot.runs"
        / f"{sft.run_pilot.run_record_name(P, split, 'combined', 1)}.json"
    ).unlink()
    again = sft.run_pilot.recorded_pilot(
        Recorder("sft_pilot", "seeds", resume=True), "m", P, split, {}
    )
    assert trained[4:] == [("combined", 1)]  # only the run that had no record is made again
    assert again.results == first.results and [r.seed for r in again.runs] == [0, 1, 0, 1]


def test_a_ci_profile_pilot_is_recorded_whole(fake_training):
    from cadlib.record.replay import Recorder

    trained, records = fake_training
    P = sft.profiles.choose("cpu")
    sft.run_pilot.recorded_pilot(Recorder("sft_pilot", "cpu"), "m", P, {"corpora": {}}, {})
    assert trained == [("py", 0)] and (records / "sft_pilot" / "pilot.json").exists()
    assert not (records / "sft_pilot.runs").exists()
