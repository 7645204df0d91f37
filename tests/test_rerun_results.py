"""The numbers a re-run of the chapters wrote match the committed ``results/*.json``.

``make test`` re-runs every chapter with ``CADLIB_RESULTS_DIR=_build/test-results`` and then
runs this file with ``CADLIB_RERUN_RESULTS_DIR`` pointing there; each field is compared with
the tolerance :mod:`cadlib.book.rerun_check` declares for it. Without that variable (a plain
``pytest tests``) there is no re-run to compare, and the tests say so as a skip.

Compared: every chapter's cpu run (``<chapter>.json``: the reference of ``make book``'s
reproduction report) and the evidence run each chapter shows when its notebook is committed
at a larger profile (``<chapter>.<profile>.json``, :func:`cadlib.chapters.shown_results`):
nbval replays the committed notebooks, and the Makefile replays those chapters at the cpu
profile too (``EVIDENCE_NOTEBOOKS``; checked below).
"""

import json
import os
from pathlib import Path

import pytest

from cadlib.book.rerun_check import compare_records
from cadlib.chapters import notebooks, shown_results
from cadlib.paths import repo_root

RESULTS = repo_root() / "results"
SHOWN = shown_results()
COMMITTED = sorted(
    {
        *(p for p in RESULTS.glob("*.json") if "." not in p.stem),
        *(RESULTS / name for name in SHOWN.values()),
    }
)


@pytest.mark.parametrize("committed", COMMITTED, ids=lambda p: p.stem)
def test_rerun_reproduces_committed_results(committed: Path):
    rerun_dir = os.environ.get("CADLIB_RERUN_RESULTS_DIR")
    if not rerun_dir:
        pytest.skip("no re-run to compare: `make test` sets CADLIB_RERUN_RESULTS_DIR")
    rerun = Path(rerun_dir) / committed.name
    assert rerun.exists(), f"the re-run wrote no {rerun}: did its chapter run?"
    differences = compare_records(
        committed.stem.split(".")[0],
        json.loads(committed.read_text()),
        json.loads(rerun.read_text()),
    )
    assert not differences, f"{len(differences)} field(s) differ:\n" + "\n".join(
        map(str, differences[:40])
    )


def test_the_makefile_replays_the_cpu_run_of_every_chapter_committed_at_another_profile():
    """A chapter whose notebook shows an evidence run is not re-run at cpu by nbval: the
    Makefile's ``EVIDENCE_NOTEBOOKS`` lists exactly those chapters, so their cpu results are
    still re-derived (under replay) and compared here."""
    makefile = (repo_root() / "Makefile").read_text()
    line = next(x for x in makefile.splitlines() if x.startswith("EVIDENCE_NOTEBOOKS :="))
    listed = set(line.split(":=", 1)[1].split())
    evidence = {
        f"notebooks/{notebooks()[c]}.ipynb" for c, name in SHOWN.items() if name != f"{c}.json"
    }
    assert listed == evidence
