"""``cad edit`` (Copy-as-Decode on a file from the shell) and ``cad oracle --align``.

The model tests drive the packaged SmolLM2-135M-Instruct GGUF through ``cadlib.cli.main`` (one
load per process: ``_load_engine`` is cached) and once through a subprocess. The error tests
need no model: input is checked before a model loads.
"""

import re
import subprocess
import sys

import pytest

from cadlib import cli, models
from cadlib.cli import main
from cadlib.grammar import parse_program
from cadlib.resolver import resolve

DOC = b"def add(a, b):\n    return a - b\n"
PROGRAM = b'<program><copy lines="1-1"/><gen>    return a + b</gen><copy lines="3-3"/></program>'
INSTRUCTION = "Fix the bug: add, do not subtract."
SUMMARY = re.compile(
    r"^cad: edit: (\d+) ops \((\d+) copy, (\d+) gen\), (\d+) copied / (\d+) generated tokens, "
    r"(\d+) forwards, ([\d.]+) s, ([\d.]+|inf) tokens/s \(([^,]+), "
    r"(transformers|llama\.cpp|llama\.cpp F16|llama\.cpp F32)\)"
)
SMOL = ["--device", "cpu", "--max-new-tokens", "24"]


@pytest.fixture
def doc(tmp_path):
    path = tmp_path / "add.py"
    path.write_bytes(DOC)
    return path


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "program.txt"
    path.write_bytes(PROGRAM)
    return path


def parse_summary(err: str) -> dict:
    lines = err.splitlines()
    assert len(lines) == 1, err
    m = SUMMARY.match(lines[0])
    assert m, lines[0]
    keys = ("ops", "copy", "gen", "copied", "generated", "forwards")
    out = {k: int(v) for k, v in zip(keys, m.groups(), strict=False)}
    out.update(seconds=float(m[7]), model=m[9], engine=m[10])
    return out


