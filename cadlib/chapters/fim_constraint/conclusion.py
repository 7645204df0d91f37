"""Chapter 8's evidence run and its conclusion: the large run read back, the paired tests of the
arms declared before any was made (McNemar's exact test, Holm-adjusted together), and the
generated conclusion, which says what held only when its test says so."""

from __future__ import annotations

import pandas as pd

from cadlib.fim.completion import ENDS
from cadlib.metrics import ALPHA, holm, mcnemar_exact, rate_cell
from cadlib.record.provenance import evidence_caption
from cadlib.record.replay import replayed_run_note
from cadlib.record.results import committed_path, load_committed, results_name

from .report import PRIMARY, rate_text, records, run_summary, validity_table

__all__ = [
    "answer",
    "conclusion_markdown",
    "primary_tests_markdown",
    "rates_from_cases",
    "records_of",
    "LARGE",
    "load_run",
    "arm_tests",
    "arm_tests_table",
    "large_run_markdown",
    "evidence_outputs",
]


#: The command that records ``results/fim.large.json``, its case records and its per-run
#: records; ``make replay CHAPTER=08_fim_constraint PROFILE=large`` then renders it as the chapter.
LARGE = "make record CHAPTER=08_fim_constraint PROFILE=large"


#: The paired comparisons of the arms, declared before any is made: (part, arm a, arm b);
#: the ``<gen>``-body part is compared per system.
ARM_PAIRS = (
    ("edit", "FIM-constrained", "unconstrained"),
    ("fim", "FIM-constrained", "unconstrained"),
    ("fim", "FIM-constrained + context trim", "unconstrained + context trim"),
)


#: The outcomes compared, the primary one (:data:`PRIMARY`) first; "parses" counts what the
#: budget closed and is secondary.
ARM_OUTCOMES = {PRIMARY: "model ended & parses", "parses": "parses", "passed": "tests pass"}


def load_run(profile: str = "large") -> tuple[dict, pd.DataFrame] | None:
    """``(results, case records)`` of the committed ``fim.<profile>`` run (the repository's
    ``results/``, :func:`cadlib.record.results.load_committed`, whatever folder a re-run writes
    to), or ``None``."""
    results = load_committed("fim", profile)
    cases = committed_path(results_name("fim", profile).replace(".json", ".cases.jsonl"))
    return (results, pd.read_json(cases, lines=True)) if results and cases.exists() else None


def arm_tests(records: pd.DataFrame) -> pd.DataFrame:
    """McNemar's exact test (:func:`cadlib.metrics.mcnemar_exact`) of each pair of
    :data:`ARM_PAIRS` on each outcome of :data:`ARM_OUTCOMES`, on the same cases, with
    Holm-adjusted p-values over the whole family (level
    :data:`cadlib.metrics.ALPHA`)."""
    recs = records.assign(
        ended_and_parses=(records.end == ENDS[0]) & records.parses,
        passed=records.passed.fillna(False).astype(bool),
    )
    rows = []
    for part, a, b in ARM_PAIRS:
        sub = recs[recs.part == part]
        for system, g in sub.groupby("system", sort=False):
            ga = g[g.arm == a].set_index("id").sort_index()
            gb = g[g.arm == b].set_index("id").sort_index()
            if ga.empty or gb.empty:
                continue
            if list(ga.index) != list(gb.index):
                raise ValueError(f"{part} {system}: arms {a!r} and {b!r} hold different cases")
            for key, label in ARM_OUTCOMES.items():
                t = mcnemar_exact(list(ga[key]), list(gb[key]))
                rows.append(
                    dict(
                        part=part,
                        system=system,
                        a=a,
                        b=b,
                        outcome=label,
                        n=t["n"],
                        k_a=t["a"],
                        k_b=t["b"],
                        a_only=t["a_only"],
                        b_only=t["b_only"],
                        p=t["p"],
                    )
                )
    out = pd.DataFrame(rows)
    if len(out):
        out["p_holm"] = holm(list(out.p))
        out["significant"] = out.p_holm < ALPHA
    return out


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


def rates_from_cases(records: pd.DataFrame) -> dict:
    """``{"localized_edit": ..., "fim": ...}``: :func:`validity_table` records recomputed from
    a run's case records (:func:`case_records`), so a committed run's rates follow the
    current definitions (the primary metric, the budget-closed attempts)."""
    recs = records.assign(em=records.em.astype(bool))
    edit, fim = recs[recs.part == "edit"], recs[recs.part == "fim"]
    return {
        "localized_edit": records_of(edit, ["system", "arm"]) if len(edit) else {},
        "fim": records_of(fim, ["arm"]) if len(fim) else {},
    }


