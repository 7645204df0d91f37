"""cadlib.record.replay: a measurement is recorded with its run and replayed, not re-measured, under
$CADLIB_REPLAY; records round-trip exactly."""

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from chapters.test_decoding_report import CASES, PARAMS

from cadlib.chapters import decoding as D
from cadlib.decoding.decoder import ForwardRecord, Trace
from cadlib.decoding.fsm import Transcript
from cadlib.decoding.methods import prepare
from cadlib.grammar import Copy, Gen, Program
from cadlib.record import replay
from cadlib.record.replay import REPLAY_ENV, Recorder, decode, encode, measured


@pytest.fixture()
def dirs(tmp_path, monkeypatch):
    """Records written to tmp/written; replay reads tmp/committed (set by each test)."""
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path / "written"))
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    return tmp_path


def roundtrip(value):
    return decode(json.loads(json.dumps(encode(value))))


def test_frames_round_trip_with_dtypes_and_exact_floats():
    df = pd.DataFrame(
        dict(
            n=[1, 2],
            x=[0.1 + 0.2, 1 / 3],
            ok=[True, False],
            s=["a", "b"],
            nan=[math.nan, 1.0],
            obj=[{"k": 1}, [1, 2]],
        )
    )
    back = roundtrip(df)
    pd.testing.assert_frame_equal(back, df)
    assert back.x[0] == 0.1 + 0.2  # repr round trip, not 10 digits


def test_dataclasses_tuples_and_keys_round_trip():
    value = dict(
        program=Program((Copy(1, 3), Gen("x = 1\n"))),
        transcript=Transcript(ids=(1, 2), kinds=("choice", "splice")),
        trace=Trace(forwards=[ForwardRecord("prefill", 5, 0.25)], mask_s=[1e-5], wall_s=0.5),
        keys={1: "int key", ("a", 2): "tuple key"},
        scalar=np.float64(2.5),
        pair=(1, (2, 3)),
    )
    assert roundtrip(value) == value


def test_what_is_not_cadlibs_or_not_data_is_refused():
    with pytest.raises(TypeError, match="default index"):
        encode(pd.DataFrame({"a": [1]}, index=[5]))
    with pytest.raises(TypeError, match="cannot record a set"):
        encode({1, 2})
    with pytest.raises(ValueError, match="not a tag of replay.RECORD_TAGS"):
        decode({"__type__": "os:system", "fields": {}})


def test_a_dataclass_is_recorded_under_its_tag_and_read_back_through_the_table():
    data = json.loads(json.dumps(encode(Copy(1, 3))))
    assert data == {"__type__": "Copy", "fields": {"start": 1, "end": 3}}
    assert decode(data) == Copy(1, 3)


def test_an_unknown_tag_or_an_unregistered_dataclass_is_an_error_naming_the_table():
    with pytest.raises(ValueError, match="'Nope', which is not a tag of replay.RECORD_TAGS"):
        decode({"__type__": "Nope", "fields": {}})

    @dataclasses.dataclass
    class Unlisted:
        x: int = 0

    with pytest.raises(TypeError, match="register a tag for it in replay.RECORD_TAGS") as err:
        encode(Unlisted())
    assert "\n" not in str(err.value)


def test_every_registered_tag_resolves_to_a_dataclass():
    builtin = {"tuple", "ndarray", "dict", "DataFrame"}
    for tag, path in replay.RECORD_TAGS.items():
        cls = replay.record_class(tag)
        assert dataclasses.is_dataclass(cls) and tag not in builtin, tag
        assert f"{cls.__module__}:{cls.__qualname__}" == path, tag


def test_measured_records_then_replays_without_measuring(dirs, monkeypatch):
    assert measured("toy", "cpu", "m", lambda: {"s": 1.5}) == {"s": 1.5}
    written = dirs / "written" / "records" / "toy" / "m.json"
    assert written.exists()
    assert measured("toy", "full", "m", lambda: 2) == 2  # another profile, another folder
    assert (dirs / "written" / "records" / "toy.full" / "m.json").exists()

    monkeypatch.setenv(REPLAY_ENV, str(dirs / "written" / "records"))
    assert replay.replaying()

    def never():
        raise AssertionError("a replay must not measure")

    assert measured("toy", "cpu", "m", never) == {"s": 1.5}
    with pytest.raises(FileNotFoundError, match="at profile 'cpu' without \\$CADLIB_REPLAY"):
        measured("toy", "cpu", "missing", never)
    assert "replaying the committed records in" in Recorder("toy", "cpu").describe()


