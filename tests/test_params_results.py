import json

import pytest

from cadlib.params import check_choice, choose
from cadlib.results import load_results, write_results

PROFILES = {"cpu": {"n": 2, "model": "small"}, "paper": {"n": 9, "model": "big"}}


def test_choose_applies_non_none_overrides():
    chosen = choose(PROFILES, "paper", n=None, model="x")
    assert chosen == {"n": 9, "model": "x", "profile": "paper"}


def test_unknown_profile_and_parameter_list_valid_ones():
    with pytest.raises(ValueError, match="'cpu', 'paper'"):
        choose(PROFILES, "gpu")
    with pytest.raises(ValueError, match="valid: model, n"):
        choose(PROFILES, "cpu", epochs=3)
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        check_choice("device", "tpu", ["auto", "cpu", "cuda"])


def test_results_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("CADLIB_ROOT", str(tmp_path))
    path = write_results(
        "demo", {"em": 1.0}, {"em": 0.9}, profile="cpu", model=None, tokenizer="qwen2.5"
    )
    record = json.loads(path.read_text())
    assert record["numbers"] == {"em": 1.0} and record["paper"] == {"em": 0.9}
    assert {"cpu", "cores", "python"} <= set(record["hardware"])
    assert load_results("demo")["tokenizer"] == "qwen2.5"
    with pytest.raises(FileNotFoundError, match="run notebooks"):
        load_results("missing")


def test_results_of_other_profiles_are_named_for_the_profile(tmp_path, monkeypatch):
    """One naming scheme: cpu -> <chapter>.json; any other profile -> <chapter>.<profile>.json."""
    monkeypatch.setenv("CADLIB_ROOT", str(tmp_path))
    monkeypatch.delenv("CADLIB_RESULTS_DIR", raising=False)
    paper = write_results("demo", {"em": 0.5}, profile="paper", model="m", tokenizer=None)
    cpu = write_results("demo", {"em": 1.0}, profile="cpu", model="m", tokenizer=None)
    assert (paper.name, cpu.name) == ("demo.paper.json", "demo.json")
    assert load_results("demo", "paper")["numbers"] == {"em": 0.5}
    assert load_results("demo")["numbers"] == {"em": 1.0}


def test_results_are_strict_json(tmp_path, monkeypatch):
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    numbers = {
        "nan": float("nan"),
        "inf": np.float64("inf"),
        "array": np.array([1, 2]),
        "int64": np.int64(3),
        "table": pd.DataFrame({"a": [1.0, np.nan], "b": ["x", "y"]}),
        "keys": {1: "one", False: "no", np.int64(2): "two"},
    }
    path = write_results("strict", numbers, profile="cpu", model=None, tokenizer=None)
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    got = json.loads(text)["numbers"]
    assert got["nan"] is None and got["inf"] is None
    assert got["array"] == [1, 2] and got["int64"] == 3
    assert got["table"] == [{"a": 1.0, "b": "x"}, {"a": None, "b": "y"}]
    assert got["keys"] == {"1": "one", "false": "no", "2": "two"}  # as json.dumps writes them


def test_results_refuse_what_json_cannot_hold(tmp_path, monkeypatch):
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    with pytest.raises(TypeError, match="not JSON serializable: set"):
        write_results("bad", {"s": {1, 2}}, profile="cpu", model=None, tokenizer=None)
    with pytest.raises(TypeError, match="not a JSON object key"):
        write_results("bad", {"k": {(1, 2): 3}}, profile="cpu", model=None, tokenizer=None)
