"""Chapter 6's cost model: the grid interpolation (exact on a bilinear cost, linear beyond the
grid), pricing of forwards that need logits at many positions, the validation and speedup
tables, the goals, the stratified timed sample, the per-case records, and the kernel's
forward-cost timer on the tiny model."""

import json

import numpy as np
import pandas as pd
import pytest

from cadlib.chapters import decoding as D
from cadlib.corpora import EditCase, load_corpus
from cadlib.costs import accounting as A
from cadlib.costs import cost_model as CM
from cadlib.costs import forward_grid as FG
from cadlib.decoding.methods import fits, timed_sample
from cadlib.record.session import Chapter

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def bilinear(n, L, keep):  # a cost the interpolation reproduces exactly
    return 0.01 + 0.002 * n + 1e-5 * L + 1e-6 * n * L + (0.003 * n if keep == "all" else 0.0)


def synthetic_grid(ns=(1, 2, 4, 8, 64), Ls=(128, 512, 2048)):
    return pd.DataFrame(
        [
            dict(keep=k, L=L, n=n, seconds=bilinear(n, L, k))
            for k in ("last", "all")
            for L in Ls
            for n in ns
        ]
    )


def test_grid_interpolates_and_extrapolates_a_bilinear_cost_exactly():
    grid = CM.CostGrid(synthetic_grid())
    n = np.array([1, 3, 5, 64, 100, 6])
    L = np.array([128, 300, 1000, 2048, 4000, 100])
    for keep in ("last", "all"):
        np.testing.assert_allclose(grid.seconds(n, L, keep), bilinear(n, L, keep), rtol=1e-9)


def test_repeated_cells_take_the_median_and_bad_grids_fail():
    g = synthetic_grid()
    twice = pd.concat([g, g.assign(seconds=g.seconds * 3), g.assign(seconds=g.seconds * 2)])
    np.testing.assert_allclose(CM.CostGrid(twice).seconds([4], [512]), 2 * bilinear(4, 512, "last"))
    with pytest.raises(ValueError, match="columns"):
        CM.CostGrid(pd.DataFrame())
    with pytest.raises(ValueError, match=">= 2"):
        CM.CostGrid(g[g.L == 128])


def test_predict_prices_decode_forwards_and_the_extra_logits_of_a_verify():
    grid = CM.CostGrid(synthetic_grid())
    fw = (A.Forward("prefill", 300, 0), A.Forward("step", 1, 300), A.Forward("verify", 11, 301, 11))
    acc = A.Accounting("x", "", fw, T=2, prompt=300, output=3)
    want = (
        bilinear(1, 300, "last")
        + bilinear(11, 301, "last")
        + (bilinear(11, 301, "all") - bilinear(11, 301, "last"))
    )
    assert grid.predict(acc) == pytest.approx(want)


def _measured(cases, seconds):
    return pd.DataFrame(
        [
            dict(
                corpus="c",
                case=c,
                method=m,
                repeat=r,
                T=10,
                forwards=f,
                decode_s=s * (1 + 0.1 * r),
                forward_s=0.9 * s * (1 + 0.1 * r),
            )
            for c in cases
            for m, (f, s) in seconds.items()
            for r in range(2)
        ]
    )


def test_validation_errors_and_timed_bounds():
    seconds = {"autoregressive": (10, 1.0), "prompt lookup": (3, 0.4), "Copy-as-Decode": (5, 0.5)}
    measured = _measured(["a", "b"], seconds)
    pred = pd.DataFrame(
        [
            dict(corpus="c", case=c, method=m, setting=s, forwards=f, predicted_s=p)
            for c in ("a", "b")
            for m, s, f, p in [
                ("autoregressive", "", 10, 1.05),
                ("prompt lookup", "K=10 n=2", 3, 0.42),
                ("Copy-as-Decode", "m=0", 5, 0.5),
                (A.BOUND, "", 4, 0.25),
            ]
        ]
    )
    val = CM.validation(measured, pred[pred.method != A.BOUND])
    assert len(val) == 6
    ar = val[val.method == "autoregressive"].iloc[0]
    assert ar.measured_s == pytest.approx(1.05) and ar.error_pct == pytest.approx(0.0)
    summary = CM.validation_summary(val)
    assert list(summary.method) == ["autoregressive", "prompt lookup", "Copy-as-Decode", "all"]
    b = CM.timed_bounds(measured, pred).set_index("corpus")
    assert b.loc["pooled", "realized_wall"] == pytest.approx(2.0)
    assert b.loc["pooled", "bnd_exact_grid"] == pytest.approx(1.05 / 0.25)
    assert b.loc["pooled", "bnd_fsm_grid"] == pytest.approx(1.05 / 0.5)