def test_resume_reads_back_what_this_run_already_recorded(dirs):
    calls = []

    def once(value):
        calls.append(value)
        return value

    assert measured("toy", "full", "part", lambda: once(1)) == 1
    assert measured("toy", "full", "part", lambda: once(2)) == 2  # a plain re-run re-measures
    resumed = Recorder("toy", "full", resume=True)
    assert resumed("part", lambda: once(3)) == 2 and calls == [1, 2]  # read back, not run
    assert resumed("next", lambda: once(4)) == 4 and calls == [1, 2, 4]  # a new one runs
    assert "resuming from" in resumed.describe()


def test_replay_1_reads_the_committed_records(monkeypatch):
    monkeypatch.setenv(REPLAY_ENV, "1")
    path = replay.record_path("decoding", "full", "timing")
    assert path.parts[-4:] == ("results", "records", "decoding.full", "timing.json")


def test_a_replayed_timing_is_the_recorded_one(dirs, monkeypatch, model, tok, one_torch_thread):
    """The chapter's timing recorded on the tiny model, then replayed: every derived table
    equals the measured run's, and nothing is timed."""
    timed = [prepare("toy", case, tok) for case in CASES]
    rec = Recorder("toy", "cpu")
    measured_run = D.run_timing.time_methods(model, tok, timed, PARAMS, record=rec)
    monkeypatch.setenv(REPLAY_ENV, str(dirs / "written" / "records"))
    monkeypatch.setattr(
        D.run_timing, "measure_timing", lambda *a: pytest.fail("timed under replay")
    )
    replayed = D.run_timing.time_methods(model, tok, timed, PARAMS, record=rec)
    pd.testing.assert_frame_equal(replayed.speed, measured_run.speed)
    pd.testing.assert_frame_equal(replayed.validation, measured_run.validation)
    fixed = D.run_costs.fixed_costs(measured_run.forced)
    pd.testing.assert_frame_equal(D.run_costs.fixed_costs(replayed.forced), fixed)
    assert D.show.agreement_line(replayed.forced) == D.show.agreement_line(measured_run.forced)


def test_no_committed_record_names_a_module_path():
    """Records name their dataclasses by tag (replay.RECORD_TAGS), never by module path, so a
    class that moves leaves the committed evidence as it is; every tag they name is registered."""
    import re

    from cadlib.paths import repo_root

    tags = set()
    for path in (repo_root() / "results" / "records").rglob("*.json"):
        kinds = set(re.findall(r'"__type__":\s*"([^"]*)"', path.read_text()))
        assert not [k for k in kinds if "cadlib." in k], path
        tags |= kinds - {"tuple", "ndarray", "dict", "DataFrame"}
    assert tags, "no record names a dataclass"
    assert tags <= set(replay.RECORD_TAGS)


def test_run_caption_names_the_run_the_page_shows(tmp_path, monkeypatch):
    """Under replay the committed run (whose records the page replays), else the run that just
    wrote its results elsewhere: never the other one's commit and load."""
    from cadlib.record.replay import run_caption

    def record(commit):
        load = {"other_cores": {"mean": 0.01, "max": 0.02}, "samples": 3}
        prov = {"commit": commit, "busy": False, "load": load}
        return json.dumps({"profile": "cpu", "created": "2026-12-01T00:00:00", "provenance": prov})

    monkeypatch.setenv("CADLIB_ROOT", str(tmp_path))
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path / "rerun"))
    (tmp_path / "results").mkdir()
    (tmp_path / "rerun").mkdir()
    (tmp_path / "results" / "kernel.json").write_text(record("aaaaaaaaaaaa"))
    (tmp_path / "rerun" / "kernel.json").write_text(record("bbbbbbbbbbbb"))
    monkeypatch.setenv("CADLIB_REPLAY", "1")
    assert "`aaaaaaaaaa`" in run_caption("kernel", "cpu")
    with pytest.raises(FileNotFoundError, match="kernel.full.json"):
        run_caption("kernel", "full")
    monkeypatch.setenv("CADLIB_REPLAY", "0")
    assert "`bbbbbbbbbb`" in run_caption("kernel", "cpu")


def test_a_chapter_that_is_its_evidence_run_names_its_records_and_command():
    from cadlib.record.replay import replayed_run_note

    text = replayed_run_note("decoding", "full", "make record CHAPTER=06_decoding PROFILE=full")
    assert text.startswith("This chapter is the `full` run")
    assert "`results/records/decoding.full/`" in text and "PROFILE=full`." in text
