"""Behaviour of cadlib.chapters.kernel on the 2-layer ``tiny-random`` model: never speed, only that
the benchmark measures what it says (cache restored, positions advance, splice == AR) and that the
curve API the ceiling chapter uses (load_curve, interpolate_speedup) is stable."""

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from cadlib import paper
from cadlib.chapters import kernel as K
from cadlib.chapters.kernel import text as kernel_text
from cadlib.chapters.kernel.run_splice_check import _layer_keys
from cadlib.costs import kernel_timing as KT
from cadlib.costs import speedup_curve as SC
from cadlib.decoding.engines import TransformersEngine
from cadlib.models import load_model
from cadlib.record import session as chapter_session
from cadlib.record import style
from cadlib.record.params import choose


@pytest.fixture(scope="module", params=["eager", "sdpa"])
def tiny(request):
    return load_model("tiny-random", device="cpu", attn_implementation=request.param, seed=0)


@pytest.fixture(scope="module")
def tiny_eager():
    return load_model("tiny-random", device="cpu", attn_implementation="eager", seed=0)


# ---------------------------------------------------------------- cache handling


def test_prefill_and_restore_keep_the_prefix_state(tiny_eager):
    session, row = KT.prefill_context(tiny_eager, 12, seed=3)
    assert len(session) == 12 and row.shape == (tiny_eager.config.vocab_size,)
    before = [k.clone() for k in _layer_keys(session.cache)]
    session.forward(KT.random_feed(session.engine, 5, 1))
    assert len(session) == 17
    assert session.restore(12) == 12
    for old, new in zip(before, _layer_keys(session.cache), strict=True):
        assert torch.equal(old, new)
    assert session.restore(12) == 12  # no-op when already there
    with pytest.raises(ValueError, match="cannot restore it to 20"):
        session.restore(20)


def test_the_timer_feeds_the_engines_own_ids_without_a_host_copy(tiny_eager):
    engine = TransformersEngine(tiny_eager)
    span = KT.random_feed(engine, 6, seed=1)
    assert isinstance(span, torch.Tensor) and span.device == tiny_eager.device
    assert span.tolist() == KT.random_ids(engine.vocab_size, 6, seed=1)[0].tolist()
    session, _ = KT.prefill_context(engine, 4)
    assert len(KT.time_ar(session, span, [2, 6])) == 2 and len(session) == 10
    session.restore(4)
    assert KT.time_pp(session, span[:3], logits_to_keep=1) > 0 and len(session) == 7


def test_random_ids_are_seeded_and_in_range():
    a, b = KT.random_ids(100, 50, seed=7), KT.random_ids(100, 50, seed=7)
    assert a.shape == (1, 50) and torch.equal(a, b) and int(a.max()) < 100
    assert not torch.equal(a, KT.random_ids(100, 50, seed=8))
    with pytest.raises(ValueError, match="at least one token"):
        KT.random_ids(100, 0, seed=0)


# ---------------------------------------------------------------- s(N) measurement


@pytest.mark.parametrize("shared", [False, True])
def test_measure_speedup_shapes_and_cache_log(tiny_eager, shared):
    grid = (1, 2, 4, 8)
    m = KT.measure_speedup(
        tiny_eager, P=10, N_grid=grid, trials=2, warmup=1, shared_ar_run=shared, progress=False
    )
    assert m.N == list(grid) and m.ar_s.shape == m.pp_s.shape == (2, 4)
    assert (m.ar_s > 0).all() and (m.pp_s > 0).all()
    # every timed path starts at P, grows by exactly N and is cropped back to P
    assert m.cache_always_restored
    paths = [(r["path"], r["N"]) for r in m.cache_log if r["trial"] == 0]
    expected_ar = [("AR", 8)] if shared else [("AR", n) for n in grid]
    assert [p for p in paths if p[0] == "AR"] == expected_ar
    assert [p for p in paths if p[0] == "PP"] == [("PP", n) for n in grid]
    for row in m.cache_log:
        assert (row["before"], row["after"], row["restored"]) == (10, 10 + row["N"], 10)
    s = m.summary()
    assert s["N"] == list(grid) and len(s["s"]) == 4
    med = np.median(m.ar_s, 0) / np.median(m.pp_s, 0)
    assert np.allclose(s["s"], med, rtol=1e-3)
    assert all(lo <= hi for lo, hi in zip(s["s_lo"], s["s_hi"], strict=True))
    best = m.ar_s.min(0) / m.pp_s.min(0)
    assert np.allclose(s["s_best"], best, rtol=1e-3)
    json.dumps(s)  # JSON-ready


