"""Chapter 6c's measurements on the tiny random model: shares, agreement, the verdict and the
results numbers (every float declared in cadlib.book.rerun_check)."""

import pytest

import cadlib.chapters.kv_reuse as K
from cadlib.book.rerun_check import undeclared_floats
from cadlib.corpora import EditCase
from cadlib.decoding.methods import prepare

pytestmark = pytest.mark.usefixtures("one_torch_thread")

DOC = "def add(a, b):\n    return a - b\n\n\nprint(add(1, 2))\nprint(add(3, 4))\n"
GOLD = DOC.replace("    return a - b", "    total = a + b\n    return total")


@pytest.fixture(scope="module")
def inputs(tok):
    x = prepare("heval-fix-py", EditCase("toy", DOC, GOLD, "Fix add."), tok)
    y = prepare("heval-fix-java", EditCase("toy2", GOLD, DOC, "Subtract."), tok)
    return {"heval-fix-py": [x], "heval-fix-java": [y]}


def test_the_threshold_is_declared_with_its_reason():
    assert 0.9 < K.AGREEMENT_THRESHOLD < 1 and "chapter 6b" in K.THRESHOLD_REASON
    assert not set(K.DEV) & set(K.TEST)


def test_shares_count_reused_ids_per_policy(inputs, tok):
    rows = K.reuse_shares(inputs, tok, ("none", "first=1", "all"), "SmolLM2", progress=False)
    table = K.share_table(rows).set_index(["corpus", "policy"])
    for corpus in inputs:
        assert 0 < table.loc[(corpus, "none"), "reused"] <= table.loc[(corpus, "none"), "splice"]
        assert table.loc[(corpus, "first=1"), "reused"] <= table.loc[(corpus, "none"), "reused"]
        assert table.loc[(corpus, "all"), "reused"] == 0


def test_agreement_of_the_control_is_total_and_numbers_are_declared(model, tok, inputs):
    rows = K.agreement_rows(model, tok, inputs, ("none", "all"), progress=False)
    table = K.agreement_table(rows)
    assert set(table.split) == {"dev", "test"}
    control = table[table.policy == "all"]
    assert (control.rate == 1).all() and (control.kl_max < 1e-6).all()
    assert (control.recomputed == 1).all()
    verdict = K.threshold_verdict(table)
    assert verdict["best"] is not None and set(verdict["rates"]) == {"none", "all"}
    shares = K.share_table(K.reuse_shares(inputs, tok, ("none", "all"), "SmolLM2",
                                          progress=False))  # fmt: skip
    numbers = K.kv_numbers(shares, table, verdict)
    record = {"numbers": {**numbers, "runtime_s": 1.5, "timing": {"x": {"decode_s": 0.5}}}}
    assert undeclared_floats("kv_reuse", record) == []
    assert "Reusable share" in K.run_summary(shares, table, verdict)


def test_the_timed_run_reads_the_fastest_reuse_policy_against_both_baselines():
    def t(decode_s, vs):
        return dict(forwards=10.0, ids_computed=20.0, decode_s=decode_s, gold_ids_per_s=1.0,
                    vs_exact_splice=vs)

    record = dict(profile="timing", created="2026-12-03T09:00:00", provenance=None,
                  params={"timing_cases": 1, "repeats": 3},
                  numbers={"timing": {"probeedit": {
                      "autoregressive": t(12.0, 0.25), "Copy-as-Decode": t(3.0, 1.0),
                      "reuse none": t(2.0, 1.5), "reuse first=2": t(2.5, 1.2)}}})  # fmt: skip
    text = K.timing_run_markdown(record)
    assert "`reuse none` decodes in 2.00 s, 1.50× as fast as the exact splice" in text
    assert "6.0× autoregressive" in text and "Evidence run `kv_reuse.timing.json`" in text
    assert "not recorded" in text  # no provenance: the caption says so
    table = K.timing_run_table(record)
    assert len(table) == 4 and set(table.method) >= {"reuse none", "Copy-as-Decode"}


