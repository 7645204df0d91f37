"""Chapter 8's tables, costs, per-case records and run summary (no model code here).

Every rate is shown with its ``n`` and a 95% Wilson interval (:func:`cadlib.metrics.wilson_ci`);
outcomes are split by how a body or middle ended (:data:`cadlib.fim.completion.ENDS`: closed by
the model, by the post-hoc trim, or by the budget), since a body the budget closed is not one
the model finished.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from ..metrics import wilson_ci
from ..models import SMOLLM2
from ..results import results_dir, results_name
from .completion import ENDS

__all__ = ["validity_table", "step_costs", "cost_by_length", "system_labels", "rate_cell",
           "rate_table", "edit_cost_table", "case_records", "write_case_records", "clean",
           "records", "run_summary"]



def validity_table(frame, by: list[str]):
    """Counts and rates per group: ``n``, ``parses``, ``em``, ``passed``,
    ``ended_and_parses`` (the model ended it and it parses: a finished, valid output) and each
    end of :data:`ENDS` (counts), with the rates ``parse_rate``, ``em_rate``, ``pass_rate``
    and their 95% Wilson intervals ``*_ci95`` (``[lo, hi]``)."""
    frame = frame.assign(ended_and_parses=(frame.end == ENDS[0]) & frame.parses.astype(bool))
    g = frame.groupby(by, sort=False)
    out = g.agg(
        n=("parses", "size"),
        parses=("parses", "sum"),
        em=("em", "sum"),
        passed=("passed", lambda s: int(s.fillna(False).astype(bool).sum())),
        ended_and_parses=("ended_and_parses", "sum"),
    )
    ends = pd.crosstab([frame[k] for k in by], frame["end"]).reindex(
        columns=list(ENDS), fill_value=0
    )
    out = out.join(ends).fillna(0)
    for k in ("parses", "em", "passed", "ended_and_parses", *ENDS):
        out[k] = out[k].astype(int)
    for k, name in (("parses", "parse"), ("em", "em"), ("passed", "pass")):
        out[f"{name}_rate"] = out[k] / out["n"]
        out[f"{name}_ci95"] = [list(wilson_ci(a, n)) for a, n in
                               zip(out[k], out["n"], strict=True)]  # fmt: skip
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


def rate_cell(k: int, n: int) -> str:
    """``"k/n (p%, 95% CI lo-hi%)"`` (Wilson interval, :func:`cadlib.metrics.wilson_ci`)."""
    if n == 0:
        return "0/0"
    lo, hi = wilson_ci(int(k), int(n))
    return f"{k}/{n} ({100 * k / n:.0f}%, CI {100 * lo:.0f}-{100 * hi:.0f}%)"


def rate_table(frame, by: list[str]) -> pd.DataFrame:
    """:func:`validity_table` for display: each rate as :func:`rate_cell`, then the count of
    each end (:data:`ENDS`) that occurs."""
    t = validity_table(frame, by)
    out = t[by].copy()
    for col, label in (("parses", "ast.parse"), ("em", "EM"), ("passed", "tests pass")):
        out[label] = [rate_cell(k, n) for k, n in zip(t[col], t.n, strict=True)]
    out["model ended & parses"] = [rate_cell(k, n) for k, n in
                                   zip(t["ended_and_parses"], t.n, strict=True)]  # fmt: skip
    for end in ENDS:
        if t[end].any():
            out[end] = t[end]
    return out


def edit_cost_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (system, arm) of :func:`cadlib.fim.experiments.localized_edit` rows: body forwards,
    median forward and mask milliseconds, mask p90, mask / forward, constraint setup."""

    def one(frame):
        mask = [x for r in frame.mask_s for x in r]
        fw = [x for r in frame.forward_s for x in r]
        setup = [x for x in frame.setup_s if x is not None and not pd.isna(x)]
        return pd.Series({
            "gen forwards": len(fw),
            "forward ms (median)": 1e3 * np.median(fw) if fw else np.nan,
            "mask ms (median)": 1e3 * np.median(mask) if mask else np.nan,
            "mask ms (p90)": 1e3 * np.quantile(mask, 0.9) if mask else np.nan,
            "mask / forward": np.median(mask) / np.median(fw) if mask and fw else np.nan,
            "constraint setup ms (median)": 1e3 * np.median(setup) if setup else np.nan,
        })  # fmt: skip

    return rows.groupby(["system", "arm"], sort=False)[list(rows.columns)].apply(one)


