"""A recompute policy chosen on development cases, judged on fresh held-out ones (issue 32).

Chapter 6c's agreement run found no policy that meets the declared threshold on its held-out
sample. This run asks whether a policy from a wider grid does, without letting the held-out
corpora choose it. The protocol, fixed before measuring (:data:`PROTOCOL`):

* **model**: SmolLM2-135M-Instruct on ``transformers`` (fp32, one torch thread), decisions
  teacher-forced along the oracle program, as in :func:`cadlib.chapters.kv_reuse.case_agreement`;
* **development** (:data:`DEV_CASES`): HumanEvalFix-Py and -JS (6 cases each, prompts up to
  1,000 ids) and ProbeEdit (4, up to 1,300), the seeded subset; every policy of :data:`GRID`;
* **the rule** (:func:`choose`): the policy that recomputes the least (pooled share of the
  spliced ids) among those whose pooled development agreement meets
  :data:`cadlib.chapters.kv_reuse.AGREEMENT_THRESHOLD`; if none does, the one with the highest
  development agreement (ties: the one that recomputes less);
* **test** (:data:`TEST_CASES`): per held-out corpus (HumanEvalFix-Java, -Go, -C++, -Rust,
  RealEdits-Flask), the next 8 cases of the seeded order after the 5 that chapter 6c's
  ``agreement`` run used (prompts up to 1,000 ids): cases no policy decision has seen; the
  chosen policy and ``none``. The verdict is the chosen policy's pooled held-out agreement
  against the threshold. It can fail, and a failure is reported, not re-tuned.

Nothing is timed. Run it with ``python -m cadlib.chapters.kv_reuse.policy_search --out
results/kv_reuse.policy.json`` (about 25 minutes on 2 cores); chapter 6c shows the committed run
(:func:`search_table`, :func:`search_markdown`). Then
:mod:`cadlib.chapters.kv_reuse.every_case` judges the chosen policy on every case of the
held-out HumanEvalFix corpora.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from cadlib.models import SMOLLM2
from cadlib.record.provenance import load_caption, monitor
from cadlib.record.results import machine_label, read_results_file, run_report, write_run_report

from .chapter import AGREEMENT_THRESHOLD, agreement_rows, agreement_table, load_setup, sample_cases
from .flips import flip_table

__all__ = [
    "COMMITTED",
    "GRID",
    "DEV_CASES",
    "TEST_CASES",
    "PROTOCOL",
    "dev_inputs",
    "test_inputs",
    "choose",
    "search_run",
    "committed",
    "search_table",
    "per_corpus",
    "reusing",
    "setting_sentence",
    "search_markdown",
    "answer_sentence",
    "main",
]

#: The committed run chapter 6c shows.
COMMITTED = "kv_reuse.policy.json"
#: The recompute policies tried on the development cases (``all``, the control, is not: it
#: reuses nothing).
GRID = (
    "none",
    "first=2",
    "last=16",
    "last=32",
    "last=64",
    "first=2,last=16",
    "first=2,last=32",
    "first=4,last=32",
    "first=8,last=64",
)
#: ``{corpus: (cases, max prompt ids)}`` of the development sample (seeded order, seed 0).
DEV_CASES = {"heval-fix-py": (6, 1000), "heval-fix-js": (6, 1000), "probeedit": (4, 1300)}
#: ``{corpus: (skip, cases, max prompt ids)}``: the held-out sample, ``cases`` cases after the
#: first ``skip`` of the seeded order (those chapter 6c's ``agreement`` run used).
TEST_CASES = {
    c: (5, 8, 1000)
    for c in (
        "heval-fix-java",
        "heval-fix-go",
        "heval-fix-cpp",
        "heval-fix-rust",
        "realedits-flask",
    )
}
#: Everything the run fixes before it measures (recorded with it).
PROTOCOL = dict(
    model=SMOLLM2,
    grid=list(GRID),
    dev=DEV_CASES,
    test=TEST_CASES,
    threshold=AGREEMENT_THRESHOLD,
    seed=0,
    test_policies="chosen and none",
)


def dev_inputs(tokenizer) -> dict:
    """``{corpus: [CaseInputs]}`` of :data:`DEV_CASES`."""
    out = {}
    for name, (n, cap) in DEV_CASES.items():
        out.update(sample_cases([name], n, tokenizer, cap, PROTOCOL["seed"]))
    return out


def test_inputs(tokenizer) -> dict:
    """``{corpus: [CaseInputs]}`` of :data:`TEST_CASES`: per corpus the cases ranked
    ``skip + 1`` to ``skip + cases`` in the seeded order, among prompts within the cap."""
    out = {}
    for name, (skip, n, cap) in TEST_CASES.items():
        seen = {x.case.id for x in sample_cases([name], skip, tokenizer, cap)[name]}
        more = sample_cases([name], skip + n, tokenizer, cap, PROTOCOL["seed"])[name]
        out[name] = [x for x in more if x.case.id not in seen]
    return out


def choose(dev_table: pd.DataFrame, threshold: float = AGREEMENT_THRESHOLD) -> str:
    """The rule of the module docstring on ``dev_table`` (:func:`agreement_table` of the
    development rows, one row per policy)."""
    t = dev_table[dev_table.policy != "all"]
    ok = t[t.rate >= threshold]
    if not ok.empty:
        return str(ok.sort_values("recomputed", kind="stable").policy.iloc[0])
    best = t.sort_values(["rate", "recomputed"], ascending=[False, True], kind="stable")
    return str(best.policy.iloc[0])


def _columns(rows: pd.DataFrame) -> dict:
    """Rows as ``{column: [values]}`` (KL to 5 decimals, ``since_copy`` ``None`` before any
    copy): compact for the committed file."""
    keep = [
        "corpus",
        "case",
        "policy",
        "step",
        "kind",
        "since_copy",
        "agree",
        "kl",
        "splice",
        "reused",
    ]
    rows = rows[keep].assign(kl=rows.kl.round(5), agree=rows.agree.astype(bool))
    out = {c: rows[c].tolist() for c in keep}
    out["since_copy"] = [None if pd.isna(v) else int(v) for v in rows.since_copy]
    return out


def _frame(columns: dict) -> pd.DataFrame:
    from .chapter import with_split

    return with_split(pd.DataFrame(columns))


def search_run(out: str | Path, progress: bool = True) -> dict:
    """The whole protocol: development grid, the chosen policy, the held-out run; written with
    its provenance (commit, the load of other processes) to the JSON file ``out``."""
    monitor()
    model, tokenizer, _ = load_setup(dict(model=SMOLLM2, profile="policy"))
    dev = agreement_rows(model, tokenizer, dev_inputs(tokenizer), GRID, progress)
    chosen = choose(agreement_table(dev, by=("policy",)))
    policies = tuple(dict.fromkeys(("none", chosen)))
    test = agreement_rows(model, tokenizer, test_inputs(tokenizer), policies, progress)
    report = run_report(
        "policy",
        "python -m cadlib.chapters.kv_reuse.policy_search",
        protocol=PROTOCOL,
        chosen=chosen,
        dev=_columns(dev),
        test=_columns(test),
    )
    return write_run_report(report, out)


def committed() -> dict | None:
    """The committed run (``results/kv_reuse.policy.json``), or ``None``."""
    return read_results_file(COMMITTED)


def search_table(report: dict) -> pd.DataFrame:
    """Per split and policy: cases, decisions, agreement with its interval, KL and the share
    of spliced ids recomputed (:func:`cadlib.chapters.kv_reuse.agreement_table`), the chosen
    policy marked."""
    rows = pd.concat([_frame(report["dev"]), _frame(report["test"])], ignore_index=True)
    table = agreement_table(rows)
    return table.assign(chosen=table.policy == report["chosen"])


def per_corpus(report: dict) -> pd.DataFrame:
    """The held-out agreement per corpus and policy (so that no corpus hides in the pool)."""
    return agreement_table(_frame(report["test"]), by=("corpus", "policy"))


def dev_flips(report: dict) -> pd.DataFrame:
    """Where the development decisions flip, per policy (:func:`flip_table` of the dev rows)."""
    return flip_table(_frame(report["dev"]), split="dev")


def reusing(report: dict, policy: str) -> tuple[int, pd.Series | None]:
    """On the held-out rows of ``policy``: the cases where it reused no id at all (their
    decisions equal the exact splice's by construction, so they cannot test the mode), and
    the agreement of the others (:func:`agreement_table` row, ``None`` if there are none)."""
    rows = _frame(report["test"])
    rows = rows[rows.policy == policy]
    some = rows[rows.reused > 0]
    none = rows.drop_duplicates(["corpus", "case"]).reused.eq(0).sum()
    return int(none), (None if some.empty else agreement_table(some, by=("policy",)).iloc[0])


def setting_sentence(report: dict) -> str:
    """What produced a run's numbers, ending with the machine (for nbval's sanitizer): the
    model and tokenizer, the engine and threads, how decisions were made, and that the paper
    has no such figure."""
    return (
        f"Setting: {report['protocol']['model']} with its own tokenizer, fp32 on "
        "transformers, one torch thread, decisions teacher-forced along the oracle program; "
        "no paper figure (beyond the paper); "
        f"{machine_label(report['hardware'])}."
    )


def search_markdown(report: dict) -> str:
    """The chosen policy, its development and held-out agreement against the threshold, and
    the per-corpus range, generated from the committed run."""
    t, chosen, thr = search_table(report), report["chosen"], report["protocol"]["threshold"]
    dev, test = (t[(t.split == s) & (t.policy == chosen)].iloc[0] for s in ("dev", "test"))
    met_dev = (t[t.split == "dev"].rate >= thr).any()
    how = (
        "the one that recomputes least among those meeting it on development"
        if met_dev
        else f"no policy of the grid met the {thr:.1%} threshold on development, so the one with "
        "the highest development agreement"
    )
    corpora = per_corpus(report)
    c = corpora[corpora.policy == chosen]
    verdict = "meets" if test.rate >= thr else "**does not meet**"
    idle, some = reusing(report, chosen)
    stratum = (
        ""
        if not idle
        else (
            f" {idle} of those cases reuse no id under `{chosen}` (short copies: every id is "
            "recomputed), so they agree by construction"
            + (
                "."
                if some is None
                else f"; on the {int(some.cases)} that reuse some, "
                f"{some.rate:.1%} of {int(some.decisions)} decisions agree."
            )
        )
    )
    return (
        f"Of {len(report['protocol']['grid'])} recompute policies tried on "
        f"{int(dev.cases)} development cases, `{chosen}` was chosen ({how}): "
        f"{dev.rate:.1%} of {int(dev.decisions)} development decisions agree with the exact "
        f"splice, recomputing {dev.recomputed:.0%} of the copied ids. On {int(test.cases)} "
        f"fresh held-out cases it agrees on {test.rate:.1%} of {int(test.decisions)} "
        f"decisions (95% interval {test.lo:.1%}–{test.hi:.1%}; per corpus "
        f"{c.rate.min():.1%}–{c.rate.max():.1%}), recomputing {test.recomputed:.0%}: it "
        f"{verdict} the {thr:.1%} threshold.{stratum} Nothing here is timed. "
        f"{load_caption(report)} {setting_sentence(report)}"
    )


def answer_sentence(report: dict) -> str:
    """One sentence for the chapter's **Answer.**: the dev-chosen policy's fresh held-out
    agreement (and on the cases where it reused anything) and whether it meets the
    threshold."""
    t, chosen, thr = search_table(report), report["chosen"], report["protocol"]["threshold"]
    test = t[(t.split == "test") & (t.policy == chosen)].iloc[0]
    verdict = "meets it" if test.rate >= thr else "still short of it"
    idle, some = reusing(report, chosen)
    stratum = (
        ""
        if not idle or some is None
        else f" ({some.rate:.1%} on the {int(some.cases)} cases where it reused any id)"
    )
    return (
        f"A policy chosen on development cases from a wider grid, `{chosen}` (recomputing "
        f"{test.recomputed:.0%} of the copied ids), agrees on {test.rate:.1%} of "
        f"{int(test.decisions)} decisions of {int(test.cases)} fresh held-out cases"
        f"{stratum}: {verdict}."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cadlib.chapters.kv_reuse.policy_search", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", default=f"_build/{COMMITTED}", help="the JSON written")
    args = parser.parse_args(argv)
    report = search_run(args.out)
    print(f"wrote {args.out}; chosen {report['chosen']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
