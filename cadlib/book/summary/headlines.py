"""The summary's declared comparisons: every headline figure, chapter by chapter.

Nothing here is typed by hand except where each figure lives (a dotted path into a chapter's
results file, or a getter of :mod:`cadlib.book.summary.spec`) and, for each, the comparison it
declares in code, with the results known: a :class:`cadlib.book.verdicts.Tolerance` with its
reason (shared reasons are named once below). The paper's figures come from :mod:`cadlib.paper`.
"""

from __future__ import annotations

from collections.abc import Callable

from cadlib import paper as P
from cadlib.book import verdicts as V
from cadlib.book.verdicts import Tolerance
from cadlib.corpora import CORPUS_LABELS

from .appendix import appendix_rows
from .spec import (
    _PAPERMILL,
    _REMADE,
    Headline,
    _absent,
    _curve,
    _pc,
    _pct,
    _ratio,
    _row,
    lookup,
)

__all__ = [
    "HEADLINES",
    "BEYOND_THE_PAPER",
]
# --- the declared comparisons, with their reasons (shared ones named once) --------------------

_PRINTED = 0.05  # half the last digit of a figure printed to one decimal
_CPU = V.not_comparable(
    "measured on 2 CPU cores with small models; the paper's figure is "
    "Qwen2.5-1.5B/7B on an A100 (kernel chapter)"
)
_FSM_PARSES = V.by_construction(
    "the FSM only admits programs of the grammar, so every output parses; shown, not counted"
)
_ROUND_TRIP = V.by_construction(
    "the resolver reproduces the gold byte for byte from its oracle program for every input, "
    "by construction of the resolver and the oracle (chapter 1 says so and checks it with "
    "property tests), so the count cannot fall short; shown, not counted"
)
_SFT_SCALE = V.not_comparable(
    "a scaled-down run in the cpu profile (SmolLM2-135M, a subset, one short epoch) against "
    "the paper's Qwen2.5-Coder-1.5B, 8 epochs, 3 seeds (SFT chapter)"
)
_FROM_PAPER_CURVE = V.derived(
    "computed on a reconstruction of the paper's 7B s(N) curve whose 8 points are 2 quoted "
    "(§4.1), 2 assumed (s(1), s(2)) and 4 implied by the paper's own bnd_mean for the same "
    "corpora, so agreement here is partly circular: a consistency check of the paper's "
    "arithmetic, not an independent reproduction (ceiling chapter)"
)
_SUBSET = V.not_comparable(
    "the paper counts a subset of 33 cases it does not identify; "
    "ours counts all 164 (formats chapter)"
)
_UDIFF = V.not_comparable(
    "the paper counts a subset of 33 cases it does not identify, with diff settings it does not "
    "state; ours is diff -u (3 context lines, file and hunk headers) on all 164 cases, and the "
    "settings grid on the coverage page brackets the paper's figures (e.g. context 1, file "
    "headers, no hunk numbers comes closest), so no setting is the paper's (formats chapter)"
)
_P50 = (
    "a recount over the same spans (n, mean and every total agree); no percentile "
    "definition tried gives the paper's figure (ceiling chapter)"
)
_EPS = "5 seeded trials per case on both sides; our SE is clustered by case (perturbation chapter)"
_FSM = "table6.FSM-constrained (untrained)"
_KERNEL_MODELS = {"qwen2.5-0.5b-random": "Qwen2.5-0.5B shape", "smollm2-135m-instruct": "SmolLM2"}
_PAPER_15B = P.KERNEL_CURVES["paper:qwen2.5-1.5b"]


