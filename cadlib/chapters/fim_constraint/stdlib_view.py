"""The standard-library differential as chapter 8 shows it: its sample's line and Markdown, the
committed runs side by side, and the cost figure.

:mod:`cadlib.fim.stdlib` runs the differential check at scale (seeded cuts of the interpreter's
standard library, or of an installed package, against ``ast.parse``) and writes its ``full``
runs (``python -m cadlib.fim.stdlib``: ``results/fim.full.json`` and, on a second codebase,
``results/fim.thirdparty.json``). This module is the chapter's view of them, kept out of the
``fim`` wing (the recognizer and its checks, no presentation): :func:`summary_markdown` of a
:func:`cadlib.fim.stdlib.stdlib_summary`, :func:`sample_line` (the chapter's sample),
:func:`load_full` / :func:`load_runs` (the committed runs of :data:`RUN_FILES`) and
:func:`runs_table` (side by side), :func:`chapter_markdown` (the interpreter's manifest, the
sample and the committed runs) and :func:`plot_costs` / :func:`plot_chapter_costs` (the
constraint's construction and feeding cost).
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from cadlib.fim.stdlib import manifest
from cadlib.metrics import rate_cell
from cadlib.paths import repo_root

__all__ = [
    "summary_markdown",
    "RUN_FILES",
    "load_runs",
    "runs_table",
    "load_full",
    "plot_costs",
    "sample_line",
    "chapter_markdown",
    "plot_chapter_costs",
]


def summary_markdown(summary: dict, title: str) -> str:
    """Markdown of a :func:`~cadlib.fim.stdlib.stdlib_summary`: cuts, rates with n and Wilson
    intervals, and the disagreements by category."""

    def cell(entry: dict) -> str:
        return rate_cell(entry["k"], entry["n"])

    kinds = summary["cuts_by_kind"]
    cats = ", ".join(f"{k}: {v}" for k, v in summary["disagreements_by_category"].items())
    places = summary.get("disagreements_by_where", {})
    where = ("; by place: " + ", ".join(f"{k}: {v}" for k, v in places.items())) if places else ""
    return (
        f"**{title}**: {summary['cuts']} cuts of {summary['files_cut']} modules "
        f"({len(kinds)} left | right cut-kind pairs, {min(kinds.values())} to "
        f"{max(kinds.values())} cuts each); every prefix of the true middle viable: "
        f"{cell(summary['true_middles_viable'])}; true middle accepted: "
        f"{cell(summary['true_middles_accepted'])}; {summary['edits']} perturbed middles "
        f"({cell(summary['edits_valid'])} still valid Python), `can_end` equal to "
        f"`ast.parse`: {cell(summary['edit_agreement'])}; disagreements: "
        f"{summary['disagreements']} ({cats or 'none'}{where}), false rejections: "
        f"{summary.get('false_rejections', 'n/a')}, uncategorized: "
        f"{summary['uncategorized']}."
    )


#: The committed differential runs: the standard library, then the second codebase.
RUN_FILES = ("fim.full.json", "fim.thirdparty.json")


def load_runs() -> list[dict]:
    """The committed runs of :data:`RUN_FILES` that exist, in that order."""
    runs = (load_full(repo_root() / "results" / name) for name in RUN_FILES)
    return [run for run in runs if run is not None]


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


def load_full(path: str | Path | None = None) -> dict | None:
    """``results/fim.full.json`` (the ``full`` run of :func:`cadlib.fim.stdlib.main`), or ``None``
    if absent."""
    path = Path(path) if path else repo_root() / "results" / "fim.full.json"
    return json.loads(path.read_text()) if path.exists() else None


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


def sample_line(summary: dict) -> str:
    """The chapter's one line on its sample: cuts, and uncategorized disagreements."""
    return (
        f"standard-library sample: {summary['cuts']} cuts, uncategorized disagreements: "
        f"{summary['uncategorized']}"
    )


def chapter_markdown(
    sources: dict[str, str],
    summary: dict,
    full: dict | None,
    profile: str,
    second: dict | None = None,
) -> str:
    """The chapter's Markdown: the interpreter and the :func:`~cadlib.fim.stdlib.manifest` of
    ``sources``, this run's sample (:func:`summary_markdown`) and the committed full run
    (:func:`load_full`: ``full``), or that none is committed; then the second codebase's run
    (``second``), if given."""
    man = manifest(sources)
    text = [
        f"*Python {man['python']} ({man['implementation']}), {man['files']} modules, "
        f"sha256 {man['sha256'][:12]}.*",
        summary_markdown(summary, f"This run's sample (profile {profile})"),
    ]
    if full is not None:
        fm = full["manifest"]
        text.append(
            summary_markdown(
                full["summary"], f"Full run, Python {fm['python']}, sha256 {fm['sha256'][:12]}"
            )
            + f" Command: `{full['command']}`."
        )
    else:
        text.append("*No full run committed (`results/fim.full.json` is absent).*")
    if second is not None:
        text.append(
            summary_markdown(
                second["summary"],
                f"Second codebase, "
                f"{second['codebase']}, sha256 "
                f"{second['manifest']['sha256'][:12]}",
            )
            + f" Command: `{second['command']}`."
        )
    return "\n\n".join(text)


def plot_chapter_costs(
    frame: pd.DataFrame, full: dict | None, sweep: pd.DataFrame, cpu: str, profile: str
):
    """:func:`plot_costs` of the full run's cuts (``full``), or of this sample's true middles
    (``frame``: :func:`~cadlib.fim.stdlib.stdlib_differential`) when no full run is
    committed."""
    per_cut = (
        pd.DataFrame(full["cost"]["per_cut"])
        if full is not None
        else frame[frame.check == "true_middle"].dropna(subset=["build_s"])
    )
    return plot_costs(
        per_cut,
        sweep,
        f"{'full run' if full is not None else 'this sample'}; "
        f"sweep on this machine ({cpu}), profile {profile}",
    )
