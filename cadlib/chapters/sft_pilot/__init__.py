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
Training examples (:func:`.run_examples.build_example`)
    Prompt = the chat-formatted edit prompt of :mod:`cadlib.prompts` (instruction plus the
    document with line numbers); target = the *transcript* of the escaped oracle program,
    i.e. exactly the token sequence the decoder produces at inference (program tags
    interleaved with the spliced copy text). Loss (paper App. "Training details": prompt
    masked with -100) is on the tokens the model chooses at inference only: prompt tokens,
    forced-template tokens and spliced copy tokens get label -100.
Training (:func:`.run_training.train`)
    ``transformers.Trainer`` with the paper's recipe (AdamW lr 2e-5, betas (0.9, 0.95),
    cosine schedule with 3 % warm-up, effective batch 8 = grad-accum 8 x micro-batch 1,
    gradient checkpointing; Py-only 8 epochs, Combined 6; seeds 0, 1, 2) as the ``paper``
    profile, except the maximum length: 3072 instead of 1536, which holds every one of our
    385 Combined examples whole (see :data:`.profiles.PROFILES`); and an honest scaled-down
    ``cpu`` profile. A GGUF-loaded model is untagged first (:func:`.run_training.make_trainable`).
Evaluation (:mod:`.run_evaluation`, :mod:`.run_scoring`)
    Final-output EM, program EM, parse rate, op-level span-start / span-end accuracy, the
    failure taxonomy of Table 7, Wilson 95 % CIs, wall time per case, and (beyond the paper)
    functional correctness against the HumanEvalPack unit tests (:mod:`cadlib.execution`).

The package has the role files of every chapter (CONTRIBUTING, "A chapter package"):
:mod:`.card`; :mod:`.profiles` (the profiles, their declared deviations from the paper's
recipe, and :func:`.profiles.choose`); :mod:`.run` (the setup, per-case records, strata, the
committed evidence runs and :func:`.run.numbers`, the results file's one builder) with its
topics :mod:`.run_examples`, :mod:`.run_training`, :mod:`.run_evaluation`,
:mod:`.run_scoring`, :mod:`.run_pilot` and :mod:`.run_paired`; :mod:`.show` and
:mod:`.show_tables` (tables and figures); :mod:`.text` (the conclusion, the answer, the
findings and every other outcome-dependent sentence); and :mod:`.commands` (``python -m
cadlib.chapters.sft_pilot.commands estimate seeds``: how long a run takes, before it is
started). Roles are imported when first named (``sft_pilot.run``). The held-out split itself
is :mod:`cadlib.corpora`'s (chapter 8 evaluates on it too), the paired tests
:mod:`cadlib.metrics`'.
"""

from cadlib.record.card import lazy_roles

from .card import CARD

__all__ = ["CARD"]
__getattr__ = lazy_roles(__name__)
