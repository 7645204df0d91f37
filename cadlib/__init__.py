"""cadlib: the helper library of the executable Copy-as-Decode paper.

Import the modules you need, e.g. ``from cadlib import grammar, resolver, oracle``; the most
used names are re-exported here.

Module map. Shared homes (one idea each, imported by the chapter modules, never the other
way round):

``cases``         :class:`EditCase` and :class:`Corpus` (a leaf: no cadlib imports)
``grammar``, ``escape``, ``resolver``, ``oracle``   programs, their text, their meaning
``tokenizers``, ``vocab``   tokenizers; token id -> bytes / text tables of a vocabulary
``metrics``       exact-match variants (byte, one trailing newline, ``.strip()``), Wilson CI
``spans``         a case's line-level copy spans (Table 2's definitions)
``speedup_curve`` the s(N) curve: load, check, log-linear interpolation, label
``cache``         KV cache and forwards: new / crop / restore, forward, sync_device
``models``, ``prompts``, ``params``, ``results``   models by name, prompts, profiles, results files
                  (strict JSON: NaN -> null, arrays and tables as lists)
``rerun_check``   a re-run's results against the committed ones, with declared tolerances
``accounting``    exact forward counts along a known output, every method, no model
``cost_model``    forwards priced on a measured forward-cost grid, checked against the clock
``paper``         every figure the paper publishes, once (chapters compare against it)
``paper_settings`` the paper's experimental settings, which the `paper` profiles follow
``verdicts``, ``coverage``   earned verdicts from declared tolerances; the paper's coverage map
``corpora``, ``probeedit``   loading corpora; the generated ProbeEdit corpus (a package: spec,
                  structure, operations, builders, corpus; its word pools are data)
``literal_ids``   the grammar's literals as ids of one tokenizer (TokenTable, App. K)
``fsm``, ``decoder``         the token-level FSM and the copy-splice decoder
``drafts``        what the decoder may verify speculatively (prompt lookup inside bodies,
                  guessed op headers): one home for the decoder and the accounting
``strategies``    the decoding methods (autoregressive, prompt lookup, Copy-as-Decode) as
                  one protocol, run along a case prepared for all (``prepare``)
``processors``    engine-neutral logit masks (the grammar's; the FIM masks of ``fim`` are on
                  its base); ``decoder`` adapts it to transformers
``engines``       the seam a model runtime plugs into (transformers, llama.cpp): ``load_engine``
``fim``           the FIM quotient-grammar constraint (companion paper)
``alignment``     a fast line alignment for the ``cad`` command (git's histogram diff)

Chapter modules: ``losslessness`` (1), ``kernel`` (2), ``ceiling`` (3), ``formats`` (4, a
package), ``perturb`` (5), ``decoding`` (6; ``token_boundaries``: its tokenization at the
splice boundaries; ``decoding_report``: its run as the notebook shows it, tables, figures and
results numbers), ``llama_cpp_chapter`` (6b), ``sft`` (7: a package,
split / examples / training / evaluation / scoring / metrics / paired / pilot / tables /
report / chapter), ``fim.experiments`` (8; ``fim.report`` and ``fim.figures``: its tables,
figures and results numbers), ``summary`` (the summary page, a package: spec / headlines /
tables / render), ``diff_overhead`` (the unified-diff settings probe), ``portability``
(App. K, chapter 1), ``appendix_estimates`` (App. L and M, chapter 3),
``perturb_prose`` (chapter 5's generated prose), ``plotting``, ``cli`` (with ``cpu_threads``:
threads that hold up on a busy CPU, and ``thread_bench``, which checks them). ``execution`` runs
model-written programs against unit tests, guarded. Names that moved
to a shared home stay importable where they were
(``corpora.EditCase``, ``kernel.load_curve``, ``models.new_cache``, ``sft.outputs_equal``, ...).

Packages, split along their seams; every public name imports from the package:
``kernel``: timing / fixed_costs / splice_check / chapter / tables / forward_costs.
``ceiling``: covers / bounds / percentiles / chapter / tables / plots / prose.
``engines``: base (the ``Engine`` / ``Session`` protocol) / hf (transformers) / llamacpp /
gguf_export (the smoke stand-in as a GGUF for llama.cpp).
``formats``: registry (the format protocol, Copy-as-Decode, full regeneration) / blocks /
unified_diff / search_replace / errors / evaluate / reporting.
``fim``: the parser layers, bottom up: lexer / indent / regular / cfg / earley / branching /
right / constraint / tokenlex (per-lexical-state token tables) / mask; python_grammar (lark's
``python.lark`` converted); the checks and costs: differential / stdlib (the differential at
scale) / benchmark (per-step cost) / completion (HumanEval FIM cuts); chapter 8's run:
experiments / report / figures.
``probeedit``: also runnable, ``python -m cadlib.probeedit`` writes the corpus as JSONL.
"""

import warnings as _warnings

from tqdm import TqdmWarning as _TqdmWarning

from .cases import Corpus, EditCase
from .corpora import load_corpus
from .escape import decode_gen_body, encode_gen_body
from .grammar import Copy, Gen, Program, ProgramSyntaxError, StreamingParser, parse_program
from .oracle import oracle_program
from .resolver import RangeClippedWarning, ResolveError, resolve
from .tokenizers import count_tokens, get_tokenizer, qwen25_tokenizer

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
    "GrammarLogitsProcessor": "decoding.decoder",
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
