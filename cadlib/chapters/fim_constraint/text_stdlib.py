"""The standard-library differential's Markdown in chapter 8: the sample's line, a run's
summary and the chapter's paragraph on the interpreter, the sample and the committed runs.

:func:`summary_markdown` of a :func:`cadlib.fim.stdlib.stdlib_summary`, :func:`sample_line`
(the chapter's sample) and :func:`chapter_markdown` (the interpreter's manifest, the sample and
the committed runs, :func:`.run_evidence.load_full`). The runs side by side and the cost figure
are :mod:`.show_stdlib`'.
"""

from __future__ import annotations

from cadlib.fim.stdlib import manifest
from cadlib.metrics import rate_cell

__all__ = ["summary_markdown", "sample_line", "chapter_markdown"]


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
    params: dict,
    second: dict | None = None,
) -> str:
    """The chapter's Markdown: the interpreter and the :func:`~cadlib.fim.stdlib.manifest` of
    ``sources``, this run's sample (:func:`summary_markdown`, at ``params``' profile) and the
    committed full run (:func:`.run_evidence.load_full`: ``full``), or that none is committed;
    then the second codebase's run (``second``), if given."""
    man = manifest(sources)
    text = [
        f"*Python {man['python']} ({man['implementation']}), {man['files']} modules, "
        f"sha256 {man['sha256'][:12]}.*",
        summary_markdown(summary, f"This run's sample (profile {params['profile']})"),
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
