"""The ``cad`` command: oracle programs and the resolver from a shell.

::

    cad edit DOC --instruction TEXT          edit DOC with Copy-as-Decode; print the result
    cad oracle DOC GOLD [--align A]          print the oracle program that turns DOC into GOLD
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
import contextlib
import functools
import io
import sys
import time
import warnings

from .alignment import AlignmentError
from .grammar import ProgramSyntaxError, parse_program
from .oracle import ALIGNMENTS, oracle_program
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


def _one_line(err: BaseException) -> str:
    """An exception's message on one line (the CLI prints one-line errors)."""
    return " ".join(str(err).split()) or type(err).__name__


def _cmd_oracle(args) -> None:
    doc, gold = _read(args.doc), _read(args.gold)
    try:
        program = oracle_program(doc, gold, align=args.align)
    except AlignmentError as err:
        raise CLIError(f"{_one_line(err)} (--align difflib needs no git)") from err
    _write(str(program) + "\n")


# --------------------------------------------------------------------------------------------
# cad edit
# --------------------------------------------------------------------------------------------

#: The engines ``cad edit --engine`` accepts.
ENGINES = ("transformers", "llama.cpp")

#: ``cad edit --gguf-type``: :data:`cadlib.engines.GGUF_TYPES` (not imported here, as below; a
#: test checks the two agree).
GGUF_TYPES = ("f16", "f32")

#: ``cad edit``'s default model: :data:`cadlib.models.SMOLLM2` (not imported here: cadlib.models
#: imports torch, which the other commands do not need; a test checks the two agree).
SMOLLM2 = "smollm2-135m-instruct"

EDIT_HELP = """\
Edit DOC with Copy-as-Decode: the model writes an edit program (copy line ranges of DOC,
generate new text) under the grammar's mask, every copy spliced into the KV cache in one
forward; the program's resolution is printed on stdout (op by op with --stream) and a
one-line summary on stderr. DOC is never written: redirect stdout to keep the result.

With --program FILE the decoder is driven along that program (forced mode: the same
forwards, masks and splices as a free run, the ops given); the output is exactly what
`cad resolve FILE DOC` prints, and the summary says how often the model agreed with it.

Which model: the default, the packaged SmolLM2-135M-Instruct (untrained for this task),
follows the program format but rarely makes the requested edit: expect copies of DOC and
unrelated generated lines. Free runs become useful with a fine-tuned checkpoint (chapter 7
writes one under checkpoints/, e.g. --model checkpoints/sft-smollm2-135m-instruct-py-s0)
or a larger instruction-tuned model (a Hugging Face hub name, cached on this machine, or a
local folder written by save_pretrained).
"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


@functools.cache
def _load_engine(kind: str, model: str, device: str = "auto", threads: int | None = None,
                 gguf_type: str | None = None):  # fmt: skip
    """``(model or engine, tokenizer)`` for ``cad edit``, loaded once per process.

    ``transformers``: :func:`cadlib.models.load_model` and :func:`~cadlib.models.load_tokenizer`
    (the packaged SmolLM2 GGUF, a hub name or a local folder). ``llama.cpp``: the engine of
    :mod:`cadlib.engines` (imported here only: it needs the llama.cpp binding), on the GGUF
    file as shipped or converted to ``gguf_type`` weights. Loading
    progress bars and library logs are kept off stderr, which holds the summary line.
    """
    from .models import load_model, load_tokenizer, quiet_transformers  # torch: only this command

    quiet_transformers()
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # GGUF de-quantisation progress bar
            if kind == "transformers":
                runner = load_model(model, device=device)
            else:
                try:  # the binding itself may be imported only when the engine loads
                    from .engines import load_engine

                    runner = load_engine(model, kind=kind, device=device, threads=threads,
                                         gguf_type=gguf_type)  # fmt: skip
                except ImportError as err:
                    raise CLIError(
                        f"the llama.cpp engine is not available here ({_one_line(err)}); "
                        "use --engine transformers"
                    ) from err
            tokenizer = load_tokenizer(model)
    except CLIError:
        raise
    except (OSError, ValueError, RuntimeError) as err:
        message = _one_line(err)
        raise CLIError(message if message.startswith("cannot load model") else
                       f"cannot load model {model!r}: {message}") from err  # fmt: skip
    return runner, tokenizer


def _edit_summary(result, seconds: float, args) -> str:
    """The one-line summary of a ``cad edit`` run (for stderr)."""
    kinds = [op["kind"] for op in result.ops[1:] if op["kind"] in ("copy", "gen")]
    copied, generated = result.n_spliced, result.transcript.count("gen")
    rate = (copied + generated) / seconds if seconds > 0 else float("inf")
    line = (
        f"cad: edit: {len(kinds)} ops ({kinds.count('copy')} copy, {kinds.count('gen')} gen), "
        f"{copied} copied / {generated} generated tokens, {result.trace.n_forwards} forwards, "
        f"{seconds:.2f} s, {rate:.1f} tokens/s ({args.model}, {args.engine}"
        f"{' ' + args.gguf_type.upper() if args.gguf_type else ''})"
    )
    if result.agreement is not None:
        line += f"; model agreed with the program on {result.agreement:.0%} of decisions"
    if result.budget_closed:
        line += f"; closed at --max-new-tokens {args.max_new_tokens}"
    return line


def _stream_and_result(decoder, doc: str, instruction: str, program):
    """Run :meth:`CopyDecoder.stream`, writing each op's text as it resolves, and return the
    run's :class:`~cadlib.decoder.DecodeResult` (the generator's return value, captured as
    ``stream`` passes through the decoder's step generator)."""
    steps, box = decoder._steps, {}

    def capturing(*a, **k):
        box["result"] = yield from steps(*a, **k)
        return box["result"]

    decoder._steps = capturing  # this instance only; stream() itself is unchanged
    try:
        for text in decoder.stream(doc, instruction, program=program):
            _write(text)
    finally:
        del decoder._steps
    return box["result"]


