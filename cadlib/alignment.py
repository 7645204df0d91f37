"""A fast line alignment for the ``cad`` command: git's histogram diff.

:func:`cadlib.oracle.matching_blocks` aligns lines with :class:`difflib.SequenceMatcher`
(``autojunk=False``), which every number the book compares with the paper uses. It is
quadratic on repetitive files: on a 20,000-line file where 70% of the lines repeat (braces,
blank lines) it takes seconds, where a histogram diff takes milliseconds. This module asks
``git diff --no-index --histogram`` (git's kept, maintained implementation; git is on every
machine that has the repository) for the changed hunks and turns the unchanged runs between
them into the same ``(doc_line, gold_line, size)`` blocks, so the program built from them is
as lossless as difflib's: every block is checked line by line before it is returned, and the
gold lines between blocks are generated verbatim. The two alignments may choose different
(equally valid) blocks, so programs, and their token counts, can differ.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

__all__ = ["ALIGNMENTS", "AlignmentError", "histogram_blocks"]

#: The line alignments :func:`cadlib.oracle.oracle_program` accepts.
ALIGNMENTS = ("difflib", "histogram")

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)

#: Options that make git's output independent of the user's and the system's git config.
_GIT = [
    "git",
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.safecrlf=false",
    "-c",
    "diff.noprefix=false",
    "diff",
    "--no-index",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--text",
    "--histogram",
    "-U0",
]


class AlignmentError(RuntimeError):
    """The fast alignment cannot run here (no git) or returned something unexpected."""


def _hunks(old: list[str], new: list[str]) -> list[tuple[int, int, int, int]]:
    """``(old_start, old_len, new_start, new_len)`` of git's changed hunks, 0-based starts."""
    git = shutil.which("git")
    if git is None:
        raise AlignmentError("the histogram alignment needs git on PATH (or use difflib)")
    with tempfile.TemporaryDirectory(prefix="cad-align-") as tmp:
        paths = []
        for name, lines in (("doc", old), ("gold", new)):
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:  # every line ends with \n: no "no newline" markers
                f.write("".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass"))
            paths.append(path)
        env = {
            **os.environ,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
        }
        proc = subprocess.run([git, *_GIT[1:], *paths], capture_output=True, env=env, cwd=tmp)
    if proc.returncode not in (0, 1):  # 1 = the files differ
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise AlignmentError(f"git diff failed ({err[-1] if err else proc.returncode})")
    hunks = []
    for m in _HUNK.finditer(proc.stdout):
        a, b = int(m[1]), 1 if m[2] is None else int(m[2])
        c, d = int(m[3]), 1 if m[4] is None else int(m[4])
        # a hunk of length 0 sits *after* line a (1-based): its 0-based start is a
        hunks.append((a - 1 if b else a, b, c - 1 if d else c, d))
    return hunks


def histogram_blocks(old: list[str], new: list[str]) -> list[tuple[int, int, int]]:
    """``(old_line, new_line, size)`` triples (0-based, size > 0, increasing in both) of
    the lines git's histogram diff leaves unchanged; each block is verified equal."""
    blocks, i, j = [], 0, 0
    for a, b, c, d in [*_hunks(old, new), (len(old), 0, len(new), 0)]:
        if a - i != c - j or a < i:
            raise AlignmentError(f"git diff hunks do not tile the files (at line {i + 1})")
        if a > i:
            blocks.append((i, j, a - i))
        i, j = a + b, c + d
    for a, b, size in blocks:
        if old[a : a + size] != new[b : b + size]:
            raise AlignmentError(f"git diff aligned unequal lines (doc line {a + 1})")
    return blocks
