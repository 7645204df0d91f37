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
import codecs
import contextlib
import functools
import importlib.metadata
import io
import os
import sys
import textwrap
import time
import warnings

from .alignment import AlignmentError
from .decoding.cpu_threads import default_threads, passive_openmp
from .decoding.kv_reuse import COPY_KV_MODES, check_copy_kv
from .escape import decode_gen_body
from .grammar import GEN_OPEN, ProgramSyntaxError, StreamingParser, parse_program
from .oracle import ALIGNMENTS, cheapest_program
from .resolver import MODES, ResolveError, doc_lines, op_text, resolve
from .tokenizers import get_tokenizer, qwen25_tokenizer

__all__ = ["main", "profile_models", "EXIT_CODES"]

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

LINES_HELP = """\
Line numbers: programs number DOC's lines from 1, and a line is what lies between newlines
(DOC.split("\\n")), so a file that ends with a newline has an empty last line after it: a
file for which `wc -l` says 110 has 111 lines here, and copy lines="99-111" copies its last
12 lines and the final newline."""


def _exit_help() -> str:
    rows = [textwrap.fill(what, 88, initial_indent=f"  {code:>3}  ", subsequent_indent=" " * 7)
            for code, what in EXIT_CODES.items()]  # fmt: skip
    return "Exit status:\n" + "\n".join(rows)


class CLIError(Exception):
    """A one-line error for the user (``code``: the exit status)."""

    def __init__(self, message: str, code: int = EXIT_ERROR):
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors on one line (``cad edit: error: ... (see cad edit --help)``)."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())} "
                              f"(see {self.prog} --help)\n")  # fmt: skip


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
        program, how = cheapest_program(doc, gold, qwen25_tokenizer().count, align=args.align)
    except AlignmentError as err:
        raise CLIError(f"{_one_line(err)} (--align difflib needs no git)") from err
    _write(str(program) + "\n")
    if how != args.align:
        what = "one <gen> of GOLD" if how == "gen" else "its program with short copies inlined"
        print(f"cad: note: the {args.align} alignment's program costs more tokens than GOLD "
              f"itself; printed {what} instead", file=sys.stderr)  # fmt: skip


def _line_hint(doc: str) -> str:
    """What a range error should add when DOC ends with a newline (issue 36.7)."""
    if not doc.endswith("\n"):
        return ""
    n = len(doc_lines(doc))
    return f"; line {n} is the empty line after the final newline (wc -l says {n - 1})"


# --------------------------------------------------------------------------------------------
# cad edit
# --------------------------------------------------------------------------------------------

#: The engines ``cad edit --engine`` accepts.
ENGINES = ("transformers", "llama.cpp")

#: ``cad edit --gguf-type``: :data:`cadlib.decoding.engines.GGUF_TYPES` (not imported here, as
#: below; a test checks the two agree).
GGUF_TYPES = ("f16", "f32")

#: ``cad edit``'s default model: :data:`cadlib.models.SMOLLM2` (not imported here: cadlib.models
#: imports torch, which the other commands do not need; a test checks the two agree).
SMOLLM2 = "smollm2-135m-instruct"

