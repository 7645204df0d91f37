"""Where and under what load a run was made: the provenance every results file carries.

A timing means little without the load it was measured under: one SmolLM2 forward took
42 ms in one chapter and 110 ms in another on the same kind of machine, because one ran
beside another job. So every results file records, beside its numbers, the commit it ran at
(checked out when the monitor started) and the load while it ran (:func:`provenance`): a
:class:`LoadMonitor` samples, every few seconds from a daemon thread, the 1-minute load
average and how many cores the *other* processes kept busy, and names the busiest of them.
It starts with the first model a chapter loads (:func:`cadlib.models.load_model` calls
:func:`monitor`), so it covers every timed part.
A run is *busy* when other processes kept more than :data:`BUSY_CORES` of a core busy on
average; ``make record`` warns before and after such a run, and a chapter that shows an
evidence run says so in its caption (:func:`load_caption`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import psutil

from cadlib.paths import repo_root

__all__ = [
    "BUSY_CORES",
    "LoadMonitor",
    "busy",
    "check_quiet",
    "evidence_caption",
    "git_commit",
    "load_caption",
    "load_label",
    "monitor",
    "provenance",
    "report",
    "sample_other_load",
]

#: Other processes' average CPU use, in cores, above which a run counts as busy.
BUSY_CORES = 0.25

_MONITOR: LoadMonitor | None = None


class LoadMonitor:
    """Samples the machine's load every ``interval`` seconds from a daemon thread; with a
    ``root``, also notes the commit checked out there when it starts (the code that ran: a
    commit made while a long run goes on is not it)."""

    def __init__(self, interval: float = 5.0, root: Path | None = None):
        self.interval = interval
        self.started = time.time()
        self.commit = git_commit(root) if root is not None else None
        self.load_avg: list[float] = []
        self.other_cores: list[float] = []
        self.busiest: dict[str, float] = defaultdict(float)  # name -> summed cores
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cadlib-load", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        sample_other_load()  # primes psutil's per-process CPU counters
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        """One sample: the 1-minute load average and the other processes' CPU use."""
        cores, by_name = sample_other_load()
        self.load_avg.append(os.getloadavg()[0])
        self.other_cores.append(cores)
        for name, used in by_name.items():
            self.busiest[name] += used

    def stop(self) -> None:
        self._stop.set()

    def summary(self) -> dict:
        """Mean and max of both series, the samples' count and span, and the three other
        processes that used the most CPU on average (in cores)."""
        n = len(self.other_cores)
        if n == 0:  # a run shorter than one interval: one sample now
            self.sample()
            n = 1
        top = sorted(self.busiest.items(), key=lambda kv: -kv[1])[:3]
        return {
            "samples": n,
            "seconds": round(time.time() - self.started, 1),
            "load_avg_1m": {"mean": _mean(self.load_avg), "max": max(self.load_avg)},
            "other_cores": {"mean": _mean(self.other_cores), "max": max(self.other_cores)},
            "busiest_other": [{"name": k, "cores": round(v / n, 3)} for k, v in top if v > 0],
        }


def _mean(xs: list[float]) -> float:
    return round(sum(xs) / len(xs), 3)


def _own_pids() -> set[int]:
    me = psutil.Process()
    return {me.pid, *(c.pid for c in me.children(recursive=True))}


def sample_other_load() -> tuple[float, dict[str, float]]:
    """``(cores, {name: cores})``: the CPU the processes other than this one and its
    children used since the previous call (psutil's per-process counters; the first call
    after a process appears reads 0 for it)."""
    mine, total, by_name = _own_pids(), 0.0, defaultdict(float)
    for proc in psutil.process_iter(["name"]):
        if proc.pid in mine:
            continue
        try:
            used = proc.cpu_percent(None) / 100
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        total += used
        if used > 0:
            by_name[proc.info["name"] or str(proc.pid)] += used
    return round(total, 3), dict(by_name)


def monitor() -> LoadMonitor:
    """The process's load monitor, started on the first call (noting the commit then)."""
    global _MONITOR
    if _MONITOR is None:
        _MONITOR = LoadMonitor(root=repo_root())
    return _MONITOR


