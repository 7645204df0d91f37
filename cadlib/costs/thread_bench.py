"""``cad edit`` with its default threads against ``--threads 1``, on a quiet and on a busy
machine (issue 36.2): the check that the default holds up under load.

Each run is a fresh ``cad edit`` process (a forced edit along the oracle program of the
standard library's ``bisect.py`` with ``mid`` renamed ``middle``, and a 3-line edit of the
same file), timed from its summary line (decode seconds) and from outside (wall seconds,
model load included). "Busy" means one spinning background process, which the OS places on
one of the cores, as any other program on a laptop would. Timings depend on the machine and
on whatever else runs: run it on an otherwise quiet machine, e.g.::

    python -m cadlib.cli.thread_bench --out results/cli.threads.json

and read the JSON (one record per load x setting x case, each with its seconds, and the
provenance of the run: commit and the load of processes other than the benchmark and its
spinner, :mod:`cadlib.record.provenance`). The serving page shows the committed run
(:func:`thread_table`).
"""

from __future__ import annotations

import bisect
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from cadlib.decoding.cpu_threads import usable_cores
from cadlib.oracle import oracle_program
from cadlib.paths import repo_root
from cadlib.record.provenance import monitor, provenance
from cadlib.record.results import read_results_file, write_run_report

__all__ = [
    "COMMITTED",
    "SETTINGS",
    "bench_cases",
    "busy_core",
    "committed",
    "run_edit",
    "thread_benchmark",
    "thread_table",
]

#: The committed run the serving page shows.
COMMITTED = "cli.threads.json"

#: The thread settings compared: ``cad edit``'s default, and one thread.
SETTINGS = {"default": [], "threads 1": ["--threads", "1"]}

_SUMMARY = re.compile(r"forwards, ([\d.]+) s, .*?, (\d+) threads?\b")


def bench_cases(folder: Path) -> dict[str, tuple[Path, Path]]:
    """``{case: (doc, program)}`` written to ``folder``: ``rename`` (the oracle program of
    ``bisect.py`` -> ``mid`` renamed ``middle``) and ``3-line`` (its first three lines
    rewritten, the rest copied)."""
    doc = Path(bisect.__file__).read_text()
    renamed = re.sub(r"\bmid\b", "middle", doc)
    lines = doc.split("\n")
    three = "\n".join(["# edited"] * 3 + lines[3:])
    cases = {}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bisect.py").write_text(doc)
    for name, gold in (("rename", renamed), ("3-line", three)):
        program = folder / f"{name}.prog"
        program.write_text(str(oracle_program(doc, gold)))
        cases[name] = (folder / "bisect.py", program)
    return cases


@contextlib.contextmanager
def busy_core(busy: bool = True):
    """One spinning background process meanwhile (nothing when ``busy`` is false)."""
    if not busy:
        yield None
        return
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)  # let the scheduler see it before the next measurement of idle cores
        yield proc
    finally:
        proc.kill()
        proc.wait()


def run_edit(doc: Path, program: Path, args=(), command=None) -> dict:
    """One ``cad edit DOC --program PROGRAM ARGS`` process: its decode seconds and thread count
    (from the summary line) and its wall seconds. ``command``: the argv prefix (default:
    this Python running ``cadlib.cli``)."""
    command = list(command or [sys.executable, "-m", "cadlib.cli"])
    argv = [
        *command,
        "edit",
        str(doc),
        "--instruction",
        "Apply the program.",
        "--program",
        str(program),
        *args,
    ]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"cad edit failed ({proc.returncode}): {proc.stderr.strip()}")
    m = _SUMMARY.search(proc.stderr)
    if not m:
        raise RuntimeError(f"no summary line in: {proc.stderr.strip()}")
    return dict(decode_s=float(m[1]), threads=int(m[2]), wall_s=wall)


def thread_benchmark(
    out: str | Path,
    repeats: int = 3,
    extra_args=(),
    command=None,
    loads=("quiet", "busy"),
    cases=None,
) -> dict:
    """Time every case under every load and :data:`SETTINGS` (``repeats`` runs each) and write
    the records to the JSON file ``out``; returns what it wrote."""
    records = []
    monitor()  # the load of everything but this benchmark and its spinner, for the provenance
    with tempfile.TemporaryDirectory() as tmp:
        cases = cases or bench_cases(Path(tmp))
        for load in loads:
            with busy_core(load == "busy"):
                for setting, args in SETTINGS.items():
                    for case, (doc, program) in cases.items():
                        runs = [
                            run_edit(doc, program, [*args, *extra_args], command)
                            for _ in range(repeats)
                        ]
                        records.append(dict(load=load, setting=setting, case=case, runs=runs))
    report = dict(
        cores=len(usable_cores()),
        omp_wait_policy=os.environ.get("OMP_WAIT_POLICY"),
        repeats=repeats,
        extra_args=list(extra_args),
        records=records,
        profile="threads",
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        provenance=provenance(repo_root()),
    )
    return write_run_report(report, out)


def committed() -> dict | None:
    """The committed run (``results/cli.threads.json``), or ``None``."""
    return read_results_file(COMMITTED)


def thread_table(report: dict) -> pd.DataFrame:
    """Median decode and wall seconds per load, case and setting, the threads used, and the
    default's time over one thread's (below 1: the default is faster)."""
    rows = [
        {
            "load": r["load"],
            "case": r["case"],
            "setting": r["setting"],
            "threads": r["runs"][0]["threads"],
            "decode s": pd.Series([x["decode_s"] for x in r["runs"]]).median(),
            "wall s": pd.Series([x["wall_s"] for x in r["runs"]]).median(),
        }
        for r in report["records"]
    ]
    table = pd.DataFrame(rows).set_index(["load", "case", "setting"]).sort_index()
    one = table.xs("threads 1", level="setting")["decode s"]
    ratio = table["decode s"] / one.reindex(table.index.droplevel("setting")).to_numpy()
    return table.assign(**{"decode / one thread's": ratio.round(2)})