def one_line_error(err: str, message: str) -> None:
    assert err.startswith("cad: error: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


# -- no model ---------------------------------------------------------------------------------


def test_default_model_is_the_packaged_one():
    assert cli.SMOLLM2 == models.SMOLLM2


def test_gguf_types_are_the_engines():
    from cadlib import engines

    assert cli.GGUF_TYPES == tuple(sorted(engines.GGUF_TYPES))


@pytest.mark.parametrize(
    "program_text, message",
    [(b"<program><gen>x</program>", "malformed program"),
     (b'<program><copy lines="2-9"/></program>', "has 3 line(s)"),
     (b'<program><copy lines="3-2"/></program>', "")],
)  # fmt: skip
def test_bad_program_is_a_one_line_error(program_text, message, doc, tmp_path, capsys):
    (tmp_path / "p.txt").write_bytes(program_text)
    assert main(["edit", str(doc), "--instruction", "x", "--program", str(tmp_path / "p.txt")]) == 1
    one_line_error(capsys.readouterr().err, message)
    assert doc.read_bytes() == DOC


def test_missing_file_is_a_one_line_error(tmp_path, capsys):
    assert main(["edit", str(tmp_path / "nope.py"), "--instruction", "x"]) == 1
    one_line_error(capsys.readouterr().err, "cannot read")


@pytest.mark.parametrize(
    "argv",
    [["--instruction", "x", "--max-new-tokens", "0"], ["--instruction", "x", "--engine", "vllm"],
     ["--instruction", "x", "--max-new-tokens", "x"], [],  # [] = no --instruction
     ["--instruction", "x", "--gguf-type", "f16"],  # transformers has no GGUF type
     ["--instruction", "x", "--engine", "llama.cpp", "--gguf-type", "q4_0"]],
)  # fmt: skip
def test_usage_errors_exit_2(argv, doc, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["edit", str(doc), *argv])
    assert exit_.value.code == 2 and "Traceback" not in capsys.readouterr().err


def test_llama_cpp_unavailable_is_a_one_line_error(doc, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cadlib.engines", None)  # import fails as if not built
    assert main(["edit", str(doc), "--instruction", "x", "--engine", "llama.cpp"]) == 1
    one_line_error(capsys.readouterr().err, "llama.cpp engine is not available")


def test_unloadable_model_is_a_one_line_error(doc, tmp_path, capsys):
    empty = tmp_path / "no-model"  # a folder without config.json: fails without the network
    empty.mkdir()
    assert main(["edit", str(doc), "--instruction", "x", "--model", str(empty)]) == 1
    one_line_error(capsys.readouterr().err, "no-model has no config.json")


def test_help_says_what_the_untrained_model_does(capsys):
    with pytest.raises(SystemExit):
        main(["edit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "rarely makes the requested edit" in text and "checkpoints/" in text
    assert "larger" in text


@pytest.mark.parametrize("align", ["histogram", "difflib"])
def test_oracle_align_round_trips(align, tmp_path, capsysbinary):
    doc, gold = tmp_path / "d", tmp_path / "g"
    doc.write_bytes(b"{\n}\n}\na\n}\n")
    gold.write_bytes(b"{\n}\nb\n}\na\n}\n}\n")
    assert main(["oracle", "--align", align, str(doc), str(gold)]) == 0
    program = capsysbinary.readouterr().out.decode()
    assert resolve(program.rstrip("\n"), doc.read_text()) == gold.read_text()


def test_oracle_help_names_the_default(capsys):
    with pytest.raises(SystemExit):
        main(["oracle", "--help"])
    assert "histogram (default" in " ".join(capsys.readouterr().out.split())


# -- with the packaged SmolLM2 ----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.slow
@pytest.mark.hf_model
def test_program_output_is_exactly_the_resolution(stream, doc, program, capsysbinary):
    argv = ["edit", str(doc), "--instruction", INSTRUCTION, "--program", str(program), *SMOL]
    assert main(argv + (["--stream"] if stream else [])) == 0
    out, err = capsysbinary.readouterr()
    assert out.decode() == resolve(PROGRAM.decode(), DOC.decode())
    summary = parse_summary(err.decode())
    assert (summary["ops"], summary["copy"], summary["gen"]) == (3, 2, 1)
    assert summary["copied"] > 0 and summary["generated"] > 0 and summary["forwards"] > 0
    assert "model agreed with the program" in err.decode()
    assert doc.read_bytes() == DOC


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.slow
@pytest.mark.hf_model
def test_drafts_print_the_same_resolution_in_fewer_forwards(doc, program, capsysbinary):
    argv = ["edit", str(doc), "--instruction", INSTRUCTION, "--program", str(program), *SMOL]
    assert main(argv) == 0
    plain = capsysbinary.readouterr()
    assert main([*argv, "--drafts"]) == 0
    drafted = capsysbinary.readouterr()
    assert drafted.out == plain.out == resolve(PROGRAM.decode(), DOC.decode()).encode()
    fewer = parse_summary(drafted.err.decode())["forwards"]
    assert fewer < parse_summary(plain.err.decode())["forwards"]


@pytest.mark.slow
@pytest.mark.hf_model
def test_llama_cpp_on_an_f16_conversion_prints_the_same_resolution(doc, program, capsysbinary):
    pytest.importorskip("llama_cpp", reason="the llama extra (llama-cpp-python) is missing")
    argv = ["edit", str(doc), "--instruction", INSTRUCTION, "--program", str(program),
            "--engine", "llama.cpp", "--gguf-type", "f16", "--threads", "1", *SMOL]
    assert main(argv) == 0
    out, err = capsysbinary.readouterr()
    assert out.decode() == resolve(PROGRAM.decode(), DOC.decode())
    assert parse_summary(err.decode())["engine"] == "llama.cpp F16"


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.slow
@pytest.mark.hf_model
def test_free_run_prints_the_resolution_of_a_valid_program(doc, capsysbinary):
    from cadlib.decoder import CopyDecoder

    assert main(["edit", str(doc), "--instruction", INSTRUCTION, *SMOL]) == 0
    out, err = capsysbinary.readouterr()
    summary = parse_summary(err.decode())
    assert summary["model"] == models.SMOLLM2 and summary["engine"] == "transformers"
    # the same greedy run in-process: its program is valid and resolves to what was printed
    model, tokenizer = cli._load_engine("transformers", models.SMOLLM2, "cpu")
    result = CopyDecoder(model, tokenizer, max_new_tokens=24).decode(DOC.decode(), INSTRUCTION)
    assert result.error is None and out.decode() == result.text
    assert resolve(parse_program(result.program_text), DOC.decode()) == out.decode()
    assert summary["forwards"] == result.trace.n_forwards
    assert doc.read_bytes() == DOC
    # streamed: the same text, op by op
    assert main(["edit", str(doc), "--instruction", INSTRUCTION, "--stream", *SMOL]) == 0
    assert capsysbinary.readouterr().out == out


@pytest.mark.slow
@pytest.mark.hf_model
def test_subprocess_program_run(doc, program):
    proc = subprocess.run(
        [sys.executable, "-m", "cadlib.cli", "edit", str(doc), "--instruction", INSTRUCTION,
         "--program", str(program), "--threads", "1", *SMOL],
        capture_output=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode() == resolve(PROGRAM.decode(), DOC.decode())
    parse_summary(proc.stderr.decode())
    assert doc.read_bytes() == DOC
