"""Chapter 6's run, tables and text (cadlib.chapters.decoding): the setup label,
the timed sample's tables, the timed run priced on its grid, the accounting of every case and
its tables, the free-run, boundary and agreement tables, and the results numbers, on toy data
and the tiny model."""

import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from cadlib.cases import Corpus, EditCase
from cadlib.chapters import decoding as D
from cadlib.costs import accounting as A
from cadlib.costs import cost_model as CM
from cadlib.decoding.fsm import transcript
from cadlib.decoding.methods import DRAFTED_SETTING, METHODS, TIMED, prepare
from cadlib.decoding.token_boundaries import boundary_effect
from cadlib.record.results import strict_json
from cadlib.record.session import Chapter

pytestmark = pytest.mark.usefixtures("one_torch_thread")

DOC = "def add(a, b):\n    total = a - b\n    return total\n\n\nprint(add(1, 2))\n"
GOLD = DOC.replace("a - b", "a + b")
CASES = [
    EditCase("toy/0", DOC, GOLD, "Fix the bug in add."),
    EditCase(
        "toy/1", "x\ny = 2\nz = 3\nw = 4\n", "x\ny = 20\nz = 3\nw = 4\n", "Set y to 20."
    ),  # a copy of fewer than accounting.M_STAR ids: m=0 and m=4 differ
]
PARAMS = dict(
    model="tiny-random",
    timing_cases={"toy": 2},
    timing_max_ids={"toy": 200},
    free_run_cases={"toy": 1},
    repeats=2,
    warmup=1,
    max_new_tokens=8,
    min_span=0,
    pld_num_tokens=10,
    pld_max_ngram=2,
    effect_cases=1,
    mask_reps=20,
    grid_contexts=(16, 64),
    grid_trials=2,
)


def synthetic_grid(ns=(1, 2, 4, 8, 64), Ls=(16, 128, 2048)):
    return pd.DataFrame(
        [
            dict(keep=k, L=L, n=n, seconds=1e-3 * (1 + n) + 1e-6 * L * (k == "all"))
            for k in ("last", "all")
            for L in Ls
            for n in ns
        ]
    )


def test_measurement_label_names_the_gpu_or_the_cpu_and_its_threads():
    info = {"dtype": "float32", "attn_implementation": "sdpa"}
    hw = {"cpu": "Some CPU", "gpu": "Some GPU", "cores": 2}
    cpu_hw = {"cpu": "Some CPU", "cores": 2}
    assert D.run.measurement_label("m", info, cpu_hw, "cpu", 1, "cpu") == (
        "model m (float32, sdpa attention, cpu); profile cpu; "
        "machine: Some CPU, 2 cores, 1 torch thread"
    )
    assert "Some CPU, 2 cores, 2 torch threads" in D.run.measurement_label(
        "m", info, cpu_hw, "cpu", 2, "cpu"
    )
    assert D.run.measurement_label("m", info, hw, "cuda", 8, "paper").endswith(
        "profile paper; machine: Some GPU, Some CPU, 2 cores"
    )


def test_timed_cases_table_and_the_transcript_as_runs(tok):
    timed = [prepare("toy", case, tok) for case in CASES]
    table = D.show.timed_cases_table(timed, tok)
    assert list(table.case) == ["toy/0", "toy/1"] and table.timed.all()
    assert list(table.gold_ids) == [len(x.target) - 1 for x in timed]
    assert list(table.doc_lines) == [7, 5]
    tr = transcript(timed[0].program, DOC, tok)
    runs = D.show.transcript_runs(timed[0], tok)
    assert runs.ids.sum() == len(tr) and "".join(runs.text) == tr.text(tok)
    assert (runs.kind != runs.kind.shift()).all()  # runs are maximal
    counts = D.show.transcript_counts(timed[0], tok)
    assert counts.startswith(f"toy/0: {len(tr)} ids: {{'choice': {tr.count('choice')}, ")


def test_load_cases_takes_the_profiles_corpora_and_their_subsets(tok):
    params = dict(
        timing_cases={"heval-fix-py": 2}, timing_max_ids=None, free_run_cases={"heval-fix-py": 1}
    )
    corpus, timed, free = D.run.load_cases(params, None, tok, seed=0)
    assert list(corpus) == ["heval-fix-py"] and len(corpus["heval-fix-py"]) == 164
    assert len(timed) == 2 and len(free) == 1
    assert {x.corpus for x in [*timed, *free]} == {"heval-fix-py"}
    again = D.run.load_cases(params, ["heval-fix-py"], tok, seed=0)[1]
    assert [x.case.id for x in again] == [x.case.id for x in timed]


