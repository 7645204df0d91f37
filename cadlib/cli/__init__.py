"""The ``cad`` command: oracle programs and the resolver from a shell.

::

    cad edit DOC --instruction TEXT          edit DOC with Copy-as-Decode; print the result
    cad oracle DOC GOLD [--align A]          print the oracle program that turns DOC into GOLD
    cad resolve PROGRAM DOC [--mode clipped] print the text PROGRAM resolves to against DOC
    cad tokens FILE [--tokenizer NAME]       count tokens (Qwen2.5 BPE by default)
    cad check-models [NAME ...] [--profile P] can this machine load these models (and every
                                             model the chapters' profile P runs)?

A file argument ``-`` reads standard input (at most one argument may). Output goes to stdout
byte for byte (no newline is added). Errors are one line, ``cad: error: ...``, on stderr, never
a traceback, with nothing on stdout; the exit status says what happened (:data:`EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import textwrap
import warnings

from cadlib.alignment import AlignmentError
from cadlib.grammar import ProgramSyntaxError
from cadlib.models.tokenizer import get_tokenizer, qwen25_tokenizer
from cadlib.oracle import ALIGNMENTS, cheapest_program
from cadlib.resolver import MODES, ResolveError, resolve

from .common import (
    EXIT_CODES,
    EXIT_ERROR,
    EXIT_OK,
    EXIT_PIPE,
    EXIT_USAGE,
    CLIError,
    Parser,
    line_hint,
    loading,
    one_line,
    read_input,
    write_output,
)
from .edit import add_edit_command

__all__ = ["main", "profile_models", "EXIT_CODES"]

LINES_HELP = """\
Line numbers: programs number DOC's lines from 1, and a line is what lies between newlines
(DOC.split("\\n")), so a file that ends with a newline has an empty last line after it: a
file for which `wc -l` says 110 has 111 lines here, and copy lines="99-111" copies its last
12 lines and the final newline."""


def _exit_help() -> str:
    rows = [
        textwrap.fill(what, 88, initial_indent=f"  {code:>3}  ", subsequent_indent=" " * 7)
        for code, what in EXIT_CODES.items()
    ]
    return "Exit status:\n" + "\n".join(rows)


def _cmd_oracle(args) -> None:
    doc, gold = read_input(args.doc), read_input(args.gold)
    try:
        program, how = cheapest_program(doc, gold, qwen25_tokenizer().count, align=args.align)
    except AlignmentError as err:
        raise CLIError(f"{one_line(err)} (--align difflib needs no git)") from err
    write_output(str(program) + "\n")
    if how != args.align:
        what = "one <gen> of GOLD" if how == "gen" else "its program with short copies inlined"
        print(
            f"cad: note: the {args.align} alignment's program costs more tokens than GOLD "
            f"itself; printed {what} instead",
            file=sys.stderr,
        )


def _cmd_resolve(args) -> None:
    program, doc = read_input(args.program), read_input(args.doc)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            text = resolve(program, doc, mode=args.mode)
    except ProgramSyntaxError as err:
        raise CLIError(f"malformed program: {err}") from err
    except ResolveError as err:
        raise CLIError(f"{err}{line_hint(doc)} (use --mode clipped to clip)") from err
    for w in caught:
        print(f"cad: warning: {w.message}", file=sys.stderr)
    write_output(text)


def _cmd_tokens(args) -> None:
    text = read_input(args.file)
    with loading(args.tokenizer):
        tokenizer = get_tokenizer(args.tokenizer)
    print(tokenizer.count(text))


def profile_models(profile: str) -> dict[str, list[str]]:
    """``{chapter: [model names]}`` that the chapters' ``profile`` loads (the chapters without
    a model, or without that profile, are left out)."""
    # chapter modules import transformers (seconds): only this command needs them
    from cadlib.chapters import kernel
    from cadlib.chapters import llama_cpp as llama
    from cadlib.chapters.decoding import profiles as decoding
    from cadlib.chapters.fim_constraint import profiles as fim
    from cadlib.chapters.sft_pilot import profiles as sft

    out = {}
    for chapter, profiles in (
        ("kernel", kernel.profiles.PROFILES),
        ("decoding", decoding.PROFILES),
        ("llama_cpp", llama.profiles.PROFILES),
        ("sft_pilot", sft.PROFILES),
        ("fim", fim.PROFILES),
    ):
        P = profiles.get(profile)
        if P is not None:
            names = [*P["models"], P["check_model"]] if chapter == "kernel" else [P["model"]]
            out[chapter] = list(dict.fromkeys(names))
    return out


def _cmd_check_models(args) -> None:
    from cadlib.models import ModelUnavailableError, check_available  # torch: only this command

    names = list(args.names)
    if not names and not args.profile:
        raise CLIError(
            "name the models to check, or a chapters' profile with --profile "
            "(e.g. cad check-models --profile paper)",
            EXIT_USAGE,
        )
    if args.profile:
        names += [n for chapter in profile_models(args.profile).values() for n in chapter]
    missing = 0
    for name in dict.fromkeys(names):
        try:
            print(f"cad: {name}: {check_available(name)}")
        except ModelUnavailableError as err:
            print(f"cad: error: {err}", file=sys.stderr)
            missing += 1
    if missing:
        raise CLIError(f"{missing} model(s) cannot be loaded on this machine (see above)")


def _version() -> str:
    try:
        return importlib.metadata.version("cadlib")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


ORACLE_HELP = """\
Print the oracle program that turns DOC into GOLD (what a perfect model would write): the
lines the two share become copy ops, the rest gen ops; `cad resolve` of it against DOC gives
GOLD byte for byte. When the alignment's program costs more Qwen2.5 tokens than writing its
short copies out, or than one <gen> of the whole GOLD, the cheaper program is printed (and a
note on stderr says so).
"""

RESOLVE_HELP = """\
Print the text PROGRAM resolves to against DOC: copy ops take DOC's lines, gen ops their
text. --mode strict (default) refuses a copy range outside DOC; --mode clipped clips it to
DOC's lines, with a warning on stderr (what a deployment that must not fail would do).
"""


def _parser() -> argparse.ArgumentParser:
    epilog = f"{LINES_HELP}\n\n{_exit_help()}"
    raw = argparse.RawDescriptionHelpFormatter
    parser = Parser(
        prog="cad", description=__doc__.split("\n\n")[0], epilog=epilog, formatter_class=raw
    )
    parser.add_argument("--version", action="version", version=f"cad (cadlib) {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    add_edit_command(sub, epilog)

    p = sub.add_parser(
        "oracle",
        help="print the oracle program that turns DOC into GOLD",
        description=ORACLE_HELP,
        epilog=epilog,
        formatter_class=raw,
    )
    p.add_argument("doc", help="input document (- for stdin)")
    p.add_argument("gold", help="edited document (- for stdin)")
    p.add_argument(
        "--align",
        choices=ALIGNMENTS,
        default="histogram",
        help="line alignment: histogram (default: git's histogram diff, fast on "
        "repetitive files) or difflib (SequenceMatcher, autojunk=False: what the "
        "book's paper comparisons use; quadratic on repetitive files); both give "
        "lossless programs, not always the same ones",
    )
    p.set_defaults(run=_cmd_oracle)

    p = sub.add_parser(
        "resolve",
        help="print the text PROGRAM resolves to against DOC",
        description=RESOLVE_HELP,
        epilog=epilog,
        formatter_class=raw,
    )
    p.add_argument("program", help="program text file (- for stdin)")
    p.add_argument("doc", help="input document (- for stdin)")
    p.add_argument(
        "--mode",
        choices=MODES,
        default="strict",
        help="strict (default: a copy range outside DOC is an error) or clipped "
        "(clip it to DOC, warn on stderr)",
    )
    p.set_defaults(run=_cmd_resolve)

    p = sub.add_parser(
        "tokens", help="count the tokens of FILE", description="Print the number of tokens of FILE."
    )
    p.add_argument("file", help="text file (- for stdin)")
    p.add_argument(
        "--tokenizer",
        default="qwen2.5",
        help="qwen2.5 (default, offline) or a model name, folder or .gguf file",
    )
    p.set_defaults(run=_cmd_tokens)

    p = sub.add_parser(
        "check-models",
        help="check that this machine can load the models",
        description="Say where each model would load from, or why it cannot, "
        "before any work starts (exit status 1 if one cannot).",
    )
    p.add_argument("names", nargs="*", help="model names (hub names, folders, local names)")
    p.add_argument("--profile", help="add every model the chapters' PROFILE loads, e.g. paper")
    p.set_defaults(run=_cmd_check_models)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``cad`` (``argv``: the arguments, default ``sys.argv[1:]``); returns the exit
    status (:data:`EXIT_CODES`)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "gguf_type", None) and args.engine != "llama.cpp":
        parser.error("--gguf-type applies to --engine llama.cpp only")
    stdin_args = [v for k, v in vars(args).items() if k not in ("command", "run") and v == "-"]
    try:
        if len(stdin_args) > 1:
            raise CLIError("at most one argument may be - (stdin)")
        args.run(args)
    except CLIError as err:
        print(f"cad: error: {one_line(err)}", file=sys.stderr)
        return err.code
    except BrokenPipeError:  # e.g. `cad oracle A B | head`: the reader has gone
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's exit flush must not fail again
        return EXIT_PIPE
    except Exception as err:  # noqa: BLE001 - the CLI promises no tracebacks
        print(f"cad: error: {type(err).__name__}: {one_line(err)}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
