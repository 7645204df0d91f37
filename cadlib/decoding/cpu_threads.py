"""CPU threads for a model run that hold up on a busy machine (issue 36.2).

torch and llama.cpp run their CPU kernels on OpenMP thread teams. By default a team spins
while it waits for its slowest member, so when another process holds one of the cores the
whole team waits on the thread that shares it: measured on 2 cores with one busy, a forced
``cad edit`` ran 2.2x slower, a 3-line one 27x slower, than on one thread. Two defences, both
applied by ``cad edit`` unless the user chose otherwise:

* :func:`passive_openmp`: ``OMP_WAIT_POLICY=PASSIVE`` in the environment before torch or
  llama.cpp loads their OpenMP runtime (idle team members sleep instead of spinning);
* :func:`default_threads`: as many threads as there are idle cores now, measured from
  ``/proc/stat`` over a fraction of a second (at least 1).

``cadlib.costs.thread_bench`` compares this default with one thread on a quiet and on a busy
machine.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["passive_openmp", "usable_cores", "idle_cores", "default_threads"]

_PROC_STAT = Path("/proc/stat")


def passive_openmp(environ=None) -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless the user set a policy; True if it was set here.

    Effective only before the OpenMP runtime loads (torch's import, llama.cpp's first use):
    ``cad`` calls it before importing either."""
    environ = os.environ if environ is None else environ
    if environ.get("OMP_WAIT_POLICY"):
        return False
    environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return True


def usable_cores() -> list[int]:
    """The cores this process may run on (its affinity mask; all of them where unknown)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def _cpu_times(cores: list[int], text: str) -> dict[int, tuple[int, int]]:
    """``{core: (idle jiffies, total jiffies)}`` from the text of ``/proc/stat``."""
    out = {}
    for line in text.splitlines():
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu" or not name[3:].isdigit():
            continue
        core = int(name[3:])
        if core in cores:
            values = [int(v) for v in fields[:8]]
            out[core] = (values[3] + values[4], sum(values))  # idle + iowait, all
    return out


def idle_cores(interval: float = 0.2, read=None) -> float | None:
    """How many of :func:`usable_cores` were idle over the next ``interval`` seconds (a
    fraction: 1.4 = one idle core and 40 % of another); ``None`` where ``/proc/stat`` is not
    readable. ``read`` (tests): returns the text of ``/proc/stat``, called twice."""
    read = read or _PROC_STAT.read_text
    cores = usable_cores()
    try:
        before = _cpu_times(cores, read())
        time.sleep(interval)
        after = _cpu_times(cores, read())
    except OSError:
        return None
    idle = 0.0
    for core, (idle0, total0) in before.items():
        idle1, total1 = after.get(core, (idle0, total0))
        if total1 > total0:
            idle += (idle1 - idle0) / (total1 - total0)
    return idle if before else None


def default_threads(idle: float | None = None) -> int:
    """Threads for a model run: the idle cores, rounded, between 1 and :func:`usable_cores`
    (``idle``: a measurement of :func:`idle_cores`, measured here when ``None``; all usable
    cores when it cannot be measured)."""
    n = len(usable_cores())
    idle = idle_cores() if idle is None else idle
    if idle is None:
        return n
    return max(1, min(n, int(idle + 0.5)))
