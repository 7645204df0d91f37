"""cadlib: the helper library of the executable Copy-as-Decode paper.

Import the modules you need, e.g. ``from cadlib import grammar, resolver, oracle``; the most
used names are re-exported here.
"""

from .cases import Corpus, EditCase
from .corpora import load_corpus
from .escape import decode_gen_body, encode_gen_body
from .grammar import Copy, Gen, Program, ProgramSyntaxError, StreamingParser, parse_program
from .oracle import oracle_program
from .resolver import RangeClippedWarning, ResolveError, resolve
from .tokenizers import count_tokens, get_tokenizer, qwen25_tokenizer

__version__ = "0.1.0"

__all__ = [
    "Copy",
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