def _kernel_rows() -> tuple[Headline, ...]:
    """s(8), s at our largest N, m* strict and safe, per model, beside the paper's 1.5B (A100)."""
    rows = []
    for model, name in _KERNEL_MODELS.items():
        trials = f"curves.{model}.meta.trials"
        rows += [
            Headline(
                "kernel",
                f"{name}: s(8)",
                "§4.1 (1.5B, A100)",
                _PAPER_15B["s"][0],
                _curve(model, "s", 8),
                "×",
                _CPU,
                n=trials,
            ),
            Headline(
                "kernel",
                f"{name}: s at the largest N (ours 256, paper 512)",
                "§4.1 (1.5B, A100)",
                _PAPER_15B["s"][-1],
                _curve(model, "s"),
                "×",
                _CPU,
                n=trials,
            ),
            Headline(
                "kernel",
                f"{name}: m* strict (first N with s > 1)",
                "Table 17 (1.5B)",
                P.M_STAR["paper:qwen2.5-1.5b"]["strict"],
                f"m_star.{model}.strict",
                "tokens",
                _CPU,
            ),
            Headline(
                "kernel",
                f"{name}: m* safe (first N with s > 1.5)",
                "Table 17 (1.5B)",
                P.M_STAR["paper:qwen2.5-1.5b"]["safe"],
                f"m_star.{model}.safe",
                "tokens",
                _CPU,
            ),
        ]
    rows.append(
        Headline(
            "kernel",
            "Qwen2.5-1.5B shape on a GPU: s(8)",
            "§4.1 (1.5B, A100)",
            _PAPER_15B["s"][0],
            _absent,
            "×",
            _GPU_KERNEL,
        )
    )
    return tuple(rows)


_GPU_KERNEL = V.not_run_here(
    "needs a GPU (the paper profile times the 1.5B and 7B shapes in bf16 at P = 1024)",
    _PAPERMILL.format(*["02_kernel.ipynb"] * 2),
)
_GPU_SFT = V.not_run_here(
    "needs a GPU and the hub model Qwen/Qwen2.5-Coder-1.5B-Instruct",
    _PAPERMILL.format(*["07_sft_pilot.ipynb"] * 2) + " -p model Qwen/Qwen2.5-Coder-1.5B-Instruct",
)


def _udiff(corpus: str, tolerance: Tolerance) -> Headline:
    printed = P.TABLE3[corpus]["unified-diff"]["delta_printed"]
    what = f"{CORPUS_LABELS[corpus]} unified diff token overhead vs Copy-as-Decode"
    return Headline(
        "formats",
        what,
        "Table 3",
        float(printed.split("%")[0]),
        f"table3.{corpus}.unified-diff.delta_tok_pct",
        "%",
        tolerance,
        n=f"table3.{corpus}.unified-diff.n",
    )


def _timed_cases(numbers: dict) -> int:
    """The cases of chapter 6's timed sample."""
    return len(numbers["timed_cases"])


def _accounted(
    table: str, column: str, method: str, setting: str, invert: bool = False
) -> Callable[[dict], float]:
    """``column`` of chapter 6's every-case accounting (``accounting.summary``) or predicted
    speedups (``cost_model.predicted_speedups``), pooled over every accounted corpus, for one
    method and setting (``invert``: 1 / the value, e.g. forwards per gold id -> forwards saved)."""

    def get(numbers):
        rows = lookup(numbers, table)
        value = next(
            r[column]
            for r in rows
            if r["corpus"] == "pooled" and r["method"] == method and r["setting"] == setting
        )
        return 1 / value if invert else value

    return get


_DRAFTED = "m=0 +cursor +headers"  # the drafted decoder chapter 6 times (CopyDecoder drafts)