def _free_runs(parsed=(True, True, True)):
    return pd.DataFrame(
        [
            dict(
                corpus=c,
                case=f"{c}/{k}",
                parsed=p,
                strict_resolved=p,
                em=k == 0,
                em_trimmed=True,
                copy_fraction=0.5 * k,
                ops=2,
                copies=1,
                decisions=8,
                budget_closed=k == 1,
                forwards=9,
                wall_s=0.1,
                program="<program>\n" + "x" * 100,
            )
            for (c, k), p in zip([("a", 0), ("a", 1), ("b", 0)], parsed, strict=True)
        ]
    )


def test_free_run_summary_pools_and_fails_on_a_program_that_did_not_parse():
    summary = D.run_free.free_run_summary(_free_runs())
    assert list(summary.index) == ["a", "b", "pooled"]
    assert summary.loc["pooled", "cases"] == 3 and summary.loc["a", "EM (byte-exact)"] == 0.5
    assert summary.loc["pooled", "budget closed"] == pytest.approx(1 / 3)
    assert summary.loc["pooled", "realized copy fraction"] == pytest.approx(0.5 / 3)
    with pytest.raises(AssertionError, match="parse or resolve"):
        D.run_free.free_run_summary(_free_runs(parsed=(True, False, True)))
    shown = D.show.free_run_programs(_free_runs())
    assert list(shown.columns) == ["corpus", "case", "ops", "copies", "decisions", "em", "program"]
    assert (shown.program.str.len() == 90).all() and shown.program[0].startswith("<program>⏎x")


def test_agreement_boundary_and_effect_lines():
    forced = {"p/1": SimpleNamespace(agreement=0.12345), "p/2": SimpleNamespace(agreement=1.0)}
    assert D.run_timing.teacher_forced_agreement(forced) == {"p/1": 0.12345, "p/2": 1.0}
    assert D.show.agreement_line(forced).endswith("decisions: {'p/1': 0.123, 'p/2': 1.0}")
    bt = pd.DataFrame(
        [
            dict(
                tokenizer="T",
                corpus="c",
                cases=4,
                copies=8,
                copy_naive=2,
                copy_ours=8,
                gens=3,
                gen_naive=1,
                gen_ours=3,
                whole_naive=0,
                whole_ours=4,
            )
        ]
    )
    pct = D.show.boundary_percent_table(bt).iloc[0]
    assert pct["copy windows canonical, naive %"] == 25.0
    assert pct["gen windows canonical, naive %"] == 33.3
    assert pct["whole transcript canonical, ours %"] == 100.0
    eff = pd.DataFrame(
        dict(
            same_prefix=[True, False, False],
            kl=[0.0, 0.05, 3.0],
            fsm_choice_agree=[True, True, False],
            top1_agree=[True, False, False],
        )
    )
    assert D.show.effect_line(eff) == (
        "3 boundaries, 2 with different preceding ids; FSM choice "
        "agrees at 2/3, top-1 agrees at 1/3"
    )


def test_every_case_accounting_and_its_tables(tok):
    corpora = {"toy": Corpus("toy", "generated:v1", CASES)}
    every = D.run_accounting.account_every_case(
        {}, tok, CM.CostGrid(synthetic_grid()), seed=0, corpora=corpora, progress=False
    )
    assert every.sources == {"toy": "generated"}
    assert every.best.to_dict() == A.best_prompt_lookup(every.rows).to_dict()
    assert "predicted_s" in every.rows and set(every.predicted.corpus) == {"toy", "pooled"}
    assert D.show.accounting_report(every).splitlines() == [
        "sources: {'toy': 'generated'}",
        f"best prompt-lookup setting per corpus: {{'toy': '{every.best['toy']}'}}",
        "fastest prompt-lookup setting (predicted seconds, development corpora): "
        f"{every.fastest['toy']}",
    ]
    pld = every.predicted.set_index(["corpus", "method"]).loc[("toy", "prompt lookup")]
    fast = every.rows[
        (every.rows.method == "prompt lookup") & (every.rows.setting == every.fastest["toy"])
    ]
    ar = every.rows[every.rows.method == "autoregressive"]
    assert pld.pooled_speedup == pytest.approx(ar.predicted_s.sum() / fast.predicted_s.sum())
    shown = D.show.accounting_table(every)  # (method, setting) x corpus, not a row per pair
    assert list(shown.columns) == ["toy", "pooled"] and "median_ratio" not in shown
    s = every.summary.set_index(["corpus", "method", "setting"]).loc[
        ("toy", "Copy-as-Decode", "m=0")
    ]
    cell = f"{s.median_fpt:.3f} [{s.fpt_lo:.3f}–{s.fpt_hi:.3f}]"
    assert shown.loc[("Copy-as-Decode", "m=0"), "toy"] == cell
    assert ("prompt lookup", "best setting per corpus") in shown.index  # one row, every corpus
    speed = D.show.predicted_table(every.predicted)
    assert len(speed) == len(every.predicted) / 2  # one row per method and setting, two corpora
    assert speed.loc[("prompt lookup", pld.setting), "toy"] == (
        f"{pld.median_speedup:.2f} [{pld.lo:.2f}–{pld.hi:.2f}]"
    )
    pooled = D.show.pooled_predicted_table(every.predicted)
    assert pooled.loc[("prompt lookup", pld.setting), "toy"] == round(pld.pooled_speedup, 2)
    comp = D.show.composition_table(every.summary)
    assert ("prompt lookup", "best setting per corpus") in comp.index
    assert comp.loc[("autoregressive", ""), "toy"] == 1.0
    assert list(comp.columns) == ["toy", "pooled"]