EDIT_HELP = """\
Edit DOC with Copy-as-Decode: the model writes an edit program (copy line ranges of DOC,
generate new text) under the grammar's mask, every copy spliced into the KV cache in one
forward; the program's resolution is printed on stdout (as it is decoded with --stream) and a
one-line summary on stderr. DOC is never written: redirect stdout to keep the result.

With --program FILE the decoder is driven along that program (forced mode: the same
forwards, masks and splices as a free run, the ops given); the output is exactly what
`cad resolve FILE DOC` prints, and the summary says how often the model agreed with it.

Which model: the default, the packaged SmolLM2-135M-Instruct (untrained for this task),
follows the program format but rarely makes the requested edit: expect copies of DOC and
unrelated generated lines. Free runs become useful with a fine-tuned checkpoint (chapter 7
writes one under checkpoints/, e.g. --model checkpoints/sft-smollm2-135m-instruct-py-s0)
or a larger instruction-tuned model (a Hugging Face hub name, cached on this machine, a
local folder written by save_pretrained, or a .gguf file whose tokenizer it carries).

Limits, checked before the model loads: DOC must not be empty (there is nothing to copy) and
the prompt (which holds DOC), the copies of DOC's lines and the budget must fit the model's
context. A run that the budget closes prints nothing unless --allow-partial.

Threads: by default as many as there are idle cores now (at least 1), with OpenMP's passive
wait policy (OMP_WAIT_POLICY=PASSIVE unless set), so that a busy core does not stall the
others; the summary names the count.
"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _check_model(kind: str, model: str, device: str) -> None:
    """Fail in one line, before anything heavy loads, for a device this torch lacks, a name
    that is not available here (offline: at once, with the names that work offline) or a
    timing-only random model (its edits would be noise)."""
    from cadlib import models  # torch: only this command

    if kind == "llama.cpp":
        if device not in ("auto", "cpu"):
            raise CLIError(f"the llama.cpp engine runs on the CPU here, got --device {device}")
        if model not in (models.SMOLLM2, *models.STAND_INS) and models.gguf_in(model) is None:
            raise CLIError(f"the llama.cpp engine loads a .gguf file (or a folder holding "
                           f"one), got {model!r}")  # fmt: skip
        return
    try:
        models.resolve_device(device)
    except ValueError as err:  # no CUDA here: say so before any weights load
        raise CLIError(_one_line(err)) from err
    if models.is_random_init(model) and model not in models.TOKENIZED_NAMES:
        raise CLIError(
            f"{model} is a timing-only random model (random weights: its edits would be "
            f"noise); names that work offline: {models.offline_names()}"
        )
    models.check_available(model)  # ModelUnavailableError (one line)


@functools.cache
def _load_tokenizer(model: str, tokenizer: str | None = None):
    """The tokenizer ``cad edit`` decodes with: ``--tokenizer``, else the model's own (a GGUF
    file's embedded one included)."""
    from .models import load_tokenizer, quiet_transformers  # torch: only this command

    quiet_transformers()
    return load_tokenizer(tokenizer or model)


@functools.cache
def _load_runner(kind: str, model: str, device: str = "auto", threads: int | None = None,
                 gguf_type: str | None = None, n_ctx: int | None = None):  # fmt: skip
    """The model (``transformers``) or engine (``llama.cpp``, on ``n_ctx`` positions) of
    ``cad edit``, loaded once per process; loading progress bars are kept off stderr."""
    from .models import load_model, set_threads  # torch: only this command

    set_threads(threads)
    with contextlib.redirect_stderr(io.StringIO()):  # GGUF de-quantisation progress bar
        if kind == "transformers":
            return load_model(model, device=device)
        try:  # the binding itself may be imported only when the engine loads
            from .decoding.engines import load_engine

            extra = {"n_ctx": n_ctx} if n_ctx else {}
            return load_engine(model, kind=kind, device=device, threads=threads,
                               gguf_type=gguf_type, **extra)  # fmt: skip
        except ImportError as err:
            raise CLIError(
                f"the llama.cpp engine is not available here ({_one_line(err)}); "
                "use --engine transformers"
            ) from err


def _load_engine(kind: str, model: str, device: str = "auto", threads: int | None = None,
                 gguf_type: str | None = None, tokenizer: str | None = None):  # fmt: skip
    """``(model or engine, tokenizer)`` for ``cad edit``: the checks of :func:`_check_model`,
    then the tokenizer, then the weights; failures as one-line :class:`CLIError`."""
    with _loading(model):
        _check_model(kind, model, device)
        tok = _load_tokenizer(model, tokenizer)
        return _load_runner(kind, model, device, threads, gguf_type), tok


@contextlib.contextmanager
def _loading(model: str):
    """Turn a load failure into a one-line :class:`CLIError` naming the model."""
    try:
        yield
    except CLIError:
        raise
    except (OSError, ValueError, RuntimeError, KeyError) as err:
        message = _one_line(err)
        raise CLIError(message if model in message or message.startswith("cannot load")
                       else f"cannot load model {model!r}: {message}") from err  # fmt: skip


