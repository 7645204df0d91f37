"""Chapter 6c's measurements on the tiny random model: shares, agreement, the verdict and the
results numbers (every float declared in cadlib.book.rerun_check)."""

import pytest

from cadlib.book.rerun_check import undeclared_floats
from cadlib.chapters import kv_reuse as K
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
    assert 0.9 < K.profiles.AGREEMENT_THRESHOLD < 1 and "chapter 6b" in K.profiles.THRESHOLD_REASON
    assert not set(K.profiles.DEV) & set(K.profiles.TEST)


def test_the_thresholds_reason_describes_chapter_6bs_engines_as_they_are():
    """The threshold is the Q4_1 llama.cpp engine's agreement with transformers, not that of
    two exact engines (the F16 engine agrees on every decision): the reason says so, with
    chapter 6b's committed numbers."""
    from cadlib.record.results import read_results_file

    agreement = read_results_file("llama_cpp.json")["numbers"]["agreement"]
    q4, f16 = agreement["llama.cpp"], agreement["llama.cpp F16"]
    reason = K.profiles.THRESHOLD_REASON
    assert f"Q4_1: {q4['rate']:.2%}".replace("%", " %") + f" of {q4['n']} decisions" in reason
    assert round(q4["rate"], 3) == K.profiles.AGREEMENT_THRESHOLD  # rounded to the threshold
    assert f16["rate"] == 1.0 and f"F16 agrees on all {f16['n']}" in reason
    assert "It is not the agreement of two exact engines" in reason


def test_shares_count_reused_ids_per_policy(inputs, tok):
    rows = K.run.reuse_shares(inputs, tok, ("none", "first=1", "all"), "SmolLM2", progress=False)
    table = K.run.share_table(rows).set_index(["corpus", "policy"])
    for corpus in inputs:
        assert 0 < table.loc[(corpus, "none"), "reused"] <= table.loc[(corpus, "none"), "splice"]
        assert table.loc[(corpus, "first=1"), "reused"] <= table.loc[(corpus, "none"), "reused"]
        assert table.loc[(corpus, "all"), "reused"] == 0


def test_agreement_of_the_control_is_total_and_numbers_are_declared(model, tok, inputs):
    rows = K.run.agreement_rows(model, tok, inputs, ("none", "all"), progress=False)
    table = K.run.agreement_table(rows)
    assert set(table.split) == {"dev", "test"}
    control = table[table.policy == "all"]
    assert (control.rate == 1).all() and (control.kl_max < 1e-6).all()
    assert (control.recomputed == 1).all()
    verdict = K.run.threshold_verdict(table)
    assert verdict["best"] is not None and set(verdict["rates"]) == {"none", "all"}
    shares = K.run.share_table(
        K.run.reuse_shares(inputs, tok, ("none", "all"), "SmolLM2", progress=False)
    )
    numbers = K.run.numbers(shares, table, verdict)
    record = {"numbers": {**numbers, "runtime_s": 1.5, "timing": {"x": {"decode_s": 0.5}}}}
    assert undeclared_floats("kv_reuse", record) == []
    assert "Reusable share" in K.text.run_summary(shares, table, verdict)


def test_the_timed_run_reads_the_fastest_reuse_policy_against_both_baselines():
    def t(decode_s, vs):
        return dict(
            forwards=10.0,
            ids_computed=20.0,
            decode_s=decode_s,
            gold_ids_per_s=1.0,
            vs_exact_splice=vs,
        )

    record = dict(
        profile="timing",
        created="2026-12-03T09:00:00",
        provenance=None,
        params={"timing_cases": 1, "repeats": 3},
        numbers={
            "timing": {
                "probeedit": {
                    "autoregressive": t(12.0, 0.25),
                    "Copy-as-Decode": t(3.0, 1.0),
                    "reuse none": t(2.0, 1.5),
                    "reuse first=2": t(2.5, 1.2),
                }
            }
        },
    )
    text = K.text_speed.timing_run_markdown(record)
    assert "`reuse none` decodes in 2.00 s, 1.50× as fast as the exact splice" in text
    assert "6.0× autoregressive" in text and "Evidence run `kv_reuse.timing.json`" in text
    assert "not recorded" in text  # no provenance: the caption says so
    assert "repeats; medians):" in text  # no prompt cap recorded: none said
    record["params"]["max_prompt"] = {
        "heval-fix-py": 500,
        "realedits-flask": 500,
        "probeedit": 1300,
    }
    assert (
        "medians; prompts of at most 500 ids (ProbeEdit 1,300)):"
        in K.text_speed.timing_run_markdown(record)
    )
    table = K.show.timing_run_table(record)
    assert len(table) == 4 and set(table.method) >= {"reuse none", "Copy-as-Decode"}


