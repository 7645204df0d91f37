"""Chapter 8's tables, costs, per-case records and run summary (no model code here).

Every rate is shown with its ``n`` and a 95% Wilson interval (:func:`cadlib.metrics.wilson_ci`),
its percentage never rounded to 0 or 100 unless it is (:func:`percent`); outcomes are split by
how a body or middle ended (:data:`cadlib.fim.completion.ENDS`: closed by the model, by the
post-hoc trim, or by the budget), since a body the budget closed is not one the model finished.
The chapter's **primary metric** is :data:`PRIMARY`, "the model ended it and it parses" (a
finished, valid output); "parses" counts budget-closed outputs too and is reported beside it,
with the budget-closed attempts counted apart (issue 34).

The chapter's notebook calls, in its order: :func:`setting` (:func:`setting_label`);
:func:`differential_text`, :func:`differential_by_cut` (section 1); :func:`edit_shape_table`,
:func:`edit_caption`, :func:`rate_table`, :func:`edit_outcomes`, :func:`example_changes`,
:func:`edit_cost_table` (section 2); :func:`problems_table`, :func:`fim_caption`,
:func:`fim_outcomes` (section 3); :func:`per_step_table`, :func:`stage_table`,
:func:`generation_cost`, :func:`with_units` (section 4); :func:`chapter_numbers`,
:func:`write_chapter`, :func:`run_summary` (the results file). Its figures are in
:mod:`cadlib.chapters.fim_constraint.figures`, the standard library's in
:mod:`cadlib.chapters.fim_constraint.stdlib_view`.
``params`` below is the chapter's parameter dict (a
:data:`cadlib.chapters.fim_constraint.experiments.PROFILES` entry after the notebook's overrides).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from cadlib.fim.completion import ARMS, ENDS, FIM_USER
from cadlib.fim.differential import summarize
from cadlib.grammar import Copy
from cadlib.metrics import percent, rate_cell, wilson_ci
from cadlib.models import SMOLLM2, model_info
from cadlib.oracle import oracle_program
from cadlib.record.results import (
    hardware_info,
    results_dir,
    results_name,
    setting_label,
)
from cadlib.record.session import Chapter

__all__ = [
    "PRIMARY",
    "MASK_TARGET_MS",
    "mask_target_markdown",
    "validity_table",
    "rate_text",
    "step_costs",
    "cost_by_length",
    "system_labels",
    "rate_table",
    "edit_cost_table",
    "case_records",
    "write_case_records",
    "clean",
    "records",
    "run_summary",
    "setting",
    "run_label",
    "differential_text",
    "differential_by_cut",
    "edit_shape_table",
    "edit_caption",
    "edit_outcomes",
    "example_changes",
    "fim_caption",
    "problems_table",
    "fim_outcomes",
    "per_step_table",
    "stage_table",
    "generation_steps",
    "generation_cost",
    "with_units",
    "chapter_numbers",
    "write_chapter",
]


#: The primary outcome: the model ended the body or middle itself and the result parses.
PRIMARY = "ended_and_parses"


def validity_table(frame, by: list[str]):
    """Counts and rates per group: ``n``, ``parses``, ``em``, ``passed``,
    ``ended_and_parses`` (:data:`PRIMARY`: the model ended it and it parses), ``budget_closed``
    (attempts the token budget closed, whether or not they parse) and each end of :data:`ENDS`
    (counts), with the rates ``parse_rate``, ``em_rate``, ``pass_rate``, ``ended_rate`` (of
    :data:`PRIMARY`) and their 95% Wilson intervals ``*_ci95`` (``[lo, hi]``)."""
    frame = frame.assign(
        ended_and_parses=(frame.end == ENDS[0]) & frame.parses.astype(bool),
        budget_closed=frame.end.isin(ENDS[2:]),
    )
    g = frame.groupby(by, sort=False)
    out = g.agg(
        n=("parses", "size"),
        parses=("parses", "sum"),
        em=("em", "sum"),
        passed=("passed", lambda s: int(s.fillna(False).astype(bool).sum())),
        ended_and_parses=("ended_and_parses", "sum"),
        budget_closed=("budget_closed", "sum"),
    )
    ends = pd.crosstab([frame[k] for k in by], frame["end"]).reindex(
        columns=list(ENDS), fill_value=0
    )
    out = out.join(ends).fillna(0)
    for k in ("parses", "em", "passed", "ended_and_parses", "budget_closed", *ENDS):
        out[k] = out[k].astype(int)
    for k, name in (
        ("parses", "parse"),
        ("em", "em"),
        ("passed", "pass"),
        ("ended_and_parses", "ended"),
    ):
        out[f"{name}_rate"] = out[k] / out["n"]
        out[f"{name}_ci95"] = [list(wilson_ci(a, n)) for a, n in zip(out[k], out["n"], strict=True)]
    return out.reset_index()


def step_costs(frame, step_col: str):
    """Long table of per-step costs from :func:`localized_edit` / :func:`fim_completion`
    rows: ``middle_chars``, ``mask_s`` and the model step ``step_col`` (``forward_s`` or
    ``step_s``), one row per generated token of a constrained run."""
    rows = []
    for r in frame.itertuples():
        masks, steps, chars = r.mask_s, getattr(r, step_col), r.middle_chars
        for k, (m, c) in enumerate(zip(masks, chars, strict=False)):
            rows.append(
                dict(
                    system=r.system,
                    step=k,
                    middle_chars=c,
                    mask_s=m,
                    model_s=steps[k] if k < len(steps) else float("nan"),
                )
            )
    return pd.DataFrame(rows)


def cost_by_length(frame, bins=(0, 25, 50, 100, 200, 400, 800, 1600), value="seconds", by="method"):
    """Median (and 90th percentile) of ``value`` per ``by`` and middle-length bin."""
    labels = [f"{a}-{b - 1}" for a, b in zip(bins[:-1], bins[1:], strict=True)]
    cut = pd.cut(frame["middle_chars"], bins=list(bins), labels=labels, right=False)
    g = frame.assign(length=cut).groupby([by, "length"], observed=True)[value]
    return g.agg(
        steps="size", median="median", p90=lambda s: float(np.quantile(s, 0.9))
    ).reset_index()


def system_labels(model: str) -> tuple[str, str]:
    """Row labels of the untrained model and of its chapter-7 fine-tune, named after the model
    (``"SmolLM2 untrained"``, ``"SmolLM2 + SFT (ch. 7)"`` on the cpu profile; the hub name's
    last part on the paper profile), so no table of another profile is mislabelled."""
    short = "SmolLM2" if model == SMOLLM2 else model.rstrip("/").split("/")[-1]
    return f"{short} untrained", f"{short} + SFT (ch. 7)"


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


def edit_cost_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (system, arm) of :func:`cadlib.chapters.fim_constraint.experiments.localized_edit` rows:
    body forwards, median forward and mask milliseconds, mask p90, mask / forward, constraint
    setup."""

    def one(frame):
        mask = [x for r in frame.mask_s for x in r]
        fw = [x for r in frame.forward_s for x in r]
        setup = [x for x in frame.setup_s if x is not None and not pd.isna(x)]
        return pd.Series(
            {
                "gen forwards": len(fw),
                "forward ms (median)": 1e3 * np.median(fw) if fw else np.nan,
                "mask ms (median)": 1e3 * np.median(mask) if mask else np.nan,
                "mask ms (p90)": 1e3 * np.quantile(mask, 0.9) if mask else np.nan,
                "mask / forward": np.median(mask) / np.median(fw) if mask and fw else np.nan,
                "constraint setup ms (median)": 1e3 * np.median(setup) if setup else np.nan,
            }
        )

    return rows.groupby(["system", "arm"], sort=False)[list(rows.columns)].apply(one)