def _context_need(tokenizer, doc: str, instruction: str, budget: int, program_text=None,
                  expected=None) -> tuple[int, int]:  # fmt: skip
    """``(ids of DOC, ids a run needs)``: the prompt (which holds DOC) plus the output's
    ids, which a free run bounds by DOC's ids (its copies) plus the budget, and a forced run
    by its program's and its resolution's ids."""
    from .prompts import edit_prompt_ids  # torch-free, but only this command needs it

    prompt = len(edit_prompt_ids(tokenizer, instruction, doc))
    doc_ids = prompt - len(edit_prompt_ids(tokenizer, instruction, ""))
    if program_text is not None:
        out = len(tokenizer.encode(program_text, add_special_tokens=False))
        out += len(tokenizer.encode(expected, add_special_tokens=False))
    else:
        out = doc_ids + budget
    return doc_ids, prompt + out


def _check_context(args, tokenizer, doc: str, program_text, expected) -> int | None:
    """Refuse, in one line, a run that cannot fit the model's context; returns the context
    (``None`` when the model's config does not say)."""
    from .models import model_context  # torch: only this command

    with _loading(args.model):
        context = model_context(args.model)
    if context is None:
        return None
    doc_ids, need = _context_need(tokenizer, doc, args.instruction, args.max_new_tokens,
                                  program_text, expected)  # fmt: skip
    if need > context:
        what = "its program and output" if program_text is not None else (
            f"the copies of its lines and --max-new-tokens {args.max_new_tokens}")  # fmt: skip
        raise CLIError(
            f"{args.doc} is {doc_ids:,} ids; the prompt (which holds it), {what} need about "
            f"{need:,} ids, more than the context of {args.model} ({context:,} ids): edit a "
            "part of the file, or use a model with a longer context"
        )
    return context


def _edit_summary(result, seconds: float, args, threads: str) -> str:
    """The one-line summary of a ``cad edit`` run (for stderr)."""
    kinds = [op["kind"] for op in result.ops[1:] if op["kind"] in ("copy", "gen")]
    copied, generated = result.n_spliced, result.transcript.count("gen")
    rate = (copied + generated) / seconds if seconds > 0 else float("inf")
    line = (
        f"cad: edit: {len(kinds)} ops ({kinds.count('copy')} copy, {kinds.count('gen')} gen), "
        f"{copied} copied / {generated} generated tokens, {result.trace.n_forwards} forwards, "
        f"{seconds:.2f} s, {rate:.1f} tokens/s ({args.model}, {args.engine}"
        f"{' ' + args.gguf_type.upper() if args.gguf_type else ''}, {threads})"
    )
    if args.copy_kv == "reuse":
        line += (f"; copies reused {result.trace.info.get('reused_ids', 0)} prompt KV entries "
                 f"(approximate: recompute {args.recompute})")  # fmt: skip
    if result.agreement is not None:
        line += f"; model agreed with the program on {result.agreement:.0%} of decisions"
    if result.budget_closed:
        line += f"; closed at --max-new-tokens {args.max_new_tokens}: the output is partial"
    return line


class _TextStream:
    """The resolved text of a decode as it grows: each op's text once it completes, and a
    ``<gen>`` body's text while it is generated (less a tail that could still turn out to
    be an escape entity or the body's closing ``\\n</gen>``), so a long body shows as written.
    Joined, the pieces are the run's resolution."""

    HOLD = 12  # > the longest escape entity (10 characters) and "\\n</gen>"

    def __init__(self, table, doc: str):
        self.tb, self.lines = table.token_bytes, doc_lines(doc)
        self.parser, self.utf8 = StreamingParser(), codecs.getincrementaldecoder("utf-8")("replace")
        self.fed, self.ops, self.body = 0, 0, ""  # ids read, ops written, open body written

    def feed(self, run) -> str:
        """The text that ``run``'s new ids add to the output."""
        new = [self.tb[i] for i, k in zip(run.ids[self.fed :], run.kinds[self.fed :],
                                          strict=True) if k != "splice"]  # fmt: skip
        self.fed = len(run.ids)
        out = []
        for op in self.parser.feed(self.utf8.decode(b"".join(new))):
            text = op_text(op, self.lines)
            out.append(self._start() + text[len(self.body) :])
            self.ops, self.body = self.ops + 1, ""
        partial = self._open_body()
        if len(partial) > len(self.body):
            out.append((self._start() if not self.body else "") + partial[len(self.body) :])
            self.body = partial
        return "".join(out)

    def _start(self) -> str:
        """The newline that joins the next op to the previous ones (none before the first,
        nor inside a body already begun)."""
        return "\n" if self.ops and not self.body else ""

    def _open_body(self) -> str:
        """The safe, decoded prefix of the ``<gen>`` body being generated ("" if none)."""
        rest = self.parser.text[self.parser.pos :].lstrip()
        if not self.parser.started or not rest.startswith(GEN_OPEN):
            return ""
        raw = rest[len(GEN_OPEN) :]
        cut = max(0, len(raw) - self.HOLD)
        while "\u27e8" in raw[max(0, cut - 10) : cut]:  # no entity may straddle the cut
            cut = raw.index("\u27e8", max(0, cut - 10))
        safe = raw[:cut]
        return decode_gen_body(safe[1:] if safe.startswith("\n") else safe)