def test_accounting_summary_and_the_forwards_figure(tok):
    corpora = {"toy": CASES, "toy2": [EditCase("t2/0", GOLD, DOC, "Undo.")]}
    rows = A.corpus_forwards(corpora, tok, grid=[(5, 1), (40, 3)], progress=False)
    best = A.best_prompt_lookup(rows)
    summary = A.forwards_summary(rows, best, seed=0)
    text = D.text.accounting_summary(summary, best)
    lines = [x for x in text.splitlines() if x.startswith("| ") and "**" in x]
    assert [line.split(" | ")[0][2:] for line in lines] == ["toy", "toy2", "pooled"]
    wins = 0
    for line, (corpus, g) in zip(lines, summary.groupby("corpus", sort=False), strict=True):
        by = g.set_index(["method", "setting"]).pooled_fpt
        cad, pl = by[("Copy-as-Decode", "m=0")], by[("prompt lookup", best.get(corpus, "best"))]
        assert f"{cad:.3f}" in line and f"{pl:.3f}" in line
        assert f"**{'Copy-as-Decode' if cad < pl else 'prompt lookup'}**" in line
        wins += corpus != "pooled" and cad < pl
    assert f"than prompt lookup on {wins} of 2 corpora" in text
    fig = D.show.plot_forwards_per_case(rows, best, title="toy")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == [
        "autoregressive",
        "prompt lookup (best setting per corpus)",
        "Copy-as-Decode m=0",
        "Copy-as-Decode m=4",
        *(f"Copy-as-Decode {c}" for c in A.COMPOSITIONS),
    ]
    fig.canvas.draw()  # the legend sits beside the boxes, not over them
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1
    fig.clf()


def test_wall_and_forwards_tables():
    speed = pd.DataFrame(
        [
            dict(
                corpus="c",
                method="Copy-as-Decode",
                cases=2,
                T=10,
                forwards=4,
                forwards_per_token=0.4,
                forward_ratio=2.5,
                free_share=0.61234,
                decode_s=1.234,
                decode_s_min=1.0,
                decode_s_max=1.5,
                speedup=2.0,
                speedup_min=1.5,
                speedup_max=2.25,
            )
        ]
    )
    wall = D.show.wall_table(speed).iloc[0]
    assert wall.decode_s == "1.23 [1.00–1.50]" and wall.speedup == "2.00× [1.50–2.25]"
    assert D.show.forwards_table(speed).free_share[0] == 0.612
    assert D.show.forwards_table(speed).cases[0] == 2 and wall.cases == 2  # each row's n
    assert "median over 3 repeats" in D.show.wall_caption({"repeats": 3}, "lbl")


@pytest.fixture(scope="module")
def run(model, tok):
    """The chapter on the tiny model and the toy cases, end to end (seconds)."""
    timed = [prepare("toy", case, tok) for case in CASES]
    timing = D.run_timing.time_methods(model, tok, timed, PARAMS)
    corpora = {"toy": Corpus("toy", "generated", CASES)}
    every = D.run_accounting.account_every_case(
        PARAMS, tok, timing.grid, seed=0, corpora=corpora, progress=False
    )
    fr = D.run_free.free_run(model, tok, timed[:1], PARAMS["max_new_tokens"], progress=False)
    masks = D.run_costs.mask_costs(model, tok, PARAMS)
    bt = D.run.boundary_table(corpora, tok)
    eff = boundary_effect(model, tok, timed[:1])
    return SimpleNamespace(timing=timing, every=every, fr=fr, masks=masks, bt=bt, eff=eff)


def test_time_methods_prices_the_timed_runs_on_its_grid(run, tok):
    timing = run.timing
    assert timing.corpora == ["toy"]
    assert set(timing.grid.table.L) == {16, 64}
    assert set(timing.forced) == {"toy/0", "toy/1"}
    ar = timing.speed.set_index(["corpus", "method"]).loc[("pooled", "autoregressive")]
    assert ar.forward_ratio == 1.0 and ar["T"] == sum(len(x.target) - 1 for x in timing.inputs)
    assert set(timing.validation.method) == set(TIMED) and len(timing.validation) == 8
    assert timing.validation.predicted_s.notna().all()
    # the validation prices the settings that ran (m=0, its drafts, K=10 n=2): their
    # forwards are exact
    assert (timing.validation.forwards == timing.validation.predicted_forwards).all()
    assert list(timing.bounds.corpus) == ["toy", "pooled"]
    assert timing.bounds.drafts_over_bnd_exact.notna().all()
    again = D.run_timing.timed_run(
        timing.inputs, timing.rows, timing.forced, timing.grid, tok, PARAMS
    )
    pd.testing.assert_frame_equal(again.validation, timing.validation)
    pd.testing.assert_frame_equal(again.bounds, timing.bounds)


