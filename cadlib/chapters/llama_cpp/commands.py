"""Chapter 6b's evidence runs outside its notebook.

``drafts``: each engine's draft cap (:mod:`cadlib.costs.draft_policy`, its protocol in that
module's docstring), on a quiet machine (about 20 minutes on 2 cores)::

    python -m cadlib.chapters.llama_cpp.commands drafts --out results/llama_cpp.drafts.json

The chapter shows the committed run (``results/llama_cpp.drafts.json``).
"""

from __future__ import annotations

import argparse

from cadlib.costs import draft_policy

__all__ = ["COMMAND", "main"]

#: How these runs are invoked (recorded in each report).
COMMAND = "python -m cadlib.chapters.llama_cpp.commands"


def drafts(args: argparse.Namespace) -> None:
    """Run the draft-cap protocol and write its report to ``args.out``."""
    report = draft_policy.draft_policy_run(args.out, args.repeats, command=f"{COMMAND} drafts")
    print(f"wrote {args.out}; caps {report['chosen']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    runs = parser.add_subparsers(dest="run", required=True)
    run = runs.add_parser("drafts", help=draft_policy.__doc__.split("\n")[0])
    run.add_argument("--out", default=f"_build/{draft_policy.COMMITTED}", help="the JSON written")
    run.add_argument("--repeats", type=int, default=2, help="runs per arm and case")
    run.set_defaults(func=drafts)
    args = parser.parse_args(argv)
    args.func(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