def _stream_and_result(decoder, doc: str, instruction: str, program):
    """Run the decoder, writing the output as it is decoded (:class:`_TextStream`), and
    return the run's :class:`~cadlib.decoding.decoder.DecodeResult`."""
    stream = _TextStream(decoder.table, doc)
    steps = decoder._steps(doc, decoder._prompt(doc, instruction, None), program)
    while True:
        try:
            run = next(steps)
        except StopIteration as stop:
            return stop.value
        text = stream.feed(run)
        if text:
            _write(text)


def _check_edit_input(args, doc: str):
    """The checks that need no model: ``(program, its program text, its resolution)``."""
    if not args.instruction.strip():
        raise CLIError('--instruction is empty: say what to change, e.g. --instruction '
                       '"Rename total to result"')  # fmt: skip
    if not doc:
        raise CLIError(
            f"{args.doc} is empty: cad edit changes an existing text by "
            "copying its lines and generating the rest; there are none to copy"
        )
    if args.program is None:
        return None, None, None
    text = _read(args.program)
    try:
        program = parse_program(text)
        return program, text, resolve(program, doc, mode="strict")
    except ProgramSyntaxError as err:
        raise CLIError(f"malformed program: {err}") from err
    except ResolveError as err:
        raise CLIError(f"{err}{_line_hint(doc)} (cad resolve --mode clipped clips it)") from err


def _edit_engine(args, doc: str, program_text, expected):
    """``(model or engine, tokenizer, threads label)`` for ``cad edit``, every check that can
    fail done before the weights load."""
    if "torch" not in sys.modules:  # effective only before the OpenMP runtime loads
        passive_openmp()
    threads = args.threads or default_threads()
    how = f"{threads} thread{'s' if threads > 1 else ''}{'' if args.threads else ' (idle cores)'}"
    with _loading(args.model):
        _check_model(args.engine, args.model, args.device)
        tokenizer = _load_tokenizer(args.model, args.tokenizer)
    context = _check_context(args, tokenizer, doc, program_text, expected)
    n_ctx = min(context, 32768) if context and args.engine == "llama.cpp" else None
    with _loading(args.model):
        runner = _load_runner(args.engine, args.model, args.device, threads, args.gguf_type,
                              n_ctx)  # fmt: skip
    return runner, tokenizer, how


def _check_result(args, result, expected) -> None:
    """Refuse a run without a valid program, a forced run that left its program, and (unless
    --allow-partial) a run that the budget closed (exit status 3)."""
    if result.text is None:  # the grammar's mask rules this out
        raise CLIError(f"the decoder produced no valid program ({result.error})")
    if expected is not None and result.text != expected:
        raise CLIError("forced decoding did not reproduce the program's resolution")
    if result.budget_closed and not args.allow_partial:
        printed = "the text printed above is incomplete" if args.stream else "nothing printed"
        raise CLIError(
            f"incomplete edit: the budget of --max-new-tokens {args.max_new_tokens} model "
            f"decisions ran out before the model closed its program; {printed} (raise "
            "--max-new-tokens, or --allow-partial prints the closed prefix)",
            EXIT_PARTIAL,
        )


