"""nbval under replay (``CADLIB_REPLAY``, :mod:`cadlib.record.replay`): a replayed measurement
prints no progress bar, so a chapter's stderr (tqdm bars and warnings of the run that recorded
it) is not compared; every other output is. Without replay nbval compares stderr as usual."""

import os


def pytest_collectstart(collector):
    replaying = os.environ.get("CADLIB_REPLAY", "") not in ("", "0")
    if replaying and hasattr(collector, "skip_compare"):  # nbval's notebook collector
        collector.skip_compare = (*collector.skip_compare, "stderr")