def test_speedup_figure_draws_every_method_and_the_bound(run):
    fig = D.show.plot_speedups(run.timing, "toy label")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["toy", "pooled"]
    assert len(ax.patches) == len(TIMED) * 2
    heights = sorted(round(p.get_height(), 9) for p in ax.patches)
    assert heights == sorted(round(float(v), 9) for v in run.timing.speed.speedup)
    assert ax.get_title().endswith("toy label")
    fig.clf()


def test_a_missed_speed_goal_is_explained_by_forwards_and_ids_fed(run):
    timing, every = run.timing, run.every
    goals = pd.DataFrame(
        [
            dict(goal="fewer forwards than best prompt lookup", corpus="toy", outcome="missed"),
            dict(goal="faster than best prompt lookup (predicted)", corpus="toy", outcome="met"),
        ]
    )
    assert (
        D.text_goals.speed_gaps_markdown(goals, every, timing.grid) == ""
    )  # only speed goals count
    undecided = goals.assign(outcome="undecided")  # within the model's error: not explained
    assert D.text_goals.speed_gaps_markdown(undecided, every, timing.grid) == ""
    md = D.text_goals.speed_gaps_markdown(
        goals.assign(outcome="missed"), every, timing.grid, n=8, context=16
    )
    lines = md.splitlines()
    assert len(lines) == 4 and lines[2].startswith("* toy: Copy-as-Decode (m=0")
    rows = every.rows[
        (every.rows.corpus == "toy")
        & (every.rows.method == "prompt lookup")
        & (every.rows.setting == every.fastest["toy"])  # time: the fastest setting
    ]
    fed = (rows.ids_fed - rows.prompt).sum() / rows["T"].sum()
    assert f"prompt lookup ({every.fastest['toy']}) " in lines[2] and f"{fed:.2f} ids:" in lines[2]
    ratio = float(timing.grid.seconds(8, 16) / timing.grid.seconds(1, 16))
    assert f"a forward of 8 ids at context 16 costs {ratio:.1f}x" in lines[3]
    per_id = float(timing.grid.seconds(8, 16) - timing.grid.seconds(1, 16)) / 7
    per_fw = float(timing.grid.seconds(1, 16)) - per_id
    fw = rows.forwards.sum() / rows["T"].sum()
    share = fed * per_id / (fed * per_id + fw * per_fw)
    assert f"{share:.0%} of prompt lookup's" in lines[2]


def test_a_missed_forwards_goal_is_explained_case_by_case(run):
    every = run.every
    goal = "fewer forwards than best prompt lookup"
    met = pd.DataFrame(
        [
            dict(goal=goal, corpus="toy", outcome="met"),
            dict(goal="faster than best prompt lookup (predicted)", corpus="toy", outcome="missed"),
        ]
    )
    assert (
        D.text_goals.forward_gaps_markdown(met, every) == ""
    )  # only a missed forwards goal counts
    md = D.text_goals.forward_gaps_markdown(met.assign(outcome="missed"), every)
    line = md.splitlines()[2]
    setting = CM.best_copy_as_decode(every.summary, "toy").setting
    rows = every.rows[every.rows.corpus == "toy"]
    cad = rows[(rows.method == "Copy-as-Decode") & (rows.setting == setting)].set_index("case")
    pld = rows[(rows.method == "prompt lookup") & (rows.setting == every.best["toy"])]
    diff = cad.forwards - pld.set_index("case").forwards.reindex(cad.index)
    assert line.startswith(f"* toy: Copy-as-Decode ({setting}) needs fewer forwards")
    assert f"on {int((diff < 0).sum())} of 2 cases" in line
    assert f"net {int(diff.sum()):+d}." in line
    per_gold = [
        (cad.output - cad["T"])[m].sum() / max(cad["T"][m].sum(), 1) for m in (diff > 0, diff < 0)
    ]
    assert f"spend {per_gold[0]:.2f} ids of structure" in line
    assert ("carry more structure" in line) == (per_gold[0] > per_gold[1])


class _LinearGrid:
    """A cost grid stand-in: a forward of ``k`` ids costs ``fixed + per_id * k`` seconds."""

    def __init__(self, fixed, per_id):
        self.fixed, self.per_id = fixed, per_id

    def seconds(self, k, context):
        return self.fixed + self.per_id * k