def test_timing_warnings_flag_a_disturbed_run():
    quiet = {"N": [1, 2, 4], "s": [1.02, 1.3, 2.9], "AR_ms_per_token": [40.0, 41.0, 42.0]}
    assert KT.timing_warnings(quiet) == []
    noisy = {"N": [1, 2, 4], "s": [6.7, 8.3, 12.7], "AR_ms_per_token": [2500.0, 2400.0, 900.0]}
    found = KT.timing_warnings(noisy)
    assert len(found) == 2 and found[0].startswith("s(1) = 6.70")
    assert "varies 2.8x" in found[1]


def test_short_spans_are_sampled_min_tokens_over_n_times(tiny_eager):
    m = KT.measure_speedup(
        tiny_eager,
        P=6,
        N_grid=(1, 2, 4, 8),
        trials=1,
        warmup=0,
        shared_ar_run=True,
        min_tokens=4,
        progress=False,
    )
    count = {}
    for row in m.cache_log:
        count[row["path"], row["N"]] = count.get((row["path"], row["N"]), 0) + 1
    # N=8 is read off the shared run; N < 4 gets ceil(4 / N) separate samples on each path
    assert count == {
        ("AR", 8): 1,
        ("AR", 1): 4,
        ("AR", 2): 2,
        ("PP", 1): 4,
        ("PP", 2): 2,
        ("PP", 4): 1,
        ("PP", 8): 1,
    }
    assert m.cache_always_restored and (m.ar_s > 0).all()


def test_measure_speedup_rejects_bad_grids(tiny_eager):
    for grid in [(), (2, 1), (0, 1), (1, 1)]:
        with pytest.raises(ValueError, match="increasing positive"):
            KT.measure_speedup(tiny_eager, P=4, N_grid=grid, trials=1, progress=False)


def test_fixed_costs_report_every_cost(tiny_eager):
    fc = K.run_fixed_costs.measure_fixed_costs(
        tiny_eager, P=8, trials=2, mask_reps=20, forward_reps=2, forced_lens=(3, 4, 5)
    )
    for key in ("c_mask_ms", "c_sync_ms", "c_forced_ms", "tau_ms"):
        assert set(fc[key]) == {"median", "min", "max", "n"}
        assert fc[key]["min"] <= fc[key]["median"] <= fc[key]["max"]
    assert fc["c_mask_ms"]["median"] > 0 and fc["tau_ms"]["median"] > 0
    assert sorted(fc["c_forced_ms_by_len"]) == [3, 4, 5]
    assert fc["c_forced_ms"]["n"] == 3 * 2 * 2 and fc["tau_ms"]["n"] == 2 * 2


# ---------------------------------------------------------------- correctness of the splice


def test_splice_equals_autoregressive_steps(tiny):
    """Paper App. H "Position-encoding correctness": N tokens in one forward give the logits
    of N single-token steps (fp32, atol = rtol = 1e-4) and advance positions by exactly N."""
    r = K.run_splice_check.check_splice_equals_ar(tiny, P=16, N=12, seed=1)
    assert r["passed"], r
    assert r["len_before"] == 16 and r["len_after_ar"] == r["len_after_splice"] == 28
    assert r["max_abs_logit_diff"] < 1e-4 and r["max_abs_key_diff"] < 1e-4


def test_shifted_positions_are_caught(tiny):
    """Negative control: a splice at the wrong positions must fail the check."""
    r = K.run_splice_check.check_splice_equals_ar(tiny, P=16, N=12, seed=1, position_offset=1)
    assert not r["passed"] and not r["keys_allclose"]


# ---------------------------------------------------------------- m*