def _every_case_rows() -> tuple[Headline, ...]:
    """Chapter 6's forwards and predicted speedups counted on every case of every accounted
    corpus (no model, so no timing noise and no small sample), pooled."""
    acc, pred = "accounting.summary", "cost_model.predicted_speedups"
    rows = []
    for name, method, setting in (
        ("Copy-as-Decode", "Copy-as-Decode", "m=0"),
        ("Copy-as-Decode with drafts", "Copy-as-Decode", _DRAFTED),
        ("prompt lookup (best setting)", "prompt lookup", "best"),
    ):
        n = _accounted(acc, "cases", method, setting)
        rows += [
            Headline(
                "decoding",
                f"forced-oracle {name}: forwards saved vs AR, every case (pooled)",
                "§2.4",
                None,
                _accounted(acc, "pooled_fpt", method, setting, invert=True),
                "×",
                V.beyond(),
                n=n,
            ),
            Headline(
                "decoding",
                f"forced-oracle {name}: predicted speedup over AR, every case (pooled)",
                "§4.6",
                None,
                _accounted(pred, "pooled_speedup", method, setting),
                "×",
                V.beyond(),
                n=n,
            ),
        ]
    return tuple(rows)


_T2, _T3, _T6 = P.TABLE2, P.TABLE3, P.TABLE6
_LOSSLESS = P.LOSSLESSNESS["cases"]["pooled"]
_FSM_ROW, _PY = "FSM-constrained (untrained)", "SFT+FSM, Py-only"
_FSM_PARSE_RATE = _pc(_T6[_FSM_ROW]["parsed"] / _T6[_FSM_ROW]["n"])
_SFT_EM = _pc(_T6[_PY]["em"] / _T6[_PY]["n"])


def _table2_counts(corpus: str, label: str) -> tuple[Headline, ...]:
    """Table 2's deterministic recounts for one code corpus: T, T_copy, K (exact) and f_line."""
    rows = [
        Headline(
            "ceiling",
            f"{label} {what}",
            "Table 2",
            _T2[corpus][key],
            f"line.{corpus}.{key}",
            paper_key=f"table2.{corpus}.{key}",
            n=f"line.{corpus}.n",
        )
        for key, what in (
            ("T", "gold tokens T"),
            ("T_copy", "copy tokens T_copy"),
            ("K", "copy spans K"),
        )
    ]
    rows.append(
        _pct(
            "ceiling",
            f"{label} line copy fraction f_line",
            "Table 2",
            _pc(_T2[corpus]["f_line"]),
            f"line.{corpus}.f_line",
            V.exact(_PRINTED),
            n=f"line.{corpus}.n",
        )
    )
    return tuple(rows)


def _fim_ended(what: str, arm: str) -> Headline:
    """Chapter 8's primary metric for one arm: the model ended the middle and the result
    parses (attempts closed by the token budget do not count; issue 34)."""
    label = arm.split(".", 1)[1].removeprefix("SmolLM2 untrained / ")
    return _pct(
        "fim",
        f"{what}: ended and parses, {label}",
        "ch. 8",
        None,
        _ratio(f"{arm}.ended_and_parses", f"{arm}.n"),
        V.beyond(),
        n=f"{arm}.n",
    )