@pytest.mark.parametrize(
    "fixed, per_id, verdict",
    [
        (0.0, 1.0, "the ids fed, which both methods pay for every output id at least once, weigh"),
        (1.0, 1e-6, "the count of forwards weighs more than the ids fed for both"),
    ],
)
def test_what_weighs_more_in_a_missed_goal_follows_the_grid(run, fixed, per_id, verdict):
    goals = pd.DataFrame(
        [dict(goal="faster than best prompt lookup (predicted)", corpus="toy", outcome="missed")]
    )
    md = D.text_goals.speed_gaps_markdown(
        goals, run.every, _LinearGrid(fixed, per_id), n=8, context=16
    )
    assert f"Priced so, {verdict}" in md.splitlines()[-1]


def test_goals_numbers_records_and_results_file(run, tmp_path, monkeypatch):
    timing, every = run.timing, run.every
    goals = D.run_goals.goals(timing, every)
    pooled = timing.bounds.set_index("corpus").loc["pooled"]
    plain = pooled.realized_over_bnd_exact  # the quantity the goal names, never +drafts
    assert goals.iloc[-1].corpus == "timed" and goals.iloc[-1].ours == pytest.approx(plain)
    numbers = D.run.numbers(timing, every, run.fr, run.masks, run.bt, run.eff, 1.5)
    assert list(numbers) == [
        "speed",
        "timed_cases",
        "cost_model",
        "goals",
        "free_run",
        "teacher_forced_agreement",
        "fixed_costs",
        "mask_costs",
        "boundaries",
        "free_run_closed_by_budget",
        "free_run_ended_by_model",
        "boundary_effect",
        "accounting",
        "runtime_s",
    ]
    assert set(numbers["speed"]) == {f"{c}/{m}" for c in ("toy", "pooled") for m in TIMED}
    assert numbers["timed_cases"] == {"toy/0": "toy", "toy/1": "toy"}
    assert numbers["free_run"][-1]["corpus"] == "pooled"
    assert numbers["free_run_closed_by_budget"] + numbers["free_run_ended_by_model"] == len(run.fr)
    assert numbers["teacher_forced_agreement"] == D.run_timing.teacher_forced_agreement(
        timing.forced
    )
    assert numbers["boundary_effect"]["boundaries"] == len(run.eff)
    assert numbers["accounting"]["best_prompt_lookup"] == every.best.to_dict()
    strata = D.run_accounting.strata(every.rows)
    assert numbers["accounting"]["strata"] == strata.to_dict(orient="records")
    assert list(numbers["accounting"]["setting_grid"]) == list(A.setting_grid(every.rows).index)
    assert len(numbers["fixed_costs"]) == len(D.run_costs.fixed_costs(timing.forced))
    assert numbers["runtime_s"] == 1.5
    json.dumps(strict_json(numbers), allow_nan=False)

    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    ch = Chapter(
        "decoding", {**PARAMS, "profile": "smoke"}, seed=0, device="cpu", rec=None, started=0.0
    )
    path = D.run.write_results(ch, numbers, "toy label", "cpu")
    assert path.name == "decoding.smoke.json"
    written = json.loads(path.read_text())
    assert written["params"]["label"] == "toy label" and written["model"] == "tiny-random"
    assert written["numbers"]["timed_cases"] == numbers["timed_cases"]
    assert written["paper"] == json.loads(json.dumps(strict_json(D.run.paper_numbers())))
    recs = D.run.case_records(every, timing, run.fr, PARAMS)
    timed = [r for r in recs if "measured_s" in r]
    assert {(r["case"], r["method"]) for r in timed} == {
        (c, m) for c in ("toy/0", "toy/1") for m in METHODS
    }
    drafted = [r for r in timed if r["setting"] == DRAFTED_SETTING]  # the 4th timed method
    assert {r["case"] for r in drafted} == {"toy/0", "toy/1"}
    assert recs[-1]["method"] == "free run (FSM, greedy)"


def test_the_timed_run_alone_gives_the_gpu_checks_numbers(run):
    numbers = D.run.numbers(run.timing)  # cadlib.cli.gpu_check: no accounting, no free run
    assert list(numbers) == ["speed", "timed_cases", "cost_model", "fixed_costs"]
    assert list(numbers["cost_model"]) == [
        "grid",
        "validation",
        "validation_summary",
        "timed_bounds",
    ]
    full = D.run.numbers(run.timing, run.every, run.fr, run.masks, run.bt, run.eff, 1.5)
    assert all(numbers[k] == full[k] for k in ("speed", "timed_cases", "fixed_costs"))
    json.dumps(strict_json(numbers), allow_nan=False)


def test_empty_boundary_effect_and_budget_counts(run):
    empty = run.eff.iloc[:0]
    numbers = D.run.numbers(run.timing, run.every, _free_runs(), run.masks, run.bt, empty, 0.0)
    assert numbers["free_run_closed_by_budget"] == 1 and numbers["free_run_ended_by_model"] == 2
    assert numbers["boundary_effect"]["max_kl"] is None
    assert numbers["boundary_effect"]["kl_differing"] == []
    assert np.isfinite(numbers["runtime_s"])


