"""Chapter 6's evidence run recorded outside its notebook: the held-out speed run
(:mod:`.run_heldout`, protocol :mod:`.profiles_heldout`), one part per engine::

    python -m cadlib.chapters.decoding.commands heldout --engine transformers
    python -m cadlib.chapters.decoding.commands heldout --engine llama.cpp
    python -m cadlib.chapters.decoding.commands heldout --smoke

Each part takes one and a half to two hours on 2 quiet cores: run it on a quiet machine and
commit ``results/decoding.heldout.<engine>.json`` with its rows file. ``--smoke`` runs the same
code on both engines in about a minute on development data with a tiny random model (its numbers
mean nothing).
"""

from __future__ import annotations

import argparse

from . import run_heldout
from .profiles_heldout import ENGINES, results_name

__all__ = ["PROG", "main"]

PROG = "python -m cadlib.chapters.decoding.commands"


def heldout(args: argparse.Namespace) -> None:
    """Run the held-out protocol (:func:`.run_heldout.heldout_run`) to ``args.out``."""
    if not args.smoke and args.engine is None:
        raise SystemExit(f"{PROG} heldout: name the part with --engine ({' or '.join(ENGINES)})")
    name = "decoding.heldout-smoke.json" if args.smoke else results_name(args.engine)
    out = args.out or f"_build/{name}"
    report = run_heldout.heldout_run(out, args.engine, smoke=args.smoke)
    met = sum(g["met"] for g in report["goals"])
    print(f"wrote {out}; {met} of {len(report['goals'])} goal verdicts met")


def parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per run."""
    top = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    sub = top.add_subparsers(dest="command", required=True)
    h = sub.add_parser("heldout", help=run_heldout.__doc__.split("\n")[0])
    h.add_argument("--out", default=None, help="the JSON written (default: _build/...)")
    h.add_argument("--engine", choices=ENGINES, default=None, help="the part run (one engine)")
    h.add_argument("--smoke", action="store_true", help="development data, tiny model, a minute")
    h.set_defaults(func=heldout)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    args.func(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
