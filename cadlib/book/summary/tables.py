"""The summary's tables: every headline judged against the results files, and the setting.

:func:`headline_table` reads each chapter's ``results/<chapter>.json``, finds our value of every
declared headline (:func:`cadlib.book.summary.headlines.all_headlines`) and computes its verdict
with :func:`cadlib.book.verdicts.judge` from ours, the paper's and n. A missing results file or
key is shown as "not yet run".
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from cadlib.book import verdicts as V
from cadlib.chapters import evidence_runs, notebooks
from cadlib.paths import repo_root
from cadlib.record.params import notebook_parameter
from cadlib.record.results import (
    find_results_file,
    load_committed,
    results_dir,
    results_name,
)

from .headlines import all_headlines
from .spec import Headline, _get

__all__ = [
    "load_all",
    "judge_headline",
    "headline_table",
    "count_markdown",
    "setting_table",
    "chapter_runtimes",
]


def load_all(folder: Path | None = None) -> dict[str, dict]:
    """Every chapter's results by chapter name: its largest committed evidence run (the
    cards' ``evidence``, :func:`cadlib.chapters.evidence_runs`, through
    :func:`cadlib.record.results.find_results_file` when ``folder`` is not given) where one
    exists, else ``<chapter>.json`` (the cpu profile's). Results of other profiles
    (``paper``, ``smoke``, ...) are not read here."""
    given = folder is not None
    folder = folder or results_dir()
    rows = {}
    for path in sorted(p for p in folder.glob("*.json") if "." not in p.stem):
        rows[path.stem] = _largest(path.stem, folder, given) or json.loads(path.read_text())
    return rows


def _largest(chapter: str, folder: Path, only_here: bool) -> dict | None:
    """The chapter's largest committed evidence run in ``folder`` (``only_here`` false: else
    where :func:`cadlib.record.results.find_results_file` finds it), or None."""
    for profile in evidence_runs().get(chapter, ()):
        name = results_name(chapter, profile)
        path = folder / name if only_here else find_results_file(name)
        if path.exists():
            record = json.loads(path.read_text())
            if "numbers" in record:  # a chapter's results file, not another tool's report
                return record
    return None


def _our_value(h: Headline, record: dict | None) -> float | None:
    """Our figure for ``h`` from its chapter's results record, or None when not recorded."""
    return None if record is None else _get(h.ours, record.get("numbers", {}), h.scale)


def judge_headline(
    h: Headline, record: dict | None
) -> tuple[float | None, float | None, V.Verdict]:
    """Ours, our n, and the verdict of :func:`cadlib.book.verdicts.judge` for one headline."""
    numbers = (record or {}).get("numbers", {})
    ours, n = _our_value(h, record), _get(h.n, numbers)
    se = _get(h.se, numbers, h.scale)
    verdict = V.judge(h.tolerance, ours, h.paper, n=None if n is None else int(n), se=se)
    return ours, n, verdict


def headline_table(results: dict[str, dict] | None = None) -> pd.DataFrame:
    """One row per headline: paper, ours, n, ratio, computed verdict (``status``) with the
    test's arithmetic (``detail``), the declared reason (``why``) and our profile."""
    results = load_all() if results is None else results
    rows = []
    for h in all_headlines():
        record = results.get(h.chapter)
        ours, n, verdict = judge_headline(h, record)
        rows.append(
            {
                "chapter": h.chapter,
                "figure": h.label,
                "where": h.section,
                "unit": h.unit,
                "paper": h.paper,
                "ours": ours,
                "n": n,
                "ratio": ours / h.paper if ours is not None and h.paper else None,
                "status": verdict.verdict,
                "detail": verdict.detail,
                "why": h.why,
                "profile": record["profile"] if record else "",
            }
        )
    return pd.DataFrame(rows)


def count_markdown(table: pd.DataFrame) -> str:
    """The count line at the top of the summary (:func:`cadlib.book.verdicts.count_line`)."""
    return V.count_line(table["status"])


def setting_table(results: dict[str, dict] | None = None) -> pd.DataFrame:
    """Per chapter: profile, model, tokenizer, hardware and when the figures were made."""
    results = load_all() if results is None else results
    rows = []
    for chapter, r in results.items():
        hw = r.get("hardware", {})
        hardware = f"{hw.get('cpu', '?')} ({hw.get('cores', '?')} cores)"
        if hw.get("gpu"):
            hardware += f", {hw['gpu']}"
        rows.append(
            {
                "chapter": chapter,
                "profile": r.get("profile"),
                "model": r.get("model") or "none",
                "tokenizer": r.get("tokenizer") or "none",
                "hardware": hardware,
                "torch": hw.get("torch", ""),
                "created": r.get("created", ""),
            }
        )
    return pd.DataFrame(rows).set_index("chapter")


def chapter_runtimes(folder: Path | None = None) -> pd.DataFrame:
    """How long each chapter takes, in minutes: ``measured`` is the run its page shows (its
    profile): the span of its recorded measurement (the load monitor's, from the first model
    load to the results file, :mod:`cadlib.record.provenance`; none for a chapter without a
    model); ``cpu profile`` is what ``make book`` re-runs on a machine like the one that
    recorded it: the committed page's own execution when the page is the cpu run (papermill's
    metadata), or the cpu run's measuring span, whichever is longer (a page replayed from its
    records executes in seconds)."""
    folder = folder or repo_root() / "notebooks"
    rows = []
    for chapter, stem in notebooks().items():
        path = folder / f"{stem}.ipynb"
        if not path.exists():
            continue
        meta = json.loads(path.read_text()).get("metadata", {}).get("papermill", {})
        profile = notebook_parameter(path, "profile")
        shown, cpu = load_committed(chapter, profile), load_committed(chapter)
        page_s = (meta.get("duration") or 0.0) if profile == "cpu" else 0.0
        cpu_s = max(page_s, _measuring_s(cpu) or 0.0)
        recorded = str((shown or {}).get("created", ""))[:16].replace("T", " ")
        rows.append(
            {
                "chapter": stem,
                "profile": profile,
                "measured": _minutes(_measuring_s(shown)),
                "cpu profile": _minutes(cpu_s or None),
                "recorded": recorded,
            }
        )
    return pd.DataFrame(rows).set_index("chapter")


def _measuring_s(record: dict | None) -> float | None:
    """The seconds a results file's load monitor ran (its measurement), or ``None``."""
    load = ((record or {}).get("provenance") or {}).get("load") or {}
    return load.get("seconds") or None


def _minutes(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds / 60, 1)
