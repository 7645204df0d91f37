"""Chapter 8's profiles: the cases, budgets and samples of each run (``PROFILES``).

``cpu`` is the default (a few cases per arm, minutes on two cores), ``large`` the evidence run
the book shows (at least 100 FIM problems per arm), ``paper`` the companion paper's scale
(every case, the SFT chapter's code model) and ``smoke`` CI's check of the paper path.
Torch-free: the pages and ``cad check-models`` read it without loading a model.
"""

from __future__ import annotations

from cadlib.book.paper_settings import CODE_MODEL

__all__ = ["PROFILES"]


#: The ``cpu`` profile, which ``large`` extends (:data:`PROFILES`).
_CPU = dict(
    model="smollm2-135m-instruct",
    checkpoint="checkpoints/sft-smollm2-135m-instruct-py-s0",
    edit_cases=4,
    edit_budget=48,
    fim_cases=4,
    fim_budget=48,
    fim_style="hole",
    fim_max_lines=2,
    fim_max_chars=40,
    diff_cases=12,
    diff_splits=3,
    diff_edits=4,
    cost_problems=4,
    cost_middle_chars=400,
    test_timeout=5.0,
    threads=1,
    stdlib_cuts=24,
    stdlib_edits=4,
    sweep_files=1,
)


#: ``checkpoint``: the chapter-7 SFT model, relative to the repository root (``checkpoints/`` is
#: git-ignored: absent on a fresh clone, then reported as not available; ``""`` skips it).
#: ``edit_cases`` / ``fim_cases`` / ``diff_cases``: seeded subsets (``None`` = all);
#: ``*_budget``: max new tokens per ``<gen>`` body / per middle; ``threads``: torch CPU threads
#: (one makes greedy decoding bitwise repeatable on a shared machine; ``None``: torch's default);
#: ``stdlib_cuts`` / ``stdlib_edits`` / ``sweep_files``: the standard-library differential's
#: sample in the chapter (:mod:`cadlib.fim.stdlib`; its 2,000-cut run is ``results/fim.full.json``).
PROFILES = {
    # a few cases per arm, so that chapter 8 stays within ~4 minutes on 2 slow cores (a
    # SmolLM2 decode step ~110 ms: 10 and 12 cases took 435 s, 4 and 4 take 226 s); the large
    # run is the evidence
    "cpu": _CPU,
    # the cpu profile with enough cases for intervals that can separate the arms (>= 100 FIM
    # problems per arm, every held-out single-<gen> edit case); about 25-30 minutes on 2 quiet
    # cores. Not named "full": results/fim.full.json is the standard-library differential's
    # full run (the commands' stdlib run), which a "full" chapter record would overwrite.
    "large": {**_CPU, "edit_cases": None, "fim_cases": 120, "stdlib_cuts": 200, "sweep_files": 3},
    # the companion paper's experiments are not in our copy: the SFT chapter's code model and
    # its paper-profile Py-only seed-0 checkpoint (cadlib.book.paper_settings)
    "paper": dict(
        model=CODE_MODEL,
        checkpoint="checkpoints/sft-Qwen_Qwen2.5-Coder-1.5B-Instruct-py-s0",
        edit_cases=None,
        edit_budget=128,
        fim_cases=None,
        fim_budget=128,
        fim_style="hole",
        fim_max_lines=3,
        fim_max_chars=120,
        diff_cases=None,
        diff_splits=5,
        diff_edits=5,
        cost_problems=12,
        cost_middle_chars=400,
        test_timeout=10.0,
        threads=None,
        stdlib_cuts=200,
        stdlib_edits=4,
        sweep_files=3,
    ),
    # CI's check of the paper path (make test-smoke): the local stand-in for a hub model
    # and the checkpoint chapter 7's smoke run wrote
    # (cadlib.chapters.sft_pilot.profiles.SMOKE_CHECKPOINTS).
    "smoke": dict(
        model="qwen2-smoke",
        checkpoint="_build/smoke/checkpoints/sft-qwen2-smoke-py-s0",
        edit_cases=2,
        edit_budget=8,
        fim_cases=2,
        fim_budget=8,
        fim_style="hole",
        fim_max_lines=3,
        fim_max_chars=120,
        diff_cases=2,
        diff_splits=2,
        diff_edits=2,
        cost_problems=1,
        cost_middle_chars=100,
        test_timeout=5.0,
        threads=1,
        stdlib_cuts=3,
        stdlib_edits=1,
        sweep_files=1,
    ),
}