def _closed_by(end: str) -> str:
    return {ENDS[0]: "model", ENDS[1]: "trim"}.get(end, "budget")


def case_records(edit_rows: pd.DataFrame, fim_rows: pd.DataFrame) -> list[dict]:
    """One compact record per generated output (issue "per-case outputs"): ``part``
    (``"edit"`` or ``"fim"``), ``system, arm, id, cut, output, parses, em, passed, end,
    closed_by`` (model / trim / budget) and ``forwards`` (generated tokens)."""
    out = []
    for r in edit_rows.itertuples():
        out.append(
            dict(
                part="edit",
                system=r.system,
                arm=r.arm,
                id=r.case,
                cut=None,
                output=r.output,
                parses=bool(r.parses),
                em=bool(r.em),
                passed=None if r.passed is None else bool(r.passed),
                end=r.end,
                closed_by=_closed_by(r.end),
                forwards=int(r.body_tokens),
            )
        )
    for r in fim_rows.itertuples():
        out.append(
            dict(
                part="fim",
                system=r.system,
                arm=r.arm,
                id=r.problem,
                cut=r.cut,
                output=r.middle,
                parses=bool(r.parses),
                em=bool(r.em),
                passed=None if r.passed is None else bool(r.passed),
                end=r.end,
                closed_by=_closed_by(r.end),
                forwards=int(r.new_tokens),
            )
        )
    return out