def records_of(frame: pd.DataFrame, by: list[str]) -> dict:
    """:func:`records` of :func:`validity_table` of ``frame`` grouped ``by``."""
    return records(validity_table(frame, by), by)


def large_run_markdown(
    results: dict, tests: pd.DataFrame, cases: pd.DataFrame | None = None
) -> str:
    """What the committed large run found, generated from its numbers: its setting, each
    arm's rates (:func:`run_summary`; recomputed from its case records ``cases`` when given,
    :func:`rates_from_cases`) and the paired tests, the primary metric's first."""
    r = results
    if cases is not None:
        r = {**results, "numbers": {**results["numbers"], **rates_from_cases(cases)}}
    p = r["params"]
    edits = (
        "every held-out single-`<gen>` edit case"
        if p["edit_cases"] is None
        else f"{p['edit_cases']} held-out single-`<gen>` edit cases"
    )
    where = (
        f"profile {r['profile']}, {r['model']}, seed {p['seed']}, {p['fim_cases']} FIM "
        f"problems, {edits}; machine: {r['hardware']['cpu']}, "
        f"{r['hardware']['cores']} cores"
    )
    sig = tests[tests.significant]
    found = (
        "; ".join(
            f"{x.part} ({x.system}), {x.outcome}: {x.a} {x.k_a}/{x.n} vs {x.b} "
            f"{x.k_b}/{x.n}, Holm p {x.p_holm:.3g}"
            for x in sig.itertuples()
        )
        if len(sig)
        else "none"
    )
    return (
        f"{run_summary(r['numbers'], where)}\n\n{primary_tests_markdown(tests)}\n\n"
        f"**Paired differences significant at {ALPHA} (Holm, {len(tests)} tests):** "
        f"{found}."
    )


def evidence_outputs(
    large: tuple[dict, pd.DataFrame] | None, tests: pd.DataFrame | None, profile: str
) -> tuple[str, pd.DataFrame | None]:
    """The chapter's section on its evidence run (:func:`load_run`: the large run and its case
    records; ``tests``: its :func:`arm_tests`), as ``(markdown, the paired tests' table or
    None)``: at the ``large`` profile (the run the book shows) that this chapter *is* that run,
    with its provenance, and the paired tests of its arms; at a smaller one the large run's
    setting, rates and tests beside this run's; the command that records it when none is
    committed."""
    if large is None:
        return f"No `large` run is committed; it is recorded by `{LARGE}`.", None
    results, cases = large
    caption = evidence_caption(results, "fim.large.json")
    if profile == results["profile"]:
        text = (
            f"{replayed_run_note('fim', profile, LARGE)} The paired tests of its arms:"
            f"\n\n{primary_tests_markdown(tests)}\n\n{caption}"
        )
    else:
        text = (
            f"{large_run_markdown(results, tests, cases)}\n\n*Regenerate with* `{LARGE}`."
            f"\n\n{caption}"
        )
    return text, arm_tests_table(tests)


def primary_tests_markdown(tests: pd.DataFrame) -> str:
    """The paired tests (:func:`arm_tests`) of the primary outcome, one line each."""
    prim = tests[tests.outcome == ARM_OUTCOMES[PRIMARY]] if len(tests) else tests
    lines = [
        f"* {x.part} ({x.system}): {x.a} {rate_cell(x.k_a, x.n)} vs {x.b} "
        f"{rate_cell(x.k_b, x.n)}; discordant {x.a_only} / {x.b_only}, McNemar p "
        f"{x.p:.3g}, Holm p {x.p_holm:.3g}: "
        f"{'significant' if x.significant else 'not significant'}"
        for x in prim.itertuples()
    ]
    return "**Primary metric, model ended & parses (paired on the same cases):**\n\n" + (
        "\n".join(lines) if lines else "* no paired arms"
    )


