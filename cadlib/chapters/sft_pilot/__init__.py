"""Selector learnability pilot (paper §5 "Selector learnability pilot", Tables 6, 7, 22, 23).

Fine-tune a causal LM to emit the oracle program of an edit, then decode held-out cases with
the FSM-constrained decoder (greedy, with the copy splice) and score what comes out.

The split (:func:`cadlib.corpora.make_split`, saved as ``data/sft_split.json``)
    The paper trains on 131 HEvalFix-Py cases and evaluates on 33 held-out ones; its
    Combined set has 385 = 131 Py + 131 JS + 123 ProbeEdit cases, and Table 22 evaluates
    the Combined checkpoint on held-out splits of 33 JS and 31 ProbeEdit cases. So each
    corpus is split 80/20 (``round(0.2 n)`` held out: 33 of 164, 31 of 154). The held-out
    cases are the ``n_held`` ids that come first when the ids are ordered by
    ``sha256(f"{seed}:{key}")``: a rule that needs no RNG, so it gives the same list with
    every Python and on every machine. HEvalFix-JS is the same 164 problems with the same
    bugs translated to JavaScript, so the JS key is the *task number*: JS/k is held out
    exactly when Python/k is, and Combined training never sees a translation of a held-out
    Python case (otherwise the Py held-out EM of Combined would be contaminated).
Training examples (:func:`build_example`)
    Prompt = the chat-formatted edit prompt of :mod:`cadlib.prompts` (instruction plus the
    document with line numbers); target = the *transcript* of the escaped oracle program,
    i.e. exactly the token sequence the decoder produces at inference (program tags
    interleaved with the spliced copy text). Loss (paper App. "Training details": prompt
    masked with -100) is on the tokens the model chooses at inference only: prompt tokens,
    forced-template tokens and spliced copy tokens get label -100 (see :func:`build_example`).
Training (:func:`train`)
    ``transformers.Trainer`` with the paper's recipe (AdamW lr 2e-5, betas (0.9, 0.95),
    cosine schedule with 3 % warm-up, effective batch 8 = grad-accum 8 x micro-batch 1,
    gradient checkpointing; Py-only 8 epochs, Combined 6; seeds 0, 1, 2) as the ``paper``
    profile, except the maximum length: 3072 instead of 1536, which holds every one of our
    385 Combined examples whole (see :data:`PROFILES`); and an honest scaled-down ``cpu``
    profile. A GGUF-loaded model is untagged first (:func:`make_trainable`).
Evaluation (:func:`score_program`, :func:`summarize`, :func:`taxonomy`)
    Final-output EM, program EM, parse rate, op-level span-start / span-end accuracy, the
    failure taxonomy of Table 7, Wilson 95 % CIs, wall time per case, and (beyond the paper)
    functional correctness against the HumanEvalPack unit tests (:mod:`cadlib.execution`).

The package is split along these seams: :mod:`.train_sets`, :mod:`.examples`, :mod:`.training`,
:mod:`.evaluation`, :mod:`.scoring` (with the span-selection metrics of issue 20),
:mod:`.paired` (same-case comparisons), :mod:`.findings` (the three findings' declared
tests), :mod:`.pilot`, :mod:`.tables`, :mod:`.report` (per-case records and the generated
conclusion) and :mod:`.chapter` (chapter 7's displayed tables, figures and results record).
Every public name of these is importable from ``cadlib.chapters.sft_pilot``; :mod:`.estimate`
(how long a run takes, before it is started) is a command of its own (``python -m
cadlib.chapters.sft_pilot.estimate seeds``). The held-out split itself is
:mod:`cadlib.corpora`'s (chapter 8 evaluates on it too), the paired tests
:mod:`cadlib.metrics`'.
"""

from __future__ import annotations

from . import (
    chapter,
    evaluation,
    examples,
    findings,
    metrics,
    paired,
    pilot,
    report,
    scoring,
    strata,
    tables,
    train_sets,
    training,
)
from .chapter import *  # noqa: F403
from .evaluation import *  # noqa: F403
from .examples import *  # noqa: F403
from .findings import *  # noqa: F403
from .metrics import *  # noqa: F403
from .paired import *  # noqa: F403
from .pilot import *  # noqa: F403
from .report import *  # noqa: F403
from .scoring import *  # noqa: F403
from .strata import *  # noqa: F403
from .tables import *  # noqa: F403
from .train_sets import *  # noqa: F403
from .training import *  # noqa: F403

__all__ = [
    *chapter.__all__,
    *evaluation.__all__,
    *examples.__all__,
    *findings.__all__,
    *metrics.__all__,
    *paired.__all__,
    *pilot.__all__,
    *report.__all__,
    *scoring.__all__,
    *strata.__all__,
    *tables.__all__,
    *train_sets.__all__,
    *training.__all__,
]
