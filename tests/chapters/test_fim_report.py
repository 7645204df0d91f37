"""Chapter 8's tables, figures, prose and results record (the roles of
cadlib.chapters.fim_constraint: run, run_costs, run_evidence, show, show_figures, text) on small
hand-made frames."""

import json
import re

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from cadlib.cases import EditCase
from cadlib.chapters import fim_constraint as FX
from cadlib.fim import completion as FC
from cadlib.metrics import percent, rate_cell

PARAMS = dict(FX.profiles.PROFILES["smoke"], model="smollm2-135m-instruct")


def edit_rows() -> pd.DataFrame:
    """Two systems x two arms x two cases; the constrained arm has per-step timings."""
    rows = []
    for system in ("s0", "s1"):
        for constrained in (False, True):
            for case, end, ok in (
                ("c/1", "model ended", True),
                ("c/2", "budget, not closable", constrained),
            ):
                n = 3 if constrained else 2
                rows.append(
                    dict(
                        system=system,
                        constrained=constrained,
                        case=case,
                        parses=ok,
                        em=False,
                        passed=ok and case == "c/1",
                        end=end,
                        body_tokens=n,
                        output="    x = 1\n    y = 2\n",
                        mask_s=[0.002] * n if constrained else [],
                        forward_s=[0.05] * n,
                        middle_chars=list(range(n)) if constrained else [],
                        setup_s=0.004 if constrained else None,
                    )
                )
    frame = pd.DataFrame(rows)
    frame["arm"] = frame.constrained.map({False: "unconstrained", True: "FIM-constrained"})
    return frame


def fim_rows() -> pd.DataFrame:
    rows = []
    for problem, cut in (("p/1/line", "line"), ("p/2/char", "char")):
        for arm in FC.ARMS:
            raw, constrained = not arm.endswith("trim"), arm.startswith("FIM")
            rows.append(
                dict(
                    system="s0",
                    arm=arm,
                    problem=problem,
                    cut=cut,
                    parses=constrained or cut == "line",
                    em=False,
                    passed=None,
                    end="model ended" if cut == "line" else "budget, closable",
                    middle=f"{arm}:{problem}",
                    new_tokens=2,
                    mask_s=[0.001, 0.003] if raw and constrained else [],
                    step_s=[0.04, 0.06] if raw else [],
                    middle_chars=[0, 5] if raw else [],
                    setup_s=0.002 if constrained else None,
                )
            )
    return pd.DataFrame(rows)


def test_differential_by_cut_counts_per_cut_kind():
    diff = pd.DataFrame(
        dict(
            check=["true_middle", "true_middle", "edit", "edit", "edit"],
            left_cut=["boundary", "mid_token", "boundary", "boundary", "mid_token"],
            right_cut=["mid_token", "mid_token", "mid_token", "boundary", "mid_token"],
            truth=[True, True, False, True, True],
            ours=[True, True, False, False, True],
            viable_prefixes=[True, True, None, None, None],
        )
    )
    diff["agree"] = diff.truth == diff.ours
    t = FX.run.differential_by_cut(diff)
    assert list(t.columns) == ["left cut", "right cut", "edits", "edits parsing", "agreeing"]
    assert t.loc["mid_token"].tolist() == [1, 2, 2, 1, 2]
    assert t.loc["boundary"].tolist() == [1, 0, 1, 1, 0]
    text = FX.show.differential_text(diff, 7, PARAMS, 3)
    assert text.startswith(
        f"7 cases x 2 sources x {PARAMS['diff_splits']} splits, "
        f"{PARAMS['diff_edits']} edits per split (seed 3):\n"
    )
    assert re.search(r"\ndisagreements +1(\.0+)?$", text)  # the boundary edit


def test_edit_tables():
    rows = edit_rows()
    out = FX.show.edit_outcomes(rows)
    assert list(out.index) == ["c/1", "c/2"] and out.shape == (2, 4)
    assert out.loc["c/2", ("s0", "unconstrained")] == "budget, broken / syntax error"
    assert out.loc["c/2", ("s1", "FIM-constrained")] == "budget, broken / parses"
    assert out.loc["c/1", ("s0", "FIM-constrained")] == "ended / parses"
    gold = "    x = 1\n    y = 3\n"
    case = EditCase("c/1", "    x = 1\n", gold, "Fix it.")
    text = FX.show.example_changes(rows, case)
    assert text.split("\n")[:2] == [
        "s0, unconstrained (model ended, parses: True): lines not in the gold:",
        "    '    y = 2'",
    ]
    assert len(text.split("\n")) == 8
    same = FX.show.example_changes(rows.assign(output=gold), case)
    assert "(no line differs from the gold)" in same
    assert FX.show.edit_caption(2, {**PARAMS, "profile": "smoke"}) == (
        f"localized edits, HEvalFix-Py held-out (2 cases); smollm2-135m-instruct; budget "
        f"{PARAMS['edit_budget']}; profile smoke"
    )


