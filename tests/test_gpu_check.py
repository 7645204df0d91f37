"""The GPU check (``make gpu-check``): its smoke form on a CPU, and its profiles' shapes."""

import json

import pytest
import torch

from cadlib import decoding as D
from cadlib import gpu_check
from cadlib import kernel as K
from cadlib.decoding import TIMED


def test_the_gpu_profiles_time_the_papers_shapes_in_bf16_eager():
    kernel, paper = K.PROFILES["gpu"], K.PROFILES["paper"]
    assert kernel["models"] == paper["models"] == ("qwen2.5-1.5b-random", "qwen2.5-7b-random")
    assert (kernel["dtype"], kernel["attn_implementation"]) == ("bfloat16", "eager")
    assert max(kernel["N_grid"]) == 512 and kernel["P"] == paper["P"]
    decoding = D.PROFILES["gpu"]
    assert decoding["model"] == "qwen2.5-7b-random"
    assert (decoding["dtype"], decoding["attn_implementation"]) == ("bfloat16", "eager")
    assert set(decoding["timing_cases"]) == {"heval-fix-py", "heval-fix-js", "probeedit"}


@pytest.mark.parametrize("args", [["--device", "cpu"], ["--profile", "smoke", "--device", "cuda"],
                                  []] if not torch.cuda.is_available() else [["--device", "cpu"]])
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
    assert "wrote" in capsys.readouterr().out
