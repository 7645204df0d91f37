"""Functional correctness: run a solution against its HumanEvalPack tests in a subprocess.

The paper scores edits by exact match only (§5, Table 6). An edit that differs from the
canonical solution can still be a correct fix, and one that matches it byte for byte is
correct by construction, so this module adds the measure HumanEvalFix itself uses: does the
fixed function pass the benchmark's unit tests?

How the program is assembled follows the ``bigcode-evaluation-harness`` HumanEvalPack task
(``humanevalpack.py``): the function header and docstring (``meta["prompt"]``), then the
solution body, then ``"\\n" + meta["test"]``. In HumanEvalPack the ``test`` field already ends
with the call ``check(<entry_point>)`` (Python) or ``test<EntryPoint>()`` (JavaScript); we assert
that instead of appending a second call. The harness also prepends a fixed block of imports
to Python programs (its ``IMPORT_HELPER["python"]``); ``imports=True`` does the same. It is
off by default: every canonical solution passes without it (tested), and the prompt already
carries the imports the task declares.

Every program runs in a fresh interpreter (``python -I``: isolated mode, no user site, no
``PYTHON*`` variables; JavaScript via ``node``) in an empty temporary folder, in its own
process group (killed as a whole on timeout), with an address-space limit. A Python program
passes when it exits with status 0; a JavaScript one when it exits with status 0 and writes
nothing to stderr (HumanEvalPack's JS tests use ``console.assert``, which only prints
``Assertion failed`` to stderr, exactly the harness's criterion).

This is not a security sandbox: run only benchmark code and model outputs you are willing to
execute as your own user.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from .cases import EditCase

__all__ = [
    "ExecResult",
    "PYTHON_IMPORT_HELPER",
    "humaneval_program",
    "run_program",
    "run_humaneval_tests",
    "pass_rate",
]

#: The imports the bigcode harness prepends to every Python HumanEvalPack program.
PYTHON_IMPORT_HELPER = (
    "import math", "import re", "import sys", "import copy", "import datetime",
    "import itertools", "import collections", "import heapq", "import functools",
    "import hashlib", "import numpy", "import numpy as np", "import string",
    "from typing import *", "from collections import *",
)  # fmt: skip

_LANGUAGES = ("python", "js")
_MEMORY_LIMIT = 2 * 1024**3  # bytes of address space per test process (node needs ~1 GB)


@dataclass(frozen=True)
class ExecResult:
    """What one run of a test program did; ``passed`` is the verdict."""

    passed: bool
    returncode: int | None  # None when killed on timeout
    timed_out: bool
    stdout: str
    stderr: str

    @property
    def detail(self) -> str:
        """A one-line reason: ``"passed"``, ``"timeout"`` or the last line of the error."""
        if self.passed:
            return "passed"
        if self.timed_out:
            return "timeout"
        lines = [
            line
            for line in self.stderr.strip().splitlines()
            if line.strip() and not line.startswith("Node.js v")  # node's version footer
        ]
        last = lines[-1].strip() if lines else f"exit status {self.returncode}"
        return f"failed: {last[:200]}"


def _language(case: EditCase) -> str:
    language = case.meta.get("language")
    if language not in _LANGUAGES:
        raise ValueError(
            f"case {case.id}: cannot run tests for language {language!r}; "
            f"supported: {', '.join(_LANGUAGES)} (HumanEvalPack cases from load_corpus)"
        )
    for key in ("prompt", "test", "entry_point"):
        if key not in case.meta:
            raise ValueError(f"case {case.id}: meta has no {key!r}; expected a HumanEvalPack case")
    return language


def humaneval_program(case: EditCase, solution_body: str, imports: bool = False) -> str:
    """The test program for ``solution_body``: ``prompt + body + "\\n" + test``.

    Parameters
    ----------
    case : EditCase
        A HumanEvalFix case (``heval-fix-py`` or ``heval-fix-js``); its ``meta`` holds the
        HumanEvalPack fields ``prompt``, ``test`` and ``entry_point``.
    solution_body : str
        The function body (what ``doc`` and ``gold`` hold: ``buggy_solution`` /
        ``canonical_solution``), e.g. the resolved output of an edit program.
    imports : bool
        Prepend the bigcode harness's Python import block (:data:`PYTHON_IMPORT_HELPER`).
    """
    language = _language(case)
    test = case.meta["test"]
    if language == "python":
        call = f"check({case.meta['entry_point']})"
        calls = call in test
    else:  # JS names it test<EntryPoint>(), not always capitalised (testmakePalindrome())
        call = "test...()"
        calls = re.search(r"^test\w*\(\)\s*$", test, re.MULTILINE) is not None
    if not calls:
        raise ValueError(
            f"case {case.id}: test does not call {call}; HumanEvalPack format changed?"
        )
    program = case.meta["prompt"] + solution_body + "\n" + test
    if imports and language == "python":
        program = "\n".join(PYTHON_IMPORT_HELPER) + "\n" + program
    return program


def _limit_memory() -> None:  # runs in the child before exec
    try:
        import resource  # here: a Unix-only module, absent on Windows (ImportError below)

        resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_LIMIT, _MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass


def _command(language: str, path: str) -> list[str]:
    if language == "python":
        return [sys.executable, "-I", path]
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise RuntimeError("running JavaScript tests needs `node` on PATH")
    return [node, path]


def run_program(source: str, language: str = "python", timeout: float = 10.0) -> ExecResult:
    """Run ``source`` in a fresh interpreter in an empty temporary folder.

    Parameters
    ----------
    source : str
        The whole program.
    language : {"python", "js"}
        ``python -I`` (this interpreter, isolated mode) or ``node``.
    timeout : float
        Seconds of wall time before the process group is killed (counted as a failure).
    """
    if language not in _LANGUAGES:
        raise ValueError(f"unknown language {language!r}; valid: {', '.join(_LANGUAGES)}")
    if not timeout > 0:
        raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
    with tempfile.TemporaryDirectory(prefix="cadlib-exec-") as folder:
        path = os.path.join(folder, "program.py" if language == "python" else "program.js")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
               "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}  # fmt: skip
        proc = subprocess.Popen(
            _command(language, path),
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_limit_memory if language == "python" else None,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = proc.communicate()
            timed_out = True
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    returncode = None if timed_out else proc.returncode
    passed = returncode == 0 and (language == "python" or not stderr.strip())
    return ExecResult(passed, returncode, timed_out, stdout, stderr)


def run_humaneval_tests(
    case: EditCase, solution_body: str, timeout: float = 10.0, imports: bool = False
) -> tuple[bool, str]:
    """Run ``solution_body`` against the case's HumanEvalPack tests.

    Returns
    -------
    (passed, detail) : tuple[bool, str]
        ``detail`` is ``"passed"``, ``"timeout"`` or ``"failed: <last stderr line>"``.

    Examples
    --------
    >>> case = load_corpus("heval-fix-py")[0]                      # doctest: +SKIP
    >>> run_humaneval_tests(case, case.gold)                       # doctest: +SKIP
    (True, 'passed')
    """
    program = humaneval_program(case, solution_body, imports=imports)
    result = run_program(program, _language(case), timeout=timeout)
    return result.passed, result.detail


def pass_rate(verdicts) -> tuple[int, int]:
    """``(passed, total)`` of an iterable of booleans or ``(passed, detail)`` pairs."""
    flags = [v[0] if isinstance(v, tuple) else bool(v) for v in verdicts]
    return sum(flags), len(flags)