def test_predicted_speedups_and_goals(tok):
    cases = [
        EditCase(f"t/{k}", "a\nb\nc\n" * (k + 2), "a\nB\nc\n" * (k + 2), "B.") for k in range(3)
    ]
    grid = CM.CostGrid(synthetic_grid())
    rows = A.corpus_forwards(
        {"probeedit": cases}, tok, grid=[(5, 1), (10, 2)], cost=grid.predict, progress=False
    )
    best = A.best_prompt_lookup(rows)
    sp = CM.predicted_speedups(rows, best, seed=0)
    assert "autoregressive" not in set(sp.method)
    assert "bnd_exact (same grid)" in set(sp.method)
    assert (sp.lo <= sp.median_speedup + 1e-12).all() and (sp.median_speedup <= sp.hi + 1e-12).all()
    summary = A.forwards_summary(rows, best, seed=0)
    bounds = pd.Series({"realized_over_bnd_exact": 0.9, "drafts_over_bnd_exact": 1.4})
    goals = D.run_goals.judge_goals(summary, sp, None, bounds)
    assert set(goals.corpus) == {"probeedit", "timed"}
    assert set(goals.set) == {"development"}
    text = D.text_goals.goals_markdown(goals, "toy")
    assert text.count("\n| ") == len(goals) + 1 and "development set:" in text  # + head
    ((caption, frame),) = D.text_goals.goal_frames(goals).items()
    assert caption.startswith("*Development set*") and len(frame) == len(goals)
    assert frame.ratio.tolist() == pytest.approx((goals.ours / goals.rival).tolist())
    with pytest.raises(ValueError, match="predicted_s"):
        CM.predicted_speedups(rows.drop(columns="predicted_s"), best)


def test_timed_sample_is_stratified_short_and_seeded(tok):
    cases = load_corpus("heval-fix-py")[:40]
    xs = timed_sample("heval-fix-py", cases, 3, tok, max_ids=200, seed=0)
    assert len(xs) == 3 and all(len(x.target) - 1 <= 200 for x in xs)
    lengths = [len(x.target) for x in xs]
    assert lengths == sorted(lengths) and len({x.case.id for x in xs}) == 3
    again = timed_sample("heval-fix-py", cases, 3, tok, max_ids=200, seed=0)
    assert [x.case.id for x in again] == [x.case.id for x in xs]
    assert len(timed_sample("heval-fix-py", cases[:2], None, tok)) == 2