def git_commit(root: Path) -> str | None:
    """``HEAD``'s hash at ``root``, with ``+dirty`` when tracked files differ from it;
    ``None`` outside a git checkout."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()

    try:
        head = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def provenance(root: Path, watch: LoadMonitor | None = None) -> dict:
    """The ``provenance`` of a results file: commit and the load while it ran (the process
    monitor's samples since it started, or ``watch``'s for one part of a run; one sample now
    when nothing was sampled)."""
    watch = watch or monitor()
    load = watch.summary()
    return {"commit": watch.commit or git_commit(root), "load": load, "busy": busy(load)}


def busy(load: dict) -> bool:
    """Did other processes keep more than :data:`BUSY_CORES` of a core busy on average?"""
    return load["other_cores"]["mean"] > BUSY_CORES


def load_label(record: dict) -> str:
    """A table cell's form of :func:`load_caption`: ``quiet``/``busy`` with the other
    processes' mean share of a core, or ``not recorded``."""
    prov = record.get("provenance")
    if not prov:
        return "not recorded"
    share = prov["load"]["other_cores"]["mean"]
    return f"{'busy' if prov['busy'] else 'quiet'} ({share:.2f} of a core)"


def load_caption(record: dict) -> str:
    """One sentence on the load a results file was recorded under, for a chapter's caption
    (empty for files written before provenance was recorded)."""
    prov = record.get("provenance")
    if not prov:
        return "Load while it ran: not recorded (written before runs recorded their load)."
    load = prov["load"]
    other = load["other_cores"]
    # "N cores" reads as a machine's core count (tests/test_machine_independence), so the
    # load is said as a share of one core
    text = (
        f"Load while it ran: other processes kept {other['mean']:.2f} of a core busy on "
        f"average (max {other['max']:.2f}; {load['samples']} samples)"
    )
    if prov["busy"]:
        names = ", ".join(f"{b['name']} {b['cores']:.2f}" for b in load["busiest_other"])
        return text + f": **a busy machine** (busiest: {names}); its timings are pessimistic."
    return text + ": a quiet machine."


def check_quiet(seconds: float = 5.0) -> bool:
    """Sample the other processes' load for ``seconds``; warn on stderr and return False
    when the machine is too busy to record timings on."""
    sample_other_load()
    time.sleep(seconds)
    cores, by_name = sample_other_load()
    top = ", ".join(f"{k} {v:.2f}" for k, v in sorted(by_name.items(), key=lambda kv: -kv[1])[:3])
    if cores > BUSY_CORES:
        print(
            f"warning: the machine is busy (other processes use {cores:.2f} cores: {top}); "
            "timings recorded now will be pessimistic",
            file=sys.stderr,
        )
        return False
    print(f"quiet: other processes use {cores:.2f} cores")
    return True


def report(paths: list[Path]) -> bool:
    """Print each results file's :func:`load_caption`; False when any was recorded busy."""
    quiet = True
    for path in paths:
        record = json.loads(Path(path).read_text())
        print(f"{path}: {load_caption(record)}")
        quiet &= not record.get("provenance", {}).get("busy", False)
    if not quiet:
        print(
            "warning: a run above was recorded on a busy machine; re-record it on a quiet one",
            file=sys.stderr,
        )
    return quiet


def evidence_caption(record: dict, name: str) -> str:
    """One line under an evidence run a chapter shows: which file, profile, when and at which
    commit it was recorded, and the load while it ran (:func:`load_caption`)."""
    prov = record.get("provenance") or {}
    commit = f" at commit `{prov['commit'][:10]}`" if prov.get("commit") else ""
    return (
        f"*Evidence run `{name}`: profile {record.get('profile')}, recorded "
        f"{str(record.get('created', '?'))[:10]}{commit}. {load_caption(record)}*"
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m cadlib.record.provenance check [SECONDS]`` (exit 1 when the machine is busy) or
    ``python -m cadlib.record.provenance report RESULTS.json ...`` (exit 1 when one was recorded
    busy)."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["check"] and len(args) <= 2:
        return 0 if check_quiet(float(args[1]) if len(args) == 2 else 5.0) else 1
    if args[:1] == ["report"]:
        if len(args) == 1:
            print("provenance: error: the run wrote no results file", file=sys.stderr)
            return 1
        return 0 if report([Path(a) for a in args[1:]]) else 1
    print(
        "usage: python -m cadlib.record.provenance check [SECONDS] | report RESULTS.json ...",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