def test_a_committed_full_run_is_shown_from_its_file(tmp_path, monkeypatch):
    committed = D.run.load_full()
    if committed is None:
        pytest.skip("no full run committed")
    speed = {
        "cases": 2,
        "decode_s": 2.0,
        "decode_s_min": 1.9,
        "decode_s_max": 2.1,
        "speedup": 3.0,
        "speedup_min": 2.9,
        "speedup_max": 3.1,
        "forwards_per_token": 0.1234,
    }
    key = "probeedit/Copy-as-Decode +drafts"
    numbers = {
        **committed["numbers"],
        "speed": {**committed["numbers"]["speed"], key: speed},
        "timed_cases": {"a": "probeedit", "b": "probeedit", "c": "heval-fix-py"},
        "runtime_s": 1500.0,
    }
    full = {"profile": "full", "params": {"label": "L", "repeats": 2}, "numbers": numbers}
    monkeypatch.setenv("CADLIB_ROOT", str(tmp_path))  # no committed results/ there
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path / "runs"))
    assert D.run.load_full() is None
    (tmp_path / "runs").mkdir(exist_ok=True)
    (tmp_path / "runs" / "decoding.full.json").write_text(json.dumps(full))
    assert D.run.load_full() is None  # a re-run's file is not the committed evidence
    (tmp_path / "results").mkdir(exist_ok=True)
    (tmp_path / "results" / "decoding.full.json").write_text(json.dumps(full))
    got = D.run.load_full()
    md = D.text.full_run_markdown(got)
    assert "3 timed cases: probeedit 2, heval-fix-py 1" in md and "25 minutes" in md
    assert D.run.FULL in md and "**met**" in md
    table = D.show.full_run_wall_table(got)
    row = table.set_index(["corpus", "method"]).loc[tuple(key.split("/"))]
    assert row.cases == 2  # the timed cases of the corpus (not the file's own count)
    assert row.speedup == "3.00× [2.90–3.10]" and row.forwards_per_token == 0.123
    # the evidence section: beside a smaller run, the full run's text and table; in the full
    # run itself, only that it is the run (no second copy of its numbers); a command if none
    cpu, full_profile = {"profile": "cpu"}, {"profile": "full"}
    text, shown = D.text.evidence_markdown(got, cpu), D.show.evidence_table(got, cpu)
    assert text.startswith(md) and "Evidence run `decoding.full.json`" in text
    assert shown.equals(table)
    text = D.text.evidence_markdown(got, full_profile)
    assert D.show.evidence_table(got, full_profile) is None
    assert text.startswith("This chapter is the `full` run")
    assert "Evidence run `decoding.full.json`" in text and "timed cases" not in text
    text = D.text.evidence_markdown(None, cpu)
    assert D.show.evidence_table(None, cpu) is None and D.run.FULL in text


def _validation(ar, cad):
    rows = []
    for i, (a, c) in enumerate(zip(ar, cad, strict=True)):
        corpus = "long" if i == len(ar) - 1 else "short"
        rows += [
            dict(corpus=corpus, case=f"{corpus}/{i}", method="autoregressive", measured_s=a),
            dict(corpus=corpus, case=f"{corpus}/{i}", method="Copy-as-Decode", measured_s=c),
        ]
    return pd.DataFrame(rows)


def test_dominance_is_read_from_the_run_not_asserted():
    """One long case that takes most of the autoregressive time is said to dominate, with the
    pooled speedup without its corpus; a sample of equal cases is not."""
    one_long = D.text.dominance_markdown(_validation([1, 1, 8], [1, 1, 1]), "toy")
    assert "(long/2) takes 80%" in one_long and "so long dominates" in one_long
    assert "Copy-as-Decode 3.33× with it, 1.00× without it" in one_long
    two = D.text.dominance_markdown(_validation([1, 1, 1], [0.5, 0.5, 0.5]), "toy")
    assert "short (2 of 3 cases) 67%, so short dominates" in two  # a corpus, not a case
    three = _validation([1, 1, 1], [0.5, 0.5, 0.5]).assign(
        corpus=lambda f: f.case.map({"short/0": "a", "short/1": "b", "long/2": "c"})
    )
    assert "does not dominate" in D.text.dominance_markdown(three, "toy")


def test_the_full_runs_goals_are_rejudged_under_the_current_rules():
    full = D.run.load_full()
    if full is None:
        pytest.skip("no full run committed")
    goals = D.run_goals.goals_from_numbers(full["numbers"]).set_index("goal")
    pooled = pd.DataFrame(full["numbers"]["cost_model"]["timed_bounds"]).set_index("corpus")
    assert goals.loc[D.run_goals.BOUND_GOAL, "ours"] == pytest.approx(
        pooled.loc["pooled", "realized_over_bnd_exact"]
    )
    assert set(goals.set) == {"development", "test"}
    text = D.text.full_run_markdown(full)
    assert D.run_goals.BOUND_GOAL in text and "Test set" in text and "dominate" in text
    table = D.show.full_run_wall_table(full)
    per = pd.Series(full["numbers"]["timed_cases"]).value_counts()
    assert (table[table.corpus == "pooled"].cases == per.sum()).all()