def test_minimum_span_matches_table_17_definition():
    N, s = [1, 2, 4, 8], [0.95, 1.2, 2.9, 6.1]
    assert (
        K.run_fixed_costs.minimum_span(N, s, 1.0) == 2
        and K.run_fixed_costs.minimum_span(N, s, 1.5) == 4
    )
    assert K.run_fixed_costs.minimum_span(N, s, 10.0) is None
    # s(1) > 1 is timer noise (the same forward on both paths): N = 1 is never m*
    assert K.run_fixed_costs.minimum_span([1, 2, 4], [1.01, 1.3, 2.8], 1.0) == 2
    assert K.run_fixed_costs.minimum_span([1, 2, 4], [1.01, 1.3, 2.8], 1.0, min_n=1) == 1
    # N tau > N tau / s + c: with tau = 1 and c = 1: N=2 gives 2 - 2/1.2 = 0.33 < 1; N=4 pays
    assert K.run_fixed_costs.minimum_span_with_overhead(N, s, tau_ms=1.0, c_ms=1.0) == 4
    assert K.run_fixed_costs.minimum_span_with_overhead(N, s, tau_ms=1.0, c_ms=100.0) is None
    fixed = {
        k: {"median": v}
        for k, v in dict(c_forced_ms=0.8, c_mask_ms=0.1, c_sync_ms=0.1, tau_ms=1.0).items()
    }
    m = K.run_fixed_costs.m_star({"N": N, "s": s}, fixed)
    assert m == dict(strict=2, safe=4, with_overhead=4, overhead_c_ms=1.0, tau_ms=1.0)


# ---------------------------------------------------------------- results file and curve API


def _fake_bench():
    def entry(name, params, s):
        N = [1, 2, 4, 8]
        meta = dict(
            model=name,
            source="measured",
            random_init=True,
            dtype="float32",
            device="cpu",
            hardware={"threads": 2},
            attn_implementation="eager",
            P=16,
            trials=3,
            shape={"parameters": params},
        )
        curve = dict(
            N=N,
            s=s,
            s_lo=s,
            s_hi=s,
            T_AR_ms=[1.0] * 4,
            T_PP_ms=[1.0] * 4,
            AR_ms_per_token=[1.0] * 4,
            meta=meta,
        )
        fixed = {
            k: {"median": 0.1, "min": 0.1, "max": 0.1, "n": 1}
            for k in ("c_mask_ms", "c_sync_ms", "c_forced_ms", "tau_ms")
        }
        return dict(
            curve=curve,
            fixed_costs=fixed,
            m_star=K.run_fixed_costs.m_star(curve, fixed),
            cache_log=[],
            cache_always_restored=True,
        )

    return {
        "small": entry("small", 10, [1.0, 1.6, 3.0, 6.0]),
        "big": entry("big", 100, [1.1, 2.0, 4.0, 7.0]),
    }


def test_results_round_trip_through_load_curve(tmp_path, monkeypatch):
    monkeypatch.setenv("CADLIB_ROOT", str(tmp_path))
    ch = chapter_session.start(K.CARD, K.profiles.PROFILES, {"profile": "cpu"})
    path = K.run.write_results(ch, K.run.numbers(_fake_bench(), {"passed": True}), device="cpu")
    record = json.loads(path.read_text())
    assert record["chapter"] == "kernel" and record["numbers"]["primary"] == "big"
    assert record["numbers"]["splice_check"] == {"passed": True}
    assert set(record["paper"]["curves"]) == {"paper:qwen2.5-1.5b", "paper:qwen2.5-7b"}
    for source in (path, str(path), record, None):  # None = results/kernel.json of the root
        N, s, meta = SC.load_curve(source)
        assert N.tolist() == [1, 2, 4, 8] and s.tolist() == [1.1, 2.0, 4.0, 7.0]
        assert meta["name"] == "big" and meta["attn_implementation"] == "eager"
    N, s, meta = SC.load_curve(record, "small")
    assert s.tolist() == [1.0, 1.6, 3.0, 6.0] and N.dtype.kind == "i"
    N, s, meta = SC.load_curve(record, "paper:qwen2.5-7b")
    assert N.tolist() == [8, 512] and s.tolist() == [6.8, 90.5] and meta["source"] == "paper"
    with pytest.raises(KeyError, match="available: paper:qwen2.5-1.5b"):
        SC.load_curve(record, "qwen2.5-3b-random")
    with pytest.raises(TypeError, match="path to a kernel results JSON"):
        SC.load_curve(42)


