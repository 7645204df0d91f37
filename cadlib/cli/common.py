"""What every ``cad`` command shares: exit statuses, the one-line error, exact input and
output."""

from __future__ import annotations

import argparse
import contextlib
import sys

from cadlib.resolver import doc_lines

__all__ = [
    "EXIT_CODES",
    "CLIError",
    "Parser",
    "read_input",
    "write_output",
    "one_line",
    "line_hint",
    "loading",
]

#: Exit statuses of ``cad`` (``--help`` lists them).
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_PARTIAL, EXIT_PIPE = 0, 1, 2, 3, 141
EXIT_CODES = {
    EXIT_OK: "done",
    EXIT_ERROR: "bad input or a failed run (one line on stderr, nothing on stdout)",
    EXIT_USAGE: "bad usage: an unknown option or a missing argument",
    EXIT_PARTIAL: "cad edit: the --max-new-tokens budget closed the program before the model "
    "did; nothing printed (with --stream: the text printed is incomplete); --allow-partial "
    "prints the closed prefix and exits 0",
    EXIT_PIPE: "stdout was closed early (e.g. by head); nothing more is written",
}


class CLIError(Exception):
    """A one-line error for the user (``code``: the exit status)."""

    def __init__(self, message: str, code: int = EXIT_ERROR):
        super().__init__(message)
        self.code = code


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors on one line (``cad edit: error: ... (see cad edit --help)``)."""

    def error(self, message):
        self.exit(
            EXIT_USAGE,
            f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n",
        )


def read_input(path: str) -> str:
    """Read a file (or stdin for ``-``) exactly: no newline translation."""
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8")
        with open(path, "rb") as f:
            return f.read().decode("utf-8")
    except OSError as err:
        raise CLIError(f"cannot read {path}: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise CLIError(f"{path} is not UTF-8 text ({err.reason} at byte {err.start})") from err


def write_output(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()


def one_line(err: BaseException) -> str:
    """An exception's message on one line (the CLI prints one-line errors)."""
    return " ".join(str(err).split()) or type(err).__name__


def line_hint(doc: str) -> str:
    """What a range error should add when DOC ends with a newline (issue 36.7)."""
    if not doc.endswith("\n"):
        return ""
    n = len(doc_lines(doc))
    return f"; line {n} is the empty line after the final newline (wc -l says {n - 1})"


@contextlib.contextmanager
def loading(model: str):
    """Turn a load failure into a one-line :class:`CLIError` naming the model."""
    try:
        yield
    except CLIError:
        raise
    except (OSError, ValueError, RuntimeError, KeyError) as err:
        message = one_line(err)
        raise CLIError(
            message
            if model in message or message.startswith("cannot load")
            else f"cannot load model {model!r}: {message}"
        ) from err
