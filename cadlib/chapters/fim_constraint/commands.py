"""Chapter 8's evidence runs outside the notebook, as shell commands (``results/fim.*.json``).

``python -m cadlib.chapters.fim_constraint.commands stdlib --cuts 2000 --out
results/fim.full.json``
    the differential check at scale (:mod:`cadlib.fim.stdlib`): seeded cuts of the
    interpreter's standard library (or, with ``--package``, of an installed package's folder)
    against ``ast.parse``, with the cost sweep and the manifest (:func:`stdlib_report`);
``python -m cadlib.chapters.fim_constraint.commands maskspeed --out results/fim.maskspeed.json``
    the whole mask beside its previous implementation, alternating on identical states
    (:func:`cadlib.fim.benchmark.compare_masks`), with the run's provenance
    (:func:`maskspeed_report`; run it on a quiet machine).
``python -m cadlib.chapters.fim_constraint.commands llguidance --out results/fim.llguidance.json``
    llguidance's mask on the same tokenizer and true middles, by a prefix-only Python-like
    grammar (:func:`llguidance_report`; a reference point, not the same work; a quiet machine).
``python -m cadlib.chapters.fim_constraint.commands witness --out results/fim.witness.json``
    the soundness check (:mod:`cadlib.fim.witness_check`): on seeded cuts and perturbed
    middles, CPython parses the witness completion of every prefix the recognizer accepts
    (:func:`witness_report`; untimed).

Each writes its report (the command that made it included) and prints its summary; the
chapter reads the committed ones back (:mod:`.run_evidence`). The measuring code is the
``cadlib.fim`` wing's; this module parses the arguments and lays out the reports.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

from cadlib.corpora import load_corpus
from cadlib.fim.benchmark import MASK_ARMS, compare_masks, mask_speed_summary
from cadlib.fim.stdlib import (
    LAST_REDRAWS,
    build_cost_sweep,
    codebase,
    manifest,
    package_folder,
    stdlib_cuts,
    stdlib_differential,
    stdlib_sources,
    stdlib_summary,
)
from cadlib.fim.witness_check import witness_check, witness_summary
from cadlib.models import load_tokenizer
from cadlib.paths import repo_root
from cadlib.record.provenance import monitor, provenance
from cadlib.record.results import hardware_info, write_run_report

__all__ = [
    "PROG",
    "main",
    "maskspeed_report",
    "llguidance_report",
    "parser",
    "stdlib_report",
    "witness_report",
]

#: How the commands are run (the reports record it).
PROG = "python -m cadlib.chapters.fim_constraint.commands"

#: The columns of a disagreement in the ``stdlib`` report.
_DISAGREEMENT = [
    "file",
    "a",
    "b",
    "left_cut",
    "right_cut",
    "check",
    "edit",
    "truth",
    "ours",
    "where",
    "category",
]


def stdlib_report(args: argparse.Namespace) -> dict:
    """The ``full`` run of the differential at scale (``stdlib``'s arguments ``args``): its
    command, what was cut, the redrawn cuts, the manifest, the summary, every disagreement and
    the costs (per cut, and the whole-module sweep)."""
    folder = package_folder(args.package) if args.package else None
    sources = stdlib_sources(None if folder is None else str(folder))
    t0 = time.perf_counter()
    cuts = stdlib_cuts(
        sources,
        args.cuts,
        args.seed,
        max_left=args.max_left,
        max_right=args.max_right,
        max_window=args.max_window,
    )
    redraws = dict(LAST_REDRAWS)
    frame = stdlib_differential(cuts, args.edits, args.seed, jobs=args.jobs)
    wrong = frame[~frame.agree]
    true_mid = frame[frame.check == "true_middle"].dropna(subset=["build_s"])
    sweep = build_cost_sweep(sources)
    return {
        "command": f"{PROG} stdlib --cuts {args.cuts} --edits {args.edits} "
        f"--seed {args.seed} --max-left {args.max_left} --max-right "
        f"{args.max_right} --max-window {args.max_window} --jobs {args.jobs} "
        + (f"--package {args.package} " if args.package else "")
        + f"--out {args.out}",
        "codebase": codebase(args.package),
        "redrawn_cuts": redraws,
        "manifest": manifest(sources),
        "params": _params(args),
        "summary": stdlib_summary(frame),
        "disagreements": wrong[_DISAGREEMENT].to_dict(orient="records"),
        "cost": {
            "wall_s": round(time.perf_counter() - t0, 1),
            "hardware": hardware_info("cpu"),
            "per_cut": true_mid[["left_chars", "right_chars", "middle_chars", "build_s", "feed_s"]]
            .round(6)
            .to_dict(orient="list"),
            "sweep": sweep.round(6).to_dict(orient="list"),
        },
    }


def maskspeed_report(args: argparse.Namespace) -> dict:
    """The mask-speed run (``maskspeed``'s arguments ``args``): the mask beside its previous
    implementation (:data:`cadlib.fim.benchmark.MASK_ARMS`) under each collector setting and
    heap size, summarized (:func:`cadlib.fim.benchmark.mask_speed_summary`), with its goals,
    the machine, the load it ran under and the provenance."""
    monitor()  # the other processes' load while it runs, for the provenance
    tok = load_tokenizer(args.tokenizer)
    frame = compare_masks(
        load_corpus(args.corpus),
        tok,
        n_problems=args.problems,
        seed=args.seed,
        middle_chars=args.middle_chars,
        repeats=args.repeats,
        gc_modes=tuple(args.gc.split(",")),
        ballast_millions=tuple(float(b) for b in args.ballast.split(",")),
    )
    params = _params(args)
    command = (
        f"{PROG} maskspeed "
        + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in params.items() if k != "steps")
        + (" --steps" if args.steps else "")
    )
    return dict(
        profile="maskspeed",
        command=command,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        hardware=hardware_info("cpu"),
        threads=os.environ.get("OMP_NUM_THREADS"),
        tokenizer=args.tokenizer,
        params=params,
        arms=list(MASK_ARMS),
        goals_ms={"median": 1.0, "p99": 5.0},
        summary=mask_speed_summary(frame),
        steps=frame.round(7).to_dict(orient="list") if args.steps else None,
        provenance=provenance(repo_root()),
    )


def llguidance_report(args: argparse.Namespace) -> dict:
    """The reference run (``llguidance``'s arguments ``args``): llguidance's mask on the same
    tokenizer and true middles as ``maskspeed``, by a prefix-only Python-like grammar
    (:mod:`cadlib.fim.llguidance_ref`: not the same work), in MaskBench's form, with the
    machine, the load it ran under and the provenance."""
    from importlib.metadata import version

    from cadlib.fim.llguidance_ref import PYTHON_LIKE, llguidance_summary, time_llguidance

    monitor()
    frame = time_llguidance(
        load_corpus(args.corpus),
        load_tokenizer(args.tokenizer),
        n_problems=args.problems,
        seed=args.seed,
        middle_chars=args.middle_chars,
        repeats=args.repeats,
    )
    params = _params(args)
    return dict(
        profile="llguidance",
        command=f"{PROG} llguidance "
        + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in params.items()),
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        hardware=hardware_info("cpu"),
        engine=f"llguidance {version('llguidance')}",
        tokenizer=args.tokenizer,
        params=params,
        grammar=PYTHON_LIKE,
        summary=llguidance_summary(frame),
        provenance=provenance(repo_root()),
    )


def _llguidance(args: argparse.Namespace) -> dict:
    return write_run_report(llguidance_report(args), args.out)


def witness_report(args: argparse.Namespace) -> dict:
    """The soundness run (``witness``'s arguments ``args``): its command, the codebase and its
    manifest, the counts (:func:`cadlib.fim.witness_check.witness_summary`: prefixes checked,
    witnesses parsed, failures with their shortest failing prefix) and the viable prefixes the
    search found no witness for. Nothing is timed."""
    folder = package_folder(args.package) if args.package else None
    sources = stdlib_sources(None if folder is None else str(folder))
    cuts = stdlib_cuts(
        sources,
        args.cuts,
        args.seed,
        max_middle=args.max_middle,
        max_left=args.max_left,
        max_right=args.max_right,
        max_window=args.max_window,
    )
    frame = witness_check(cuts, args.seed, args.max_expansions)
    missing = frame[frame.viable & frame.witness.isna()].drop_duplicates(["cut", "variant"])
    command = f"{PROG} witness " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in _params(args).items() if v is not None
    )
    return {
        "command": command,
        "codebase": codebase(args.package),
        "manifest": manifest(sources),
        "params": _params(args),
        "summary": witness_summary(frame, cuts),
        "no_witness_middles": [
            dict(
                file=r.file,
                a=int(r.a),
                b=int(r.b),
                variant=r.variant,
                prefix_chars=int(r.prefix_chars),
            )
            for r in missing.itertuples()
        ],
    }


def _witness(args: argparse.Namespace) -> dict:
    out = witness_report(args)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return out


def _params(args: argparse.Namespace) -> dict:
    """A command's options as its report records them (not which command ran)."""
    return {k: v for k, v in vars(args).items() if k not in ("command", "report")}


def _stdlib(args: argparse.Namespace) -> dict:
    out = stdlib_report(args)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return out


def _maskspeed(args: argparse.Namespace) -> dict:
    return write_run_report(maskspeed_report(args), args.out)


def parser() -> argparse.ArgumentParser:
    """The commands' parser: one subcommand per evidence run."""
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    std = sub.add_parser(
        "stdlib",
        help="the differential at scale (results/fim.full.json)",
        description="The full run of the differential at scale, with the cost sweep and the "
        "manifest.",
    )
    std.add_argument("--cuts", type=int, default=2000)
    std.add_argument("--edits", type=int, default=4)
    std.add_argument("--seed", type=int, default=0)
    std.add_argument("--max-left", type=int, default=1500)
    std.add_argument("--max-right", type=int, default=1500)
    std.add_argument("--max-window", type=int, default=5000)
    std.add_argument("--jobs", type=int, default=1, help="worker processes (same rows)")
    std.add_argument(
        "--package",
        default=None,
        help="cut this installed package's folder (e.g. pandas.core), not the stdlib",
    )
    std.add_argument("--out", default="results/fim.full.json")
    std.set_defaults(report=_stdlib)
    speed = sub.add_parser(
        "maskspeed",
        help="the mask beside its previous implementation (results/fim.maskspeed.json)",
        description="The mask beside its previous implementation, alternating on identical "
        "states, with the run's provenance (run it on a quiet machine).",
    )
    speed.add_argument("--corpus", default="heval-fix-py")
    speed.add_argument("--tokenizer", default="smollm2-135m-instruct")
    speed.add_argument("--problems", type=int, default=12)
    speed.add_argument("--middle-chars", type=int, default=400)
    speed.add_argument("--seed", type=int, default=0)
    speed.add_argument("--repeats", type=int, default=3)
    speed.add_argument(
        "--gc",
        default="default,frozen,disabled",
        help="comma-separated gc modes: default, frozen, disabled",
    )
    speed.add_argument(
        "--ballast",
        default="0,3",
        help="comma-separated heap sizes, in millions of small live objects",
    )
    speed.add_argument(
        "--steps",
        action="store_true",
        help="also write every step's record (a few MB at the defaults)",
    )
    speed.add_argument("--out", default="results/fim.maskspeed.json")
    speed.set_defaults(report=_maskspeed)
    ref = sub.add_parser(
        "llguidance",
        help="llguidance's mask on the same states, a reference (results/fim.llguidance.json)",
        description="llguidance's mask by a prefix-only Python-like grammar on maskspeed's "
        "tokenizer and true middles: a reference point, not the same work (a quiet machine).",
    )
    for flag, default in (("corpus", "heval-fix-py"), ("tokenizer", "smollm2-135m-instruct")):
        ref.add_argument(f"--{flag}", default=default)
    for flag, default in (("problems", 12), ("middle-chars", 400), ("seed", 0), ("repeats", 3)):
        ref.add_argument(f"--{flag}", type=int, default=default)
    ref.add_argument("--out", default="results/fim.llguidance.json")
    ref.set_defaults(report=_llguidance)
    wit = sub.add_parser(
        "witness",
        help="CPython parses every accepted prefix's witness (results/fim.witness.json)",
        description="The soundness check of early rejection on seeded cuts and perturbed "
        "middles (untimed).",
    )
    wit.add_argument("--cuts", type=int, default=300)
    wit.add_argument("--seed", type=int, default=0)
    wit.add_argument("--max-middle", type=int, default=120)
    wit.add_argument("--max-left", type=int, default=1500)
    wit.add_argument("--max-right", type=int, default=1500)
    wit.add_argument("--max-window", type=int, default=5000)
    wit.add_argument("--max-expansions", type=int, default=200, help="the witness search's limit")
    wit.add_argument("--package", default=None, help="cut this installed package's folder")
    wit.add_argument("--out", default="results/fim.witness.json")
    wit.set_defaults(report=_witness)
    return ap


def main(argv=None) -> None:
    """Run the evidence run ``argv`` names (:func:`parser`), write its report and print its
    summary."""
    args = parser().parse_args(argv)
    out = args.report(args)
    print(json.dumps(out["summary"], indent=1))


if __name__ == "__main__":
    main()
