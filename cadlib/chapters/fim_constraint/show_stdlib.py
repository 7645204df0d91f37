"""The standard-library differential as chapter 8 shows it: the committed runs side by side
and the constraint's cost figure.

:mod:`cadlib.fim.stdlib` runs the differential check at scale (seeded cuts of the interpreter's
standard library, or of an installed package, against ``ast.parse``); the chapter's
``python -m cadlib.chapters.fim_constraint.commands stdlib`` writes its ``full`` runs
(``results/fim.full.json`` and, on a second codebase, ``results/fim.thirdparty.json``, read by
:func:`.run_evidence.load_runs`). Here: :func:`runs_table` (side by side) and
:func:`plot_costs` / :func:`plot_chapter_costs` (the constraint's construction and feeding
cost); their Markdown is :mod:`.text_stdlib`'.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from cadlib.metrics import rate_cell

__all__ = ["runs_table", "plot_costs", "plot_chapter_costs"]


def runs_table(runs: list[dict]) -> pd.DataFrame:
    """The committed differential runs side by side (one column per codebase): modules, cuts,
    perturbed middles, agreement, disagreements by place, false rejections, uncategorized
    disagreements and failures."""
    cols = {}
    for run in runs:
        s = run["summary"]

        def cell(entry):
            return rate_cell(entry["k"], entry["n"])

        places = s.get("disagreements_by_where", {})
        cols[run.get("codebase", "Python standard library")] = {
            "modules cut": s["files_cut"],
            "cuts": s["cuts"],
            "true middle viable and accepted": cell(s["true_middles_accepted"]),
            "perturbed middles": s["edits"],
            "still valid Python": cell(s["edits_valid"]),
            "can_end = ast.parse": cell(s["edit_agreement"]),
            "disagreements": s["disagreements"],
            "of them in f-string fields": places.get("f-string field", 0),
            "false rejections": s.get("false_rejections", "n/a"),
            "uncategorized": s["uncategorized"],
            "failures": s.get("failures", "n/a"),
        }
    return pd.DataFrame(cols)


def plot_costs(per_cut: pd.DataFrame, sweep: pd.DataFrame, label: str):
    """Two panels: the constraint's construction cost against the left context's length
    (cuts, and the whole-module sweep), and the cost per fed character of the true middle
    against the middle's length (medians per length bin)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    ax = axes[0]
    ax.scatter(per_cut.left_chars, 1e3 * per_cut.build_s, s=8, alpha=0.4, label="cuts")
    if len(sweep):
        for name, g in sweep.groupby("file"):
            g = g.sort_values("left_chars")
            ax.plot(g.left_chars, 1e3 * g.build_s, marker="o", label=f"sweep: {name}")
    ax.set_xscale("symlog", linthresh=100)
    ax.set_yscale("log")
    ax.set_xlabel("left context (characters)")
    ax.set_ylabel("construction (ms)")
    ax.set_title("building the constraint", fontsize=10)
    ax.legend(fontsize=7)
    ax = axes[1]
    per_char = 1e6 * per_cut.feed_s / per_cut.middle_chars.clip(lower=1)
    bins = pd.cut(per_cut.middle_chars, bins=[0, 50, 100, 150, 200, 250, 301], right=False)
    med = per_char.groupby(bins, observed=True).median()
    ax.scatter(per_cut.middle_chars, per_char, s=8, alpha=0.4, label="cuts")
    ax.plot([iv.mid for iv in med.index], med.values, marker="o", color="k", label="median")
    ax.set_yscale("log")
    ax.set_xlabel("true middle (characters)")
    ax.set_ylabel("feeding: µs per character")
    ax.set_title("feeding the middle", fontsize=10)
    ax.legend(fontsize=7)
    fig.suptitle(f"FIM constraint cost on standard-library cuts; {label}", fontsize=10)
    fig.tight_layout()
    return fig


def plot_chapter_costs(
    frame: pd.DataFrame, full: dict | None, sweep: pd.DataFrame, cpu: str, params: dict
):
    """:func:`plot_costs` of the full run's cuts (``full``), or of this sample's true middles
    (``frame``: :func:`~cadlib.fim.stdlib.stdlib_differential`) when no full run is
    committed; labelled with the machine ``cpu`` and ``params``' profile."""
    per_cut = (
        pd.DataFrame(full["cost"]["per_cut"])
        if full is not None
        else frame[frame.check == "true_middle"].dropna(subset=["build_s"])
    )
    return plot_costs(
        per_cut,
        sweep,
        f"{'full run' if full is not None else 'this sample'}; "
        f"sweep on this machine ({cpu}), profile {params['profile']}",
    )


def witness_table(runs: list[dict]) -> pd.DataFrame:
    """The committed soundness runs (:func:`.run_evidence.load_witness_runs`) side by side:
    cuts, accepted prefixes checked, witnesses found (and how many the state alone found),
    witnesses parsed, soundness failures, accepted prefixes without a witness, and dead
    prefixes (no witness asked); the middle kinds pooled."""
    cols = {}
    for run in runs:
        s = run["summary"]
        cols[run["codebase"]] = {
            "cuts": s["cuts"],
            "accepted prefixes checked": s["prefixes_checked"],
            "witnesses found": s["witnesses_found"],
            "of them from the state alone": s.get("found_from_state_alone", "n/a"),
            "witnesses CPython parsed": s["witnesses_parsed"],
            "soundness failures": s["failures"],
            "accepted, no witness within the search limit": s["no_witness"],
            "dead prefixes (no witness asked)": s["dead_prefixes"],
        }
    return pd.DataFrame(cols)
