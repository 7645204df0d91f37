"""``cad edit``: edit a document with Copy-as-Decode from a shell, every check that can fail
done before the weights load, the output streamed as it is decoded."""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import sys
import time

from cadlib import models  # torch-free: its loading half is imported when first named
from cadlib.decoding.cpu_threads import default_threads, passive_openmp
from cadlib.decoding.kv_reuse import COPY_KV_MODES, check_copy_kv
from cadlib.grammar import ProgramSyntaxError, parse_program
from cadlib.models import ENGINE_KINDS, GGUF_TYPES
from cadlib.resolver import ResolveError, resolve

from .common import (
    EXIT_PARTIAL,
    CLIError,
    line_hint,
    loading,
    one_line,
    read_input,
    write_output,
)

__all__ = ["EDIT_HELP", "add_edit_command"]

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
    if kind == "llama.cpp":
        if device not in ("auto", "cpu"):
            raise CLIError(f"the llama.cpp engine runs on the CPU here, got --device {device}")
        if model not in (models.SMOLLM2, *models.STAND_INS) and models.gguf_in(model) is None:
            raise CLIError(
                f"the llama.cpp engine loads a .gguf file (or a folder holding one), got {model!r}"
            )
        return
    try:
        models.resolve_device(device)
    except ValueError as err:  # no CUDA here: say so before any weights load
        raise CLIError(one_line(err)) from err
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
    models.quiet_transformers()  # torch: only this command
    return models.load_tokenizer(tokenizer or model)


@functools.cache
def _load_runner(
    kind: str,
    model: str,
    device: str = "auto",
    threads: int | None = None,
    gguf_type: str | None = None,
    n_ctx: int | None = None,
):
    """The model (``transformers``) or engine (``llama.cpp``, on ``n_ctx`` positions) of
    ``cad edit``, loaded once per process; loading progress bars are kept off stderr."""
    models.set_threads(threads)  # torch: only this command
    with contextlib.redirect_stderr(io.StringIO()):  # GGUF de-quantisation progress bar
        if kind == "transformers":
            return models.load_model(model, device=device)
        try:  # the binding itself may be imported only when the engine loads
            from cadlib.decoding.engines import load_engine

            extra = {"n_ctx": n_ctx} if n_ctx else {}
            return load_engine(
                model, kind=kind, device=device, threads=threads, gguf_type=gguf_type, **extra
            )
        except ImportError as err:
            raise CLIError(
                f"the llama.cpp engine is not available here ({one_line(err)}); "
                "use --engine transformers"
            ) from err


def _context_need(
    tokenizer, doc: str, instruction: str, budget: int, program_text=None, expected=None
) -> tuple[int, int]:
    """``(ids of DOC, ids a run needs)``: the prompt (which holds DOC) plus the output's
    ids, which a free run bounds by DOC's ids (its copies) plus the budget, and a forced run
    by its program's and its resolution's ids."""
    from cadlib.prompts import edit_prompt_ids  # torch-free, but only this command needs it

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
    with loading(args.model):
        context = models.model_context(args.model)
    if context is None:
        return None
    doc_ids, need = _context_need(
        tokenizer, doc, args.instruction, args.max_new_tokens, program_text, expected
    )
    if need > context:
        what = (
            "its program and output"
            if program_text is not None
            else (f"the copies of its lines and --max-new-tokens {args.max_new_tokens}")
        )
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
        info = result.trace.info
        line += (
            f"; copies reused {info.get('reused_ids', 0)} prompt KV entries "
            f"(approximate: recompute {args.recompute})"
        )
        if "check_ids" in info:
            line += f"; deciding ran {info['check_ids']} ids to layer {info['check_layers']}"
        if "fallbacks" in info:
            line += f"; {info['fallbacks']} exact fallbacks fed {info['fallback_ids']} ids again"
    if result.agreement is not None:
        line += f"; model agreed with the program on {result.agreement:.0%} of decisions"
    if result.budget_closed:
        line += f"; closed at --max-new-tokens {args.max_new_tokens}: the output is partial"
    return line


def _decode(decoder, doc: str, args, program):
    """Run the decoder; with ``--stream``, write the output as it is decoded, generated text
    included (:meth:`cadlib.decoding.decoder.CopyDecoder.stream`). Returns the run's
    :class:`~cadlib.decoding.decoder.DecodeResult`."""
    if not args.stream:
        return decoder.decode(doc, args.instruction, program=program)
    stream = decoder.stream(doc, args.instruction, program=program, as_written=True)
    for text in stream:
        write_output(text)
    return stream.result


def _check_edit_input(args, doc: str):
    """The checks that need no model: ``(program, its program text, its resolution)``."""
    if not args.instruction.strip():
        raise CLIError(
            "--instruction is empty: say what to change, e.g. --instruction "
            '"Rename total to result"'
        )
    if not doc:
        raise CLIError(
            f"{args.doc} is empty: cad edit changes an existing text by "
            "copying its lines and generating the rest; there are none to copy"
        )
    if args.program is None:
        return None, None, None
    text = read_input(args.program)
    try:
        program = parse_program(text)
        return program, text, resolve(program, doc, mode="strict")
    except ProgramSyntaxError as err:
        raise CLIError(f"malformed program: {err}") from err
    except ResolveError as err:
        raise CLIError(f"{err}{line_hint(doc)} (cad resolve --mode clipped clips it)") from err


