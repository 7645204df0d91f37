"""Chapter 8's tables: its samples, rates, outcomes per case, costs and evidence runs.

Each function returns a DataFrame (or a caption, or a printed listing) for a notebook cell, in
the notebook's order: :func:`differential_text` (section 1); :func:`edit_shape_table`,
:func:`edit_caption`, :func:`rate_table`, :func:`edit_outcomes`, :func:`example_changes`
(section 2); :func:`problems_table`, :func:`fim_caption`, :func:`fim_outcomes` (section 3);
:func:`with_units` (section 4), :func:`arm_tests_table` (the large run's paired tests) and
:func:`maskspeed_table` (the mask-speed run). Every rate is shown with its ``n`` and a 95%
Wilson interval (:func:`cadlib.metrics.rate_cell`). The numbers behind them are
:mod:`.run`'s and :mod:`.run_costs`'; the figures are :mod:`.show_figures`', the standard
library's :mod:`.show_stdlib`'.
"""

from __future__ import annotations

import pandas as pd

from cadlib.fim.completion import ARMS, ENDS
from cadlib.fim.differential import summarize
from cadlib.grammar import Copy
from cadlib.metrics import rate_cell
from cadlib.oracle import oracle_program

from .run import PRIMARY, validity_table

__all__ = [
    "differential_text",
    "edit_shape_table",
    "edit_caption",
    "rate_table",
    "edit_outcomes",
    "example_changes",
    "problems_table",
    "fim_caption",
    "fim_outcomes",
    "with_units",
    "arm_tests_table",
    "maskspeed_table",
]


def differential_text(diff: pd.DataFrame, n_cases: int, params: dict, seed: int) -> str:
    """The differential check's sample and its :func:`cadlib.fim.summarize` figures."""
    return (
        f"{n_cases} cases x 2 sources x {params['diff_splits']} splits, "
        f"{params['diff_edits']} edits per split (seed {seed}):\n"
        + pd.Series(summarize(diff)).to_string()
    )


def edit_shape_table(cases) -> pd.DataFrame:
    """The localized-edit cases: document lines, the oracle program's op kinds (``C`` copy,
    ``G`` gen) and the gold body."""
    rows = []
    for c in cases:
        program = oracle_program(c.doc, c.gold)
        rows.append(
            dict(
                case=c.id,
                doc_lines=len(c.doc.split("\n")),
                program=" ".join("C" if isinstance(op, Copy) else "G" for op in program),
                gold_body=program.gens[0].text,
            )
        )
    return pd.DataFrame(rows)


def edit_caption(n_cases: int, params: dict) -> str:
    """The caption of the localized edits' rate table."""
    return (
        f"localized edits, HEvalFix-Py held-out ({n_cases} cases); {params['model']}; "
        f"budget {params['edit_budget']}; profile {params['profile']}"
    )


def rate_table(frame, by: list[str]) -> pd.DataFrame:
    """:func:`validity_table` for display: the primary metric first ("model ended & parses"),
    then the budget-closed attempts apart, ``ast.parse`` with them included, EM and tests
    (each rate as :func:`rate_cell`), then the count of each end (:data:`ENDS`) that occurs."""
    t = validity_table(frame, by)
    out = t[by].copy()
    for col, label in (
        (PRIMARY, "model ended & parses (primary)"),
        ("budget_closed", "closed by the budget"),
        ("parses", "ast.parse (budget-closed included)"),
        ("em", "EM"),
        ("passed", "tests pass"),
    ):
        out[label] = [rate_cell(k, n) for k, n in zip(t[col], t.n, strict=True)]
    for end in ENDS:
        if t[end].any():
            out[end] = t[end]
    return out


_SHORT_ENDS = {ENDS[0]: "ended", ENDS[2]: "budget ok", ENDS[3]: "budget, broken"}


