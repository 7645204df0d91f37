"""Constrained fill-in-the-middle decoding by left and right quotients (companion paper).

Module map (pipeline order):

``cfg``
    context-free grammars as data (§II-B);
``compiled``
    a grammar compiled to integer tables and lazily built LR(0) states, shared by both
    recognizers;
``regular``
    NFAs over lexical symbols, built backwards with shared suffixes (§II-A, §IV-B);
``earley``
    the incremental Earley recognizer (§IV);
``nfa_parse``
    Earley parsing of an NFA on the same compiled grammar (§IV-A, Fig. 3);
``quotient``
    quotient-grammar extraction (Fig. 2) and left/right quotients by reversal (§IV-B);
``lexer``
    Python's lexemes as one automaton, CPython's lexing quirks (§V);
``literals``
    the transitions of its literal lexemes: numbers and strings, f-strings included;
``fstring``
    f-string replacement fields with CPython 3.11's rules (not PEP 701's), run by the lexer
    beside an f-string's string states;
``branching``
    the incremental branching lexer driving the recognizer (§V-A, Fig. 5);
``indent``
    indentation: INDENT/DEDENT with bands, the right context as a regular language (§VI);
``python_grammar``
    Python 3 from lark's ``python.lark`` with documented patches;
``right``
    the right context's tails (§V-B, Fig. 7), branches and quotient rules;
``constraint``
    :class:`FIMConstraint` (§III Problem 1);
``tokenlex``
    the vocabulary's lexical tables: per lexical state, the parser checks each token needs,
    shared by every constraint and step (what makes a mask a few hundred checks);
``mask``
    allowed-token masks for Hugging Face tokenizers (the vocabulary's trie; tokens' bytes to
    whole characters);
``logits``
    the FIM masks of logits on :class:`cadlib.decoding.processors.MaskProcessor`
    (:class:`~cadlib.fim.logits.IncrementalMask`, :class:`FIMLogitsProcessor`);
``differential``
    CPython differential checks for the FIM chapter;
``step_cost``
    per-step cost measurements of the constraint and of its mask (mask stages included);
``benchmark``
    the whole mask timed beside its previous implementation (chapter 8's
    ``python -m cadlib.chapters.fim_constraint.commands maskspeed`` writes the mask-speed run);
``stdlib``
    the differential check at scale: seeded cuts of the interpreter's standard library
    (chapter 8's ``python -m cadlib.chapters.fim_constraint.commands stdlib`` writes the full
    run);
``disagreements``
    where a disagreement with ``ast.parse`` is (inside an f-string's field or elsewhere) and
    the known difference that explains it, if any;
``witness``
    a witness completion for a viable prefix, searched over pieces the recognizer's state
    suggests (closing quotes, brackets, an indented body);
``witness_check``
    the soundness check: CPython parses the witness of every accepted prefix, on true and
    perturbed middles (chapter 8's ``… commands witness`` writes the run);
``completion``
    FIM completion of HumanEval solutions (chapter 8's second experiment).

Chapter 8's own code (its profiles, :class:`GenBodyMask` on ``<gen>`` bodies in the decoder's
localized-edit mode, tables, figures, the mask-speed verdict and the commands that write the
wing's evidence runs) lives in :mod:`cadlib.chapters.fim_constraint`, above this wing: the
recognizer imports no model, and no module here is a ``python -m`` command.
"""

from .constraint import FIMConstraint, UnconnectableContextError, UnsupportedLanguageError
from .differential import KNOWN_DIFFERENCES, differential_check, summarize
from .logits import FIMLogitsProcessor
from .mask import TokenTrie, allowed_mask, naive_allowed_mask
from .step_cost import mask_cost, per_step_cost
from .witness import witness

__all__ = [
    "FIMConstraint",
    "FIMLogitsProcessor",
    "KNOWN_DIFFERENCES",
    "TokenTrie",
    "UnconnectableContextError",
    "UnsupportedLanguageError",
    "allowed_mask",
    "differential_check",
    "mask_cost",
    "naive_allowed_mask",
    "per_step_cost",
    "summarize",
    "witness",
]
