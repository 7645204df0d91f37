"""The soundness check's sentence in chapter 8: does CPython parse every accepted prefix's
witness? (:mod:`cadlib.fim.witness_check`; the runs are the chapter's ``witness`` command's,
read by :func:`.run_evidence.load_witness_runs`; their table is
:func:`.show_stdlib.witness_table`.)
"""

from __future__ import annotations

__all__ = ["witness_markdown"]

_COMMAND = "python -m cadlib.chapters.fim_constraint.commands witness"


def _total(runs: list[dict], key: str) -> int:
    return sum(run["summary"][key] for run in runs)


def witness_markdown(runs: list[dict]) -> str:
    """One outcome-dependent paragraph on the committed soundness runs: no run, no failure, or
    the failures with the first one's shortest failing prefix; the prefixes without a witness
    are counted apart (the search's limit, evidence neither way)."""
    if not runs:
        return (
            "*No soundness run committed (`results/fim.witness.json` is absent); "
            f"`{_COMMAND}` writes it.*"
        )
    checked, found = _total(runs, "prefixes_checked"), _total(runs, "witnesses_found")
    failures, missing = _total(runs, "failures"), _total(runs, "no_witness")
    where = " and ".join(run["codebase"] for run in runs)
    if failures == 0:
        head = (
            f"CPython parsed the witness of every accepted prefix it was given: {found:,} "
            f"witnesses on {where}, 0 soundness failures."
        )
    else:
        ex = next(e for run in runs for e in run["summary"]["failure_examples"])
        head = (
            f"CPython rejected {failures:,} of {found:,} witnesses ({where}): each time the "
            f"recognizer's `can_end()` accepted a program CPython rejects, e.g. in "
            f"{ex['file']} ({ex['variant']}) the prefix ending `{ex['prefix'][-30:]!r}` "
            f"completed by `{ex['witness']!r}`."
        )
    tail = (
        f" The search found no witness within its limit for {missing:,} of the {checked:,} "
        "accepted prefixes: a witness ends only where `can_end()` holds, so an accepted prefix "
        "that cannot be completed would land there; they are undecided, not passed."
        if missing
        else ""
    )
    return head + tail