def write_case_records(recs: list[dict], profile: str):
    """Write ``fim.cases.jsonl`` (``fim.<profile>.cases.jsonl`` off the cpu profile) next to
    the chapter's results (:func:`cadlib.record.results.results_dir`), one JSON object a line."""
    path = results_dir() / results_name("fim", profile).replace(".json", ".cases.jsonl")
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in recs)
    )
    return path


def clean(value):
    """Strict JSON: NaN -> ``None``, floats rounded to 6 digits, numpy scalars unwrapped."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else round(float(value), 6)
    return value.item() if isinstance(value, np.generic) else value


def records(table: pd.DataFrame, keys: list[str]) -> dict:
    """``{"k1 / k2": {column: value}}`` of a table (strict JSON via :func:`clean`)."""
    return {
        " / ".join(str(r[k]) for k in keys): {
            c: clean(r[c]) for c in table.columns if c not in keys
        }
        for r in table.to_dict(orient="records")
    }


def rate_text(entry: dict, key: str) -> str:
    return rate_cell(entry[key], entry["n"])


def _budget(entry: dict) -> str:
    """The budget-closed attempts of a :func:`validity_table` record, reported apart."""
    closed = entry[ENDS[2]] + entry[ENDS[3]]
    return f"{closed}/{entry['n']} ({entry[ENDS[3]]} not closable)"


def run_summary(numbers: dict, where: str) -> str:
    """Markdown of this run's headline counts (what the conclusion cites), every rate with its
    n and Wilson interval, read from the chapter's ``numbers``."""
    lines = []
    d = numbers["differential"]
    lines.append(
        f"* **Differential, HumanEval cuts**: {d['splits']} splits, true middles viable "
        f"in {percent(d['true_middles_all_prefixes_viable'])}% and accepted in "
        f"{percent(d['true_middles_accepted'])}%; {d['edits']} perturbed middles, "
        f"{d['disagreements']} disagreement(s) with `ast.parse`."
    )
    s = numbers.get("stdlib_differential")
    if s:
        # only what does not depend on the interpreter's patch release (its stdlib files)
        failures = f", {s['failures']} failure(s)" if "failures" in s else ""
        lines.append(
            f"* **Differential, standard-library cuts** (this profile's sample): "
            f"{s['cuts']} cuts, {s['uncategorized']} uncategorized disagreement(s) "
            f"with `ast.parse`{failures} (the rest, per interpreter, in section 1)."
        )
    for key, e in numbers["localized_edit"].items():
        lines.append(
            f"* **`<gen>` bodies, {key}**: ended by the model and parses (primary) "
            f"{rate_text(e, PRIMARY)}; closed by the budget {_budget(e)}; parses, "
            f"budget-closed included, {rate_text(e, 'parses')}; EM {rate_text(e, 'em')}, "
            f"tests pass {rate_text(e, 'passed')}."
        )
    for key, e in numbers["fim"].items():
        lines.append(
            f"* **FIM completion, {key}**: ended by the model and parses (primary) "
            f"{rate_text(e, PRIMARY)}; closed by the budget {_budget(e)}; parses, "
            f"budget-closed included, {rate_text(e, 'parses')}; tests pass "
            f"{rate_text(e, 'passed')}; trimmed {e[ENDS[1]]}."
        )
    return f"**This run** ({where}):\n\n" + "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The chapter's notebook, section by section