def test_edit_shape_table_reads_the_oracle_program():
    cases = [
        EditCase("t/gc", "    a = 1\n    return a\n", "    a = 2\n    return a\n", "Fix."),
        EditCase(
            "t/cgc",
            "    x = a\n    t = x - b\n    return t\n",
            "    x = a\n    t = x + b\n    return t\n",
            "Fix.",
        ),
    ]
    t = FX.show.edit_shape_table(cases)
    assert t.case.tolist() == ["t/gc", "t/cgc"] and t.doc_lines.tolist() == [3, 4]
    assert t.program.tolist() == ["G C", "C G C"]
    assert t.gold_body.tolist() == ["    a = 2", "    t = x + b"]


def test_fim_tables():
    rows = fim_rows()
    out = FX.show.fim_outcomes(rows)
    assert list(out.columns) == [*FC.ARMS, "end", "middle"]
    assert out.loc["p/2/char", "unconstrained"] == "syntax error"
    assert out.loc["p/2/char", "FIM-constrained"] == "parses"
    assert out.loc["p/1/line", "middle"] == "FIM-constrained:p/1/line"
    caption = FX.show.fim_caption(2, {**PARAMS, "profile": "x"})
    assert "(2 problems); smollm2-135m-instruct; prompt 'hole'" in caption


def test_cost_tables_and_units():
    steps = pd.DataFrame(
        dict(method=["incremental"] * 3, middle_chars=[1, 2, 30], seconds=[1e-6, 3e-6, 5e-6])
    )
    t = FX.run_costs.per_step_table(steps)
    assert t["median"].tolist() == pytest.approx([2.0, 5.0])  # microseconds
    assert list(FX.show.with_units(t, "us").columns) == [
        "method",
        "length",
        "steps",
        "median us",
        "p90 us",
    ]
    stages = pd.DataFrame(
        dict(
            problem=0,
            step=[0, 0, 1, 1],
            stage=["walk", "end"] * 2,
            seconds=[0.001, 0.003, 0.002, 0.004],
        )
    )
    st = FX.run_costs.stage_table(stages)
    assert st.index.tolist() == ["walk", "end", "whole mask"]
    assert st.loc["whole mask", "median"] == pytest.approx(5.0)  # steps of 4 and 6 ms
    gen = FX.run_costs.generation_cost(edit_rows(), fim_rows())
    # constrained bodies (2 systems x 2 cases x 3 steps) and the raw FIM-constrained arm (2 x 2)
    assert gen.groupby("method").steps.sum().to_dict() == {
        "mask (ours, whole vocabulary)": 16,
        "model step (forward)": 16,
    }
    mask = gen[gen.method.str.startswith("mask")]
    assert mask["median"].tolist() == pytest.approx([2.0])  # milliseconds
    assert len(FX.run_costs.generation_steps(edit_rows(), fim_rows())) == 32