def _cmd_edit(args) -> None:
    doc = _read(args.doc)
    program, program_text, expected = _check_edit_input(args, doc)
    try:  # before the weights load
        check_copy_kv(args.copy_kv, args.engine, args.drafts, recompute=args.recompute)
    except ValueError as err:
        raise CLIError(_one_line(err)) from err
    runner, tokenizer, how = _edit_engine(args, doc, program_text, expected)
    from .decoding.decoder import CopyDecoder  # torch: only this command
    from .decoding.drafts import composition_drafts
    from .decoding.methods import DRAFTED_SETTING  # torch

    drafts = composition_drafts(DRAFTED_SETTING) if args.drafts else ()
    decoder = CopyDecoder(runner, tokenizer, max_new_tokens=args.max_new_tokens, drafts=drafts,
                          copy_kv=args.copy_kv, recompute=args.recompute)  # fmt: skip
    start = time.perf_counter()
    try:
        if args.stream:
            result = _stream_and_result(decoder, doc, args.instruction, program)
        else:
            result = decoder.decode(doc, args.instruction, program=program)
    except ValueError as err:  # e.g. llama.cpp: the cache outgrew n_ctx
        raise CLIError(f"the run stopped: {_one_line(err)}") from err
    seconds = time.perf_counter() - start
    _check_result(args, result, expected)
    if not args.stream:
        _write(result.text)
    if sys.stdout.isatty() and not result.text.endswith("\n"):
        print(file=sys.stderr)  # the summary starts on a line of its own in a terminal
    print(_edit_summary(result, seconds, args, how), file=sys.stderr)


def _cmd_resolve(args) -> None:
    program, doc = _read(args.program), _read(args.doc)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            text = resolve(program, doc, mode=args.mode)
    except ProgramSyntaxError as err:
        raise CLIError(f"malformed program: {err}") from err
    except ResolveError as err:
        raise CLIError(f"{err}{_line_hint(doc)} (use --mode clipped to clip)") from err
    for w in caught:
        print(f"cad: warning: {w.message}", file=sys.stderr)
    _write(text)


def _cmd_tokens(args) -> None:
    text = _read(args.file)
    with _loading(args.tokenizer):
        tokenizer = get_tokenizer(args.tokenizer)
    print(tokenizer.count(text))