def test_speed_goals_are_judged_at_the_best_agreeing_policy_and_can_be_met():
    def t(decode_s, vs, ids_per_s=100.0):
        return dict(
            forwards=1.0,
            ids_computed=1.0,
            decode_s=decode_s,
            gold_ids_per_s=ids_per_s,
            vs_exact_splice=vs,
        )

    def corpus(reuse_s):
        return {
            "prompt lookup": t(8.0, 0.5),
            "Copy-as-Decode": t(4.0, 1.0),
            "reuse none": t(1.0, 4.0, 1200.0),
            "reuse first=2": t(reuse_s, 4.0 / reuse_s),
        }

    agreement = {
        "test": {
            "none": dict(rate=0.90, recomputed=0.1),
            "first=2": dict(rate=0.95, recomputed=0.3),
        }
    }
    record = dict(
        params={"timing_cases": 1, "repeats": 3},
        numbers=dict(
            verdict={"best": None},
            agreement=agreement,
            timing={"probeedit": corpus(1.0), "realedits-flask": corpus(2.0)},
        ),
    )
    assert (
        K.run_speed.judged_policy(record["numbers"]) == "first=2"
    )  # the highest held-out agreement
    goals = K.run_speed.speed_goals(record).set_index(["goal", "corpus"])
    splice = goals.loc[K.run_speed.SPEED_GOALS[0][0]]
    assert splice.loc["ProbeEdit", "met"] and not splice.loc["RealEdits-Flask", "met"]  # 4× vs 2×
    assert goals.loc[(K.run_speed.SPEED_GOALS[1][0], "RealEdits-Flask"), "at first=2"] == 4.0
    assert not goals.loc[
        (K.run_speed.SPEED_GOALS[2][0], "ProbeEdit"), "met"
    ]  # 100 ids/s at first=2
    assert goals.loc[(K.run_speed.SPEED_GOALS[2][0], "ProbeEdit"), "at none"] == 1200.0
    text = K.text_speed.speed_goals_markdown(record)
    assert "≥ 3× the exact splice: **missed**, met on ProbeEdit only (at `first=2`" in text
    assert "no policy meets the agreement threshold" in text
    record["numbers"]["verdict"]["best"] = "none"
    assert (
        K.run_speed.judged_policy(record["numbers"]) == "none"
        and K.run_speed.speed_goals(record).met.all()
    )


def test_speed_goals_are_judged_at_the_every_case_policy_when_it_was_timed():
    def t(decode_s, vs, ids_per_s=100.0):
        return dict(
            forwards=1.0,
            ids_computed=1.0,
            decode_s=decode_s,
            gold_ids_per_s=ids_per_s,
            vs_exact_splice=vs,
        )

    corpus = {
        "prompt lookup": t(6.0, 0.5),
        "Copy-as-Decode": t(3.0, 1.0),
        "reuse none": t(1.0, 3.0),
        "reuse first=8,last=64": t(2.5, 1.2),
    }
    agreement = {"test": {"none": dict(rate=0.90, recomputed=0.1)}}
    record = dict(
        params={"timing_cases": 1, "repeats": 3},
        numbers=dict(
            verdict={"best": None},
            agreement=agreement,
            timing={"probeedit": corpus, "heval-fix-java": corpus},
        ),
    )
    policy, why = K.text_speed.speed_policy(record, "first=8,last=64")
    assert policy == "first=8,last=64" and why.endswith("which misses the agreement threshold")
    why = K.text_speed.speed_policy(record, "first=8,last=64", "first=8,last=64")[1]
    assert why.endswith("which meets the agreement threshold")  # only when accepted
    assert (
        K.text_speed.speed_policy(record, "first=2")[0] == "none"
    )  # not timed: the run's own choice
    assert K.text_speed.speed_policy(record, None)[0] == "none"
    text = K.text_speed.speed_goals_markdown(record, "first=8,last=64")
    assert "judged at `first=8,last=64` (the development search's choice, which misses" in text
    assert (
        "≥ 3× the exact splice: **missed** (at `first=8,last=64`: "
        "ProbeEdit 1.2; at `none`: ProbeEdit 3)." in text
    )
    assert "≥ 2× prompt lookup: **met**" in text  # 6.0 s / 2.5 s = 2.4×
    record["provenance"] = dict(busy=False)
    assert K.text_speed.speed_answer(record, "first=8,last=64") == (
        "Timed at `first=8,last=64` on a quiet machine (1 case(s) per corpus, 3 repeats), the "
        "speed goals: ≥ 3× the exact splice missed; ≥ 2× prompt lookup met; moonshot: "
        "≥ 1,000 output ids/s missed. Against the exact splice: ProbeEdit 1.20× (`none`, "
        "which reuses the most: 3.00×)."
    )
    record["provenance"] = None
    assert "on a machine whose load was not recorded" in K.text_speed.speed_answer(record)


