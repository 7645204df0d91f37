import json

import pytest

from cadlib.record.params import check_choice, check_injected_parameters, choose
from cadlib.record.results import load_results, write_results

TOY_PROFILES = {"cpu": {"n": 2, "model": "small"}, "paper": {"n": 9, "model": "big"}}


def test_choose_applies_non_none_overrides():
    chosen = choose(TOY_PROFILES, "paper", n=None, model="x")
    assert chosen == {"n": 9, "model": "x", "profile": "paper"}


def test_unknown_profile_and_parameter_list_valid_ones():
    with pytest.raises(ValueError, match="'cpu', 'paper'"):
        choose(TOY_PROFILES, "gpu")
    with pytest.raises(ValueError, match="valid: model, n"):
        choose(TOY_PROFILES, "cpu", epochs=3)
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        check_choice("device", "tpu", ["auto", "cpu", "cuda"])


PARAMETERS_CELL = 'profile = "cpu"  # cpu or paper\nn_fuzz = None\nseed: int = 0\n'


def test_a_mistyped_papermill_parameter_name_fails():
    """``-p n_fuz 10`` (issue 36.8): papermill injects it after the parameters cell."""
    check_injected_parameters([PARAMETERS_CELL])  # nothing injected (nbval, an editor)
    check_injected_parameters(
        ["", PARAMETERS_CELL, '# Parameters\nprofile = "paper"\n', "import cadlib"]
    )
    with pytest.raises(
        ValueError,
        match=r"unknown parameter\(s\) n_fuz \(papermill -p\); "
        r"this notebook's parameters are: n_fuzz, profile, seed",
    ):
        check_injected_parameters([PARAMETERS_CELL, "# Parameters\nn_fuz = 10\nseed = 1\n"])
    with pytest.raises(ValueError, match="unknown parameter"):  # the last injected cell counts
        check_injected_parameters(
            [PARAMETERS_CELL, "# Parameters\nseed = 1\n", "# Parameters\nsede = 1\n"]
        )


def test_choose_checks_the_kernel_history(monkeypatch):
    """In a kernel, ``choose`` reads the cells run so far from IPython's ``In``."""
    from types import SimpleNamespace

    import IPython

    history = ["", PARAMETERS_CELL, "# Parameters\nn_fuz = 10\n"]
    shell = SimpleNamespace(user_ns={"In": history})
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    with pytest.raises(ValueError, match="n_fuz"):
        choose(TOY_PROFILES, "cpu")
    history[2] = "# Parameters\nn_fuzz = 10\n"
    assert choose(TOY_PROFILES, "cpu")["n"] == 2


@pytest.mark.slow
def test_papermill_with_an_unknown_parameter_name_fails(tmp_path):
    """End to end: papermill -p with a mistyped name stops at the chapter's ``choose``."""
    import nbformat
    import papermill

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Py"}
    nb.metadata["language_info"] = {"name": "python"}
    params = nbformat.v4.new_code_cell('profile = "cpu"\nn = None\n')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [
        params,
        nbformat.v4.new_code_cell(
            "from cadlib.record.params import choose\n"
            "P = choose({'cpu': {'n': 2}}, profile, n=n)\nprint(P['n'])"
        ),
    ]
    nbformat.write(nb, tmp_path / "in.ipynb")
    run = dict(
        input_path=str(tmp_path / "in.ipynb"),
        output_path=str(tmp_path / "out.ipynb"),
        kernel_name="python3",
        progress_bar=False,
        cwd=str(tmp_path),
    )
    papermill.execute_notebook(**run, parameters={"n": 5})
    with pytest.raises(papermill.PapermillExecutionError, match="unknown parameter.*nn"):
        papermill.execute_notebook(**run, parameters={"nn": 5})


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


def _notebook(tmp_path, *cells):
    nb = {
        "cells": [
            {"cell_type": "code", "metadata": {"tags": tags}, "source": [src]}
            for tags, src in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_notebook_parameter_is_the_injected_value_else_the_default(tmp_path):
    from cadlib.record.params import notebook_parameter

    params = (["parameters"], 'profile = "cpu"\nseed = 0\n')
    plain = _notebook(tmp_path, params, ([], "x = 1\n"))
    assert notebook_parameter(plain, "profile") == "cpu"
    injected = _notebook(
        tmp_path, params, (["injected-parameters"], '# Parameters\nprofile = "full"\n')
    )
    assert notebook_parameter(injected, "profile") == "full"
    assert notebook_parameter(injected, "seed") == 0  # not injected: the default
    with pytest.raises(KeyError, match="no parameter 'device'"):
        notebook_parameter(injected, "device")


def test_shown_results_follow_each_committed_notebooks_profile(tmp_path, monkeypatch):
    from cadlib.chapters import notebooks, shown_results
    from cadlib.record.results import load_committed

    for chapter, stem in notebooks().items():
        profile = "full" if chapter == "decoding" else "cpu"
        cells = [(["parameters"], 'profile = "cpu"\n')]
        if profile != "cpu":
            cells.append((["injected-parameters"], f'# Parameters\nprofile = "{profile}"\n'))
        _notebook(tmp_path, *cells).rename(tmp_path / f"{stem}.ipynb")
    shown = shown_results(tmp_path)
    assert shown["decoding"] == "decoding.full.json" and shown["kernel"] == "kernel.json"
    # the committed evidence is read from the repository's results/, never a re-run's folder
    monkeypatch.setenv("CADLIB_ROOT", str(tmp_path))
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path / "rerun"))
    (tmp_path / "rerun").mkdir()
    (tmp_path / "rerun" / "kernel.json").write_text('{"profile": "cpu"}')
    assert load_committed("kernel") is None
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "kernel.full.json").write_text('{"profile": "full"}')
    assert load_committed("kernel", "full") == {"profile": "full"}


def test_a_run_report_is_stamped_around_its_fields():
    from cadlib.record.results import run_report

    report = run_report("p", "python -m x", protocol={"a": 1}, rows=[1, 2])
    assert list(report) == [
        "profile",
        "command",
        "hardware",
        "protocol",
        "rows",
        "created",
        "provenance",
    ]
    assert report["provenance"]["commit"] and "cpu" in report["hardware"]
