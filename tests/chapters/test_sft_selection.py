"""Chapter 7's span-selection metrics, paired tests, per-case records, generated conclusion and
the ``full`` profile (issue 20)."""

import json
import math

import pytest

from cadlib.chapters import sft_pilot as sft
from cadlib.corpora import EditCase
from cadlib.grammar import Copy, Gen, Program
from cadlib.record.results import write_cases

DOC = "\n".join(f"line {k}" for k in range(1, 11))  # 10 lines
GOLD = DOC.replace("line 5", "line five")
CASE = EditCase("toy/1", DOC, GOLD, "Spell out five.")
ORACLE = Program([Copy(1, 4), Gen("line five"), Copy(6, 10)])
IDENTITY = Program([Copy(1, 10)])


def score(program, case=CASE, system="test"):
    return sft.run_scoring.score_program(case, program.render(), system=system)


# --------------------------------------------------------------------------------------------
# Span-selection metrics
# --------------------------------------------------------------------------------------------


def test_span_em_ignores_the_gen_text_only():
    assert sft.run_scoring.span_em(Program([Copy(1, 4), Gen("wrong"), Copy(6, 10)]), ORACLE)
    assert not sft.run_scoring.span_em(
        Program([Copy(1, 4), Copy(6, 10)]), ORACLE
    )  # a gen is missing
    assert not sft.run_scoring.span_em(Program([Copy(1, 3), Gen("line five"), Copy(6, 10)]), ORACLE)
    r = score(Program([Copy(1, 4), Gen("line 5!"), Copy(6, 10)]))
    assert r.span_em and not r.em


@pytest.mark.parametrize(
    "program, iou",
    [
        (ORACLE, 1.0),
        (Program([Copy(1, 3), Gen("x"), Copy(6, 10)]), (3 / 4 + 1) / 2),
        (IDENTITY, (4 / 10 + 0) / 2),  # the second oracle copy has no partner
        (Program([Copy(1, 4), Copy(6, 10), Copy(1, 1)]), 2 / 3),  # an extra copy scores 0
        (Program([Gen(GOLD)]), 0.0),
    ],
)
def test_span_iou_aligns_copies_by_index(program, iou):
    assert sft.run_scoring.span_iou(program, ORACLE) == pytest.approx(iou)
    assert (
        sft.run_scoring.span_iou(Program([Gen("a")]), Program([Gen("b")])) == 1.0
    )  # nothing to copy


def test_identity_output_is_the_degenerate_policy():
    r = score(IDENTITY)
    assert r.identity and not r.em and r.start_hits == 1  # start right by construction
    assert not score(ORACLE).identity
    bad = sft.run_scoring.score_program(CASE, "<program>", system="x")
    assert not bad.identity and not bad.span_em and bad.span_iou == 0.0
    free = sft.run_evaluation.score_output(CASE, DOC + "\n", system="regen")
    assert free.identity and math.isnan(free.span_iou)


def test_summary_reports_endpoints_without_identity_outputs():
    results = [score(IDENTITY), score(Program([Copy(1, 3), Gen("line five"), Copy(6, 10)]))]
    s = sft.run_scoring.summarize(results)
    assert (s["identity"], s["span_em"], s["n_non_identity"]) == (1, 0, 1)
    assert s["start_acc"] == pytest.approx(3 / 4) and s["start_acc_non_identity"] == 1.0
    assert s["end_acc"] == pytest.approx(1 / 4) and s["end_acc_non_identity"] == 0.5
    row = sft.show_tables.table6_row("x", s, "ours")
    assert row["Identity"] == "1/2" and row["Start / end acc. excl. identity"].endswith("(n=1)")


# --------------------------------------------------------------------------------------------
# Paired tests
# --------------------------------------------------------------------------------------------


def test_the_comparison_table_shows_a_bootstrap_p_of_zero_as_its_resolution():
    comps = [
        {
            "system_a": "a",
            "system_b": "b",
            "metric": "span_iou",
            "test": "paired bootstrap",
            "a": 0.9,
            "b": 0.1,
            "diff": 0.8,
            "ci": [0.7, 0.9],
            "p": 0.0,
            "p_holm": 0.0,
            "significant": True,
        }
    ]
    assert sft.show.comparison_table(comps).loc[0, "p (Holm)"] == "< 0.0001"