def test_paper_points_are_the_published_figures():
    assert SC.speedup_at(paper.KERNEL_CURVES["paper:qwen2.5-7b"], 8) == 6.8
    assert SC.speedup_at(paper.KERNEL_CURVES["paper:qwen2.5-7b"], 512) == 90.5
    assert SC.speedup_at(paper.KERNEL_CURVES["paper:qwen2.5-1.5b"], 8) == 7.0
    assert SC.speedup_at(paper.KERNEL_CURVES["paper:qwen2.5-1.5b"], 512) == 303.0
    assert paper.M_STAR["paper:qwen2.5-7b"] == {"strict": 2, "safe": 4}


def test_interpolation_is_linear_in_log_n_and_clamps():
    curve = (np.array([1, 4, 16]), np.array([1.0, 3.0, 9.0]), {})
    assert SC.speedup_at(curve, 4) == 3.0  # exact at a measured point
    assert math.isclose(SC.speedup_at(curve, 2), 2.0)  # midpoint of log 1 .. log 4
    assert math.isclose(SC.speedup_at(curve, 8), 6.0)
    assert SC.speedup_at(curve, 0.5) == 1.0  # clamped below N_min
    assert SC.speedup_at(curve, 1000) == 9.0  # clamped above N_max, no extrapolation
    out = SC.speedup_at({"N": [1, 4, 16], "s": [1.0, 3.0, 9.0]}, [[1, 2], [8, 16]])
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)
    assert np.allclose(out, [[1.0, 2.0], [6.0, 9.0]])
    assert isinstance(SC.speedup_at(curve, np.int64(3)), float)
    with pytest.raises(ValueError, match="positive and finite"):
        SC.speedup_at(curve, 0)
    with pytest.raises(ValueError, match="increasing positive"):
        SC.speedup_at(([4, 1], [1.0, 2.0]), 2)
    with pytest.raises(ValueError, match="positive and finite"):
        SC.speedup_at(([1, 4], [1.0, -2.0]), 2)


@given(
    st.lists(st.floats(0.1, 1000), min_size=1, max_size=10),
    st.floats(0.01, 10_000),
)
def test_interpolation_stays_within_the_measured_range(s_values, n):
    N = [2**k for k in range(len(s_values))]
    value = SC.speedup_at((N, s_values), n)
    assert min(s_values) - 1e-9 <= value <= max(s_values) + 1e-9


# ---------------------------------------------------------------- profiles


