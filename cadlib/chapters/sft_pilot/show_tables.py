"""Tables 6, 7 and 22 with the paper's figures beside ours, and the per-case frame."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from cadlib import paper as _paper

from .profiles import TRAIN_SET_LABELS
from .run import PAPER_TABLE7
from .run_scoring import CaseResult, summarize, taxonomy

__all__ = [
    "results_frame",
    "table6",
    "table6_row",
    "table7",
    "table22",
    "table22_outputs",
]


def _pct(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _ci(ci) -> str:
    return (
        "—"
        if ci is None or any(math.isnan(c) for c in ci)
        else (f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]")
    )


def _acc_cell(value, sd=None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.2f}" + (f" ± {sd:.2f}" if sd is not None and not math.isnan(sd) else "")


def table6_row(system: str, s: Mapping, source: str, free_form: bool = False) -> dict:
    """One Table 6 row from a :func:`summarize` dict (ours) or a paper entry; the last two
    columns are ours only: the identity-output count and the endpoint accuracies over the
    attempts whose output is not the input (no by-construction hits)."""
    n = s["n"]
    row = {
        "Source": source,
        "System": system,
        "EM": f"{s['em']}/{n} ({_pct(s['em'] / n if n else math.nan)}%)",
        "95% CI (%)": _ci(s.get("em_ci", s.get("ci"))),
        "Parse": "—" if free_form or "parsed" not in s else f"{s['parsed']}/{n}",
        "Start acc.": "—" if free_form else _acc_cell(s.get("start_acc"), s.get("start_acc_sd")),
        "End acc.": "—" if free_form else _acc_cell(s.get("end_acc"), s.get("end_acc_sd")),
        "Tests passed": (f"{s['tests_passed']}/{s['tests_run']}" if "tests_run" in s else "—"),
        # beyond the paper (issue 20): the degenerate policy, and endpoints without it
        "Identity": f"{s['identity']}/{n}" if "identity" in s else "—",
        "Start / end acc. excl. identity": "—"
        if free_form or "n_non_identity" not in s
        else (
            f"{_acc_cell(s['start_acc_non_identity'])} / {_acc_cell(s['end_acc_non_identity'])}"
            f" (n={s['n_non_identity']})"
        ),
    }
    return row


def table6(ours: Mapping[str, Sequence[CaseResult]], label: str) -> pd.DataFrame:
    """Table 6: the paper's rows, then ours (``label`` names model, hardware and profile).

    ``ours`` maps a system name to its results; systems whose results are all free-form
    (full regeneration) show no parse or endpoint figures.
    """

    rows = [table6_row(k, v, "paper (Qwen2.5-Coder-1.5B, L4)") for k, v in _paper.TABLE6.items()]
    rows.insert(
        0,
        table6_row(
            "Full regeneration (untrained)", _paper.REGEN, rows[0]["Source"], free_form=True
        ),
    )
    for system, results in ours.items():
        free = bool(results) and all(r.extra.get("free_form") for r in results)
        rows.append(table6_row(system, summarize(results), label, free_form=free))
    return pd.DataFrame(rows)


def table7(ours: Mapping[str, Sequence[CaseResult]]) -> pd.DataFrame:
    """Table 7: failure-mode counts and shares, the paper's two columns beside ours."""

    cols = {}
    for ts, counts in PAPER_TABLE7.items():
        cols[("paper", TRAIN_SET_LABELS[ts])] = counts
    for system, results in ours.items():
        cols[("ours", system)] = taxonomy(results)
    frame = {}
    for (source, name), counts in cols.items():
        total = sum(counts.values())
        frame[(source, name, "Count")] = {**counts, "Total": total}
        frame[(source, name, "%")] = {
            **{k: round(100 * v / total, 1) if total else math.nan for k, v in counts.items()},
            "Total": 100.0 if total else math.nan,
        }
    return pd.DataFrame(frame)


def results_frame(results: Sequence[CaseResult]) -> pd.DataFrame:
    """One row per attempt: id, system, EM, category, endpoint accuracies, tests, wall."""

    return pd.DataFrame(
        {
            "id": r.id,
            "system": r.system,
            "seed": r.extra.get("seed"),
            "em": r.em,
            "program_em": r.program_em,
            "parsed": r.parsed,
            "category": r.category,
            "start_acc": r.start_acc if not r.extra.get("free_form") else math.nan,
            "end_acc": r.end_acc if not r.extra.get("free_form") else math.nan,
            "n_ops_oracle": r.n_oracle_copies,
            "n_copies_pred": r.n_pred_copies,
            "tests": r.test_detail,
            "new_tokens": r.new_tokens,
            "wall_ms": 1e3 * r.wall_s,
        }
        for r in results
    )


def table22(cross: Mapping[str, Sequence[CaseResult]], label: str) -> pd.DataFrame:
    """Table 22: the Combined checkpoint on three held-out splits, paper beside ours."""
    rows = []
    for name, p in _paper.TABLE22.items():
        rows.append(
            {
                "Source": "paper (Qwen2.5-Coder-1.5B, L4)",
                "Held-out split": name,
                "n": p["n"],
                "EM": _pct(p["em_rate"]),
                "Prog. EM": f"{p['program_em']}/{p['n']}",
                "Start": _acc_cell(p["start_acc"]),
                "End": _acc_cell(p["end_acc"]),
                "Wall (ms)": p.get("wall_ms", "—"),
            }
        )
    for name, results in cross.items():
        s = summarize(results)
        rows.append(
            {
                "Source": label,
                "Held-out split": name,
                "n": s["n"],
                "EM": _pct(s["em_rate"]),
                "Prog. EM": f"{s['program_em']}/{s['n']}",
                "Start": _acc_cell(s["start_acc"]),
                "End": _acc_cell(s["end_acc"]),
                "Wall (ms)": round(s["wall_ms_median"]),
            }
        )
    return pd.DataFrame(rows)


def table22_outputs(cross: Mapping, label: str, profile: str) -> tuple[str | None, pd.DataFrame]:
    """Table 22 (the Combined model on other corpora) with no note; or, where this profile
    trains no Combined model, a Markdown note and the paper's figures alone."""
    if cross:
        return None, table22(cross, label)
    note = f"*Not run in profile {profile} (no Combined model); the paper's figures:*"
    return note, table22({}, label)
