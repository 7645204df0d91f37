"""Chapter 6c's evidence runs recorded outside its notebook, one subcommand each.

Their protocols and measuring code are :mod:`.run_policy_search`, :mod:`.run_every_case` and
:mod:`.run_flask_sample`, :mod:`.run_rules` (issue 51's selection rules, development) and
:mod:`.run_rules_test` (the chosen rule, once on the test corpora; :mod:`.run_rules_timing`
times it, on a quiet machine only)::

    python -m cadlib.chapters.kv_reuse.commands policy-search [--out FILE]
    python -m cadlib.chapters.kv_reuse.commands every-case CORPUS [--out FILE]
    python -m cadlib.chapters.kv_reuse.commands flask-sample [--out FILE]
    python -m cadlib.chapters.kv_reuse.commands rules [--gated] [--out FILE]
    python -m cadlib.chapters.kv_reuse.commands rules-test [--out FILE]
    python -m cadlib.chapters.kv_reuse.commands rules-timing [--out FILE]

The policy search runs first: the other two judge the policy it chose (its committed run).
"""

from __future__ import annotations

import argparse

from . import (
    run_every_case,
    run_flask_sample,
    run_policy_search,
    run_rules,
    run_rules_test,
    run_rules_timing,
)

__all__ = ["PROG", "main"]

PROG = "python -m cadlib.chapters.kv_reuse.commands"


def _first_line(module) -> str:
    return module.__doc__.split("\n")[0]


def policy_search(args: argparse.Namespace) -> None:
    """Run the policy search (:func:`.run_policy_search.search_run`) to ``args.out``."""
    report = run_policy_search.search_run(args.out)
    print(f"wrote {args.out}; chosen {report['chosen']}")


def every_case(args: argparse.Namespace) -> None:
    """Run every case of ``args.corpus`` (:func:`.run_every_case.every_case_run`)."""
    out = args.out or f"_build/{run_every_case.results_name(args.corpus)}"
    report = run_every_case.every_case_run(out, args.corpus)
    print(f"wrote {out}; policy {report['chosen']} and none on every case of {args.corpus}")


def flask_sample(args: argparse.Namespace) -> None:
    """Run the fresh Flask sample (:func:`.run_flask_sample.sample_run`) to ``args.out``."""
    report = run_flask_sample.sample_run(args.out)
    cases = run_flask_sample.CASES
    print(f"wrote {args.out}; policy {report['chosen']} and none on {cases} fresh Flask cases")


def rules(args: argparse.Namespace) -> None:
    """Run the selection rules (``--gated``: the margin-gated fallback on the chosen rule) on
    development cases (:func:`.run_rules.rules_run`)."""
    name = run_rules.GATED_RESULTS if args.gated else run_rules.RESULTS
    args.out = args.out or f"_build/{name}"
    report = run_rules.rules_run(args.out, gated=args.gated)
    print(f"wrote {args.out}; chosen {report['chosen']}")


def rules_test(args: argparse.Namespace) -> None:
    """Run the chosen rule once on the test corpora (:func:`.run_rules_test.rules_test_run`)."""
    report = run_rules_test.rules_test_run(args.out)
    v = report["verdict"]
    print(f"wrote {args.out}; {v['policy']}: goal {'met' if v['met'] else 'missed'}")


def rules_timing(args: argparse.Namespace) -> None:
    """Time the chosen rule on long test edits (:func:`.run_rules_timing.rules_timing_run`)."""
    report = run_rules_timing.rules_timing_run(args.out)
    print(f"wrote {args.out}; goal {'met' if report['verdict']['met'] else 'missed'}")


def parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per run."""
    top = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    sub = top.add_subparsers(dest="command", required=True)
    p = sub.add_parser("policy-search", help=_first_line(run_policy_search))
    p.add_argument(
        "--out", default=f"_build/{run_policy_search.COMMITTED}", help="the JSON written"
    )
    p.set_defaults(func=policy_search)
    e = sub.add_parser("every-case", help=_first_line(run_every_case))
    e.add_argument("corpus", choices=run_every_case.CORPORA, help="the held-out corpus to run")
    e.add_argument("--out", default=None, help="the JSON written (default: _build/...)")
    e.set_defaults(func=every_case)
    f = sub.add_parser("flask-sample", help=_first_line(run_flask_sample))
    f.add_argument("--out", default=f"_build/{run_flask_sample.RESULTS}", help="the JSON written")
    f.set_defaults(func=flask_sample)
    r = sub.add_parser("rules", help=_first_line(run_rules))
    r.add_argument("--out", default=None, help="the JSON written (default: _build/...)")
    r.add_argument(
        "--gated",
        action="store_true",
        help="the margin-gated exact fallback on the chosen rule (profiles.GATED)",
    )
    r.set_defaults(func=rules)
    t = sub.add_parser("rules-test", help=_first_line(run_rules_test))
    t.add_argument("--out", default=f"_build/{run_rules_test.RESULTS}", help="the JSON written")
    t.set_defaults(func=rules_test)
    s = sub.add_parser("rules-timing", help=_first_line(run_rules_timing))
    s.add_argument("--out", default=f"_build/{run_rules_timing.RESULTS}", help="the JSON written")
    s.set_defaults(func=rules_timing)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    args.func(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
