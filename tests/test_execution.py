"""The unit-test harness: canonical HumanEvalPack solutions pass, buggy ones fail; model-written
programs run under the guards (no file outside their folder can be removed)."""

import json
import os
import shutil

import pytest

from cadlib.corpora import EditCase, load_corpus
from cadlib.execution import (
    humaneval_program,
    pass_rate,
    run_humaneval_tests,
    run_program,
    sandbox_report,
    sandbox_summary,
)

# A hand-made case in HumanEvalPack's Python layout (runs without the data set).
TOY = EditCase(
    id="Python/toy",
    doc="    return a - b\n",
    gold="    return a + b\n",
    instruction="Fix bugs in add.",
    meta={
        "language": "python",
        "entry_point": "add",
        "prompt": 'def add(a, b):\n    """Sum of a and b."""\n',
        "test": "\n\ndef check(add):\n    assert add(2, 3) == 5\n    assert add(0, 0) == 0\n\n"
        "check(add)",
    },
)


def test_program_is_prompt_body_newline_test():
    program = humaneval_program(TOY, TOY.gold)
    assert program == TOY.meta["prompt"] + TOY.gold + "\n" + TOY.meta["test"]
    assert program.count("\ncheck(add)") == 1  # the test already calls check; not added twice


def test_import_helper_is_optional():
    assert humaneval_program(TOY, TOY.gold, imports=True).startswith("import math\n")


def test_toy_canonical_passes_and_buggy_fails():
    assert run_humaneval_tests(TOY, TOY.gold) == (True, "passed")
    passed, detail = run_humaneval_tests(TOY, TOY.doc)
    assert not passed and detail.startswith("failed: AssertionError")


def test_syntax_error_fails_with_reason():
    passed, detail = run_humaneval_tests(TOY, "    return (a +\n")
    assert not passed and "SyntaxError" in detail


def test_timeout_kills_the_program():
    passed, detail = run_humaneval_tests(TOY, "    while True:\n        pass\n", timeout=1.0)
    assert (passed, detail) == (False, "timeout")


def test_runs_isolated_in_a_fresh_interpreter():
    # -I: no user site and no PYTHON* variables; the working folder is an empty temp dir
    result = run_program("import os, sys\nprint(sys.flags.isolated, os.listdir('.'))")
    assert result.passed and result.stdout.strip() == "1 ['program.py']"


def test_bad_input_fails_loudly():
    with pytest.raises(ValueError, match="language"):
        run_humaneval_tests(EditCase("x", "a", "b", "fix", {"language": "go"}), "b")
    with pytest.raises(ValueError, match="timeout"):
        run_program("pass", timeout=0)
    broken = EditCase("Python/x", "a", "b", "fix", {**TOY.meta, "test": "assert True"})
    with pytest.raises(ValueError, match="check\\(add\\)"):
        humaneval_program(broken, "b")


def test_pass_rate_counts_verdicts():
    assert pass_rate([(True, "passed"), (False, "timeout"), True]) == (2, 3)


@pytest.mark.slow
def test_canonical_solutions_pass_and_buggy_ones_fail(humanevalpack_dir):
    """Sanity check of the harness on 20 HEvalFix-Py cases (all 164 pass/fail the same way:
    164/164 canonical pass, 0/164 buggy pass, checked when the harness was written)."""
    cases = load_corpus("heval-fix-py", local_dir=humanevalpack_dir)[::8]
    canonical = [run_humaneval_tests(c, c.gold) for c in cases]
    buggy = [run_humaneval_tests(c, c.doc, timeout=3.0) for c in cases]
    assert pass_rate(canonical) == (len(cases), len(cases))
    assert pass_rate(buggy)[0] <= 1  # "mostly fail": HumanEvalFix bugs break a test


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_canonical_passes_and_buggy_fails(humanevalpack_dir):
    cases = load_corpus("heval-fix-js", local_dir=humanevalpack_dir)[:5]
    assert all(run_humaneval_tests(c, c.gold)[0] for c in cases)
    assert not any(run_humaneval_tests(c, c.doc, timeout=3.0)[0] for c in cases)


# --- the guards (issue 20): model-written programs cannot remove files outside their folder ---


@pytest.fixture
def victim(tmp_path):
    """A file outside the program's temporary folder, which programs below try to destroy."""
    path = tmp_path / "keep-me.txt"
    path.write_text("precious\n")
    return path


@pytest.mark.parametrize(
    "attack",
    [
        "import os\nos.remove({path!r})",
        "import os\nos.unlink({path!r})",
        "import shutil\nshutil.rmtree({folder!r})",
        "import subprocess\nsubprocess.run(['rm', '-f', {path!r}])",
        "import os\nos.system('rm -f ' + {path!r})",
    ],
)
def test_python_program_cannot_remove_a_file_outside_its_folder(victim, attack):
    result = run_program(attack.format(path=str(victim), folder=str(victim.parent)))
    assert not result.passed and "TypeError" in result.stderr  # the guarded function is None
    assert victim.read_text() == "precious\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_python_program_started_as_root_runs_as_nobody(victim):
    # the guard does not cover open(..., "w"); the dropped privileges do
    result = run_program(f"import os\nprint(os.getuid())\nopen({str(victim)!r}, 'w').write('x')")
    assert not result.passed and result.stdout.strip() == "65534"
    assert "PermissionError" in result.stderr and victim.read_text() == "precious\n"
    assert sandbox_report()["drop_privileges"] is True


def test_python_program_may_still_write_its_own_folder():
    result = run_program("open('out.txt', 'w').write('ok')\nprint(open('out.txt').read())")
    assert result.passed and result.stdout.strip() == "ok"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize(
    "attack",
    [
        "require('fs').unlinkSync({path});",
        "require('fs').rmSync({folder}, {{recursive: true, force: true}});",
        "require('fs').writeFileSync({path}, 'x');",
        "require('child_process').execSync('rm -f ' + {path});",
    ],
)
def test_javascript_program_cannot_touch_a_file_outside_its_folder(victim, attack):
    quote = lambda p: json.dumps(str(p))  # noqa: E731 - a JS string literal
    result = run_program(attack.format(path=quote(victim), folder=quote(victim.parent)), "js")
    assert not result.passed and "ERR_ACCESS_DENIED" in result.stderr
    assert victim.read_text() == "precious\n"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_under_the_permission_model_still_runs_and_asserts():
    ok = run_program("console.assert(1 + 1 === 2); console.log('fine');", "js")
    assert ok.passed and ok.stdout.strip() == "fine" and ok.stderr == ""  # no warning on stderr
    bad = run_program("console.assert(1 + 1 === 3);", "js")
    assert not bad.passed and "Assertion failed" in bad.stderr


def test_sandbox_report_names_every_guard():
    report = sandbox_report()
    assert set(report) == {
        "python_guard",
        "node_permission",
        "drop_privileges",
        "python",
        "network_cut",
    }
    if report["network_cut"]:
        result = run_program("import socket\nprint([n for _, n in socket.if_nameindex()])")
        assert result.stdout.strip() == "['lo']"


def test_sandbox_summary_says_each_guard_in_words():
    report = {
        "python_guard": "HumanEval reliability_guard",
        "node_permission": None,
        "drop_privileges": False,
        "python": "/x",
        "network_cut": True,
    }
    assert sandbox_summary(report) == (
        "HumanEval reliability_guard, no node, as the current user, network cut"
    )
    report |= {"node_permission": "--permission", "drop_privileges": True, "network_cut": False}
    assert sandbox_summary(report) == (
        "HumanEval reliability_guard, node --permission, as nobody, network not cut"
    )
