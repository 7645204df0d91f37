import subprocess
import sys

import pytest

from cadlib.cli import main


@pytest.fixture
def files(tmp_path):
    doc, gold = tmp_path / "doc.txt", tmp_path / "gold.txt"
    doc.write_bytes(b"a\nb\nc\n")
    gold.write_bytes(b"a\nB\nc\n")
    return doc, gold


def test_oracle_then_resolve_round_trips(files, tmp_path, capsysbinary):
    doc, gold = files
    assert main(["oracle", str(doc), str(gold)]) == 0
    program = capsysbinary.readouterr().out
    assert program.startswith(b"<program>")
    (tmp_path / "p.txt").write_bytes(program)
    assert main(["resolve", str(tmp_path / "p.txt"), str(doc)]) == 0
    assert capsysbinary.readouterr().out == gold.read_bytes()


def test_stdin_dash(files):
    doc, _ = files
    out = subprocess.run(
        [sys.executable, "-m", "cadlib.cli", "resolve", "-", str(doc)],
        input=b'<program><copy lines="2-3"/></program>',
        capture_output=True,
        check=True,
    )
    assert out.stdout == b"b\nc"


bad__message = [
    (b"<program><gen>x</program>", "malformed program: at offset"),
    (
        b'<program><copy lines="2-9"/></program>',
        "has 4 line(s); line 4 is the empty line after the final newline (wc -l says 3) (use ",
    ),
    (b"not a program", "malformed program"),
]


@pytest.mark.parametrize("program, message", bad__message)
def test_bad_input_gives_one_line_error(program, message, files, tmp_path, capsys):
    doc, _ = files
    (tmp_path / "p.txt").write_bytes(program)
    assert main(["resolve", str(tmp_path / "p.txt"), str(doc)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("cad: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_clipped_mode_warns_on_stderr(files, tmp_path, capsys):
    doc, _ = files
    (tmp_path / "p.txt").write_bytes(b'<program><copy lines="3-9"/></program>')
    assert main(["resolve", "--mode", "clipped", str(tmp_path / "p.txt"), str(doc)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "c\n" and "cad: warning:" in captured.err


def test_missing_file_and_binary_input(tmp_path, files, capsys):
    doc, _ = files
    assert main(["oracle", str(tmp_path / "nope"), str(doc)]) == 1
    assert "cannot read" in capsys.readouterr().err
    (tmp_path / "bin").write_bytes(b"\xff\xfe")
    assert main(["oracle", str(tmp_path / "bin"), str(doc)]) == 1
    assert "not UTF-8" in capsys.readouterr().err


def test_two_stdin_arguments_are_refused(capsys):
    assert main(["oracle", "-", "-"]) == 1
    assert "at most one" in capsys.readouterr().err


def test_usage_errors_exit_2():
    with pytest.raises(SystemExit) as info:
        main(["resolve", "only-one-arg"])
    assert info.value.code == 2


def test_tokens_counts_qwen25(tmp_path, capsys):
    (tmp_path / "t").write_text("</gen>")
    assert main(["tokens", str(tmp_path / "t")]) == 0
    assert capsys.readouterr().out.strip() == "3"


def test_check_models_fails_before_work_with_one_line_per_missing_model(
    tmp_path, monkeypatch, capsys
):
    """What the Makefile runs for PROFILE=paper before papermill starts (HF_HUB_OFFLINE=1, an
    empty cache): the paper's hub models are reported, each on one line, and the exit is 1."""
    import huggingface_hub.constants as hub

    from cadlib.cli import profile_models

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path))
    assert main(["check-models", "--profile", "smoke"]) == 0
    assert "qwen2-smoke: local stand-in" in capsys.readouterr().out
    assert main(["check-models", "--profile", "paper"]) == 1
    err = capsys.readouterr().err.splitlines()
    hub_models = {"Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-Coder-1.5B-Instruct"}
    for name in hub_models:
        assert sum(name in line and "hf download" in line for line in err) == 1
    assert err[-1].startswith("cad: error: 2 model(s)")
    models = profile_models("paper")
    assert set(models) == {"kernel", "decoding", "llama_cpp", "sft_pilot", "fim"}
    assert hub_models == {n for names in models.values() for n in names if "/" in n}