def test_speed_goals_are_judged_at_the_best_agreeing_policy_and_can_be_met():
    def t(decode_s, vs, ids_per_s=100.0):
        return dict(forwards=1.0, ids_computed=1.0, decode_s=decode_s, gold_ids_per_s=ids_per_s,
                    vs_exact_splice=vs)

    def corpus(reuse_s):
        return {"prompt lookup": t(8.0, 0.5), "Copy-as-Decode": t(4.0, 1.0),
                "reuse none": t(1.0, 4.0, 1200.0), "reuse first=2": t(reuse_s, 4.0 / reuse_s)}

    agreement = {"test": {"none": dict(rate=0.90, recomputed=0.1),
                          "first=2": dict(rate=0.95, recomputed=0.3)}}
    record = dict(params={"timing_cases": 1, "repeats": 3}, numbers=dict(
        verdict={"best": None}, agreement=agreement,
        timing={"probeedit": corpus(1.0), "realedits-flask": corpus(2.0)}))  # fmt: skip
    assert K.judged_policy(record["numbers"]) == "first=2"  # the highest held-out agreement
    goals = K.speed_goals(record).set_index(["goal", "corpus"])
    splice = goals.loc[K.SPEED_GOALS[0][0]]
    assert splice.loc["ProbeEdit", "met"] and not splice.loc["RealEdits-Flask", "met"]  # 4× vs 2×
    assert goals.loc[(K.SPEED_GOALS[1][0], "RealEdits-Flask"), "at first=2"] == 4.0
    assert not goals.loc[(K.SPEED_GOALS[2][0], "ProbeEdit"), "met"]  # 100 ids/s at first=2
    assert goals.loc[(K.SPEED_GOALS[2][0], "ProbeEdit"), "at none"] == 1200.0
    text = K.speed_goals_markdown(record)
    assert "≥ 3× the exact splice: **missed**, met on 1 of 2" in text
    assert "no policy meets the agreement threshold" in text
    record["numbers"]["verdict"]["best"] = "none"
    assert K.judged_policy(record["numbers"]) == "none" and K.speed_goals(record).met.all()


def test_free_runs_compare_transcripts_and_count_the_runs_that_reused(model, tok, inputs):
    """The control ('all': every matched id recomputed) reuses nothing and is identical by
    construction; identity is counted apart for the runs that reused prompt entries, and the
    results hold counts only (nothing for a re-run to compare within a tolerance)."""
    from cadlib.chapters.kv_reuse.free_run import _first_difference

    assert _first_difference([1, 2, 3], [1, 2, 3]) is None
    assert _first_difference([1, 2, 3], [1, 5, 3]) == 1 and _first_difference([1, 2], [1]) == 1
    rows = K.free_run_rows(model, tok, inputs, ("none", "all"), 24, progress=False)
    assert len(rows) == 4 and set(rows.split) == {"dev", "test"}
    control = rows[rows.policy == "all"]
    assert control.identical.all() and (control.reused == 0).all()
    assert (control.first_difference == -1).all()
    table = K.identity_table(rows).set_index(["split", "policy"])
    for split in ("dev", "test"):
        reuse = table.loc[(split, "none")]
        assert reuse.identical_reused <= reuse.reused_any <= reuse.runs == 1
    shares = K.share_table(K.reuse_shares(inputs, tok, ("none",), "S", progress=False))
    agreement = K.agreement_table(K.agreement_rows(model, tok, inputs, ("none",), progress=False))
    numbers = K.kv_numbers(shares, agreement, {"best": None, "threshold": 0.995, "rates": {}},
                           free=K.identity_numbers(K.identity_table(rows)))
    assert numbers["free_runs"]["test"]["all"] == dict(runs=1, identical=1, reused_any=0,
                                                       identical_reused=0)  # fmt: skip
    assert undeclared_floats("kv_reuse", {"numbers": numbers}) == []


def test_the_free_run_sentence_reads_the_held_out_runs_that_reused():
    import pandas as pd

    table = pd.DataFrame([dict(split="dev", policy="none", runs=3, identical=3, reused_any=3,
                               identical_reused=3, first_difference_median=None),
                          dict(split="test", policy="none", runs=5, identical=3, reused_any=4,
                               identical_reused=2, first_difference_median=7.0)])  # fmt: skip
    text = K.identity_markdown(table, 48)
    assert "48 at most" in text and "`none` 2 of 4 (and 1 that reused nothing)" in text
    assert K.identity_markdown(table[table.split == "dev"], 48) == ""
