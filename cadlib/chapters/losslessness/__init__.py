"""Chapter 1, losslessness: does the resolver invert every oracle program, byte for byte, and
under which tokenizers does the FSM work? (paper §2.2, §4.3, Table 4, Appendices I and K)

Oracle programs are resolved through the deployment code path and compared with the gold
under three equalities: byte-exact, the paper's "byte-exact up to a single trailing newline"
and trimmed (``.strip()``). The escape is fuzzed with adversarial strings built as the paper
describes, a grammar-literal audit lists the Qwen2.5 ids of the structural literals, Table 4
compares strict and clipped resolution, and Appendix K's portability checks run the grammar's
literals and the FSM on every tokenizer the book loads offline.

The roles: :mod:`.profiles` (``PROFILES``), :mod:`.run` (round trips, escape fuzz, literal
audit, edge cases, Table 4 and ``numbers``), :mod:`.run_portability` (Appendix K's checks per
tokenizer), :mod:`.show` (tables), :mod:`.text` (the Answer and the portability finding) and
:mod:`.commands` (``python -m cadlib.chapters.losslessness.commands fetch``: llama.cpp's
vocabulary files, ``make vocab``). The tokenizers built from those files live with every other
tokenizer of the book, in :mod:`cadlib.models.tokenizer`.
"""

from cadlib.record.card import lazy_roles

from .card import CARD

__all__ = ["CARD"]
__getattr__ = lazy_roles(__name__)