def _closed_by(end: str) -> str:
    return {ENDS[0]: "model", ENDS[1]: "trim"}.get(end, "budget")


def case_records(edit_rows: pd.DataFrame, fim_rows: pd.DataFrame) -> list[dict]:
    """One compact record per generated output (issue "per-case outputs"): ``part``
    (``"edit"`` or ``"fim"``), ``system, arm, id, cut, output, parses, em, passed, end,
    closed_by`` (model / trim / budget) and ``forwards`` (generated tokens)."""
    out = []
    for r in edit_rows.itertuples():
        out.append(dict(part="edit", system=r.system, arm=r.arm, id=r.case, cut=None,
                        output=r.output, parses=bool(r.parses), em=bool(r.em),
                        passed=None if r.passed is None else bool(r.passed), end=r.end,
                        closed_by=_closed_by(r.end), forwards=int(r.body_tokens)))
    for r in fim_rows.itertuples():
        out.append(dict(part="fim", system=r.system, arm=r.arm, id=r.problem, cut=r.cut,
                        output=r.middle, parses=bool(r.parses), em=bool(r.em),
                        passed=None if r.passed is None else bool(r.passed), end=r.end,
                        closed_by=_closed_by(r.end), forwards=int(r.new_tokens)))
    return out


def write_case_records(recs: list[dict], profile: str):
    """Write ``fim.cases.jsonl`` (``fim.<profile>.cases.jsonl`` off the cpu profile) next to
    the chapter's results (:func:`cadlib.results.results_dir`), one JSON object a line."""
    path = results_dir() / results_name("fim", profile).replace(".json", ".cases.jsonl")
    path.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                            for r in recs))  # fmt: skip
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
    return {" / ".join(str(r[k]) for k in keys): {c: clean(r[c]) for c in table.columns
                                                   if c not in keys}
            for r in table.to_dict(orient="records")}  # fmt: skip


def _rate(entry: dict, key: str) -> str:
    return rate_cell(entry[key], entry["n"])


def run_summary(numbers: dict, where: str) -> str:
    """Markdown of this run's headline counts (what the conclusion cites), every rate with its
    n and Wilson interval, read from the chapter's ``numbers``."""
    lines = []
    d = numbers["differential"]
    lines.append(f"* **Differential, HumanEval cuts**: {d['splits']} splits, true middles viable "
                 f"in {d['true_middles_all_prefixes_viable']:.0%} and accepted in "
                 f"{d['true_middles_accepted']:.0%}; {d['edits']} perturbed middles, "
                 f"{d['disagreements']} disagreement(s) with `ast.parse`.")
    s = numbers.get("stdlib_differential")
    if s:
        # only what does not depend on the interpreter's patch release (its stdlib files)
        lines.append(f"* **Differential, standard-library cuts** (this profile's sample): "
                     f"{s['cuts']} cuts, {s['uncategorized']} uncategorized disagreement(s) "
                     f"with `ast.parse` (the rest, per interpreter, in section 1).")
    for key, e in numbers["localized_edit"].items():
        lines.append(f"* **`<gen>` bodies, {key}**: parses {_rate(e, 'parses')}, ended by the "
                     f"model and parses {_rate(e, 'ended_and_parses')}, EM {_rate(e, 'em')}, "
                     f"tests pass {_rate(e, 'passed')}; closed by the budget "
                     f"{e[ENDS[2]] + e[ENDS[3]]} ({e[ENDS[3]]} not closable).")
    for key, e in numbers["fim"].items():
        lines.append(f"* **FIM completion, {key}**: parses {_rate(e, 'parses')}, ended by the "
                     f"model and parses {_rate(e, 'ended_and_parses')}, tests pass "
                     f"{_rate(e, 'passed')}; trimmed {e[ENDS[1]]}, closed by the budget "
                     f"{e[ENDS[2]] + e[ENDS[3]]} ({e[ENDS[3]]} not closable).")
    return f"**This run** ({where}):\n\n" + "\n".join(lines)
