"""Selector learnability pilot (paper §5 "Selector learnability pilot", Tables 6, 7, 22, 23).

Fine-tune a causal LM to emit the oracle program of an edit, then decode held-out cases with
the FSM-constrained decoder (greedy, with the copy splice) and score what comes out.

The split (:func:`make_split`, saved as ``data/sft_split.json``)
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

The package is split along these seams: :mod:`.split`, :mod:`.examples`, :mod:`.training`,
:mod:`.evaluation`, :mod:`.scoring` (with the span-selection metrics of issue 20),
:mod:`.paired` (same-case comparisons), :mod:`.pilot`, :mod:`.tables`, :mod:`.report`
(per-case records and the generated conclusion) and :mod:`.chapter` (chapter 7's displayed
tables, figures and results record). Every public name is importable from
``cadlib.chapters.sft_pilot`` as before.
"""

from __future__ import annotations

from .chapter import (  # noqa: F401
    ChapterSetup,
    chapter_numbers,
    chapter_pairs,
    crp_vs_fsm_example,
    example_attempt,
    full_profile_outputs,
    held_out_docs,
    paired_comparisons,
    paper_numbers,
    plot_losses,
    preview_examples,
    program_systems,
    recipe_differences,
    regenerated_conclusion,
    setting_markdown,
    setup_chapter,
    split_overview,
    strata_outputs,
    table22_outputs,
    tests_table,
    training_table,
    transcript_table,
    wall_table,
    write_chapter_results,
)
from .evaluation import (  # noqa: F401
    evaluate_baseline,
    evaluate_fsm,
    evaluate_localized,
    extract_document,
    extract_program,
    generate_greedy,
    score_output,
)
from .examples import (  # noqa: F401
    IGNORE,
    LOSS_KINDS,
    OVERLONG,
    Example,
    ExampleDataset,
    build_example,
    build_examples,
    collate,
    prompt_ids,
    target_program,
)
from .metrics import (  # noqa: F401
    is_identity,
    op_signature,
    span_em,
    span_iou,
)
from .paired import (  # noqa: F401
    ALPHA,
    BINARY_METRICS,
    check_paired,
    compare,
    comparison_table,
    format_p,
    holm,
    mcnemar_exact,
    paired_bootstrap,
    rates_table,
)
from .pilot import (  # noqa: F401
    CRP,
    FSM_UNTRAINED,
    REGEN,
    Pilot,
    PilotRun,
    baseline_budget,
    budget_note,
    checkpoint_dir,
    choose_params,
    eval_cases,
    evaluate_untrained,
    fine_tune,
    localized_system,
    recorded_pilot,
    run_pilot,
    run_record_name,
    run_recorder,
    sft_system,
    split_for,
    spread,
)
from .report import (  # noqa: F401
    CASE_FIELDS,
    EVIDENCE_PROFILES,
    REGENERATE,
    case_record,
    cases_path,
    conclusion,
    evidence_profile,
    profile_record,
    profile_summary,
    read_cases,
    write_cases,
)
from .scoring import (  # noqa: F401
    TAXONOMY,
    CaseResult,
    categorize,
    endpoint_hits,
    score_program,
    summarize,
    summary_record,
    taxonomy,
)
from .split import (  # noqa: F401
    HELD_OUT_FRACTION,
    SPLIT_CORPORA,
    SPLIT_FILE,
    TRAIN_SET_LABELS,
    TRAIN_SETS,
    held_out_ids,
    load_split,
    make_split,
    save_split,
    split_cases,
    split_path,
    training_cases,
)
from .strata import (  # noqa: F401
    ONE_LINE,
    SEVERAL_LINES,
    code_lines,
    strata_markdown,
    strata_table,
    stratum,
)
from .tables import (  # noqa: F401
    BND_EXACT_PY,
    PAPER_TABLE7,
    expected_speedup,
    render_loss,
    results_frame,
    table6,
    table6_row,
    table7,
    table22,
    transcript_stats,
)
from .training import (  # noqa: F401
    DEVIATIONS,
    FULL_DEVIATIONS,
    PROFILES,
    RUN_RECORDS,
    SEEDS_DEVIATIONS,
    SMOKE_CHECKPOINTS,
    TrainRun,
    make_trainable,
    train,
    training_arguments,
)

__all__ = [
    "REGENERATE",
    "profile_record",
    "EVIDENCE_PROFILES",
    "evidence_profile",
    "profile_summary",
    "op_signature",
    "span_em",
    "span_iou",
    "is_identity",
    "ALPHA",
    "BINARY_METRICS",
    "check_paired",
    "mcnemar_exact",
    "paired_bootstrap",
    "holm",
    "format_p",
    "compare",
    "comparison_table",
    "rates_table",
    "CASE_FIELDS",
    "case_record",
    "cases_path",
    "write_cases",
    "read_cases",
    "conclusion",
    "evaluate_localized",
    "CRP",
    "FSM_UNTRAINED",
    "REGEN",
    "baseline_budget",
    "budget_note",
    "eval_cases",
    "evaluate_untrained",
    "localized_system",
    "sft_system",
    "DEVIATIONS",
    "SEEDS_DEVIATIONS",
    "RUN_RECORDS",
    "PilotRun",
    "run_record_name",
    "run_recorder",
    "recorded_pilot",
    "FULL_DEVIATIONS",
    "SPLIT_CORPORA",
    "TRAIN_SETS",
    "HELD_OUT_FRACTION",
    "held_out_ids",
    "make_split",
    "split_path",
    "save_split",
    "load_split",
    "split_cases",
    "training_cases",
    "endpoint_hits",
    "score_program",
    "CaseResult",
    "TAXONOMY",
    "categorize",
    "summarize",
    "summary_record",
    "taxonomy",
    "PROFILES",
    "SMOKE_CHECKPOINTS",
    "checkpoint_dir",
    "LOSS_KINDS",
    "Example",
    "build_example",
    "build_examples",
    "prompt_ids",
    "target_program",
    "collate",
    "make_trainable",
    "training_arguments",
    "train",
    "TrainRun",
    "evaluate_fsm",
    "evaluate_baseline",
    "score_output",
    "extract_program",
    "extract_document",
    "choose_params",
    "spread",
    "fine_tune",
    "run_pilot",
    "Pilot",
    "split_for",
    "table6",
    "table7",
    "table22",
    "results_frame",
    "transcript_stats",
    "render_loss",
    "expected_speedup",
    "PAPER_TABLE7",
    "setting_markdown",
    "split_overview",
    "preview_examples",
    "transcript_table",
    "recipe_differences",
    "training_table",
    "plot_losses",
    "chapter_pairs",
    "paired_comparisons",
    "program_systems",
    "tests_table",
    "wall_table",
    "chapter_numbers",
    "paper_numbers",
    "ChapterSetup",
    "setup_chapter",
    "crp_vs_fsm_example",
    "example_attempt",
    "table22_outputs",
    "write_chapter_results",
    "full_profile_outputs",
]
