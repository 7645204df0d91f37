"""Does the book reproduce on my machine? The report ``make book`` writes.

``make book`` re-runs every chapter's cpu profile on the reader's machine with its results
sent to ``_build/reproduction/results`` (the committed ``results/`` stay as they are), then
:func:`build_report` compares each file with the committed one, field by field, under the
tolerances :mod:`cadlib.book.rerun_check` declares: a field is the *same*, *within tolerance* (a
model float another CPU rounds differently), or *differs*. Timings are never expected to
match across machines; they are compared as ratios (re-run / committed) and judged against
:data:`TIMING_BAND`. The report is a JSON file and a page of the built book
(``book/reproduction.ipynb``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import pandas as pd

from cadlib.paths import repo_root

from .rerun_check import compare_fields, tolerances
from .summary.tables import chapter_runtimes

__all__ = [
    "REPORT",
    "TIMING_BAND",
    "build_report",
    "chapter_rows",
    "chapter_table",
    "differences_table",
    "load_report",
    "report_markdown",
]

#: Where ``make book`` writes the report, relative to the repository root.
REPORT = Path("_build/reproduction/report.json")
#: A timing ratio (re-run / committed) inside this band reads as the same class of machine.
TIMING_BAND = (0.5, 2.0)


def _timing_ratios(fields) -> list[float]:
    return [
        f.rerun / f.committed
        for f in fields
        if f.verdict == "timing"
        and isinstance(f.committed, int | float)
        and isinstance(f.rerun, int | float)
        and not isinstance(f.committed, bool)
        and f.committed > 0
        and f.rerun > 0
    ]


def chapter_rows(rerun_dir: Path, committed_dir: Path | None = None) -> list[dict]:
    """One row per committed cpu-profile results file: counts of its numbers the same and
    within tolerance, of the compared fields that differ, the differences themselves, and the
    timing ratios' median and range, judged against :data:`TIMING_BAND`."""
    committed_dir = committed_dir or repo_root() / "results"
    rows = []
    for committed_path in sorted(committed_dir.glob("*.json")):
        committed = json.loads(committed_path.read_text())
        chapter = committed.get("chapter")
        if chapter not in tolerances() or committed.get("profile") != "cpu":
            continue
        rerun_path = Path(rerun_dir) / committed_path.name
        if not rerun_path.exists():
            rows.append({"chapter": chapter, "file": committed_path.name, "re-run": False})
            continue
        fields = list(compare_fields(chapter, committed, json.loads(rerun_path.read_text())))
        numbers = [f for f in fields if f.path.startswith("numbers.")]
        count = {v: sum(f.verdict == v for f in numbers) for v in ("same", "within tolerance")}
        count["differs"] = sum(f.verdict == "differs" for f in fields)
        ratios = _timing_ratios(fields)
        rows.append(
            {
                "chapter": chapter,
                "file": committed_path.name,
                "re-run": True,
                **count,
                "differences": [_difference(f) for f in fields if f.verdict == "differs"],
                **_timing_summary(ratios),
            }
        )
    return rows


def _difference(field) -> dict:
    return {
        "path": field.path,
        "committed": field.committed,
        "re-run": field.rerun,
        "tolerance": field.tolerance.kind,
        "why": field.tolerance.why,
    }


def _timing_summary(ratios: list[float]) -> dict:
    if not ratios:
        return {"timings": 0}
    lo, hi = TIMING_BAND
    median = statistics.median(ratios)
    return {
        "timings": len(ratios),
        "timing ratio (median)": round(median, 3),
        "timing ratio (min)": round(min(ratios), 3),
        "timing ratio (max)": round(max(ratios), 3),
        "timings in band": lo <= median <= hi,
    }


def build_report(rerun_dir: Path, out: Path, committed_dir: Path | None = None) -> dict:
    """Compare the re-run in ``rerun_dir`` with the committed results and write the report
    to ``out`` (JSON); return it."""
    rows = chapter_rows(rerun_dir, committed_dir)
    report = {"rerun_dir": str(rerun_dir), "timing_band": list(TIMING_BAND), "chapters": rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=str) + "\n")
    return report


def load_report(path: Path | None = None) -> dict | None:
    """The report ``make book`` wrote (:data:`REPORT`), or ``None`` before one was made."""
    path = path or repo_root() / REPORT
    return json.loads(path.read_text()) if path.exists() else None


def report_markdown(report: dict | None) -> str:
    """The report's verdict in a few sentences: every chapter re-run, how many fields agree,
    which differ, and whether the timings are of the same class of machine."""
    if report is None:
        minutes = chapter_runtimes()["cpu profile"].sum()
        return (
            "**No reproduction on this machine yet.** `make book` re-runs every chapter's "
            f"cpu profile here (the committed cpu runs took about {minutes:.0f} minutes in "
            "all, one chapter after another, on the machines that made them) and fills "
            "this page with each number of your run beside the committed one."
        )
    rows = report["chapters"]
    missing = [r["chapter"] for r in rows if not r["re-run"]]
    ran = [r for r in rows if r["re-run"]]
    same = sum(r["same"] + r["within tolerance"] for r in ran)
    differs = sum(r["differs"] for r in ran)
    lo, hi = report["timing_band"]
    text = [
        f"**{len(ran)} of {len(rows)} chapters re-run.** {same} compared fields reproduce "
        f"(exactly, or within their declared tolerance); **{differs} differ**."
    ]
    if missing:
        text.append(f"Not re-run: {', '.join(missing)}.")
    slow = [r["chapter"] for r in ran if r.get("timings") and not r["timings in band"]]
    text.append(
        "Timings, as ratios of your run to the committed one: "
        + (
            f"outside {lo}–{hi}× in {', '.join(slow)} (another class of machine, or a busy one)."
            if slow
            else f"within {lo}–{hi}× in every chapter."
        )
    )
    return " ".join(text)


def chapter_table(report: dict) -> pd.DataFrame:
    """One row per chapter: numbers the same, within tolerance, fields that differ, and the
    timing ratios (re-run / committed)."""
    rows = [{k: v for k, v in r.items() if k != "differences"} for r in report["chapters"]]
    return pd.DataFrame(rows).set_index("chapter")


def differences_table(report: dict | None) -> pd.DataFrame:
    """Every field that differs beyond its tolerance, chapter by chapter."""
    rows = [
        {"chapter": r["chapter"], **d}
        for r in (report or {}).get("chapters", [])
        for d in r.get("differences", [])
    ]
    return pd.DataFrame(
        rows, columns=["chapter", "path", "committed", "re-run", "tolerance", "why"]
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m cadlib.book.reproduction RERUN_DIR [--out REPORT]``: write the report; exit 1
    when a field differs."""
    parser = argparse.ArgumentParser(
        prog="python -m cadlib.book.reproduction", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("rerun_dir", type=Path)
    parser.add_argument("--out", type=Path, default=repo_root() / REPORT)
    args = parser.parse_args(argv)
    if not args.rerun_dir.is_dir():
        print(f"reproduction: error: no re-run results at {args.rerun_dir}", file=sys.stderr)
        return 2
    report = build_report(args.rerun_dir, args.out)
    print(report_markdown(report).replace("**", ""))
    print(f"report: {args.out}")
    return 0 if all(r.get("differs", 0) == 0 for r in report["chapters"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
