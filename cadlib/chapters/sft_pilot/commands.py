"""Chapter 7's commands: ``python -m cadlib.chapters.sft_pilot.commands estimate [PROFILE]``
prints how long a profile's training runs will take (issue 35), before ``make record`` starts
them: the profile's training ids per set (:func:`.run_training.training_ids`) over the median
throughput of the runs already recorded (:func:`.run_training.run_estimates`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from cadlib.record import session
from cadlib.record.results import load_committed

from .card import CARD
from .profiles import PROFILES, choose
from .run import setup_chapter
from .run_training import recorded_train_runs, run_estimates, training_ids
from .text import estimate_markdown

__all__ = ["estimate", "main"]


def estimate(profile: str) -> int:
    """Print the estimated training hours of ``profile``'s runs (a table, then a paragraph)."""
    ch = session.start(CARD, PROFILES, {"profile": profile}, choose=choose)
    setup = setup_chapter(ch)
    ids = {
        ts: training_ids(ch.P, setup.split, setup.corpora, setup.tokenizer, ts)
        for ts in ch.P["train_sets"]
    }
    runs = recorded_train_runs()
    table = run_estimates(ch.P, ids, runs)
    full = load_committed("sft_pilot", "full")
    machine = full["hardware"]["cpu"] if full else "the machine that recorded them"
    print(table.round(3).to_string(index=False))
    print(estimate_markdown(table, len(runs), machine))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cadlib.chapters.sft_pilot.commands estimate [PROFILE]`` (default ``seeds``):
    the estimated training hours of the profile's runs."""
    parser = argparse.ArgumentParser(
        prog="python -m cadlib.chapters.sft_pilot.commands", description=main.__doc__
    )
    commands = parser.add_subparsers(dest="command", required=True)
    est = commands.add_parser("estimate", help=estimate.__doc__)
    est.add_argument("profile", nargs="?", default="seeds")
    args = parser.parse_args(argv)
    return estimate(args.profile)


if __name__ == "__main__":
    raise SystemExit(main())