def _systems(n=12):
    cases = [EditCase(f"toy/{k}", DOC, GOLD, "fix") for k in range(n)]
    trained = [score(ORACLE if k < 10 else IDENTITY, c, "trained") for k, c in enumerate(cases)]
    untrained = [score(IDENTITY, c, "untrained") for c in cases]
    regen = [sft.run_evaluation.score_output(c, DOC, "regen") for c in cases]
    return {"trained": trained, "untrained": untrained, "regen": regen}


def test_compare_pairs_systems_and_skips_what_free_form_lacks():
    systems = _systems()
    comps = sft.run_paired.compare(
        systems,
        [("trained", "untrained"), ("trained", "regen")],
        metrics=("em", "span_em", "span_iou", "identity"),
    )
    keys = [(c["system_b"], c["metric"]) for c in comps]
    assert keys == [
        ("untrained", "em"),
        ("untrained", "span_em"),
        ("untrained", "span_iou"),
        ("untrained", "identity"),
        ("regen", "em"),
        ("regen", "identity"),
    ]
    span = comps[1]
    assert (span["a"], span["b"], span["a_only"]) == (10, 0, 10) and span["significant"]
    assert all(c["p_holm"] >= c["p"] for c in comps)
    table = sft.show.comparison_table(comps)
    assert list(table["A"]) == ["trained"] * 6
    rates = sft.run_paired.rates_table(systems)
    assert rates.loc["trained", "span-only EM"].startswith("10/12 (83%) [")
    assert rates.loc["regen", "parses"] == "—"
    shuffled = dict(systems, untrained=systems["untrained"][::-1])
    shuffled["untrained"][0].id = "other"
    with pytest.raises(ValueError, match="not paired"):
        sft.run_paired.compare(shuffled, [("trained", "untrained")])


def test_pilot_pairs_one_seed_but_pools_all_for_rates():
    cases = [EditCase(f"toy/{k}", DOC, GOLD, "Spell out five.") for k in range(3)]
    pilot = sft.run_pilot.Pilot()
    for seed in (0, 1):
        pilot.results[("py", seed)] = [score(ORACLE, c, "trained") for c in cases]
    untrained = {
        sft.run_pilot.FSM_UNTRAINED: [
            score(IDENTITY, c, sft.run_pilot.FSM_UNTRAINED) for c in cases
        ]
    }
    trained = sft.run_pilot.sft_system("py")
    assert len(pilot.systems()[trained]) == 6
    with pytest.raises(ValueError, match="not paired: 6 vs 3"):
        sft.run_paired.compare(
            {**untrained, **pilot.systems()}, [(trained, sft.run_pilot.FSM_UNTRAINED)]
        )
    comps = sft.run_paired.compare(
        {**untrained, **pilot.systems(seed=1)}, [(trained, sft.run_pilot.FSM_UNTRAINED)]
    )
    assert (comps[0]["a"], comps[0]["b"]) == (3, 0)


# --------------------------------------------------------------------------------------------
# Per-case records and the conclusion
# --------------------------------------------------------------------------------------------


def test_per_case_records_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    systems = _systems(3)
    systems["trained"][0].extra.update(forwards=7, budget_closed=False, seed=0)
    path = write_cases("sft_pilot", sft.run.case_records(systems), profile="full")
    assert path.name == "sft_pilot.full.cases.jsonl"
    records = sft.run.read_cases(path)
    assert len(records) == 9 and list(records[0]) == list(sft.run.CASE_FIELDS)
    assert records[0]["forwards"] == 7 and records[0]["span_em"] is True
    assert records[-1]["span_iou"] is None and records[-1]["free_form"] is True
    json.loads(path.read_text().splitlines()[0])  # strict JSON per line


def test_conclusion_says_yes_only_when_the_paired_test_does():
    systems = _systems()
    comps = sft.run_paired.compare(systems, [("trained", "untrained")])
    text = sft.text.conclusion(
        systems,
        comps,
        trained="trained",
        untrained="untrained",
        label="toy",
        summaries={"trained": sft.run_scoring.summarize(systems["trained"])},
    )
    assert text.startswith("*toy.*") and "**Yes**" in text and "10/12" in text
    assert "p = <" not in text and "Holm p < 0.0001" in text  # a bound, not "= 0"
    same = {"trained": systems["untrained"], "untrained": systems["untrained"]}
    comps = sft.run_paired.compare(same, [("trained", "untrained")])
    text = sft.text.conclusion(same, comps, trained="trained", untrained="untrained")
    assert "**No**" in text and "not significant" in text
    with pytest.raises(ValueError, match="comparisons lack"):
        sft.text.conclusion(same, [], trained="trained", untrained="untrained")


