"""Chapter 8's side-by-side table: our evidence read from the runs, the anchors quoted."""

from __future__ import annotations

from cadlib.chapters.fim_constraint import show_anchors as A


def maskspeed(p99: bool = True) -> dict:
    def row(arm, gc="default", ballast=0, ms=1.5):
        r = dict(arm=arm, gc=gc, ballast_millions=ballast, mean_ms=ms, median_ms=ms, p90_ms=2 * ms)
        return {**r, "p99_ms": 4 * ms} if p99 else r

    return dict(
        arms=["now", "before"],
        tokenizer="smollm2-135m-instruct",
        hardware=dict(cpu="a CPU"),
        summary=[row("before", ms=9.0), row("now", gc="disabled", ms=7.0), row("now", ballast=3)]
        + [row("now")],
    )


def test_ours_is_read_from_the_runs_and_the_anchors_are_labelled_as_quoted():
    diffs = [
        dict(summary=dict(edits=8000, disagreements=2, true_middles_accepted=dict(k=2000, n=2000))),
        dict(summary=dict(edits=2000, disagreements=1, true_middles_accepted=dict(k=499, n=500))),
    ]
    wits = [
        dict(summary=dict(witnesses_found=98, no_witness=2, failures=1)),
        dict(summary=dict(witnesses_found=50, no_witness=0, failures=0)),
    ]
    t = A.side_by_side(maskspeed(), diffs, wits)
    ours = t.loc["ours (cadlib.fim)"]
    # the current mask, default collector, no ballast: not the other arms' or settings' rows
    assert ours["mean µs"] == 1500 and ours["p99 µs"] == 6000
    assert ours["witnesses CPython rejected"] == "1 of 148"
    assert ours["accepted, no witness (undecided)"] == "2"
    assert (
        ours["true middles rejected"] == "1 of 2,500"
        and ours["can_end ≠ ast.parse"] == "3 of 10,000"
    )
    assert ours.vocabulary == "49k (smollm2-135m-instruct)"
    assert t.loc["llguidance", "p99 µs"] == 460 and t.loc["XGrammar", "mean µs"] == 292
    assert set(t.loc[["llguidance", "XGrammar"], "source"]) == {"MaskBench (quoted)"}
    assert (t.loc[["llguidance", "XGrammar"], "witnesses CPython rejected"] == "not reported").all()


def test_an_older_run_is_read_on_the_tail_it_recorded_and_no_anchor_p99_sits_under_p90():
    t = A.side_by_side(maskspeed(p99=False), [], [])
    assert "p90 µs" in t and "p99 µs" not in t
    assert t.loc["ours (cadlib.fim)", "p90 µs"] == 3000 and t["p90 µs"].iloc[1:].isna().all()


def test_llguidance_measured_here_is_its_own_row_with_the_middles_its_grammar_rejects():
    reference = dict(
        engine="llguidance 1.7.6",
        tokenizer="smollm2-135m-instruct",
        hardware=dict(cpu="a CPU"),
        summary=dict(mean_us=80.4, p99_us=610.0, problems=12, rejected_problems=["a", "b"]),
    )
    t = A.side_by_side(maskspeed(), [], [], reference)
    row = t.loc["llguidance 1.7.6, measured here"]
    assert list(t.index[:2]) == ["ours (cadlib.fim)", "llguidance 1.7.6, measured here"]
    assert row["mean µs"] == 80 and row["p99 µs"] == 610
    assert row["witnesses CPython rejected"] == "not checked"
    assert row["true middles rejected"] == "2 of 12"


def test_the_reference_summary_reads_masks_builds_and_rejections_apart():
    import pandas as pd

    from cadlib.fim.llguidance_ref import llguidance_summary

    frame = pd.DataFrame(
        dict(
            problem=["a", "a", "a", "b", "b"],
            step=[-1, 0, 1, -1, 0],
            seconds=[1e-3, 10e-6, 30e-6, 3e-3, 20e-6],
            rejected=[False, False, False, False, True],
        )
    )
    s = llguidance_summary(frame)
    assert s["masks"] == 3 and s["mean_us"] == 20.0 and s["p50_us"] == 20.0
    assert s["build_median_us"] == 2000.0 and s["rejected_problems"] == ["b"] and s["problems"] == 2