def test_chapter_numbers_are_strict_json():
    diff = pd.DataFrame(
        dict(
            check=["true_middle", "edit"],
            left_cut="boundary",
            right_cut="boundary",
            truth=[True, False],
            ours=[True, False],
            viable_prefixes=[True, None],
            agree=True,
        )
    )
    steps = pd.DataFrame(dict(method="incremental", middle_chars=[1, 2], seconds=[1e-6, 2e-6]))
    stages = pd.DataFrame(dict(problem=0, step=[0, 1], stage="walk", seconds=[0.001, 0.002]))
    info = {"parameters": 1}
    numbers = FX.run.numbers(
        PARAMS,
        0,
        "heval-fix-py",
        "note",
        info,
        diff,
        {"cuts": 3, "uncategorized": 0},
        edit_rows(),
        fim_rows(),
        steps,
        stages,
    )
    assert list(numbers) == [
        "setting",
        "design",
        "differential",
        "stdlib_differential",
        "localized_edit",
        "localized_edit_cost_ms",
        "fim",
        "fim_by_cut",
        "per_step_cost_us",
        "generation_cost_ms",
        "mask_stages_ms",
    ]
    json.dumps(numbers, allow_nan=False)
    assert numbers["setting"]["checkpoint"] == "note" and numbers["setting"]["model_info"] == info
    assert numbers["differential"]["by_right_cut"] == {
        "boundary": {"left cut": 1, "right cut": 1, "edits": 1, "edits parsing": 0, "agreeing": 1}
    }
    assert numbers["localized_edit"]["s1 / FIM-constrained"]["parses"] == 2
    assert numbers["localized_edit_cost_ms"]["s0 / unconstrained"]["mask ms (median)"] is None
    assert numbers["fim"]["FIM-constrained"]["n"] == 2
    assert numbers["mask_stages_ms"]["whole mask"]["steps"] == 2
    assert "char (1-120 chars)" in numbers["design"]["fim_cuts"]
    assert FX.text.run_summary(numbers, "here").count("FIM completion, ") == 4


def test_figures():
    fig = FX.show_figures.plot_validity(
        edit_rows(), fim_rows(), 2, 2, {"model": "m", "profile": "smoke"}
    )
    left, right = fig.axes
    # the primary metric: the budget-closed outputs that parse do not count
    assert [t.get_text() for t in left.texts] == ["1/2"] * 4
    assert [t.get_text() for t in right.texts] == ["1/2"] * 4
    assert "(2 cases)" in left.get_title() and fig._suptitle.get_text().endswith("m, smoke profile")
    steps = pd.DataFrame(
        dict(
            method=["incremental", "from_scratch"] * 2,
            middle_chars=[1, 1, 40, 40],
            seconds=[1e-6, 1e-3, 2e-6, 2e-3],
        )
    )
    fig2 = FX.show_figures.plot_costs(
        steps, edit_rows(), fim_rows(), {**PARAMS, "profile": "smoke"}, "cpu X"
    )
    assert len(fig2.axes[0].lines) == 2 and len(fig2.axes[1].lines) == 2
    assert "cpu X" in fig2._suptitle.get_text()
    plt.close("all")


def test_setting_label_and_systems(capsys):
    info = {
        "parameters": 134_515_008,
        "dtype": "float32",
        "attn_implementation": "sdpa",
        "device": "cpu",
    }
    hw = {"cpu": "AMD EPYC", "cores": 2}
    assert FX.run.run_label(dict(PARAMS, threads=1, profile="cpu"), info, hw, 49152, 0) == (
        "model smollm2-135m-instruct (135M, float32, sdpa, cpu); its own tokenizer (49,152 "
        "ids); seed 0; profile cpu; machine: AMD EPYC, 2 cores, 1 torch thread"
    )
    default = FX.run.run_label(
        dict(PARAMS, threads=None, profile="paper"), info, dict(hw, threads=4), 5, 1
    )
    assert default.endswith("profile paper; machine: AMD EPYC, 2 cores, 4 torch threads")
    both = FX.run.chapter_systems("smollm2-135m-instruct", "lm", "sft", "ok")
    assert both == {"SmolLM2 untrained": "lm", "SmolLM2 + SFT (ch. 7)": "sft"}
    assert capsys.readouterr().out == ""
    assert FX.run.chapter_systems("smollm2-135m-instruct", "lm", None, "absent") == {
        "SmolLM2 untrained": "lm"
    }
    assert capsys.readouterr().out == "SFT checkpoint absent: only the untrained model is run\n"


def arm_records(constrained: list, unconstrained: list, part: str = "fim") -> pd.DataFrame:
    """Case records of two arms on the same ids: ``(parses, end)`` per case."""
    rows = []
    for arm, outs in (("FIM-constrained", constrained), ("unconstrained", unconstrained)):
        for k, (parses, end) in enumerate(outs):
            rows.append(
                dict(
                    part=part, system="S", arm=arm, id=f"c{k}", parses=parses, end=end, passed=None
                )
            )
    return pd.DataFrame(rows)