# --------------------------------------------------------------------------------------------


def run_label(params: dict, info: dict, hw: dict, n_ids: int, profile: str, seed: int) -> str:
    """The chapter's :func:`cadlib.record.results.setting_label`: model with size, dtype, attention
    and device, tokenizer size, seed, profile, then the machine with the torch threads
    (``params["threads"]``, else ``hw``'s); ``info``: :func:`cadlib.models.model_info`,
    ``hw``: :func:`cadlib.record.results.hardware_info`."""
    return setting_label(
        f"model {params['model']} ({info['parameters'] / 1e6:.0f}M, {info['dtype']}, "
        f"{info['attn_implementation']}, {info['device']})",
        f"its own tokenizer ({n_ids:,} ids)",
        f"seed {seed}",
        profile=profile,
        hw=hw,
        threads=params.get("threads") or hw.get("threads"),
    )


def setting(model, tokenizer, device: str, params: dict, seed: int) -> tuple:
    """``(model_info, hardware_info, label)`` of the loaded model on ``device``
    (:func:`run_label` at ``params["profile"]``)."""
    info, hw = model_info(model), hardware_info(device)
    return info, hw, run_label(params, info, hw, len(tokenizer), params["profile"], seed)


def differential_text(diff: pd.DataFrame, n_cases: int, params: dict, seed: int) -> str:
    """The differential check's sample and its :func:`cadlib.fim.summarize` figures."""
    return (
        f"{n_cases} cases x 2 sources x {params['diff_splits']} splits, "
        f"{params['diff_edits']} edits per split (seed {seed}):\n"
        + pd.Series(summarize(diff)).to_string()
    )