def _edit_engine(args, doc: str, program_text, expected):
    """``(model or engine, tokenizer, threads label)`` for ``cad edit``, every check that can
    fail done before the weights load."""
    if "torch" not in sys.modules:  # effective only before the OpenMP runtime loads
        passive_openmp()
    threads = args.threads or default_threads()
    how = f"{threads} thread{'s' if threads > 1 else ''}{'' if args.threads else ' (idle cores)'}"
    with loading(args.model):
        _check_model(args.engine, args.model, args.device)
        tokenizer = _load_tokenizer(args.model, args.tokenizer)
    context = _check_context(args, tokenizer, doc, program_text, expected)
    n_ctx = min(context, 32768) if context and args.engine == "llama.cpp" else None
    with loading(args.model):
        runner = _load_runner(args.engine, args.model, args.device, threads, args.gguf_type, n_ctx)
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
    doc = read_input(args.doc)
    program, program_text, expected = _check_edit_input(args, doc)
    try:  # before the weights load
        check_copy_kv(args.copy_kv, args.engine, args.drafts, recompute=args.recompute)
    except ValueError as err:
        raise CLIError(one_line(err)) from err
    runner, tokenizer, how = _edit_engine(args, doc, program_text, expected)
    from cadlib.decoding.drafts import composition_drafts
    from cadlib.decoding.kv_select import copy_decoder  # torch: only this command
    from cadlib.decoding.methods import DRAFTED_SETTING  # torch

    drafts = composition_drafts(DRAFTED_SETTING) if args.drafts else ()
    decoder = copy_decoder(
        runner,
        tokenizer,
        max_new_tokens=args.max_new_tokens,
        drafts=drafts,
        copy_kv=args.copy_kv,
        recompute=args.recompute,
    )
    start = time.perf_counter()
    try:
        result = _decode(decoder, doc, args, program)
    except ValueError as err:  # e.g. llama.cpp: the cache outgrew n_ctx
        raise CLIError(f"the run stopped: {one_line(err)}") from err
    seconds = time.perf_counter() - start
    _check_result(args, result, expected)
    if not args.stream:
        write_output(result.text)
    if sys.stdout.isatty() and not result.text.endswith("\n"):
        print(file=sys.stderr)  # the summary starts on a line of its own in a terminal
    print(_edit_summary(result, seconds, args, how), file=sys.stderr)


def add_edit_command(sub, epilog: str) -> None:
    """Add ``cad edit`` and its options to the subcommands ``sub`` of the ``cad`` parser."""
    raw = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser(
        "edit",
        help="edit DOC with Copy-as-Decode and print the result",
        description=EDIT_HELP,
        epilog=epilog,
        formatter_class=raw,
    )
    p.add_argument("doc", help="the document to edit (- for stdin); never written")
    p.add_argument("--instruction", required=True, help="what to change, in words")
    p.add_argument(
        "--model",
        default=models.SMOLLM2,
        help=f"model name, hub name, local folder or .gguf file (default: {models.SMOLLM2}, "
        "untrained for this task: see above)",
    )
    p.add_argument(
        "--tokenizer",
        metavar="NAME",
        help="the tokenizer's name or folder (default: the model's own; a .gguf "
        "file's embedded one)",
    )
    p.add_argument(
        "--engine",
        choices=ENGINE_KINDS,
        default="transformers",
        help="what runs the model (default: transformers)",
    )
    p.add_argument(
        "--gguf-type",
        choices=sorted(GGUF_TYPES),
        help="llama.cpp: run the GGUF file converted to these weights (once, cached; "
        "on a CPU they make copy splices several times faster and one-id steps "
        "slower than the packaged Q4_1 file: chapter 6b)",
    )
    p.add_argument(
        "--program", metavar="FILE", help="drive the decoder along this program (forced mode)"
    )
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
    p.add_argument(
        "--stream",
        action="store_true",
        help="print the output as it is decoded (copies when their op completes, "
        "generated text as it is written)",
    )
    p.add_argument(
        "--drafts",
        action="store_true",
        help="verify guessed ids (the document's lines inside bodies, guessed op "
        "headers) in one forward: the same greedy output in fewer forwards",
    )
    p.add_argument(
        "--copy-kv",
        choices=COPY_KV_MODES,
        default="prefill",
        help="prefill (default): copied lines fed in one forward, exact; reuse "
        "(transformers only, approximate, beyond the paper): copied ids take the "
        "prompt's KV entries, only unmatched ids are computed (chapter 6c)",
    )
    p.add_argument(
        "--recompute",
        default="none",
        metavar="POLICY",
        help="--copy-kv reuse: matched ids computed anyway: none (default), "
        "first=K (each line's first K ids), last=K, all; or by where the cache is wrong: "
        "seams=K (a copy's first K ids after a gen or a line jump), deviation=R[@L] (the "
        "share R whose keys at layer L deviate most); margin=X: where a decision's top two "
        "logits are closer than X, recompute exactly and decide again; fields join with "
        "commas (chapter 6c)",
    )
    p.add_argument("--device", default="auto", help="auto (CUDA when present, default), cpu, cuda")
    p.add_argument(
        "--threads",
        type=_positive_int,
        help="CPU threads of torch or llama.cpp (default: the idle cores now, at least 1)",
    )
    p.set_defaults(run=_cmd_edit)