def test_arm_tests_pair_the_cases_and_adjust_for_the_family():
    ended, budget = FC.ENDS[0], FC.ENDS[2]
    con = [(True, ended)] * 9 + [(True, budget)] * 3
    unc = [(False, ended)] * 9 + [(True, ended)] * 3
    t = FX.run_evidence.arm_tests(arm_records(con, unc))
    parses = t[t.outcome == "parses"].iloc[0]
    assert (parses.k_a, parses.k_b, parses.a_only, parses.b_only) == (12, 3, 9, 0)
    assert parses.p == pytest.approx(2 * 0.5**9)  # exact two-sided binomial on 9 discordant
    assert parses.p_holm == pytest.approx(3 * parses.p) and parses.significant
    finished = t[t.outcome == "model ended & parses"].iloc[0]
    assert (finished.k_a, finished.k_b) == (9, 3)  # the budget-closed outputs do not count
    assert set(t.outcome) == set(FX.run_evidence.ARM_OUTCOMES.values())
    assert "9 / 0" in FX.show.arm_tests_table(t).to_string()


def test_arm_tests_refuse_unpaired_arms():
    recs = arm_records([(True, FC.ENDS[0])] * 2, [(True, FC.ENDS[0])] * 3)
    with pytest.raises(ValueError, match="different cases"):
        FX.run_evidence.arm_tests(recs)


def test_percentages_never_round_to_0_or_100_unless_they_are():
    assert percent(7970 / 8000) == "99.6" and percent(0.25) == "25"
    assert percent(1.0) == "100" and percent(0.0) == "0"
    assert percent(0.9999) == "99.99" and percent(0.002) == "0.2"
    assert rate_cell(7970, 8000).startswith("7970/8000 (99.6%, CI 99.5-99.7%")
    assert rate_cell(2000, 2000) == "2000/2000 (100.0%, CI 99.8-100.0%)"
    assert rate_cell(3, 12) == "3/12 (25%, CI 9-53%)" and percent(0.5, 1) == "50.0"


def test_the_primary_metric_leads_and_the_budget_is_reported_apart():
    t = FX.show.rate_table(fim_rows(), ["arm"])
    assert list(t.columns[1:4]) == [
        "model ended & parses (primary)",
        "closed by the budget",
        "ast.parse (budget-closed included)",
    ]
    con = t[t.arm == "FIM-constrained"].iloc[0]
    assert con["model ended & parses (primary)"].startswith("1/2 ")
    assert con["closed by the budget"].startswith("1/2 ")
    assert con["ast.parse (budget-closed included)"].startswith("2/2 ")
    assert list(FX.run_evidence.ARM_OUTCOMES) == [FX.run.PRIMARY, "parses", "passed"]


def _large(con, unc):
    recs = arm_records(con, unc)
    numbers = {
        "localized_edit": {},
        "fim": FX.run.records(FX.run.validity_table(recs.assign(em=False), ["arm"]), ["arm"]),
    }
    return numbers, FX.run_evidence.arm_tests(recs)


def test_the_conclusion_follows_the_primary_metric():
    ended, budget = FC.ENDS[0], FC.ENDS[2]
    full = [
        {
            "codebase": "pandas.core (pandas 3)",
            "summary": {
                "cuts": 5,
                "edits": 20,
                "disagreements": 0,
                "false_rejections": 0,
                "uncategorized": 0,
                "failures": 0,
            },
        }
    ]
    # parses inflated by the budget: 12 vs 3 on parses, 3 vs 3 on the primary metric
    numbers, tests = _large(
        [(True, ended)] * 3 + [(True, budget)] * 9, [(True, ended)] * 3 + [(False, ended)] * 9
    )
    md = FX.text.conclusion_markdown(numbers, tests, full)
    assert "On pandas.core (pandas 3) (5 cuts, 20 perturbed middles)" in md and "no failure" in md
    assert "FIM-constrained 3/12 (25%" in md
    assert "no paired difference in the primary metric survives Holm" in md
    assert "not evidence for the primary metric" in md
    # a real gain on the primary metric
    numbers, tests = _large([(True, ended)] * 12, [(False, ended)] * 12)
    md = FX.text.conclusion_markdown(numbers, tests, [])
    assert "raises the primary metric significantly (Holm) in: fim (S, 12 vs 0/12)" in md
    assert "not evidence" not in md
    assert "No large run" in FX.text.conclusion_markdown(numbers, None, [])
    assert "Primary metric" in FX.text.primary_tests_markdown(tests)