def _cmd_edit(args) -> None:
    doc = _read(args.doc)
    program = expected = None
    if args.program is not None:  # check the program before loading a model
        try:
            program = parse_program(_read(args.program))
            expected = resolve(program, doc, mode="strict")
        except ProgramSyntaxError as err:
            raise CLIError(f"malformed program: {err}") from err
        except ResolveError as err:
            raise CLIError(f"{err} (cad resolve --mode clipped clips it)") from err
    runner, tokenizer = _load_engine(args.engine, args.model, args.device, args.threads,
                                     args.gguf_type)  # fmt: skip
    from .decoder import CopyDecoder  # torch: only this command
    from .drafts import composition_drafts
    from .models import set_threads  # torch
    from .strategies import DRAFTED_SETTING  # torch

    set_threads(args.threads)

    drafts = composition_drafts(DRAFTED_SETTING) if args.drafts else ()
    decoder = CopyDecoder(runner, tokenizer, max_new_tokens=args.max_new_tokens, drafts=drafts)
    start = time.perf_counter()
    if args.stream:
        result = _stream_and_result(decoder, doc, args.instruction, program)
    else:
        result = decoder.decode(doc, args.instruction, program=program)
    seconds = time.perf_counter() - start
    if result.text is None:  # the grammar's mask rules this out
        raise CLIError(f"the decoder produced no valid program ({result.error})")
    if expected is not None and result.text != expected:
        raise CLIError("forced decoding did not reproduce the program's resolution")
    if not args.stream:
        _write(result.text)
    if sys.stdout.isatty() and not result.text.endswith("\n"):
        print(file=sys.stderr)  # the summary starts on a line of its own in a terminal
    print(_edit_summary(result, seconds, args), file=sys.stderr)


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
    from . import llama_cpp_chapter as llama
    from .fim import experiments as fim

    out = {}
    for chapter, profiles in (("kernel", kernel.PROFILES), ("decoding", decoding.PROFILES),
                              ("llama_cpp", llama.PROFILES), ("sft_pilot", sft.PROFILES),
                              ("fim", fim.PROFILES)):  # fmt: skip
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

    p = sub.add_parser("edit", help="edit DOC with Copy-as-Decode and print the result",
                       description=EDIT_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("doc", help="the document to edit (- for stdin); never written")
    p.add_argument("--instruction", required=True, help="what to change, in words")
    p.add_argument("--model", default=SMOLLM2,
                   help=f"model name, hub name or local folder (default: {SMOLLM2}, untrained "
                   "for this task: see above)")  # fmt: skip
    p.add_argument("--engine", choices=ENGINES, default="transformers",
                   help="what runs the model (default: transformers)")  # fmt: skip
    p.add_argument("--gguf-type", choices=GGUF_TYPES,
                   help="llama.cpp: run the GGUF file converted to these weights (once, cached; "
                   "on a CPU they make copy splices several times faster and one-id steps "
                   "slower than the packaged Q4_1 file: chapter 6b)")  # fmt: skip
    p.add_argument("--program", metavar="FILE",
                   help="drive the decoder along this program (forced mode)")  # fmt: skip
    p.add_argument("--max-new-tokens", type=_positive_int, default=256,
                   help="budget of model decisions; then the program is closed validly "
                   "(default: 256)")  # fmt: skip
    p.add_argument("--stream", action="store_true", help="print each op's text as it resolves")
    p.add_argument("--drafts", action="store_true",
                   help="verify guessed ids (the document's lines inside bodies, guessed op "
                   "headers) in one forward: the same greedy output in fewer forwards")  # fmt: skip
    p.add_argument("--device", default="auto", help="auto (CUDA when present, default), cpu, cuda")
    p.add_argument("--threads", type=_positive_int,
                   help="torch CPU threads (default: torch's; 1 on a busy machine)")  # fmt: skip
    p.set_defaults(run=_cmd_edit)

    p = sub.add_parser("oracle", help="print the oracle program that turns DOC into GOLD")
    p.add_argument("doc", help="input document (- for stdin)")
    p.add_argument("gold", help="edited document (- for stdin)")
    p.add_argument("--align", choices=ALIGNMENTS, default="histogram",
                   help="line alignment: histogram (default: git's histogram diff, fast on "
                   "repetitive files) or difflib (SequenceMatcher, autojunk=False: what the "
                   "book's paper comparisons use; quadratic on repetitive files); both give "
                   "lossless programs, not always the same ones")  # fmt: skip
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
    if getattr(args, "gguf_type", None) and args.engine != "llama.cpp":
        parser.error("--gguf-type applies to --engine llama.cpp only")
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