# --------------------------------------------------------------------------------------------
# Profiles: cpu training untouched, the full profile's deviations declared
# --------------------------------------------------------------------------------------------


def test_cpu_training_recipe_is_unchanged():
    """Chapter 8 loads the cpu checkpoint: its training settings must not move."""
    P = sft.profiles.choose("cpu")
    training = {
        k: P[k]
        for k in (
            "model",
            "train_sets",
            "seeds",
            "epochs",
            "n_train",
            "lr",
            "betas",
            "weight_decay",
            "warmup",
            "grad_accum",
            "micro_batch",
            "max_length",
            "gradient_checkpointing",
            "overlong",
            "threads",
            "checkpoints",
        )
    }
    assert training == {
        "model": "smollm2-135m-instruct",
        "train_sets": ("py",),
        "seeds": (0,),
        "epochs": {"py": 1, "combined": 1},
        "n_train": 32,
        "lr": 1e-4,
        "betas": (0.9, 0.95),
        "weight_decay": 0.0,
        "warmup": 0.03,
        "grad_accum": 2,
        "micro_batch": 1,
        "max_length": 512,
        "gradient_checkpointing": False,
        "overlong": "truncate",
        "threads": 1,
        "checkpoints": "checkpoints",
    }
    assert P["n_eval_baselines"] is None  # every system on the trained model's cases
    assert P["n_eval"] == 12 and sft.profiles.choose("full")["n_eval"] is None  # full: all 33


def test_full_profile_differs_from_the_paper_only_where_declared():
    full, paper = sft.profiles.PROFILES["full"], sft.profiles.PROFILES["paper"]
    differs = {k for k in paper if full[k] != paper[k]} | {"dtype"}
    assert differs == set(sft.profiles.FULL_DEVIATIONS)
    assert all(len(reason) > 30 for reason in sft.profiles.FULL_DEVIATIONS.values())
    assert full["n_train"] is None and full["epochs"]["py"] == 8 and full["lr"] == 2e-5
    assert full["checkpoints"] != sft.profiles.PROFILES["cpu"]["checkpoints"]


def test_seeds_profile_is_the_full_recipe_over_both_sets_and_three_seeds():
    seeds, paper = sft.profiles.PROFILES["seeds"], sft.profiles.PROFILES["paper"]
    differs = {k for k in paper if seeds[k] != paper[k]} | {"dtype"}
    assert differs == set(sft.profiles.SEEDS_DEVIATIONS)
    assert seeds["train_sets"] == paper["train_sets"] and seeds["seeds"] == paper["seeds"]
    assert (
        seeds["cross_corpus"]
        and seeds["checkpoints"] != sft.profiles.PROFILES["full"]["checkpoints"]
    )
    assert set(sft.profiles.RUN_RECORDS) == {"full", "seeds"}


def test_a_run_record_name_is_shared_only_by_runs_that_train_and_score_alike():
    split = {"corpora": {"heval-fix-py": {"train": [1, 2], "held_out": [3]}}}
    full, seeds = sft.profiles.choose("full"), sft.profiles.choose("seeds")
    name = sft.run_pilot.run_record_name(full, split, "py", 0)
    assert name.startswith("run-py-s0-")
    assert sft.run_pilot.run_record_name(seeds, split, "py", 0) == name  # Py-only seed 0: made once
    assert sft.run_pilot.run_record_name(seeds, split, "py", 1) != name
    assert sft.run_pilot.run_record_name({**full, "lr": 1e-4}, split, "py", 0) != name
    other = {"corpora": {"heval-fix-py": {"train": [1, 3], "held_out": [2]}}}
    assert sft.run_pilot.run_record_name(full, other, "py", 0) != name
    # the Combined first seed of a cross-corpus profile also scores Table 22's corpora
    no_cross = {**seeds, "cross_corpus": False}
    assert sft.run_pilot.run_record_name(
        seeds, split, "combined", 0
    ) != sft.run_pilot.run_record_name(no_cross, split, "combined", 0)