def test_profiles_follow_the_paper_and_fit_the_cpu():
    paper = choose(K.profiles.PROFILES, "paper")
    assert paper["P"] == 1024 and paper["dtype"] == "bfloat16"
    assert paper["attn_implementation"] == "eager" and list(paper["N_grid"]) == list(SC.N_GRID)
    assert K.run.trials_for(paper, "qwen2.5-1.5b-random") == 7
    assert K.run.trials_for(paper, "qwen2.5-7b-random") == 5
    with pytest.raises(ValueError, match="pass trials=<int>"):
        K.run.trials_for(paper, "smollm2-135m-instruct")
    cpu = choose(K.profiles.PROFILES, "cpu", trials=2)
    assert max(cpu["N_grid"]) <= 512 and K.run.trials_for(cpu, "anything") == 2
    assert cpu["check_model"] in cpu["models"]
    assert SC.N_GRID == (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def test_benchmark_models_end_to_end_on_tiny(tiny_eager):
    params = choose(
        K.profiles.PROFILES,
        "cpu",
        models=("tiny-random",),
        P=8,
        N_grid=(1, 2, 4),
        trials=1,
        mask_reps=5,
        forward_reps=1,
    )
    bench = K.run.benchmark_models(
        params, device="cpu", loaded={"tiny-random": tiny_eager}, progress=False
    )
    entry = bench["tiny-random"]
    assert entry["cache_always_restored"] and entry["curve"]["N"] == [1, 2, 4]
    meta = entry["curve"]["meta"]
    assert meta["random_init"] and meta["attn_implementation"] == "eager"
    assert meta["shape"]["num_hidden_layers"] == 2 and meta["device"] == "cpu"
    assert "tiny-random" in SC.curve_label(meta) and "random-init" in SC.curve_label(meta)
    assert list(K.show.curve_table(bench).index.get_level_values("N")) == [1, 2, 4]
    assert set(K.show.m_star_table(bench).index) >= {
        "tiny-random",
        "paper:qwen2.5-7b (paper, A100)",
    }
    # the shared AR run, then (min_tokens = 8 > N) separate AR runs and PP per N, first samples
    assert len(K.show.cache_log_table(bench, trial=0)) == 1 + 3 + 3
    assert "c_mask" in K.show.fixed_cost_table(bench).index
    fig = style.plot_speedup(K.run.numbers(bench)["curves"])
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"


@pytest.mark.parametrize("threads, where", [(1, "CPU, 1 thread,"), (2, "CPU, 2 threads,")])
def test_curve_label_names_the_cpu_threads(threads, where):
    meta = _fake_bench()["big"]["curve"]["meta"] | {"hardware": {"threads": threads}}
    label = SC.curve_label(meta)
    assert label.startswith("big (random-init, float32, eager, ") and where in label


def test_run_summary_cites_every_curve():
    numbers = K.run.numbers(_fake_bench())
    for costs in numbers["fixed_costs"].values():
        costs["c_forced_over_tau"] = 1.0  # measure_fixed_costs adds it
    text = K.text.run_summary(numbers, "CPU, profile cpu")
    assert text.startswith("**This run** (CPU, profile cpu):")
    big = next(x for x in text.splitlines() if x.startswith("* **big**"))
    assert "s(8) = 7.0×, s(8) = 7.0× (max 7.0×)" in big
    assert f"m* strict / safe = {numbers['m_star']['big']['strict']} / " in big
    assert "c_forced / tau = 1.00" in big


def test_timing_sanity_names_each_model_and_flags_a_disturbed_run(monkeypatch):
    bench = {"quiet": {"curve": "q"}, "noisy": {"curve": "n"}}
    warn = lambda c: ["s(1) = 1.9"] if c == "n" else []  # noqa: E731
    monkeypatch.setattr(kernel_text, "timing_warnings", warn)
    text = K.text.timing_sanity(bench)
    assert "**quiet**: no sign of interference" in text
    assert "**noisy**: s(1) = 1.9" in text and "This run was disturbed" in text
    monkeypatch.setattr(kernel_text, "timing_warnings", lambda c: [])
    assert "disturbed" not in K.text.timing_sanity(bench)


def test_splice_check_table_shows_check_beside_control():
    check = {k: True for k in K.show.SPLICE_CHECK_FIELDS} | {"max_abs_logit_diff": 0.0}
    control = check | {"passed": False}
    table = K.show.splice_check_table(check, control, "m")
    assert list(table.index) == list(K.show.SPLICE_CHECK_FIELDS)
    assert table.loc["passed"].tolist() == ["True", "False"]
    assert "max_abs_logit_diff" not in table.index  # timings and floats are not shown


def test_speedup_overview_has_a_row_per_curve_and_per_paper_point():
    curve = {
        "N": [1, 2, 8],
        "s": [1.0, 1.9, 7.0],
        "s_best": [1.0, 2.0, 7.5],
        "AR_ms_per_token": [40.0, 40.0, 40.0],
        "T_PP_ms": [40.0, 42.0, 45.0],
        "meta": {"device": "cpu"},
    }
    paper = {"p": {"N": [8, 512], "s": [6.8, 90.5]}}
    table = K.show.speedup_overview({"curves": {"m": curve}}, paper)
    assert table.loc["m", "s(8)"] == 7.0 and table.loc["m", "s best(8)"] == 7.5
    assert table.loc["m", "PP ms/token at max N"] == round(45.0 / 8, 3)
    assert table.loc["p (A100)", "s(512)"] == 90.5