def profile_models(profile: str) -> dict[str, list[str]]:
    """``{chapter: [model names]}`` that the chapters' ``profile`` loads (the chapters without
    a model, or without that profile, are left out)."""
    # chapter modules import transformers (seconds): only this command needs them
    from .chapters import kernel
    from .chapters import llama_cpp as llama
    from .chapters import sft_pilot as sft
    from .chapters.decoding import measure as decoding
    from .chapters.fim_constraint import experiments as fim

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
    if not names and not args.profile:
        raise CLIError("name the models to check, or a chapters' profile with --profile "
                       "(e.g. cad check-models --profile paper)", EXIT_USAGE)  # fmt: skip
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
    parser = _Parser(prog="cad", description=__doc__.split("\n\n")[0], epilog=epilog,
                     formatter_class=raw)  # fmt: skip
    parser.add_argument("--version", action="version", version=f"cad (cadlib) {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("edit", help="edit DOC with Copy-as-Decode and print the result",
                       description=EDIT_HELP, epilog=epilog, formatter_class=raw)  # fmt: skip
    p.add_argument("doc", help="the document to edit (- for stdin); never written")
    p.add_argument("--instruction", required=True, help="what to change, in words")
    p.add_argument("--model", default=SMOLLM2,
                   help=f"model name, hub name, local folder or .gguf file (default: {SMOLLM2}, "
                   "untrained for this task: see above)")  # fmt: skip
    p.add_argument("--tokenizer", metavar="NAME",
                   help="the tokenizer's name or folder (default: the model's own; a .gguf "
                   "file's embedded one)")  # fmt: skip
    p.add_argument("--engine", choices=ENGINES, default="transformers",
                   help="what runs the model (default: transformers)")  # fmt: skip
    p.add_argument("--gguf-type", choices=GGUF_TYPES,
                   help="llama.cpp: run the GGUF file converted to these weights (once, cached; "
                   "on a CPU they make copy splices several times faster and one-id steps "
                   "slower than the packaged Q4_1 file: chapter 6b)")  # fmt: skip
    p.add_argument("--program", metavar="FILE",
                   help="drive the decoder along this program (forced mode)")  # fmt: skip
    p.add_argument(
        "--max-new-tokens",
        type=_positive_int,
        default=256,
        help="budget of model decisions (default: 256); a run that exhausts it "
        "is closed validly but incomplete: exit status 3 (see --allow-partial)",
    )
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="print the output of a run that the budget closed (exit status 0)",
    )
    p.add_argument("--stream", action="store_true",
                   help="print the output as it is decoded (copies when their op completes, "
                   "generated text as it is written)")  # fmt: skip
    p.add_argument("--drafts", action="store_true",
                   help="verify guessed ids (the document's lines inside bodies, guessed op "
                   "headers) in one forward: the same greedy output in fewer forwards")  # fmt: skip
    p.add_argument("--copy-kv", choices=COPY_KV_MODES, default="prefill",
                   help="prefill (default): copied lines fed in one forward, exact; reuse "
                   "(transformers only, approximate, beyond the paper): copied ids take the "
                   "prompt's KV entries, only unmatched ids are computed (chapter 6c)")  # fmt: skip
    p.add_argument("--recompute", default="none", metavar="POLICY",
                   help="--copy-kv reuse: matched ids computed anyway: none (default), "
                   "first=K (each line's first K ids), last=K, first=K,last=M, all")  # fmt: skip
    p.add_argument("--device", default="auto", help="auto (CUDA when present, default), cpu, cuda")
    p.add_argument("--threads", type=_positive_int,
                   help="CPU threads of torch or llama.cpp (default: the idle cores now, at "
                   "least 1)")  # fmt: skip
    p.set_defaults(run=_cmd_edit)

    p = sub.add_parser("oracle", help="print the oracle program that turns DOC into GOLD",
                       description=ORACLE_HELP, epilog=epilog, formatter_class=raw)  # fmt: skip
    p.add_argument("doc", help="input document (- for stdin)")
    p.add_argument("gold", help="edited document (- for stdin)")
    p.add_argument("--align", choices=ALIGNMENTS, default="histogram",
                   help="line alignment: histogram (default: git's histogram diff, fast on "
                   "repetitive files) or difflib (SequenceMatcher, autojunk=False: what the "
                   "book's paper comparisons use; quadratic on repetitive files); both give "
                   "lossless programs, not always the same ones")  # fmt: skip
    p.set_defaults(run=_cmd_oracle)

    p = sub.add_parser("resolve", help="print the text PROGRAM resolves to against DOC",
                       description=RESOLVE_HELP, epilog=epilog, formatter_class=raw)  # fmt: skip
    p.add_argument("program", help="program text file (- for stdin)")
    p.add_argument("doc", help="input document (- for stdin)")
    p.add_argument("--mode", choices=MODES, default="strict",
                   help="strict (default: a copy range outside DOC is an error) or clipped "
                   "(clip it to DOC, warn on stderr)")  # fmt: skip
    p.set_defaults(run=_cmd_resolve)

    p = sub.add_parser("tokens", help="count the tokens of FILE",
                       description="Print the number of tokens of FILE.")  # fmt: skip
    p.add_argument("file", help="text file (- for stdin)")
    p.add_argument(
        "--tokenizer",
        default="qwen2.5",
        help="qwen2.5 (default, offline) or a model name, folder or .gguf file",
    )
    p.set_defaults(run=_cmd_tokens)

    p = sub.add_parser("check-models", help="check that this machine can load the models",
                       description="Say where each model would load from, or why it cannot, "
                       "before any work starts (exit status 1 if one cannot).")  # fmt: skip
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
        print(f"cad: error: {_one_line(err)}", file=sys.stderr)
        return err.code
    except BrokenPipeError:  # e.g. `cad oracle A B | head`: the reader has gone
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's exit flush must not fail again
        return EXIT_PIPE
    except Exception as err:  # noqa: BLE001 - the CLI promises no tracebacks
        print(f"cad: error: {type(err).__name__}: {_one_line(err)}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
