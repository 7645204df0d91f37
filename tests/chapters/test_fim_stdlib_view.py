"""Chapter 8's view of the standard-library differential (cadlib.chapters.fim_constraint:
text_stdlib, show_stdlib, run_evidence): the sample's Markdown, the committed runs side by side,
the cost figure's data."""

import pandas as pd
from fim.test_fim_stdlib import SOURCES

from cadlib.chapters import fim_constraint as FX
from cadlib.fim import stdlib as S


def test_summary_markdown_counts_the_cuts():
    frame = S.stdlib_differential(S.stdlib_cuts(SOURCES, 6, seed=1), n_edits=3, progress=False)
    assert "6 cuts of" in FX.text_stdlib.summary_markdown(S.stdlib_summary(frame), "t")


def test_stdlib_chapter_helpers(monkeypatch):
    summary = {"cuts": 3, "uncategorized": 0}
    assert FX.text_stdlib.sample_line(summary) == (
        "standard-library sample: 3 cuts, uncategorized disagreements: 0"
    )
    monkeypatch.setattr(FX.text_stdlib, "summary_markdown", lambda s, title: f"[{title}]")
    sources = {"a.py": "x = 1\n"}
    absent = FX.text_stdlib.chapter_markdown(sources, summary, None, {"profile": "smoke"}).split(
        "\n\n"
    )
    assert absent[1] == "[This run's sample (profile smoke)]"
    assert absent[2] == "*No full run committed (`results/fim.full.json` is absent).*"
    full = {
        "manifest": {"python": "3.11.9", "sha256": "ab" * 32},
        "summary": {},
        "command": "python -m cadlib.fim.stdlib",
        "cost": {
            "per_cut": [{"left_chars": 10, "build_s": 0.01, "feed_s": 0.001, "middle_chars": 5}]
        },
    }
    present = FX.text_stdlib.chapter_markdown(sources, summary, full, {"profile": "smoke"}).split(
        "\n\n"
    )
    assert present[2] == (
        "[Full run, Python 3.11.9, sha256 abababababab] Command: `python -m cadlib.fim.stdlib`."
    )
    seen = {}
    monkeypatch.setattr(
        FX.show_stdlib,
        "plot_costs",
        lambda per_cut, sweep, label: seen.update(n=len(per_cut), label=label),
    )
    frame = pd.DataFrame(
        dict(check=["true_middle", "edit", "true_middle"], build_s=[0.1, None, None])
    )
    FX.show_stdlib.plot_chapter_costs(frame, None, pd.DataFrame(), "cpu X", {"profile": "smoke"})
    assert seen == {"n": 1, "label": "this sample; sweep on this machine (cpu X), profile smoke"}
    FX.show_stdlib.plot_chapter_costs(frame, full, pd.DataFrame(), "cpu X", {"profile": "smoke"})
    assert seen["n"] == 1 and seen["label"].startswith("full run; ")


def test_the_committed_runs_are_shown_side_by_side():
    runs = FX.run_evidence.load_runs()
    from cadlib.chapters.fim_constraint.commands import PROG

    # recorded by the chapter's command, which re-runs them as recorded
    assert runs and all(r["command"].startswith(f"{PROG} stdlib ") for r in runs)
    table = FX.show_stdlib.runs_table(runs)
    assert list(table.columns) == [r.get("codebase", "Python standard library") for r in runs]
    assert {"cuts", "false rejections", "failures"} <= set(table.index)
