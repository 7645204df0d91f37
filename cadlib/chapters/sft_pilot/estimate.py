"""How long a pilot's training runs take, estimated before they are started (issue 35).

A run's training time is close to proportional to the ids it trains on (``transformers``'
``Trainer``, micro-batch 1: every optimizer step is a forward and a backward over a few whole
examples). So the ids of a training set, times its epochs, divided by the throughput of the runs
already recorded (training ids per second, their median), estimates one run of any set on the
machine class those runs were made on. It is a lower bound for sets of longer examples: the
attention part of a step grows with the square of an example's length, which the linear rate
does not charge (:func:`run_estimates` reports the sum of squared lengths beside the ids).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

import pandas as pd

from cadlib.cases import EditCase
from cadlib.corpora import seeded_subset

from .examples import build_examples
from .train_sets import training_cases

__all__ = ["training_ids", "run_estimates", "estimate_markdown", "recorded_train_runs"]


def training_ids(
    P: Mapping,
    split: dict,
    corpora: Mapping[str, Sequence[EditCase]],
    tokenizer,
    train_set: str,
    seed: int = 0,
) -> tuple[int, int]:
    """``(ids, squared ids)`` that one epoch of ``train_set`` trains on under profile ``P``
    (its ``n_train`` subset, ``max_length`` and ``overlong`` rule, as :func:`pilot.fine_tune`
    builds them)."""
    cases = seeded_subset(training_cases(split, train_set, corpora), P["n_train"], seed)
    examples, _ = build_examples(cases, tokenizer, P["max_length"], P["overlong"])
    lengths = [len(e.input_ids) for e in examples]
    return sum(lengths), sum(n * n for n in lengths)


def run_estimates(
    P: Mapping, ids: Mapping[str, tuple[int, int]], recorded: Sequence
) -> pd.DataFrame:
    """One row per train set of ``P``: its training ids per epoch (``ids[set]``, from
    :func:`training_ids`), epochs, ids over a run and their ratio to the first set's; the
    recorded runs (:class:`cadlib.chapters.sft_pilot.training.TrainRun`, of any set of ``P``)
    give the throughput (median training ids per second); the estimated hours of one run is
    the run's ids over that throughput, and ``runs`` how many runs of the set ``P`` makes."""
    rates = [
        ids[r.train_set][0] * r.epochs / r.train_seconds
        for r in recorded
        if r.train_set in ids and r.train_seconds > 0
    ]
    if not rates:
        raise ValueError("no recorded training run of these sets to take a throughput from")
    rate = statistics.median(rates)
    first = P["train_sets"][0]
    rows = []
    for ts in P["train_sets"]:
        per_epoch, squares = ids[ts]
        total = per_epoch * P["epochs"][ts]
        rows.append(
            dict(
                train_set=ts,
                ids_per_epoch=per_epoch,
                epochs=P["epochs"][ts],
                run_ids=total,
                x_first=total / (ids[first][0] * P["epochs"][first]),
                squared_x_first=squares / ids[first][1],
                ids_per_s=rate,
                runs=len(P["seeds"]),
                hours=total / rate / 3600,
            )
        )
    return pd.DataFrame(rows)


def estimate_markdown(table: pd.DataFrame, n_recorded: int, machine: str) -> str:
    """One paragraph: each set's estimated hours per run and in all, from
    :func:`run_estimates`, with the throughput it assumes and where that was measured."""
    parts = [
        f"{r.train_set}: {r.run_ids:,} training ids per run ({r.epochs} epochs, "
        f"{r.x_first:.1f}x the first set's; sum of squared lengths {r.squared_x_first:.1f}x), "
        f"about {r.hours:.1f} h per run, {r.runs * r.hours:.1f} h for its {r.runs} runs"
        for r in table.itertuples()
    ]
    rate = table.ids_per_s.iloc[0]
    return (
        f"*Estimated training time* at the median throughput of the {n_recorded} recorded "
        f"run(s) ({rate:.0f} training ids/s on {machine}; proportional to ids, so a lower "
        "bound where examples are longer): " + "; ".join(parts) + "."
    )


def recorded_train_runs(folder=None) -> list:
    """The :class:`~cadlib.chapters.sft_pilot.training.TrainRun` of every recorded (train set,
    seed) run (``results/records/sft_pilot.runs/run-*.json``, :func:`pilot.run_recorder`)."""
    import json

    from cadlib.record.replay import decode, record_path

    folder = folder or record_path("sft_pilot", "runs", "", replay=True).parent
    return [decode(json.loads(p.read_text())).train for p in sorted(folder.glob("run-*.json"))]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cadlib.chapters.sft_pilot.estimate [PROFILE]`` (default ``seeds``): print
    the estimated training hours of the profile's runs, before ``make record`` starts them."""
    import argparse

    from cadlib.record import session
    from cadlib.record.results import load_committed

    from .chapter import setup_chapter
    from .pilot import choose_params
    from .training import PROFILES

    parser = argparse.ArgumentParser(
        prog="python -m cadlib.chapters.sft_pilot.estimate", description=main.__doc__
    )
    parser.add_argument("profile", nargs="?", default="seeds")
    args = parser.parse_args(argv)
    ch = session.start("sft_pilot", PROFILES, args.profile, choose=choose_params)
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


if __name__ == "__main__":
    raise SystemExit(main())
