"""The ``cad`` command: oracle programs and the resolver from a shell.

::

    cad oracle DOC GOLD                      print the oracle program that turns DOC into GOLD
    cad resolve PROGRAM DOC [--mode clipped] print the text PROGRAM resolves to against DOC
    cad tokens FILE [--tokenizer NAME]       count tokens (Qwen2.5 BPE by default)
    cad check-models [NAME ...] [--profile P] can this machine load these models (and every
                                             model the chapters' profile P runs)?

A file argument ``-`` reads standard input (at most one argument may). Output goes to stdout
byte for byte (no newline is added). Bad input exits with status 1 (2 for bad usage) and a
one-line ``cad: error: ...`` message on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from .grammar import ProgramSyntaxError
from .oracle import oracle_program
from .resolver import MODES, ResolveError, resolve
from .tokenizers import get_tokenizer

__all__ = ["main", "profile_models"]


class CLIError(Exception):
    """A one-line error for the user."""


def _read(path: str) -> str:
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


def _write(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()


def _cmd_oracle(args) -> None:
    _write(str(oracle_program(_read(args.doc), _read(args.gold))) + "\n")


def _cmd_resolve(args) -> None:
    program, doc = _read(args.program), _read(args.doc)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            text = resolve(program, doc, mode=args.mode)
    except ProgramSyntaxError as err:
        raise CLIError(f"malformed program: {err}") from err
    except ResolveError as err:
        raise CLIError(f"{err} (use --mode clipped to clip)") from err
    for w in caught:
        print(f"cad: warning: {w.message}", file=sys.stderr)
    _write(text)


def _cmd_tokens(args) -> None:
    print(get_tokenizer(args.tokenizer).count(_read(args.file)))


def profile_models(profile: str) -> dict[str, list[str]]:
    """``{chapter: [model names]}`` that the chapters' ``profile`` loads (the chapters without
    a model, or without that profile, are left out)."""
    # chapter modules import transformers (seconds): only this command needs them
    from . import decoding, kernel, sft
    from .fim import experiments as fim

    out = {}
    for chapter, profiles in (("kernel", kernel.PROFILES), ("decoding", decoding.PROFILES),
                              ("sft_pilot", sft.PROFILES), ("fim", fim.PROFILES)):  # fmt: skip
        P = profiles.get(profile)
        if P is not None:
            names = [*P["models"], P["check_model"]] if chapter == "kernel" else [P["model"]]
            out[chapter] = list(dict.fromkeys(names))
    return out


def _cmd_check_models(args) -> None:
    from .models import ModelUnavailableError, check_available  # torch: only this command

    names = list(args.names)
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cad", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("oracle", help="print the oracle program that turns DOC into GOLD")
    p.add_argument("doc", help="input document (- for stdin)")
    p.add_argument("gold", help="edited document (- for stdin)")
    p.set_defaults(run=_cmd_oracle)

    p = sub.add_parser("resolve", help="print the text PROGRAM resolves to against DOC")
    p.add_argument("program", help="program text file (- for stdin)")
    p.add_argument("doc", help="input document (- for stdin)")
    p.add_argument("--mode", choices=MODES, default="strict", help="strict (default) or clipped")
    p.set_defaults(run=_cmd_resolve)

    p = sub.add_parser("tokens", help="count the tokens of FILE")
    p.add_argument("file", help="text file (- for stdin)")
    p.add_argument("--tokenizer", default="qwen2.5", help="qwen2.5 (default) or a model name")
    p.set_defaults(run=_cmd_tokens)

    p = sub.add_parser("check-models", help="check that this machine can load the models")
    p.add_argument("names", nargs="*", help="model names (hub names, folders, local names)")
    p.add_argument("--profile", help="add every model the chapters' PROFILE loads, e.g. paper")
    p.set_defaults(run=_cmd_check_models)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    stdin_args = [v for k, v in vars(args).items() if k not in ("command", "run") and v == "-"]
    try:
        if len(stdin_args) > 1:
            raise CLIError("at most one argument may be - (stdin)")
        args.run(args)
    except CLIError as err:
        print(f"cad: error: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - the CLI promises no tracebacks
        print(f"cad: error: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
