"""cadlib: the helper library of the executable Copy-as-Decode paper.

Import the modules you need, e.g. ``from cadlib import grammar, resolver, oracle``; the most
used names are re-exported here.

The floor plan (the design page, ``book/design.md``, has the full map). At the top: the edit
language (``grammar``, ``escape``, ``resolver``, ``oracle``, ``alignment``: no model) and what
every wing shares (``cases``, ``corpora``, ``probeedit``, ``endpoint_noise``, ``execution``,
``vocab``, ``prompts``, ``models``, ``metrics``, ``paper``, ``paths``). Then the
wings, each a package:

``decoding``  how a model writes an edit program: token table, FSM, decoder with the copy
              splice, drafts, masks, KV cache, engines, the baselines as methods, KV reuse
``costs``     what a decode costs without running it: spans, s(N), forward accounting, the
              cost model
``fim``       the companion paper's quotient-grammar recognizer and its masks
``chapters``  one module or package per notebook, named after it (``chapters.decoding`` is
              notebook 06_decoding): profiles, runs, tables, figures, generated text
``record``    what every chapter runs and writes with: profiles and parameters, the chapter
              session, results files, provenance, record and replay, the plot style
``book``      the pages that read them: the re-run comparison, verdicts, the summary,
              coverage and reproduction pages
``cli``       the shell commands: ``cad`` and the GPU check (``make gpu-check``)
"""

import warnings as _warnings

from tqdm import TqdmWarning as _TqdmWarning

from .cases import Corpus, EditCase
from .corpora import load_corpus
from .escape import decode_gen_body, encode_gen_body
from .grammar import Copy, Gen, Program, ProgramSyntaxError, StreamingParser, parse_program
from .models.tokenizer import count_tokens, get_tokenizer, qwen25_tokenizer
from .oracle import oracle_program
from .resolver import RangeClippedWarning, ResolveError, resolve

# Progress bars print as plain text (CONTRIBUTING); where ipywidgets is absent, `tqdm.auto`
# (imported by transformers and huggingface_hub) warns about it on stderr in a kernel, and
# that line would differ between machines with and without ipywidgets.
_warnings.filterwarnings("ignore", category=_TqdmWarning)

__version__ = "0.1.0"

#: Names importable from ``cadlib`` that need torch, loaded on first use (``import cadlib``
#: and the ``cad`` commands that run no model stay free of torch).
_LAZY = {
    "CopyDecoder": "decoding.decoder",
    "DecodeResult": "decoding.decoder",
    "GrammarLogitsProcessor": "decoding.generate_processor",
    "CUSTOM_GENERATE_DIR": "decoding.custom_generate",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'cadlib' has no attribute {name!r}")


__all__ = [
    "CUSTOM_GENERATE_DIR",
    "Copy",
    "CopyDecoder",
    "DecodeResult",
    "GrammarLogitsProcessor",
    "Corpus",
    "EditCase",
    "Gen",
    "Program",
    "ProgramSyntaxError",
    "RangeClippedWarning",
    "ResolveError",
    "StreamingParser",
    "count_tokens",
    "decode_gen_body",
    "encode_gen_body",
    "get_tokenizer",
    "load_corpus",
    "oracle_program",
    "parse_program",
    "qwen25_tokenizer",
    "resolve",
]
