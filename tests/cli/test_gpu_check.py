"""The GPU check (``make gpu-check``): its smoke form on a CPU, and its profiles' shapes."""

import json

import pandas as pd
import pytest
import torch

from cadlib.book.rerun_check import undeclared_floats
from cadlib.chapters import kernel as K
from cadlib.chapters.decoding import profiles as D
from cadlib.cli import gpu_check
from cadlib.decoding.methods import TIMED


def test_the_gpu_profiles_time_the_papers_shapes_in_bf16_eager():
    kernel, paper = K.profiles.PROFILES["gpu"], K.profiles.PROFILES["paper"]
    assert kernel["models"] == paper["models"] == ("qwen2.5-1.5b-random", "qwen2.5-7b-random")
    assert (kernel["dtype"], kernel["attn_implementation"]) == ("bfloat16", "eager")
    assert max(kernel["N_grid"]) == 512 and kernel["P"] == paper["P"]
    decoding = D.PROFILES["gpu"]
    assert decoding["model"] == "qwen2.5-7b-random"
    assert (decoding["dtype"], decoding["attn_implementation"]) == ("bfloat16", "eager")
    assert set(decoding["timing_cases"]) == {"heval-fix-py", "heval-fix-js", "probeedit"}


@pytest.mark.parametrize(
    "args",
    [["--device", "cpu"], ["--profile", "smoke", "--device", "cuda"], []]
    if not torch.cuda.is_available()
    else [["--device", "cpu"]],
)
def test_the_gpu_profile_refuses_a_machine_without_cuda(args, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    assert gpu_check.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "need a CUDA device" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_the_smoke_form_writes_both_evidence_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    assert gpu_check.main(["--profile", "smoke", "--device", "cpu"]) == 0
    kernel = json.loads((tmp_path / "kernel.smoke.json").read_text())
    assert kernel["numbers"]["curves"] and kernel["provenance"]["load"]["samples"] >= 1
    decoding = json.loads((tmp_path / "decoding.smoke.json").read_text())
    methods = {key.split("/", 1)[1] for key in decoding["numbers"]["speed"]}
    assert methods == set(TIMED)
    corpora = set(decoding["numbers"]["timed_cases"].values())
    assert corpora == set(D.PROFILES["smoke"]["timing_cases"])
    assert decoding["numbers"]["cost_model"]["grid"] and decoding["profile"] == "smoke"
    for record in (kernel, decoding):  # committed as evidence, every float is declared
        assert undeclared_floats(record["chapter"], record) == []
    assert "wrote" in capsys.readouterr().out


def gpu_record(curves: dict, busy: bool = False) -> dict:
    load = {
        "samples": 4,
        "seconds": 300.0,
        "load_avg_1m": {"mean": 1.0, "max": 1.1},
        "other_cores": {"mean": 0.9 if busy else 0.01, "max": 1.0},
        "busiest_other": [{"name": "pytest", "cores": 0.9}],
    }
    return {
        "numbers": {"curves": curves},
        "hardware": {"gpu": "NVIDIA H200"},
        "created": "2026-12-02T00:00:00+00:00",
        "provenance": {"load": load, "busy": busy},
        "params": {"dtype": "bfloat16", "attn_implementation": "eager"},
    }


def test_chapter_2_shows_the_gpu_curves_beside_the_papers_a100_points():
    record = gpu_record(
        {
            "qwen2.5-7b-random": {"N": [1, 8, 512], "s": [1.0, 6.0, 181.0]},
            "qwen2.5-1.5b-random": {"N": [1, 8], "s": [1.0, 7.7]},
        }
    )
    table = K.show.gpu_evidence(record).set_index(["shape (random init)", "N"])
    assert table.loc[("qwen2.5-7b-random", 512), "s(N) paper, A100"] == 90.5
    assert table.loc[("qwen2.5-7b-random", 512), "ours / paper"] == 2.0
    assert table.loc[("qwen2.5-1.5b-random", 8), "ours / paper"] == pytest.approx(1.1)
    assert pd.isna(table.loc[("qwen2.5-1.5b-random", 512), "s(N) ours"])  # not measured there
    text = K.text.gpu_evidence_markdown(record)
    assert "NVIDIA H200" in text and "a quiet machine" in text
    assert "**a busy machine**" in K.text.gpu_evidence_markdown(gpu_record({}, busy=True))
