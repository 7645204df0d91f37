"""Chapter 6's evidence run recorded outside its notebook: the held-out speed run
(:mod:`.run_heldout`, protocol :mod:`.profiles_heldout`)::

    python -m cadlib.chapters.decoding.commands heldout [--out FILE] [--smoke]

``--smoke`` runs the same code in seconds on development data with a tiny random model (its
numbers mean nothing); without it, about two hours on 2 quiet cores: run it on a quiet machine
and commit ``results/decoding.heldout.json``.
"""

from __future__ import annotations

import argparse

from . import profiles_heldout, run_heldout

__all__ = ["PROG", "main"]

PROG = "python -m cadlib.chapters.decoding.commands"


def heldout(args: argparse.Namespace) -> None:
    """Run the held-out protocol (:func:`.run_heldout.heldout_run`) to ``args.out``."""
    out = (
        args.out
        or f"_build/{'decoding.heldout-smoke.json' if args.smoke else profiles_heldout.RESULTS}"
    )
    report = run_heldout.heldout_run(out, smoke=args.smoke)
    met = sum(g["met"] for g in report["goals"])
    print(f"wrote {out}; {met} of {len(report['goals'])} goal verdicts met")


def parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per run."""
    top = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    sub = top.add_subparsers(dest="command", required=True)
    h = sub.add_parser("heldout", help=run_heldout.__doc__.split("\n")[0])
    h.add_argument("--out", default=None, help="the JSON written (default: _build/...)")
    h.add_argument("--smoke", action="store_true", help="development data, tiny model, seconds")
    h.set_defaults(func=heldout)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    args.func(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