HEADLINES: tuple[Headline, ...] = (
    # --- losslessness (§4.3, Appendix I, Table 4)
    Headline(
        "losslessness",
        "oracle round trip, byte-exact (pooled 3 corpora)",
        "§4.3",
        _LOSSLESS,
        "round_trip.pooled (paper's three).byte-exact",
        "cases",
        _ROUND_TRIP,
        n="round_trip.pooled (paper's three).cases",
    ),
    Headline(
        "losslessness",
        "escape fuzz round trips (of 10,000)",
        "App. I",
        P.QUOTED["App. I"][0],
        "escape_fuzz.round_trip",
        "strings",
        V.by_construction(
            "our escape is a bijection on entity-free text (by its "
            "construction, checked by property tests in chapter 1), so no "
            "fuzz string can fail; our fuzz strings are not the paper's"
        ),
        n="escape_fuzz.n",
    ),
    *_kernel_rows(),
    # --- ceiling (§4.2, Table 2, App. D)
    *appendix_rows(),
    *_table2_counts("heval-fix-py", "HEvalFix-Py"),
    Headline(
        "ceiling",
        "HEvalFix-Py p50 copy span (tokens)",
        "Table 2",
        _T2["heval-fix-py"]["p50"],
        "line.heval-fix-py.p50",
        tolerance=V.exact(0.5, _P50),
        paper_key="table2.heval-fix-py.p50",
        n="line.heval-fix-py.K",
    ),
    *_table2_counts("heval-fix-js", "HEvalFix-JS"),
    _pct(
        "ceiling",
        "ProbeEdit line copy fraction f_line",
        "Table 2",
        _pc(_T2["probeedit"]["f_line"]),
        "line.probeedit.f_line",
        _REMADE,
        n="line.probeedit.n",
    ),
    _pct(
        "ceiling",
        "HEvalFix-Py token-level copy fraction, m = 8",
        "§4.2 / App. D",
        _pc(P.TOKEN_LEVEL["m8"]["heval-fix-py"]),
        "token_level_f.heval-fix-py.8",
        V.exact(_PRINTED),
        n="line.heval-fix-py.n",
    ),
    _pct(
        "ceiling",
        "HEvalFix-JS token-level copy fraction, m = 8",
        "§4.2 / App. D",
        _pc(P.TOKEN_LEVEL["m8"]["heval-fix-js"]),
        "token_level_f.heval-fix-js.8",
        V.exact(_PRINTED),
        n="line.heval-fix-js.n",
    ),
    Headline(
        "ceiling",
        "HEvalFix-Py bnd_exact, paper's 7B curve",
        "Table 2",
        _T2["heval-fix-py"]["bnd_exact"],
        "bounds_paper_reference_curve.line.heval-fix-py.bnd_exact",
        "×",
        _FROM_PAPER_CURVE,
        n="line.heval-fix-py.n",
    ),
    Headline(
        "ceiling",
        "HEvalFix-JS bnd_exact, paper's 7B curve",
        "Table 2",
        _T2["heval-fix-js"]["bnd_exact"],
        "bounds_paper_reference_curve.line.heval-fix-js.bnd_exact",
        "×",
        _FROM_PAPER_CURVE,
        n="line.heval-fix-js.n",
    ),
    Headline(
        "ceiling",
        "HEvalFix-Py bnd_exact, our measured curve",
        "Table 2",
        _T2["heval-fix-py"]["bnd_exact"],
        "bounds_measured_curve.line.heval-fix-py.bnd_exact",
        "×",
        _CPU,
        n="line.heval-fix-py.n",
    ),
    # --- formats (§4.4, Table 3)
    Headline(
        "formats",
        "Copy-as-Decode round-trip EM (pooled)",
        "Table 3",
        _T3["pooled"]["cad"]["rt_em"],
        "table3.pooled.cad.rt_em",
        tolerance=_ROUND_TRIP,
        paper_key="table3.pooled.cad.rt_em",
        n="table3.pooled.cad.n",
    ),
    Headline(
        "formats",
        "unified diff round-trip EM (pooled)",
        "Table 3",
        _T3["pooled"]["unified-diff"]["rt_em"],
        "table3.pooled.unified-diff.rt_em",
        paper_key="table3.pooled.unified-diff.rt_em",
        n="table3.pooled.unified-diff.n",
    ),
    Headline(
        "formats",
        "search/replace round-trip EM (pooled)",
        "Table 3",
        _T3["pooled"]["search-replace"]["rt_em"],
        "table3.pooled.search-replace.rt_em",
        tolerance=V.not_comparable(
            "all 482 cases against the paper's 97 unidentified ones, "
            "and an anchor rule the paper does not state (formats "
            "chapter)"
        ),
        paper_key="table3.pooled.search-replace.rt_em",
        n="table3.pooled.search-replace.n",
    ),
    Headline(
        "formats",
        "HEvalFix-Py Copy-as-Decode mean output tokens",
        "Table 3",
        _T3["heval-fix-py"]["cad"]["mean"],
        "table3.heval-fix-py.cad.mean",
        "tokens",
        _SUBSET,
        paper_key="table3.heval-fix-py.cad.mean",
        n="table3.heval-fix-py.cad.n",
    ),
    _udiff("heval-fix-py", _UDIFF),
    _udiff("heval-fix-js", _UDIFF),
    _udiff("probeedit", _REMADE),
    # --- perturbation (§5, Table 8)
    _pct(
        "perturbation",
        "pooled trimmed EM at ε = 1",
        "Table 8",
        _pc(P.TABLE8["pooled"][1]),
        "table8.pooled.1.em_trimmed",
        V.not_comparable(
            "pooled over our re-made ProbeEdit, whose programs clamp less (perturbation chapter)"
        ),
        n="table8.pooled.1.runs",
    ),
    _pct(
        "perturbation",
        "HEvalFix-Py trimmed EM at ε = 1",
        "Table 8",
        _pc(P.TABLE8["heval-fix-py"][1]),
        "table8.heval-fix-py.1.em_trimmed",
        V.noise(5 * 164, _EPS),
        n="table8.heval-fix-py.1.runs",
        se="table8.heval-fix-py.1.em_trimmed_se",
    ),
    _pct(
        "perturbation",
        "HEvalFix-JS trimmed EM at ε = 1",
        "Table 8",
        _pc(P.TABLE8["heval-fix-js"][1]),
        "table8.heval-fix-js.1.em_trimmed",
        V.noise(5 * 164, _EPS),
        n="table8.heval-fix-js.1.runs",
        se="table8.heval-fix-js.1.em_trimmed_se",
    ),
    # --- decoding end to end (§2.3-2.4, App. H; the paper never measured this)
    _pct(
        "decoding",
        "free-run FSM decoding: parse rate (pooled)",
        "Table 6",
        _FSM_PARSE_RATE,
        _row("free_run", "corpus", "pooled", "parse rate"),
        _FSM_PARSES,
        n=_row("free_run", "corpus", "pooled", "cases"),
    ),
    _pct(
        "decoding",
        "free-run FSM decoding: strict-resolve rate (pooled)",
        "§2.3",
        None,
        _row("free_run", "corpus", "pooled", "strict-resolve rate"),
        V.beyond(),
        n=_row("free_run", "corpus", "pooled", "cases"),
    ),
    *_every_case_rows(),
    Headline(
        "decoding",
        "forced-oracle Copy-as-Decode: wall-clock speedup, timed sample "
        "(pooled; led by its longest case, chapter 6 §1)",
        "§4.6",
        None,
        "speed.pooled/Copy-as-Decode.speedup",
        "×",
        V.beyond(),
        n=_timed_cases,
    ),
    Headline(
        "decoding",
        "forced-oracle Copy-as-Decode with drafts: wall-clock speedup, timed sample (pooled)",
        "App. M",
        None,
        "speed.pooled/Copy-as-Decode +drafts.speedup",
        "×",
        V.beyond(),
        n=_timed_cases,
    ),
    Headline(
        "decoding",
        "prompt lookup on the same outputs: wall-clock speedup, timed sample (pooled)",
        "Table 9",
        None,
        "speed.pooled/prompt lookup.speedup",
        "×",
        V.beyond(),
        n=_timed_cases,
    ),
    Headline(
        "decoding",
        "c_mask (decoder): FSM work per masked step",
        "App. H",
        P.FIXED_COSTS["c_mask_ms"][0],
        _row("fixed_costs", "quantity", "c_mask: FSM work per masked step", "median"),
        "ms",
        _CPU,
    ),
    # --- SFT pilot (§5, Table 6)
    _pct(
        "sft_pilot",
        "FSM-constrained untrained model: held-out EM",
        "Table 6",
        _pc(_T6[_FSM_ROW]["em"] / _T6[_FSM_ROW]["n"]),
        f"{_FSM}.em_rate",
        V.not_comparable(
            "an empirical outcome of another untrained model (SmolLM2-135M "
            "against the paper's Qwen2.5-Coder-1.5B), not a property of the FSM; "
            "shown, not counted (SFT chapter)"
        ),
        n=f"{_FSM}.n",
    ),
    _pct(
        "sft_pilot",
        "FSM-constrained untrained model: parse rate",
        "Table 6",
        _FSM_PARSE_RATE,
        _ratio(f"{_FSM}.parsed", f"{_FSM}.n"),
        _FSM_PARSES,
        n=f"{_FSM}.n",
    ),
    _pct(
        "sft_pilot",
        "SFT+FSM Py-only: held-out EM",
        "Table 6",
        _SFT_EM,
        "table6.SFT+FSM, Py-only.em_rate",
        _SFT_SCALE,
        n="table6.SFT+FSM, Py-only.n",
    ),
    _pct(
        "sft_pilot",
        "SFT+FSM Py-only, the paper's recipe (1.5B, 3 seeds): held-out EM",
        "Table 6",
        _SFT_EM,
        _absent,
        _GPU_SFT,
    ),
    _pct(
        "sft_pilot",
        "SFT+FSM Py-only: parse rate",
        "Table 6",
        _pc(_T6[_PY]["parsed"] / _T6[_PY]["n"]),
        _ratio("table6.SFT+FSM, Py-only.parsed", "table6.SFT+FSM, Py-only.n"),
        _FSM_PARSES,
        n="table6.SFT+FSM, Py-only.n",
    ),
    Headline(
        "sft_pilot",
        "SFT+FSM Py-only: span-start accuracy",
        "Table 6",
        _T6[_PY]["start_acc"],
        "table6.SFT+FSM, Py-only.start_acc",
        tolerance=_SFT_SCALE,
        paper_key="table6.SFT+FSM, Py-only.start_acc",
        n="table6.SFT+FSM, Py-only.n",
    ),
    Headline(
        "sft_pilot",
        "SFT+FSM Py-only: span-end accuracy",
        "Table 6",
        _T6[_PY]["end_acc"],
        "table6.SFT+FSM, Py-only.end_acc",
        tolerance=_SFT_SCALE,
        paper_key="table6.SFT+FSM, Py-only.end_acc",
        n="table6.SFT+FSM, Py-only.n",
    ),
    # --- the companion system: quotient-grammar FIM constraint (beyond the paper)
    _pct(
        "fim",
        "recognizer agrees with ast.parse on random edits",
        "companion §IV-VI",
        None,
        "differential.edit_agreement",
        V.beyond(),
        n="differential.edits",
    ),
    _pct(
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


#: What this book adds beyond the paper, by chapter (shown on the summary page).
BEYOND_THE_PAPER: tuple[tuple[str, str], ...] = (
    (
        "01_losslessness",
        "a byte-exact round trip for every pair of strings (not up to a trailing "
        "newline), checked with property tests; an escape that is injective on all text",
    ),
    ("01_losslessness", "the four other HumanEvalPack languages (Java, Go, C++, Rust)"),
    (
        "02_kernel",
        "the splice checked against step-by-step decoding (logits and positions), and "
        "the cache restored between trials, shown",
    ),
    ("03_ceiling", "the paper's percentile definitions probed; Table 2 for four more languages"),
    (
        "04_formats",
        "every case instead of subsets; every failure classified; unified diffs "
        "applied by git apply; extra format variants (anchor disambiguation, diff context sizes)",
    ),
    ("05_perturbation", "start-only / end-only noise, and strict rejections under noise"),
    (
        "06_decoding",
        "the decoder measured end to end on a real model against autoregressive "
        "decoding and prompt lookup on the same outputs; range-valid line masks; tokenization at "
        "splice boundaries measured and handled",
    ),
    ("07_sft_pilot", "functional correctness of every resolved output (HumanEvalPack tests)"),
    (
        "08_fim_constraint",
        "the companion paper's quotient-grammar FIM constraint, built, checked "
        "against CPython, and applied to <gen> bodies",
    ),
)