def edit_outcomes(rows: pd.DataFrame) -> pd.DataFrame:
    """Per case (rows) and system / arm (columns) of localized-edit rows: how the body ended
    and whether the output parses (``"ended / parses"``, ``"budget, broken / syntax
    error"``, ...)."""
    grid = dict(index="case", columns=["system", "arm"], aggfunc="first", sort=False)
    ends = rows.pivot_table(values="end", **grid).map(lambda e: _SHORT_ENDS[e])
    parsed = rows.pivot_table(values="parses", **grid)
    return ends + parsed.map(lambda p: " / parses" if p else " / syntax error")


def example_changes(rows: pd.DataFrame, case, max_lines: int = 6) -> str:
    """For each localized-edit row of ``case``: its end, whether it parses, and the first
    ``max_lines`` lines of its output that are not lines of the gold."""
    gold = case.gold.split("\n")
    out = []
    for r in rows[rows.case == case.id].itertuples():
        changed = [line for line in r.output.split("\n") if line not in gold] or [
            "(no line differs from the gold)"
        ]
        out.append(f"{r.system}, {r.arm} ({r.end}, parses: {r.parses}): lines not in the gold:")
        out.append("    " + "\n    ".join(repr(line) for line in changed[:max_lines]))
    return "\n".join(out)


def problems_table(problems) -> pd.DataFrame:
    """The FIM problems: cut kind, true middle and its length, the ends of the contexts."""
    return pd.DataFrame(
        [
            dict(
                problem=p.id,
                cut=p.cut,
                middle=p.middle,
                chars=len(p.middle),
                left_ends=p.left[-25:],
                right_starts=p.right[:25],
            )
            for p in problems
        ]
    )


def fim_caption(n_problems: int, params: dict) -> str:
    """The caption of FIM completion's rate table."""
    return (
        f"FIM completion of HumanEval solutions ({n_problems} problems); {params['model']}; "
        f"prompt {params['fim_style']!r}; budget {params['fim_budget']}; "
        f"profile {params['profile']}"
    )


def fim_outcomes(rows: pd.DataFrame) -> pd.DataFrame:
    """Per FIM problem: parses or not in each arm, and the constrained arm's end and middle."""
    parsed = rows.pivot_table(
        index="problem", columns="arm", values="parses", aggfunc="first", sort=False
    )
    constrained = rows[rows.arm == ARMS[2]].set_index("problem")[["end", "middle"]]
    return parsed.map(lambda p: "parses" if p else "syntax error").join(constrained)


def with_units(table: pd.DataFrame, unit: str) -> pd.DataFrame:
    """``table`` with its ``median`` and ``p90`` columns named with their ``unit``."""
    return table.rename(columns={"median": f"median {unit}", "p90": f"p90 {unit}"})


def arm_tests_table(tests: pd.DataFrame) -> pd.DataFrame:
    """:func:`arm_tests` for display: each arm's rate with its interval, the discordant
    pairs and the p-values."""
    t = tests.copy()
    t["arm a"] = [f"{a}: {rate_cell(k, n)}" for a, k, n in zip(t.a, t.k_a, t.n, strict=True)]
    t["arm b"] = [f"{b}: {rate_cell(k, n)}" for b, k, n in zip(t.b, t.k_b, t.n, strict=True)]
    t["only a / only b"] = [f"{x} / {y}" for x, y in zip(t.a_only, t.b_only, strict=True)]
    t["p (Holm)"] = [f"{p:.3g} ({q:.3g})" for p, q in zip(t.p, t.p_holm, strict=True)]
    return t[
        [
            "part",
            "system",
            "outcome",
            "arm a",
            "arm b",
            "only a / only b",
            "p (Holm)",
            "significant",
        ]
    ]


def maskspeed_table(report: dict) -> pd.DataFrame:
    """One row per heap size, collector setting and arm: masks timed, median / p90 / mean ms,
    the collector's share, its largest pause in one mask, whether the two arms' masks were
    equal at every step, and (previous arm) the paired median ratio of its time to the current
    mask's."""
    table = pd.DataFrame(report["summary"])
    table = table.rename(columns={"median_ratio_to_first": "paired_ratio_to_current"})
    return table.set_index(["ballast_millions", "gc", "arm"])