def test_large_run_markdown_names_the_significant_differences():
    con = [(True, FC.ENDS[0])] * 12
    unc = [(False, FC.ENDS[0])] * 12
    recs = arm_records(con, unc)
    t = FX.run_evidence.arm_tests(recs)
    numbers = {
        "differential": {
            "splits": 1,
            "true_middles_all_prefixes_viable": 1.0,
            "true_middles_accepted": 1.0,
            "edits": 0,
            "disagreements": 0,
        },
        "localized_edit": {},
        "fim": FX.run.records(FX.run.validity_table(recs.assign(em=False), ["arm"]), ["arm"]),
    }
    results = {
        "profile": "large",
        "model": "m",
        "numbers": numbers,
        "params": {"seed": 0, "fim_cases": 12, "edit_cases": None},
        "hardware": {"cpu": "CPU", "cores": 2},
    }
    md = FX.text.large_run_markdown(results, t)
    assert "profile large" in md and "every held-out" in md
    assert "parses: FIM-constrained 12/12 vs unconstrained 0/12" in md
    t_none = FX.run_evidence.arm_tests(arm_records(con, con))
    assert FX.text.large_run_markdown(results, t_none).endswith("none.")


def test_the_mask_target_is_judged_from_the_run():
    stages = pd.DataFrame(
        dict(
            problem=0,
            step=[0, 0, 1, 1],
            stage=["walk", "end"] * 2,
            seconds=[0.0004, 0.0001, 0.0002, 0.0001],
        )
    )  # 0.5 and 0.3 ms
    md = FX.text.mask_target_markdown(stages, edit_rows(), fim_rows(), "L")
    lines = md.splitlines()
    assert "L" in lines[0]
    assert "along true middles (2 steps)" in lines[2] and "**met**" in lines[2]
    # the generated steps of the fixtures take 2 ms a mask: twice the median target
    assert "(16 steps)" in lines[3] and "**missed** (median 2.0×" in lines[3]
    assert "model's step" in lines[4]
    # walk 0.6 of 0.8 ms summed, end 0.2
    assert lines[5].endswith("stage times): walk 75%, end 25%")


def test_a_committed_run_is_found_when_results_go_elsewhere(tmp_path, monkeypatch):
    # nbval re-runs the chapters with CADLIB_RESULTS_DIR elsewhere: the committed large run
    # must still be shown (it is read from the repository's results/ as a fallback)
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    got = FX.run_evidence.load_run("large")
    assert got is not None and got[0]["profile"] == "large" and len(got[1])
    assert FX.run_evidence.load_run("no-such-profile") is None


def test_a_committed_runs_rates_are_recomputed_from_its_case_records():
    ended, budget = FC.ENDS[0], FC.ENDS[3]
    recs = arm_records([(True, ended), (True, budget)], [(False, ended), (True, ended)])
    recs["em"] = False
    got = FX.run_evidence.rates_from_cases(recs)
    assert got["localized_edit"] == {}
    con = got["fim"]["FIM-constrained"]
    assert (con["n"], con["parses"], con[FX.run.PRIMARY], con["budget_closed"]) == (2, 2, 1, 1)
    stale = {
        "profile": "large",
        "model": "m",
        "params": {"seed": 0, "fim_cases": 2, "edit_cases": 1},
        "hardware": {"cpu": "C", "cores": 2},
        "numbers": {
            "differential": {
                "splits": 1,
                "true_middles_all_prefixes_viable": 1,
                "true_middles_accepted": 1,
                "edits": 0,
                "disagreements": 0,
            },
            "localized_edit": {},
            "fim": {},
        },
    }
    md = FX.text.large_run_markdown(stale, FX.run_evidence.arm_tests(recs), recs)
    assert "FIM completion, FIM-constrained**: ended by the model and parses (primary) 1/2" in md
    # the evidence section: beside a smaller run the large run's summary and tests; in the
    # large run itself only that it is the run, with its paired tests; a command when none
    tests = FX.run_evidence.arm_tests(recs)
    text = FX.text.evidence_markdown((stale, recs), tests, {"profile": "cpu"})
    assert text.startswith(md) and FX.run_evidence.LARGE in text
    assert "Evidence run `fim.large.json`" in text
    text = FX.text.evidence_markdown((stale, recs), tests, {"profile": "large"})
    assert text.startswith("This chapter is the `large` run") and "ended by the model" not in text
    assert "Primary metric, model ended & parses" in text
    text = FX.text.evidence_markdown(None, None, {"profile": "cpu"})
    assert FX.run_evidence.LARGE in text