def test_timed_sample_keeps_only_cases_that_fit_the_context(tok):
    cases = load_corpus("heval-fix-py")[:40]
    every = timed_sample("heval-fix-py", cases, None, tok)
    need = sorted(max(len(x.edit_prompt), len(x.regen_prompt)) + len(x.target) for x in every)
    context = need[len(need) // 2]
    fit = timed_sample("heval-fix-py", cases, None, tok, context=context)
    assert 0 < len(fit) < len(every)
    assert all(fits(x, context) for x in fit) and not all(fits(x, context) for x in every)


def test_case_records_and_their_file(tok, tmp_path, monkeypatch):
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    cases = [EditCase("t/0", "a\nb\nc\n", "a\nB\nc\n", "B.")]
    rows = A.corpus_forwards(
        {"c": cases},
        tok,
        grid=[(5, 1), (10, 2)],
        cost=CM.CostGrid(synthetic_grid()).predict,
        progress=False,
    )
    best = pd.Series({"c": "K=5 n=1"})
    measured = _measured(
        ["t/0"], {"autoregressive": (3, 1.0), "prompt lookup": (1, 0.5), "Copy-as-Decode": (2, 0.7)}
    )
    free = pd.DataFrame(
        [
            dict(
                corpus="c",
                case="t/0",
                parsed=True,
                strict_resolved=True,
                em=False,
                em_trimmed=False,
                ops=2,
                decisions=16,
                forwards=17,
                budget_closed=True,
                program="<program>…",
            )
        ]
    )
    recs = D.run.records_from_rows(rows, best, measured, free, timed_setting="K=10 n=2")
    by = {(r["method"], r.get("setting")): r for r in recs}
    assert by[("autoregressive", None)]["measured_s"] == pytest.approx(1.05)
    assert "measured_s" not in by[("prompt lookup", "K=5 n=1")]
    assert by[("prompt lookup", "K=10 n=2")]["measured_s"] == pytest.approx(0.525)
    assert "measured_s" not in by[("Copy-as-Decode", "m=4")]
    assert by[("free run (FSM, greedy)", None)]["budget_closed"] is True
    assert not any(r["method"] == A.BOUND for r in recs)
    recorded = {r.get("setting") for r in recs if r["method"] == "Copy-as-Decode"}
    assert recorded == {"m=0", "m=4", "m=0 +headers", "m=0 +PLD +headers", "m=0 +cursor +headers"}
    assert not recorded & set(D.run.UNRECORDED)
    ch = Chapter("decoding", {"profile": "smoke"}, seed=0, device="cpu", rec=None, started=0.0)
    path = ch.write_cases(recs)
    assert path.name == "decoding.smoke.cases.jsonl"
    assert [json.loads(line) for line in path.read_text().splitlines()] == recs


def test_forward_cost_grid_on_the_tiny_model(model):
    grid = FG.measure_forward_costs(
        model, (8, 32), {"last": (1, 4), "all": (1, 3)}, trials=1, warmup=0, progress=False
    )
    assert len(grid) == 2 * 4 and (grid.seconds > 0).all()
    assert set(grid.keep) == {"last", "all"} and set(grid.L) == {8, 32}
    CM.CostGrid(grid).seconds([2], [16])
    with pytest.raises(ValueError):
        FG.measure_forward_costs(model, (), trials=1)


def test_a_goal_is_judged_on_the_quantity_it_names():
    """The bound goal names plain Copy-as-Decode: a drafted decoder above the bound cannot
    meet it for a plain one below it."""
    summary = pd.DataFrame(
        [
            dict(corpus="heval-fix-py", method="Copy-as-Decode", setting="m=0", pooled_fpt=0.2),
            dict(corpus="heval-fix-py", method="prompt lookup", setting="K=40 n=3", pooled_fpt=0.3),
        ]
    )
    speedups = pd.DataFrame(columns=["corpus", "method", "setting", "pooled_speedup"])
    bounds = pd.Series({"realized_over_bnd_exact": 0.785, "drafts_over_bnd_exact": 1.44})
    goals = D.run_goals.judge_goals(summary, speedups, None, bounds).set_index("goal")
    row = goals.loc[D.run_goals.BOUND_GOAL]
    assert row.ours == pytest.approx(0.785) and row.outcome == D.run_goals.MISSED and not row.met
    assert "plain" in D.run_goals.BOUND_GOAL
    with pytest.raises(ValueError, match="realized_over_bnd_exact"):
        D.run_goals.bound_ratio(pd.Series({"drafts_over_bnd_exact": 1.44}))


def test_a_predicted_goal_within_the_models_error_is_undecided_and_sets_are_declared():
    summary = pd.DataFrame(
        [
            dict(corpus=c, method=m, setting=s, pooled_fpt=f)
            for c in ("heval-fix-py", "heval-fix-rust")
            for m, s, f in (("Copy-as-Decode", "m=0", 0.2), ("prompt lookup", "K=40 n=3", 0.3))
        ]
    )
    speedups = pd.DataFrame(
        [
            dict(
                corpus="heval-fix-py", method="Copy-as-Decode", setting="m=0", pooled_speedup=3.68
            ),
            dict(
                corpus="heval-fix-py", method="prompt lookup", setting="best", pooled_speedup=3.45
            ),
            dict(
                corpus="heval-fix-rust", method="Copy-as-Decode", setting="m=0", pooled_speedup=5.0
            ),
            dict(
                corpus="heval-fix-rust", method="prompt lookup", setting="best", pooled_speedup=3.0
            ),
        ]
    )
    goals = D.run_goals.judge_goals(summary, speedups, None, None, model_error_pct=19.4)
    pred = goals[goals.goal.str.contains("predicted")].set_index("corpus")
    assert pred.loc["heval-fix-py", "outcome"] == D.run_goals.UNDECIDED  # 1.07x, inside 19.4 %
    assert pred.loc["heval-fix-rust", "outcome"] == D.run_goals.MET  # 1.67x, outside it
    assert not pred.loc["heval-fix-py", "met"]
    assert dict(zip(goals.corpus, goals.set, strict=True)) == {
        "heval-fix-py": "development",
        "heval-fix-rust": "test",
    }
    assert not set(D.run_goals.DEVELOPMENT_CORPORA) & set(D.run_goals.TEST_CORPORA)
    assert D.run_goals.corpus_set("realedits-flask") == "development"  # a goal corpus in design
    with pytest.raises(ValueError, match="neither"):
        D.run_goals.corpus_set("unknown")
