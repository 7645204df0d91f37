"""``python -m cadlib.cli.thread_bench``: ``cad edit`` with its default threads against
``--threads 1``, on a quiet and on a busy machine (issue 36.2), written to a JSON file (the
serving page shows the committed run, ``results/cli.threads.json``, and reads it with
:func:`thread_reading`). The measuring functions are :mod:`cadlib.costs.thread_bench`'s."""

from __future__ import annotations

import argparse

import pandas as pd

from cadlib.costs import thread_bench

__all__ = ["main", "thread_reading"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cadlib.cli.thread_bench", description=thread_bench.__doc__
    )
    parser.add_argument(
        "--out", default=f"_build/{thread_bench.COMMITTED}", help="the JSON written"
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per setting (default 3)")
    parser.add_argument("--engine", default="transformers", help="transformers or llama.cpp")
    args = parser.parse_args(argv)
    extra = ["--device", "cpu"] if args.engine == "transformers" else ["--engine", args.engine]
    thread_bench.thread_benchmark(args.out, args.repeats, extra)
    print(f"wrote {args.out}")
    return 0


def thread_reading(table: pd.DataFrame) -> str:
    """One sentence per load: the threads the default chose and its decode time as a multiple
    of one thread's, over the cases (generated, so it follows the committed run)."""
    default = table.xs("default", level="setting")
    parts = []
    for load in ("quiet", "busy"):
        rows = default.xs(load, level="load")
        lo, hi = rows["decode / one thread's"].min(), rows["decode / one thread's"].max()
        threads = "/".join(str(t) for t in sorted(set(rows.threads)))
        parts.append(
            f"on a {load} machine the default ran {threads} thread(s) and took "
            f"{lo:.2f}–{hi:.2f}× one thread's decode time"
        )
    return "With idle-core threads and OpenMP's passive wait, " + "; ".join(parts) + "."


if __name__ == "__main__":
    raise SystemExit(main())
