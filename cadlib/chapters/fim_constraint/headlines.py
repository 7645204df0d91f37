"""What the book's pages read of chapter 8 (the FIM constraint, the companion paper's system,
beyond this paper): its summary rows, the re-run tolerances of ``results/fim*.json``, the
``paper`` profile's settings (none published) and what it adds beyond the paper."""

from __future__ import annotations

from cadlib.book import rerun_check as R
from cadlib.book import verdicts as V
from cadlib.book.paper_settings import CODE_MODEL, UNPUBLISHED, Setting
from cadlib.book.summary.spec import Headline, percent_headline, ratio

__all__ = [
    "BEYOND_THE_PAPER",
    "HEADLINES",
    "PAPER_HARDWARE",
    "PAPER_SETTINGS",
    "STDLIB",
    "TOLERANCES",
]


def _fim_ended(what: str, arm: str) -> Headline:
    """Chapter 8's primary metric for one arm: the model ended the middle and the result
    parses (attempts closed by the token budget do not count; issue 34)."""
    label = arm.split(".", 1)[1].removeprefix("SmolLM2 untrained / ")
    return percent_headline(
        "fim",
        f"{what}: ended and parses, {label}",
        "ch. 8",
        None,
        ratio(f"{arm}.ended_and_parses", f"{arm}.n"),
        V.beyond(),
        n=f"{arm}.n",
    )


#: The summary's rows (all beyond the paper: the companion system's quotient-grammar
#: FIM constraint).
HEADLINES: tuple[Headline, ...] = (
    percent_headline(
        "fim",
        "recognizer agrees with ast.parse on random edits",
        "companion §IV-VI",
        None,
        "differential.edit_agreement",
        V.beyond(),
        n="differential.edits",
    ),
    percent_headline(
        "fim",
        "true middles: every prefix viable",
        "companion §IV-VI",
        None,
        "differential.true_middles_all_prefixes_viable",
        V.beyond(),
        n="differential.splits",
    ),
    *(
        _fim_ended(what, arm)
        for what, arm in (
            (
                "localized edits, untrained model",
                "localized_edit.SmolLM2 untrained / unconstrained",
            ),
            (
                "localized edits, untrained model",
                "localized_edit.SmolLM2 untrained / FIM-constrained",
            ),
            ("FIM completion", "fim.unconstrained"),
            ("FIM completion", "fim.FIM-constrained"),
            ("FIM completion", "fim.unconstrained + context trim"),
            ("FIM completion", "fim.FIM-constrained + context trim"),
        )
    ),
)

STDLIB = R.Tolerance(
    "ignore",
    "drawn from the interpreter's own standard library, whose files differ between "
    "patch releases: only the number of cuts and of uncategorized disagreements are compared",
)

#: Re-run tolerances (:mod:`cadlib.book.rerun_check`), first match wins: costs and mask timings
#: ignored, the standard-library differential compared by its counts only, the recognizer's
#: differential and the model's decisions exact.
TOLERANCES: list[tuple[str, R.Tolerance]] = [
    ("numbers.*_cost_ms.*ms*", R.TIMING),
    ("numbers.*_cost_ms.*/ forward", R.TIMING),
    ("numbers.*cost*", R.TIMING),
    ("numbers.mask_stages*", R.TIMING),
    ("numbers.stdlib_differential.cuts", R.EXACT),
    ("numbers.stdlib_differential.uncategorized", R.EXACT),
    ("numbers.stdlib_differential.false_rejections", R.EXACT),
    ("numbers.stdlib_differential.failures", R.EXACT),
    ("numbers.stdlib_differential.*", STDLIB),
    ("numbers.differential.*", R.COUNT_RATIO),  # the recognizer against ast.parse: no model
    ("numbers.localized_edit.*", R.DECISION_RATIO),
    ("numbers.fim.*", R.DECISION_RATIO),
    ("numbers.fim_by_cut.*", R.DECISION_RATIO),
]

#: The ``paper`` profile's settings: the companion paper publishes none in our copy.
PAPER_SETTINGS: dict[str, Setting] = {
    "model": Setting(
        CODE_MODEL,
        UNPUBLISHED,
        "companion paper (its experiments are not in our copy)",
        deviation="no published setting: the code model of the SFT chapter (§5)",
    ),
    "checkpoint": Setting(
        "checkpoints/sft-Qwen_Qwen2.5-Coder-1.5B-Instruct-py-s0",
        UNPUBLISHED,
        "companion paper",
        deviation="chapter 7's Py-only seed-0 model, paper profile",
    ),
    "dtype": Setting(
        "bfloat16",
        UNPUBLISHED,
        "companion paper",
        deviation="no published setting: bf16, as the SFT chapter",
    ),
    "edit_cases": Setting(
        None, UNPUBLISHED, "companion paper", deviation="no published setting: every case"
    ),
}

#: Where the paper ran this chapter's measurement (not published).
PAPER_HARDWARE = UNPUBLISHED

#: What the chapter adds beyond the paper (the summary's list).
BEYOND_THE_PAPER: tuple[str, ...] = (
    "the companion paper's quotient-grammar FIM constraint, built, checked "
    "against CPython, and applied to <gen> bodies",
)
