"""The numbers a re-run of the chapters wrote match the committed ``results/*.json``.

``make test`` re-runs every chapter with ``CADLIB_RESULTS_DIR=_build/test-results`` and then
runs this file with ``CADLIB_RERUN_RESULTS_DIR`` pointing there; each field is compared with
the tolerance :mod:`cadlib.book.rerun_check` declares for it. Without that variable (a plain
``pytest tests``) there is no re-run to compare, and the tests say so as a skip.
"""

import json
import os
from pathlib import Path

import pytest

from cadlib.book.rerun_check import compare_records
from cadlib.paths import repo_root

COMMITTED = sorted(p for p in (repo_root() / "results").glob("*.json") if "." not in p.stem)


@pytest.mark.parametrize("committed", COMMITTED, ids=lambda p: p.stem)
def test_rerun_reproduces_committed_results(committed: Path):
    rerun_dir = os.environ.get("CADLIB_RERUN_RESULTS_DIR")
    if not rerun_dir:
        pytest.skip("no re-run to compare: `make test` sets CADLIB_RERUN_RESULTS_DIR")
    rerun = Path(rerun_dir) / committed.name
    assert rerun.exists(), f"the re-run wrote no {rerun}: did its chapter run?"
    differences = compare_records(
        committed.stem, json.loads(committed.read_text()), json.loads(rerun.read_text())
    )
    assert not differences, f"{len(differences)} field(s) differ:\n" + "\n".join(
        map(str, differences[:40])
    )
