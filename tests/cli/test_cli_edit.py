"""``cad edit`` (Copy-as-Decode on a file from the shell) and ``cad oracle --align``.

The model tests drive the packaged SmolLM2-135M-Instruct GGUF through ``cadlib.cli.main`` (one
load per process: ``_load_runner`` is cached) and once through a subprocess. The error tests
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
    r"(transformers|llama\.cpp|llama\.cpp F16|llama\.cpp F32), (\d+) threads?( \(idle cores\))?\)"
)
SMOL = ["--device", "cpu", "--max-new-tokens", "24", "--threads", "1"]  # in-process: 1 thread


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
    out.update(seconds=float(m[7]), model=m[9], engine=m[10], threads=int(m[11]))
    return out


def one_line_error(err: str, message: str) -> None:
    assert err.startswith("cad: error: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


# -- no model ---------------------------------------------------------------------------------


def test_default_model_is_the_packaged_one(capsys):
    with pytest.raises(SystemExit):
        main(["edit", "--help"])
    assert f"(default: {models.SMOLLM2}," in " ".join(capsys.readouterr().out.split())


def test_edit_help_and_tokens_import_no_torch(doc):
    """``cad edit --help`` and ``cad tokens`` stay light: a fresh interpreter that runs them has
    not loaded torch (the CLI names models through the torch-free registry)."""
    code = (
        "import contextlib, io, sys\n"
        "from cadlib.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['edit', '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    assert main(['tokens', sys.argv[1]]) == 0\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(doc)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "program_text, message",
    [
        (b"<program><gen>x</program>", "malformed program"),
        (b'<program><copy lines="2-9"/></program>', "has 3 line(s)"),
        (b'<program><copy lines="3-2"/></program>', ""),
    ],
)
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
    [
        ["--instruction", "x", "--max-new-tokens", "0"],
        ["--instruction", "x", "--engine", "vllm"],
        ["--instruction", "x", "--max-new-tokens", "x"],
        [],  # [] = no --instruction
        ["--instruction", "x", "--gguf-type", "f16"],  # transformers has no GGUF type
        ["--instruction", "x", "--engine", "llama.cpp", "--gguf-type", "q4_0"],
    ],
)
def test_usage_errors_exit_2(argv, doc, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["edit", str(doc), *argv])
    assert exit_.value.code == 2 and "Traceback" not in capsys.readouterr().err


def test_llama_cpp_unavailable_is_a_one_line_error(doc, monkeypatch, capsys):
    # the import fails as if llama.cpp were not built
    monkeypatch.setitem(sys.modules, "cadlib.decoding.engines", None)
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
    argv = [
        "edit",
        str(doc),
        "--instruction",
        INSTRUCTION,
        "--program",
        str(program),
        "--engine",
        "llama.cpp",
        "--gguf-type",
        "f16",
        "--threads",
        "1",
        *SMOL,
    ]
    assert main(argv) == 0
    out, err = capsysbinary.readouterr()
    assert out.decode() == resolve(PROGRAM.decode(), DOC.decode())
    assert parse_summary(err.decode())["engine"] == "llama.cpp F16"


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.slow
@pytest.mark.hf_model
def test_free_run_prints_the_resolution_of_a_valid_program(doc, capsysbinary):
    from cadlib.decoding.decoder import CopyDecoder

    partial = ["--allow-partial"]  # 24 decisions rarely let this model close its program
    assert main(["edit", str(doc), "--instruction", INSTRUCTION, *SMOL, *partial]) == 0
    out, err = capsysbinary.readouterr()
    summary = parse_summary(err.decode())
    assert summary["model"] == models.SMOLLM2 and summary["engine"] == "transformers"
    # the same greedy run in-process: its program is valid and resolves to what was printed
    model = models.load_model(models.SMOLLM2, device="cpu")
    tokenizer = models.load_tokenizer(models.SMOLLM2)
    result = CopyDecoder(model, tokenizer, max_new_tokens=24).decode(DOC.decode(), INSTRUCTION)
    assert result.error is None and out.decode() == result.text
    assert resolve(parse_program(result.program_text), DOC.decode()) == out.decode()
    assert summary["forwards"] == result.trace.n_forwards
    assert doc.read_bytes() == DOC
    # streamed: the same text, op by op
    assert main(["edit", str(doc), "--instruction", INSTRUCTION, "--stream", *SMOL, *partial]) == 0
    assert capsysbinary.readouterr().out == out


@pytest.mark.slow
@pytest.mark.hf_model
def test_subprocess_program_run(doc, program):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cadlib.cli",
            "edit",
            str(doc),
            "--instruction",
            INSTRUCTION,
            "--program",
            str(program),
            "--threads",
            "1",
            *SMOL,
        ],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode() == resolve(PROGRAM.decode(), DOC.decode())
    assert parse_summary(proc.stderr.decode())["threads"] == 1
    assert doc.read_bytes() == DOC


@pytest.mark.slow
@pytest.mark.hf_model
def test_llama_cpp_runs_any_gguf_file_with_its_embedded_tokenizer(doc, program, tmp_path):
    """Issue 36.4: a .gguf path (or a folder holding one) is the model, and its embedded
    vocabulary the tokenizer (converted once, cached)."""
    pytest.importorskip("llama_cpp", reason="the llama extra (llama-cpp-python) is missing")
    folder = tmp_path / "gguf"
    folder.mkdir()
    (folder / "model.gguf").symlink_to(models.smollm2_gguf_path())
    for model in (folder / "model.gguf", folder):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "cadlib.cli",
                "edit",
                str(doc),
                "--instruction",
                INSTRUCTION,
                "--program",
                str(program),
                "--engine",
                "llama.cpp",
                "--model",
                str(model),
                *SMOL,
            ],
            capture_output=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr.decode()
        assert proc.stdout.decode() == resolve(PROGRAM.decode(), DOC.decode())
        assert parse_summary(proc.stderr.decode())["model"] == str(model)


# -- issue 36: bad input, one line, an exit status, nothing on stdout ---------------------------


def run_cad(*argv, env=None, stdin=b""):
    import os

    full = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "cadlib.cli", *map(str, argv)],
        input=stdin,
        capture_output=True,
        check=False,
        env=full,
    )


def refused(proc, code: int, message: str) -> None:
    """One line on stderr naming the problem, the exit status, nothing on stdout."""
    err = proc.stderr.decode()
    assert proc.returncode == code, err
    assert proc.stdout == b"", proc.stdout
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "doc.py").write_bytes(DOC)
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "far.prog").write_bytes(b'<program><copy lines="2-9"/></program>')
    return tmp_path


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["edit", "doc.py", "--instruction", " "], 1, "--instruction is empty"),
        (["edit", "empty.py", "--instruction", "x"], 1, "empty.py is empty"),
        (["edit", "doc.py", "--instruction", "x", "--max-new-tokens", "0"], 2, "positive integer"),
        (
            ["edit", "doc.py", "--instruction", "x", "--program", "far.prog"],
            1,
            "has 3 line(s); line 3 is the empty line after the final newline (wc -l says 2)",
        ),
        (["resolve", "far.prog", "doc.py"], 1, "(wc -l says 2)"),
        (["check-models"], 2, "name the models to check"),
        (["oracle", "--bogus", "doc.py", "doc.py"], 2, "see cad --help"),
        (["edit", "doc.py"], 2, "--instruction"),
        (
            ["edit", "doc.py", "--instruction", "x", "--engine", "llama.cpp", "--model", "."],
            1,
            "loads a .gguf file",
        ),
    ],
)
def test_bad_input_is_refused_in_one_line(argv, code, message, files):
    proc = subprocess.run(
        [sys.executable, "-m", "cadlib.cli", *argv], cwd=files, capture_output=True, check=False
    )
    refused(proc, code, message)
    assert (files / "doc.py").read_bytes() == DOC


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["edit", "{doc}", "--instruction", "x", "--model", "no-such-model-xyz"],
            "names that work offline: smollm2-135m-instruct",
        ),
        (["tokens", "--tokenizer", "bogus-tok", "{doc}"], "names that work offline"),
        (
            ["edit", "{doc}", "--instruction", "x", "--model", "qwen2.5-0.5b-random"],
            "timing-only random model",
        ),
        (["edit", "{doc}", "--instruction", "x", "--device", "cuda"], "use --device cpu"),
    ],
)
def test_unavailable_models_and_devices_are_refused_before_loading(argv, message, doc):
    """Offline (HF_HUB_OFFLINE=1): no hub retries, one line with the names that do work; a
    timing-only random model and a GPU that is not there are refused before weights are
    built."""
    import torch

    if "cuda" in argv and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    refused(run_cad(*[a.format(doc=doc) for a in argv]), 1, message)


@pytest.mark.slow
@pytest.mark.hf_model
def test_a_file_beyond_the_context_is_refused_before_the_model_loads(tmp_path):
    big = tmp_path / "big.py"
    big.write_bytes(DOC * 1500)  # ~24k ids with the copies: the context is 8,192
    proc = run_cad("edit", big, "--instruction", "x")
    refused(proc, 1, "more than the context of smollm2-135m-instruct (8,192 ids)")
    assert re.search(r"big\.py is [\d,]+ ids", proc.stderr.decode())


@pytest.mark.slow
@pytest.mark.hf_model
def test_a_budget_closed_edit_exits_3_and_prints_only_with_allow_partial(doc, capsysbinary):
    """A run the budget closes is incomplete: nothing on stdout and exit status 3, unless
    --allow-partial (then the closed prefix, and the summary says it is partial)."""
    argv = [
        "edit",
        doc,
        "--instruction",
        INSTRUCTION,
        "--device",
        "cpu",
        "--threads",
        "1",
        "--max-new-tokens",
        "3",
    ]
    refused(run_cad(*argv), 3, "incomplete edit: the budget of --max-new-tokens 3")
    assert main([*map(str, argv), "--allow-partial"]) == 0
    out, err = capsysbinary.readouterr()
    assert out and "the output is partial" in err.decode() and "1 thread)" in err.decode()
    assert main([*map(str, argv), "--allow-partial", "--stream"]) == 0
    assert capsysbinary.readouterr().out == out


def test_a_closed_pipe_ends_quietly(tmp_path):
    doc = tmp_path / "doc.txt"
    doc.write_text("line\n" * 400_000)
    (tmp_path / "p").write_text('<program><copy lines="1-400000"/></program>')
    proc = subprocess.Popen(
        [sys.executable, "-m", "cadlib.cli", "resolve", tmp_path / "p", doc],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader has gone before the first write
    assert proc.wait() == cli.EXIT_PIPE and proc.stderr.read() == b""


# -- issue 36: --help, --version ----------------------------------------------------------------


@pytest.mark.parametrize("command", ["edit", "oracle", "resolve"])
def test_help_gives_the_line_numbers_and_exit_codes(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "`wc -l` says 110 has 111 lines here" in text
    for code in cli.EXIT_CODES:
        assert f" {code} " in text
    if command == "oracle":
        assert "Print the oracle program that turns DOC into GOLD" in text
    if command == "resolve":
        assert "clipped (clip it to DOC, warn on stderr)" in text


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith("cad (cadlib) ")


# -- the reuse copy mode (issue 32) -----------------------------------------------------------


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--copy-kv", "reuse", "--engine", "llama.cpp"], "cannot copy KV cells"),
        (["--copy-kv", "reuse", "--drafts"], "no drafts"),
        (["--copy-kv", "reuse", "--recompute", "some"], "unknown recompute policy"),
    ],
)
def test_reuse_options_are_checked_before_a_model_loads(extra, message, doc, capsys):
    assert main(["edit", str(doc), "--instruction", "x", *extra]) == 1
    one_line_error(capsys.readouterr().err, message)


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.slow
@pytest.mark.hf_model
def test_reuse_prints_the_same_resolution_and_says_what_it_reused(doc, program, capsysbinary):
    argv = ["edit", str(doc), "--instruction", INSTRUCTION, "--program", str(program), *SMOL]
    assert main([*argv, "--copy-kv", "reuse"]) == 0
    out, err = capsysbinary.readouterr()
    assert out == resolve(PROGRAM.decode(), DOC.decode()).encode()
    assert "prompt KV entries (approximate: recompute none)" in err.decode()
    rule = "seams=2,deviation=0.2,margin=1000"  # a gate that fires at every decision
    assert main([*argv, "--copy-kv", "reuse", "--recompute", rule]) == 0
    out, err = capsysbinary.readouterr()
    assert out == resolve(PROGRAM.decode(), DOC.decode()).encode()
    assert f"recompute {rule}); deciding ran" in err.decode()
    assert "exact fallbacks fed" in err.decode()