def differential_by_cut(diff: pd.DataFrame) -> pd.DataFrame:
    """Checks of a :func:`cadlib.fim.differential_check` frame per cut kind: true middles by
    left and by right cut; edits, edits that parse and agreeing verdicts by right cut."""
    true_mid, edits = diff[diff.check == "true_middle"], diff[diff.check == "edit"]
    return (
        pd.concat(
            {
                "left cut": true_mid.groupby("left_cut").size(),
                "right cut": true_mid.groupby("right_cut").size(),
                "edits": edits.groupby("right_cut").size(),
                "edits parsing": edits.groupby("right_cut").truth.sum(),
                "agreeing": edits.groupby("right_cut").agree.sum(),
            },
            axis=1,
        )
        .fillna(0)
        .astype(int)
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


def edit_caption(n_cases: int, params: dict) -> str:
    """The caption of the localized edits' rate table."""
    return (
        f"localized edits, HEvalFix-Py held-out ({n_cases} cases); {params['model']}; "
        f"budget {params['edit_budget']}; profile {params['profile']}"
    )


def fim_caption(n_problems: int, params: dict) -> str:
    """The caption of FIM completion's rate table."""
    return (
        f"FIM completion of HumanEval solutions ({n_problems} problems); {params['model']}; "
        f"prompt {params['fim_style']!r}; budget {params['fim_budget']}; "
        f"profile {params['profile']}"
    )


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


def fim_outcomes(rows: pd.DataFrame) -> pd.DataFrame:
    """Per FIM problem: parses or not in each arm, and the constrained arm's end and middle."""
    parsed = rows.pivot_table(
        index="problem", columns="arm", values="parses", aggfunc="first", sort=False
    )
    constrained = rows[rows.arm == ARMS[2]].set_index("problem")[["end", "middle"]]
    return parsed.map(lambda p: "parses" if p else "syntax error").join(constrained)


def per_step_table(steps: pd.DataFrame) -> pd.DataFrame:
    """:func:`cost_by_length` of :func:`cadlib.fim.per_step_cost` rows, in microseconds."""
    table = cost_by_length(steps, value="seconds", by="method")
    table[["median", "p90"]] *= 1e6
    return table


def stage_table(stages: pd.DataFrame) -> pd.DataFrame:
    """Steps, median and p90 milliseconds of each mask stage
    (:func:`cadlib.fim.step_cost.mask_stages`), and of the whole mask (its stages summed per
    step)."""
    table = stages.groupby("stage", sort=False).seconds.agg(
        steps="size", median=lambda s: 1e3 * s.median(), p90=lambda s: 1e3 * s.quantile(0.9)
    )
    total = stages.groupby(["problem", "step"]).seconds.sum()
    table.loc["whole mask"] = [len(total), 1e3 * total.median(), 1e3 * total.quantile(0.9)]
    return table


def generation_steps(edit_rows: pd.DataFrame, fim_rows: pd.DataFrame) -> pd.DataFrame:
    """The constrained runs' generated tokens (:func:`step_costs` of the ``<gen>`` bodies and of
    the FIM-constrained arm) in long form: ``method`` (the mask, or the model step) and its
    ``seconds`` per token, with ``middle_chars``."""
    steps = pd.concat(
        [
            step_costs(edit_rows[edit_rows.constrained], "forward_s").assign(where="<gen> bodies"),
            step_costs(fim_rows[fim_rows.arm == ARMS[2]], "step_s").assign(where="FIM"),
        ],
        ignore_index=True,
    )
    return pd.concat(
        [
            steps.assign(method="mask (ours, whole vocabulary)", seconds=steps.mask_s),
            steps.assign(method="model step (forward)", seconds=steps.model_s),
        ]
    )


def generation_cost(edit_rows: pd.DataFrame, fim_rows: pd.DataFrame) -> pd.DataFrame:
    """:func:`cost_by_length` of :func:`generation_steps`, in milliseconds."""
    long = generation_steps(edit_rows, fim_rows)
    table = cost_by_length(long.dropna(subset=["seconds"]), value="seconds", by="method")
    table[["median", "p90"]] *= 1e3
    return table


#: The mask's speed target (issue 22), milliseconds per step over the whole vocabulary.
MASK_TARGET_MS = {"median": 1.0, "p90": 5.0}


def mask_target_markdown(
    stages: pd.DataFrame, edit_rows: pd.DataFrame, fim_rows: pd.DataFrame, label: str
) -> str:
    """Whether the whole-vocabulary mask meets :data:`MASK_TARGET_MS`, along true middles
    (:func:`stage_table`'s whole mask) and in this run's constrained generation
    (:func:`generation_steps`), each with its step count, beside the model's step."""
    whole = stage_table(stages).loc["whole mask"]
    steps = generation_steps(edit_rows, fim_rows).dropna(subset=["seconds"])
    gen = steps[steps.method.str.startswith("mask")].seconds * 1e3
    fwd = steps[steps.method.str.startswith("model")].seconds * 1e3
    lines = [
        f"*Mask speed against the target (median ≤ {MASK_TARGET_MS['median']:g} ms, "
        f"p90 ≤ {MASK_TARGET_MS['p90']:g} ms); {label}:*",
        "",
    ]
    for where, n, med, p90 in (
        ("along true middles", int(whole.steps), whole["median"], whole.p90),
        ("in this run's constrained generation", len(gen), gen.median(), gen.quantile(0.9)),
    ):
        t_med, t_p90 = MASK_TARGET_MS["median"], MASK_TARGET_MS["p90"]
        verdict = "met" if med <= t_med and p90 <= t_p90 else "missed"
        lines.append(
            f"* {where} ({n} steps): median {med:.2f} ms, p90 {p90:.2f} ms: "
            f"**{verdict}** (median {med / t_med:.1f}×, p90 {p90 / t_p90:.1f}× the "
            "target)"
        )
    lines.append(
        f"* the model's step in the same runs: median {fwd.median():.1f} ms ({len(fwd)} steps)"
    )
    share = stages.groupby("stage", sort=False).seconds.sum() / stages.seconds.sum()
    lines.append(
        "* where the time goes along true middles (share of the summed stage times): "
        + ", ".join(f"{stage} {100 * x:.0f}%" for stage, x in share.items())
    )
    return "\n".join(lines)


def with_units(table: pd.DataFrame, unit: str) -> pd.DataFrame:
    """``table`` with its ``median`` and ``p90`` columns named with their ``unit``."""
    return table.rename(columns={"median": f"median {unit}", "p90": f"p90 {unit}"})


def chapter_numbers(
    params: dict,
    seed: int,
    corpus: str,
    checkpoint: str,
    info: dict,
    diff: pd.DataFrame,
    stdlib: dict,
    edit_rows: pd.DataFrame,
    fim_rows: pd.DataFrame,
    steps: pd.DataFrame,
    stages: pd.DataFrame,
) -> dict:
    """The chapter's ``numbers`` (strict JSON) from its frames: setting (``checkpoint``: what
    :func:`cadlib.chapters.fim_constraint.experiments.load_checkpoint` said), design, the
    differential checks (``stdlib``: :func:`cadlib.fim.stdlib.stdlib_summary`), validity and
    costs."""
    return {
        "setting": {
            "model": params["model"],
            "checkpoint": checkpoint,
            "model_info": info,
            "threads": params["threads"],
            "corpus": corpus,
            "seed": seed,
        },
        "design": {
            "edit": "held-out single-<gen> HEvalFix-Py cases, oracle copy spans, "
            "model-written bodies (localized-edit mode), GenBodyMask on "
            "prompt + left / right",
            "fim_cuts": f"line (1-{params['fim_max_lines']} lines) and char "
            f"(1-{params['fim_max_chars']} chars) cuts inside the canonical "
            f"solution",
            "fim_prompt": FIM_USER[params["fim_style"]],
            "fim_style": params["fim_style"],
            "ends": list(ENDS),
            "arms": list(ARMS),
        },
        "differential": clean(
            {**summarize(diff), "by_right_cut": differential_by_cut(diff).to_dict(orient="index")}
        ),
        "stdlib_differential": clean(stdlib),
        "localized_edit": records(validity_table(edit_rows, ["system", "arm"]), ["system", "arm"]),
        "localized_edit_cost_ms": records(
            edit_cost_table(edit_rows).reset_index(), ["system", "arm"]
        ),
        "fim": records(validity_table(fim_rows, ["arm"]), ["arm"]),
        "fim_by_cut": records(validity_table(fim_rows, ["cut", "arm"]), ["cut", "arm"]),
        "per_step_cost_us": records(per_step_table(steps), ["method", "length"]),
        "generation_cost_ms": records(generation_cost(edit_rows, fim_rows), ["method", "length"]),
        "mask_stages_ms": records(stage_table(stages).reset_index(), ["stage"]),
    }


def write_chapter(
    ch: Chapter, numbers: dict, edit_rows: pd.DataFrame, fim_rows: pd.DataFrame, device: str
) -> tuple:
    """Write the chapter's results (:meth:`cadlib.record.session.Chapter.write`, the seed among
    the params; no paper figures: our copy of the companion paper stops in §VI-A, before its
    evaluation) and its per-case records (:func:`write_case_records`); returns both paths."""
    path = ch.write(
        numbers,
        {},
        model=ch.P["model"],
        tokenizer=ch.P["model"],
        device=device,
        extra_params={"seed": ch.seed},
    )
    return path, write_case_records(case_records(edit_rows, fim_rows), ch.profile)
