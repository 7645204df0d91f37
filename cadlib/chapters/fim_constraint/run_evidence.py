"""Chapter 8's committed evidence runs, read back: the large run with the paired tests of its
arms, the standard-library differential's full runs and the mask-speed run.

The large run (``results/fim.large.json`` and its case records, :func:`load_run`) is the
chapter's own at its ``large`` profile (:data:`LARGE` records it); the paired comparisons of the
arms are declared before any is made (:data:`ARM_PAIRS`, :data:`ARM_OUTCOMES`: McNemar's exact
test, Holm-adjusted together, :func:`arm_tests`), and a committed run's rates follow the current
definitions (:func:`rates_from_cases`). The standard-library runs (:data:`RUN_FILES`,
:func:`load_runs`) and the mask-speed run (:data:`MASKSPEED_FILE`, :func:`load_maskspeed`) are
written by the chapter's commands (:mod:`.commands`: ``stdlib``, ``maskspeed``), and so are the
soundness runs (:data:`WITNESS_FILES`, :func:`load_witness_runs`: ``witness``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from cadlib.fim.completion import ENDS
from cadlib.metrics import ALPHA, holm, mcnemar_exact
from cadlib.paths import repo_root
from cadlib.record.results import (
    committed_path,
    load_committed,
    read_results_file,
    results_name,
)

from .run import PRIMARY, records, validity_table

__all__ = [
    "LARGE",
    "ARM_PAIRS",
    "ARM_OUTCOMES",
    "load_run",
    "arm_tests",
    "rates_from_cases",
    "records_of",
    "RUN_FILES",
    "load_runs",
    "load_full",
    "MASKSPEED_FILE",
    "LLGUIDANCE_FILE",
    "load_llguidance",
    "load_maskspeed",
    "WITNESS_FILES",
    "load_witness_runs",
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


#: The committed differential runs: the standard library, then the second codebase.
RUN_FILES = ("fim.full.json", "fim.thirdparty.json")


def load_runs() -> list[dict]:
    """The committed runs of :data:`RUN_FILES` that exist, in that order."""
    runs = (load_full(repo_root() / "results" / name) for name in RUN_FILES)
    return [run for run in runs if run is not None]


def load_full(path: str | Path | None = None) -> dict | None:
    """``results/fim.full.json`` (the ``full`` run of the chapter's ``stdlib`` command), or
    ``None`` if absent."""
    path = Path(path) if path else repo_root() / "results" / "fim.full.json"
    return json.loads(path.read_text()) if path.exists() else None


MASKSPEED_FILE = "fim.maskspeed.json"


def load_maskspeed() -> dict | None:
    """The committed mask-speed run, or ``None`` when none is committed."""
    return read_results_file(MASKSPEED_FILE)


#: The committed reference run: llguidance on the same states (the ``llguidance`` command).
LLGUIDANCE_FILE = "fim.llguidance.json"


def load_llguidance() -> dict | None:
    """The committed llguidance reference run, or ``None`` when none is committed."""
    return read_results_file(LLGUIDANCE_FILE)


#: The committed soundness runs (the ``witness`` command's): the standard library, then the
#: second codebase.
WITNESS_FILES = ("fim.witness.json", "fim.witness.thirdparty.json")


def load_witness_runs() -> list[dict]:
    """The committed runs of :data:`WITNESS_FILES` that exist, in that order."""
    runs = (read_results_file(name) for name in WITNESS_FILES)
    return [run for run in runs if run is not None]
