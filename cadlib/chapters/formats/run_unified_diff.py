"""Unified diffs, rendered by difflib, parsed by unidiff and applied by ``git apply``."""

from __future__ import annotations

import difflib
import os
import subprocess
import tempfile
from pathlib import Path

import unidiff

from .run_failures import ApplyError

__all__ = [
    "apply_unified_diff",
    "git_apply",
    "git_version",
    "render_unified_diff",
]

# ---------------------------------------------------------------------------------------------
# Unified diff, applied by git apply
# ---------------------------------------------------------------------------------------------

DOC_NAME = "doc"
NO_NEWLINE = "\\ No newline at end of file"


def _keepends(text: str) -> list[str]:
    """Lines split at ``\\n`` only (not ``splitlines``), each keeping its ``\\n``."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def render_unified_diff(doc: str, gold: str, context: int = 3) -> str:
    """``difflib.unified_diff`` of the documents' lines with ``context`` lines of context,
    headers ``--- a/doc`` / ``+++ b/doc``, and the ``\\ No newline at end of file`` marker
    after a last line without newline (which difflib leaves to the caller)."""
    diff = difflib.unified_diff(
        _keepends(doc), _keepends(gold), f"a/{DOC_NAME}", f"b/{DOC_NAME}", n=context
    )
    return "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}\n" for line in diff)


def _git_env(folder: str) -> dict:
    """An environment in which git reads no user or system config and finds no repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CEILING_DIRECTORIES=str(Path(folder).parent),
        LC_ALL="C",
    )
    return env


def _git_category(stderr: str) -> str:
    if "patch does not apply" in stderr or "patch failed" in stderr:
        return "hunk-rejected"
    if "corrupt patch" in stderr or "No valid patches" in stderr:
        return "malformed-patch"
    return "apply-error"


def git_version() -> str:
    """The version of the ``git`` that applies the diffs (for labelling results)."""
    out = subprocess.run(["git", "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip().removeprefix("git version ")


def git_apply(doc: str, patch: str, unidiff_zero: bool = False) -> str:
    """Apply ``patch`` (headers ``a/doc``, ``b/doc``) to ``doc`` with ``git apply`` in a
    scratch folder outside any repository; raise :class:`ApplyError` if git refuses."""
    with tempfile.TemporaryDirectory(prefix="cadlib-git-apply-") as folder:
        target, patch_file = Path(folder) / DOC_NAME, Path(folder) / "edit.patch"
        target.write_bytes(doc.encode("utf-8"))
        patch_file.write_bytes(patch.encode("utf-8"))
        cmd = ["git", "apply", "--whitespace=nowarn"]
        cmd += ["--unidiff-zero"] if unidiff_zero else []
        proc = subprocess.run(
            [*cmd, patch_file.name], cwd=folder, env=_git_env(folder), capture_output=True
        )
        if proc.returncode:
            stderr = proc.stderr.decode("utf-8", "replace").strip()
            raise ApplyError(_git_category(stderr), stderr)
        return target.read_bytes().decode("utf-8")


def _parse_patch(text: str):
    """Parse the patch back with :mod:`unidiff`; it must touch exactly the one document."""
    try:
        patch = unidiff.PatchSet(text)
    except unidiff.UnidiffParseError as err:
        raise ApplyError("malformed-patch", str(err)) from err
    if len(patch) != 1:
        raise ApplyError("malformed-patch", f"expected one file in the patch, got {len(patch)}")
    return patch[0]


def apply_unified_diff(doc: str, text: str, context: int = 3) -> str:
    """Parse ``text`` back (unidiff) and apply it with ``git apply``. An empty diff means
    "no change" (git would reject an empty patch). ``context=0`` needs ``--unidiff-zero``."""
    if not text:
        return doc
    _parse_patch(text)
    return git_apply(doc, text, unidiff_zero=context == 0)


def _hunk_count(text: str) -> int:
    return sum(line.startswith("@@ ") for line in text.split("\n"))