# ----- the speed table and the run summary (decoding.run_timing, decoding.text) ------------


def _speed_rows():
    return pd.DataFrame(
        [
            dict(
                corpus="c", case="k", method=m, repeat=r, T=100, forwards=f, decode_s=s, spliced=sp
            )
            for r in range(3)
            for m, f, s, sp in [
                ("autoregressive", 100, 10.0 + r, 0),
                ("Copy-as-Decode", 20, 2.0, 80),
                ("prompt lookup", 25, 4.0, 0),
            ]
        ]
    ).assign(accepted=lambda d: (d.method == "prompt lookup") * 70)


def test_speed_table_ratios():
    table = D.run_timing.speed_table(_speed_rows()).set_index(["corpus", "method"])
    assert table.loc[("c", "Copy-as-Decode"), "forward_ratio"] == 5.0
    assert table.loc[("c", "Copy-as-Decode"), "speedup"] == 5.5  # median of 10/2, 11/2, 12/2
    assert table.loc[("c", "prompt lookup"), "free_share"] == 0.7
    assert table.loc[("pooled", "autoregressive"), "speedup"] == 1.0


def test_run_summary_cites_each_corpus_then_pooled():
    speed = D.run_timing.speed_table(_speed_rows())
    bounds = pd.DataFrame(
        [dict(corpus="c", bnd_exact_grid=6.0, bnd_fsm_grid=4.5, realized_over_bnd_exact=0.9)]
    )
    effect = pd.DataFrame(
        dict(
            same_prefix=[True, False, False],
            kl=[0.0, 0.05, 3.0],
            fsm_choice_agree=[True, True, False],
            top1_agree=[True, False, False],
        )
    )
    text = D.text.run_summary(speed, bounds, "tiny, cpu", effect)
    lines = [
        x for x in text.splitlines() if x.startswith("| ") and x[2:].split(" |")[0] != "corpus"
    ]
    assert [x.split(" | ")[0][2:] for x in lines] == ["c", "pooled"]
    cells = lines[0].strip("| ").split(" | ")
    assert cells[1:3] == ["100", "5.00×"]  # T, then autoregressive forwards / its forwards
    assert "5.50× [5.00–6.00]" in cells and "2.75× [2.50–3.00]" in cells
    assert cells[-3:] == ["6.00×", "4.50×", "0.90"]  # bnd_exact, bnd_fsm, realized / bnd_exact
    assert lines[1].endswith("|  |  |  |")  # no bound on the pooled row
    assert text.startswith("*This run (tiny, cpu)")
    assert "(2 of 3)" in text and "from 0.050 to 3.000, 1 below 0.1" in text
    assert "FSM's masked choice agreed at 2 of 3" in text
    assert "nats" not in D.text.run_summary(speed, None, "x")


# ----- where plain Copy-as-Decode loses, the rival for time, and the summary's pooled rows ----


def _rows(cases):
    """Accounting rows: per (corpus, case), autoregressive and Copy-as-Decode m=0 as (forwards,
    predicted seconds) pairs."""
    rows = []
    for corpus, case, ar, cad in cases:
        for method, setting, (fw, sec) in (
            ("autoregressive", "", ar),
            ("Copy-as-Decode", "m=0", cad),
        ):
            rows.append(
                dict(
                    corpus=corpus,
                    case=case,
                    method=method,
                    setting=setting,
                    T=10,
                    forwards=fw,
                    predicted_s=sec,
                )
            )
    return pd.DataFrame(rows)


def test_strata_count_the_cases_where_plain_copy_as_decode_loses():
    rows = _rows(
        [
            ("heval-fix-py", "Python/1", (10, 1.0), (12, 1.5)),  # slower, more forwards
            ("heval-fix-py", "Python/2", (10, 1.0), (4, 0.5)),
            ("heval-fix-go", "Go/1", (10, 1.0), (8, 1.2)),  # slower, fewer forwards
            ("probeedit", "p/1", (10, 3.0), (2, 0.5)),
        ]
    )
    got = D.run_accounting.strata(rows).set_index("corpus")
    assert list(got.family) == ["HumanEvalFix", "HumanEvalFix", "ProbeEdit"]
    assert got.loc[
        "heval-fix-py", ["cases", "slower_than_ar", "more_forwards_than_ar"]
    ].tolist() == [2, 1, 1]
    assert got.loc["heval-fix-py", "slower_cases"] == ["Python/1"]
    assert got.loc["heval-fix-go", "more_forwards_than_ar"] == 0
    assert got.loc["probeedit", "ar_predicted_s"] == 3.0 and got.loc["probeedit", "T"] == 10
    text = D.text.losses_sentence({"accounting": {"strata": got.reset_index().to_dict("records")}})
    # one family for the translations, with its tasks (task 1 loses in two languages: once)
    assert "on 2 of 3 HumanEvalFix cases (in 1 of the 2 tasks its languages share; " in text
    assert "HEvalFix-Py 1 of 2) and 0 of 1 ProbeEdit cases" in text
    assert text.endswith("needs more forwards on 1 and 0 of them.")
    none = _rows([("probeedit", "p/1", (10, 3.0), (2, 0.5))])
    numbers = {"accounting": {"strata": D.run_accounting.strata(none).to_dict("records")}}
    assert "faster than autoregressive decoding on every case" in D.text.losses_sentence(numbers)