def conclusion_markdown(numbers: dict, tests: pd.DataFrame | None, full_runs: list[dict]) -> str:
    """The chapter's conclusion, generated: the differential runs' failures (``full_runs``: the
    committed :mod:`cadlib.fim.stdlib` runs, :func:`.stdlib_view.load_runs`), this run's primary
    metric per arm, and what the large run's paired tests of the primary metric (``tests``:
    :func:`arm_tests`, or ``None``) support; it follows the primary metric, never the
    budget-inflated "parses"."""
    out = []
    for run in full_runs:
        s = run["summary"]
        verdict = (
            "no failure"
            if s.get("failures", s["uncategorized"]) == 0
            else f"{s.get('failures', s['uncategorized'])} failure(s) to fix"
        )
        out.append(
            f"On {run.get('codebase', 'the standard library')} ({s['cuts']} cuts, "
            f"{s['edits']} perturbed middles) the constraint disagrees with `ast.parse` "
            f"{s['disagreements']} time(s), false rejections "
            f"{s.get('false_rejections', 'not counted')}: {verdict}."
        )
    for part, label in (("localized_edit", "`<gen>` bodies"), ("fim", "FIM completion")):
        cells = "; ".join(f"{key} {rate_text(e, PRIMARY)}" for key, e in numbers[part].items())
        out.append(f"This run's primary metric (model ended & parses), {label}: {cells}.")
    if tests is None or not len(tests):
        out.append("No large run is committed, so no paired test of the arms is made here.")
        return " ".join(out)
    prim = tests[tests.outcome == ARM_OUTCOMES[PRIMARY]]
    won = prim[prim.significant & (prim.k_a > prim.k_b)]
    lost = prim[prim.significant & (prim.k_a < prim.k_b)]
    if len(won):
        out.append(
            "In the large run the constraint raises the primary metric significantly "
            "(Holm) in: "
            + ", ".join(
                f"{x.part} ({x.system}, {x.k_a} vs {x.k_b}/{x.n})" for x in won.itertuples()
            )
            + "."
        )
    if len(lost):
        out.append(
            "It lowers it significantly in: "
            + ", ".join(
                f"{x.part} ({x.system}, {x.k_a} vs {x.k_b}/{x.n})" for x in lost.itertuples()
            )
            + "."
        )
    if not len(won) and not len(lost):
        out.append(
            f"In the large run no paired difference in the primary metric survives "
            f"Holm ({len(prim)} comparisons; "
            + ", ".join(
                f"{x.part} ({x.system}) {x.k_a} vs {x.k_b}/{x.n}, p {x.p:.3g}"
                for x in prim.itertuples()
            )
            + "): the constraint is not shown to make the model finish more valid "
            "middles."
        )
    inflated = tests[(tests.outcome == ARM_OUTCOMES["parses"]) & tests.significant]
    if len(inflated) and not len(won):
        out.append(
            f"The significant differences in *parses* ({len(inflated)}) count middles "
            "the token budget closed, which the model never finished; they are not "
            "evidence for the primary metric."
        )
    return " ".join(out)


def answer(numbers: dict, where: str) -> str:
    """The chapter's question answered with its own numbers (the opening's **Answer.**):
    agreement with CPython, the primary metric (ended by the model and parses) without and
    with the constraint for each model's ``<gen>`` bodies and for FIM completion, and the
    mask's median cost beside the forward's."""
    d = numbers["differential"]
    s = numbers.get("stdlib_differential") or {}
    exact = d["disagreements"] == 0 and not s.get("uncategorized")
    std = (
        f" and left {s['uncategorized']} unexplained disagreements over {s['cuts']} "
        "standard-library cuts"
        if s
        else ""
    )

    def pair(rows: dict, label: str) -> str:
        base, cons = rows[f"{label}unconstrained"], rows[f"{label}FIM-constrained"]
        return f"from {base[PRIMARY]}/{base['n']} to {cons[PRIMARY]}/{cons['n']}"

    edits = numbers["localized_edit"]
    models = list(dict.fromkeys(k.rsplit(" / ", 1)[0] for k in edits))
    bodies = " and ".join(f"{pair(edits, m + ' / ')} ({m})" for m in models)
    costs = [
        c
        for k, c in numbers.get("localized_edit_cost_ms", {}).items()
        if k.endswith("FIM-constrained") and c.get("mask ms (median)") is not None
    ]
    cost = (
        ""
        if not costs
        else " Its mask over the whole vocabulary costs a median of "
        + " / ".join(f"{c['mask ms (median)']:.1f}" for c in costs)
        + " ms per generated token, beside a forward of "
        + " / ".join(f"{c['forward ms (median)']:.0f}" for c in costs)
        + " ms."
    )
    return (
        f"{'Yes' if exact else 'Not always'}, as far as syntax goes: the recognizer agreed "
        f"with `ast.parse` on {d['edits'] - d['disagreements']} of {d['edits']} perturbed "
        f"HumanEval middles{std}. With the constraint, the `<gen>` bodies that the model "
        f"ended and that parse go {bodies}, and FIM completions {pair(numbers['fim'], '')} "
        f"({where}): the constraint blocks invalid text but cannot make the model "
        f"finish.{cost}"
    )