def test_free_runs_compare_transcripts_and_count_the_runs_that_reused(model, tok, inputs):
    """The control ('all': every matched id recomputed) reuses nothing and is identical by
    construction; identity is counted apart for the runs that reused prompt entries, and the
    results hold counts only (nothing for a re-run to compare within a tolerance)."""
    from cadlib.chapters.kv_reuse.run import _first_difference

    assert _first_difference([1, 2, 3], [1, 2, 3]) is None
    assert _first_difference([1, 2, 3], [1, 5, 3]) == 1 and _first_difference([1, 2], [1]) == 1
    rows = K.run.free_run_rows(model, tok, inputs, ("none", "all"), 24, progress=False)
    assert len(rows) == 4 and set(rows.split) == {"dev", "test"}
    control = rows[rows.policy == "all"]
    assert control.identical.all() and (control.reused == 0).all()
    assert (control.first_difference == -1).all()
    table = K.run.identity_table(rows).set_index(["split", "policy"])
    for split in ("dev", "test"):
        reuse = table.loc[(split, "none")]
        assert reuse.identical_reused <= reuse.reused_any <= reuse.runs == 1
    shares = K.run.share_table(K.run.reuse_shares(inputs, tok, ("none",), "S", progress=False))
    agreement = K.run.agreement_table(
        K.run.agreement_rows(model, tok, inputs, ("none",), progress=False)
    )
    numbers = K.run.numbers(
        shares,
        agreement,
        {"best": None, "threshold": 0.995, "rates": {}},
        free_runs=rows,
        runtime_s=1.5,
    )
    assert numbers["free_runs"]["test"]["all"] == dict(
        runs=1, identical=1, reused_any=0, identical_reused=0
    )
    assert undeclared_floats("kv_reuse", {"numbers": numbers}) == []


def test_the_free_run_sentence_reads_the_held_out_runs_that_reused():
    import pandas as pd

    table = pd.DataFrame(
        [
            dict(
                split="dev",
                policy="none",
                runs=3,
                identical=3,
                reused_any=3,
                identical_reused=3,
                first_difference_median=None,
            ),
            dict(
                split="test",
                policy="none",
                runs=5,
                identical=3,
                reused_any=4,
                identical_reused=2,
                first_difference_median=7.0,
            ),
        ]
    )
    text = K.text.identity_markdown(table, 48)
    assert "48 at most" in text and "`none` 2 of 4 (and 1 that reused nothing)" in text
    assert K.text.identity_markdown(table[table.split == "dev"], 48) == ""


def test_the_timing_plot_has_one_row_per_corpus_and_rings_the_judged_policy():
    import matplotlib

    matplotlib.use("Agg")

    def t(decode_s):
        return dict(
            forwards=1.0,
            ids_computed=1.0,
            decode_s=decode_s,
            gold_ids_per_s=1.0,
            vs_exact_splice=3.0 / decode_s,
        )

    corpus = {"Copy-as-Decode": t(3.0), "reuse none": t(1.0), "reuse first=8,last=64": t(2.5)}
    record = dict(
        params={"timing_cases": 1},
        numbers={"timing": {"probeedit": corpus, "heval-fix-go": corpus}},
    )
    fig = K.show.plot_timing_run(record, "first=8,last=64")
    ax = fig.axes[0]
    assert [x.get_text() for x in ax.get_yticklabels()] == ["ProbeEdit", "HEvalFix-Go"]
    ringed = [c.get_label() for c in ax.collections if c.get_linewidths()[0] > 1]
    assert ringed == ["reuse first=8,last=64"]