def test_the_rival_for_time_is_the_fastest_setting_on_the_development_corpora():
    """Fewest forwards and fewest predicted seconds can pick different settings (a verify
    forward of many ids costs more than one of a single id): time goals take the fastest,
    chosen on the development corpora only and used on every corpus."""
    rows = pd.DataFrame(
        [
            dict(
                corpus=c,
                case=f"{c}/0",
                method="prompt lookup",
                setting=s,
                forwards=f,
                ids_fed=0,
                predicted_s=sec,
            )
            for c, s, f, sec in [
                ("heval-fix-py", "K=40 n=3", 5, 4.0),  # fewest forwards, slower
                ("heval-fix-py", "K=20 n=3", 6, 3.0),
                ("heval-fix-java", "K=40 n=3", 5, 1.0),  # not development: not consulted
                ("heval-fix-java", "K=20 n=3", 6, 9.0),
            ]
        ]
    )
    assert A.best_prompt_lookup(rows).to_dict() == {
        "heval-fix-py": "K=40 n=3",
        "heval-fix-java": "K=40 n=3",
    }
    fastest = D.run_accounting.fastest_prompt_lookup(rows)
    assert fastest.to_dict() == {"heval-fix-py": "K=20 n=3", "heval-fix-java": "K=20 n=3"}
    test_only = rows[rows.corpus == "heval-fix-java"]  # no development corpus: all of them
    assert set(D.run_accounting.fastest_prompt_lookup(test_only)) == {"K=40 n=3"}


def _full_numbers():
    full = D.run.load_full()
    if full is None or "strata" not in full["numbers"]["accounting"]:
        pytest.skip("no full run with its strata committed")
    return full["numbers"]


def test_a_pooled_row_that_reverses_the_median_case_must_say_so():
    """The summary's pooled ratio-of-sums rows name their carrier and every method pair they
    rank otherwise than the median case: true of the committed run, and caught when a label
    hides a reversal, claims one the numbers do not show, or names the wrong carrier."""
    import copy

    from cadlib.chapters.decoding import headlines as H

    numbers = _full_numbers()
    assert H.pooled_label_problems(numbers) == []
    (med_c, pool_c), (med_p, pool_p) = H.RANKED["Copy-as-Decode"], H.RANKED["prompt lookup"]
    hidden = {
        "Copy-as-Decode": (med_c, replace(pool_c, label=pool_c.label.split(";")[0] + ")")),
        "prompt lookup": (med_p, pool_p),
    }
    assert any("hides a reversal" in p for p in H.pooled_label_problems(numbers, hidden))
    agree = copy.deepcopy(numbers)  # the median case ranks them as the pooled rows do
    for r in agree["cost_model"]["predicted_speedups"]:
        if r["corpus"] == "pooled" and r["method"] == "Copy-as-Decode" and r["setting"] == "m=0":
            r["median_speedup"] = 100.0
    problems = H.pooled_label_problems(agree)
    assert len(problems) == 2 and all("says a reversal" in p for p in problems)
    heavier = copy.deepcopy(numbers)  # another corpus carries the pooled figure
    for r in heavier["accounting"]["strata"]:
        if r["corpus"] == "probeedit":
            r["ar_predicted_s"] = 1e9
    assert any("not carried by probeedit" in p for p in H.pooled_label_problems(heavier))


def test_the_summary_leads_with_the_median_case_and_counts_the_losses():
    from cadlib.book.summary.tables import judge_headline
    from cadlib.chapters.decoding import headlines as H

    numbers = _full_numbers()
    labels = [h.label for h in H.HEADLINES]
    first_pooled = next(i for i, x in enumerate(labels) if "pooled (ratio of sums" in x)
    assert all("median" in x for x in labels[2:5]) and first_pooled > 5
    values = {h.label: judge_headline(h, {"numbers": numbers})[:2] for h in H.HEADLINES}
    slower = next(x for x in labels if x.startswith("HumanEvalFix cases"))
    rows = [r for r in numbers["accounting"]["strata"] if r["corpus"].startswith("heval-fix-")]
    assert values[slower] == (sum(r["slower_than_ar"] for r in rows), sum(r["cases"] for r in rows))
    share = next(x for x in labels if "share of the pooled" in x)
    assert values[share][0] == pytest.approx(100 * H.carrier_share(numbers))
