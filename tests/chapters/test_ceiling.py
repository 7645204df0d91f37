"""Copy ceilings and bounds (paper §4.2, Table 2, Appendix D)."""

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from cadlib import corpora, paper
from cadlib.chapters import ceiling as C
from cadlib.chapters.ceiling import text as ceiling_text
from cadlib.corpora import EditCase, load_corpus
from cadlib.costs import bounds as B
from cadlib.costs import spans as SP
from cadlib.costs import speedup_curve as SC
from cadlib.models.tokenizer import qwen25_tokenizer

tok = qwen25_tokenizer()


def case(doc, gold, id="t/0"):
    return EditCase(id, doc, gold, "edit")


# ----- line level ------------------------------------------------------------------------


def test_line_spans_count_tokens_of_the_copied_lines_joined_by_newlines():
    doc = "def f(x):\n    return x + 1\n\nprint(f(2))"
    gold = "def f(x):\n    return x - 1\n\nprint(f(2))"
    spans = SP.line_spans(case(doc, gold), tok)
    assert spans.spans == (tok.count("def f(x):"), tok.count("\nprint(f(2))"))
    assert spans.T == tok.count(gold)
    assert spans.T_gen == spans.T - spans.T_copy


def test_a_copied_empty_line_is_a_zero_token_span():
    spans = SP.line_spans(case("a\n\nb", "x\n\ny"), tok)
    assert spans.spans == (0,)


def test_summary_adds_up():
    covers = [SP.CaseSpans("a", 10, (3, 4)), SP.CaseSpans("b", 6, (0, 2, 1))]
    s = SP.summarize_line_cover(covers)
    assert (s["n"], s["T"], s["T_copy"], s["T_gen"], s["K"]) == (2, 16, 10, 6, 5)
    assert s["f_line"] == 10 / 16 and s["mean"] == 2.0 and s["p50"] == 2.0
    assert s["p95"] == pytest.approx(np.percentile([3, 4, 0, 2, 1], 95))


def test_short_span_share():
    share = C.run_covers.short_span_share([0, 1, 10, 30], threshold=8)
    assert share["spans"] == 0.5 and share["tokens"] == pytest.approx(1 / 41)
    assert share["zero_token_spans"] == 1


def test_token_cover_table_on_a_toy_corpus():
    cases = [case("alpha beta gamma delta", "alpha beta gamma DELTA")]
    table = C.run_covers.token_cover_table(cases, (1, 8), tok, progress=False)
    assert list(table.m) == [1, 8]
    row1, row8 = table.iloc[0], table.iloc[1]
    assert row1["T"] == tok.count(cases[0].gold)
    assert row1["T_copy"] + row1["T_gen"] == row1["T"]
    assert row1["f_tok"] > 0 and row8["T_copy"] == 0 and row8["K"] == 0  # no 8-token match


def test_load_corpora_reports_what_it_could_not_load(monkeypatch):
    def fail(name, **kw):
        raise ModuleNotFoundError("No module named 'cadlib.probeedit'")

    monkeypatch.setattr(corpora, "load_corpus", fail)
    loaded, unavailable = corpora.load_corpora(["probeedit"])
    assert loaded == {} and "cadlib.probeedit" in unavailable["probeedit"]


# ----- curves and bounds -----------------------------------------------------------------


def test_loglinear_interpolation_is_linear_in_log_n_and_clamped():
    N, s = [1, 4, 16], [1.0, 3.0, 9.0]
    assert SC.interpolate_loglinear(N, s, [1, 4, 16]).tolist() == [1.0, 3.0, 9.0]
    assert SC.interpolate_loglinear(N, s, 2) == pytest.approx(2.0)  # halfway in log N
    assert SC.interpolate_loglinear(N, s, 8) == pytest.approx(6.0)
    clamped = SC.interpolate_loglinear(N, s, [0.5, 0, 1000], clamp_nonpositive=True)
    assert clamped.tolist() == [1.0, 1.0, 9.0]


@pytest.mark.parametrize(
    "N, s", [([], []), ([1, 2], [1.0]), ([2, 1], [1.0, 2.0]), ([0, 1], [1.0, 1.0]), ([1], [0.0])]
)
def test_bad_curves_are_rejected(N, s):
    with pytest.raises(ValueError, match="curve"):
        SC.interpolate_loglinear(N, s, 3)


# ----- Table 2 on the real HumanEvalFix corpora (needs $CADLIB_HUMANEVALPACK_DIR) --------


@pytest.fixture
def humanevalfix(humanevalpack_dir, monkeypatch):
    monkeypatch.setattr(corpora, "_hub_reachable", lambda: False)
    return lambda name: load_corpus(name, local_dir=humanevalpack_dir)


@pytest.mark.parametrize("name", ["heval-fix-py", "heval-fix-js"])
def test_table2_line_level_figures_are_reproduced_exactly(name, humanevalfix):
    summary = SP.summarize_line_cover(SP.line_cover(humanevalfix(name), tok, progress=False))
    printed = paper.TABLE2[name]
    for key in ("n", "T", "T_copy", "T_gen", "K"):
        assert summary[key] == printed[key], key
    assert round(summary["f_line"], 3) == printed["f_line"]
    assert round(summary["mean"], 1) == printed["mean"]


def test_short_spans_on_heval_fix_py(humanevalfix):
    covers = SP.line_cover(humanevalfix("heval-fix-py"), tok, progress=False)
    share = C.run_covers.short_span_share([n for c in covers for n in c.spans], 8)
    assert round(share["spans"], 3) == 0.346 and round(share["tokens"], 4) == 0.0265


def test_token_level_figures_at_m8_and_m4(humanevalfix):
    py = C.run_covers.token_cover_table(humanevalfix("heval-fix-py"), (4, 8), tok, progress=False)
    js = C.run_covers.token_cover_table(humanevalfix("heval-fix-js"), (8,), tok, progress=False)
    assert round(py.f_tok.iloc[0], 3) == 0.945  # Appendix J, m = 4
    assert round(py.f_tok.iloc[1], 3) == 0.910  # §4.2, m = 8
    assert round(js.f_tok.iloc[0], 3) == 0.933
    assert not math.isnan(py["mean"].iloc[1])


def test_bounds_vs_m_rows_follow_the_token_table():
    cases = [case("a b c d e f g h i j\nk", "a b c d e f g h i j\nK")]
    table = C.run_covers.token_cover_table(cases, (1, 4), tok, progress=False)
    summary = SP.summarize_line_cover(SP.line_cover(cases, tok, progress=False))
    line = [n for c in SP.line_cover(cases, tok, progress=False) for n in c.spans]
    N, s = [1, 8, 512], [1.0, 6.0, 90.0]
    out = B.bounds_vs_m(summary, line, table, N, s)
    assert list(out.m) == [1, 4]
    first = out.iloc[0]
    assert first["line_exact"] == pytest.approx(
        B.bound_exact(summary["T"], summary["T_gen"], line, N, s)
    )
    row = table.iloc[1]
    assert out.iloc[1]["token_m"] == pytest.approx(
        B.bound_uniform(row["T"], row["T_gen"], row["T_copy"], SC.interpolate_loglinear(N, s, 4))
    )


def test_side_by_side_puts_the_papers_row_under_ours():
    frame = C.show.side_by_side({"a": {"x": 1, "y": 2}, "b": {"x": 3}}, {"a": {"x": 9}}, ["x", "y"])
    assert list(frame.index) == [("a", "ours"), ("a", "paper"), ("b", "ours")]
    assert frame.loc[("a", "paper"), "x"] == 9 and pd.isna(frame.loc[("a", "paper"), "y"])


# ----- prose generated from the results ------------------------------------------------------


@pytest.fixture(scope="module")
def results():
    import json

    from cadlib.paths import repo_root

    return json.loads((repo_root() / "results" / "ceiling.json").read_text())["numbers"]


def test_realedits_is_an_extension_corpus_with_a_label():
    assert "realedits-flask" in C.profiles.PROFILES["cpu"]["extra_corpora"]
    assert "realedits-flask" not in C.profiles.PROFILES["cpu"]["corpora"]  # never in the pooled row
    assert corpora.CORPUS_LABELS["realedits-flask"] == "RealEdits-Flask"


def test_percentile_finding_reads_its_numbers_from_the_variants(results):
    records = results["percentile_variants"]
    text = C.text.percentile_finding(records)
    py = next(
        r
        for r in records
        if r["corpus"] == "heval-fix-py"
        and r["family"] == "3 span formation"
        and r["variant"] == next(iter(C.run_percentiles.SPAN_VARIANTS))
    )
    assert f"{ceiling_text._fmt(py['p50'])} / {ceiling_text._fmt(py['p95'])} (Py)" in text
    changed = [dict(r, p95=r["p95"] + 1000) if r is py else r for r in records]
    assert C.text.percentile_finding(changed) != text  # generated, not typed


def test_short_span_and_token_level_findings_follow_their_inputs(results):
    short, line = results["short_spans_below_8"], results["line"]
    assert C.text.short_span_finding(short, line).startswith("Reproduced: on HEvalFix-Py 34.6%")
    worse = {**short, "heval-fix-py": {**short["heval-fix-py"], "spans": 0.5}}
    assert C.text.short_span_finding(worse, line).startswith("Not reproduced: on HEvalFix-Py 50.0%")
    text = C.text.token_level_finding(results["token_level_f"], line)
    assert "91.0% (Py) and 93.3% (JS), the paper's §4.2 figures exactly" in text


def test_token_bound_finding_recomputes_the_papers_arithmetic(results):
    text = C.text.token_bound_finding(results["bounds_vs_m"])
    assert "= 4.9$×" in text  # 1 / (0.067 + 0.933 / 6.79), from the paper's own figures
    assert "95.6% copy fraction" in text  # the f that would give 5.4x at s(8) = 6.79
    f = (1 - 1 / 5.4) / (1 - 1 / 6.79)
    assert B.bound_uniform(1, 1 - f, f, 6.79) == pytest.approx(5.4)


def test_conclusion_says_whether_the_papers_percentiles_follow_from_our_spans(results):
    assert "p50 / p95 do not follow" in C.text.conclusion(results)
    line = {c: dict(v) for c, v in results["line"].items()}
    for c in ("heval-fix-py", "heval-fix-js"):
        line[c].update(p50=C.text._paper.TABLE2[c]["p50"], p95=C.text._paper.TABLE2[c]["p95"])
    assert "p50 / p95 match ours" in C.text.conclusion({**results, "line": line})


def test_conclusion_cites_realedits_from_the_results(results):
    text = C.text.conclusion(results)
    if "realedits-flask" in results["line"]:
        r = results["line"]["realedits-flask"]
        assert "RealEdits-Flask" in text and f"{100 * r['f_line']:.1f}%" in text
    without = {
        **results,
        "line": {k: v for k, v in results["line"].items() if k != "realedits-flask"},
    }
    assert "RealEdits" not in C.text.conclusion(without)
    ref = results["bounds_paper_reference_curve"]["line"]["heval-fix-py"]["bnd_exact"]
    assert f"{ref:.2f}× vs 3.45× on Py" in text


# ----- the chapter's run, tables and figures ---------------------------------------------------


def test_pool_token_tables_recomputes_fractions_from_the_sums():
    a = C.run_covers.token_cover_table(
        [case("a b c d e f", "a b c d X")], (1, 2), tok, progress=False
    )
    b = C.run_covers.token_cover_table(
        [case("p q r", "p q r s t u v")], (1, 2), tok, progress=False
    )
    pooled = C.run_covers.pool_token_tables([a, b])
    assert list(pooled.m) == [1, 2]
    for i in range(2):
        assert pooled["T"][i] == a["T"][i] + b["T"][i] and pooled.K[i] == a.K[i] + b.K[i]
        assert pooled.f_tok[i] == pytest.approx(pooled.T_copy[i] / pooled["T"][i])
        assert pooled.spans[i] == a.spans[i] + b.spans[i]


def test_percentile_table_appends_the_papers_row_and_matches_read_it():
    rows = [
        dict(
            corpus=c,
            family="1 percentile definition",
            variant="all spans",
            method=m,
            K=paper.TABLE2[c]["K"],
            mean=1.0,
            p50=p50,
            p95=paper.TABLE2[c]["p95"],
        )
        for c in ("heval-fix-py", "heval-fix-js")
        for m, p50 in (("linear", 1.0), ("nearest", 2.0))
    ]
    wide = C.show.percentile_table(pd.DataFrame(rows))
    assert wide.index[-1] == ("paper", "Table 2", "")
    assert list(wide.columns[:4]) == [f"heval-fix-py {s}" for s in ("K", "mean", "p50", "p95")]
    p50, p95 = C.show.percentile_matches(wide).split("\n")
    assert p50.endswith("corpora: none")
    assert "1 percentile definition / all spans / linear" in p95 and "/ nearest" in p95


def test_measured_curve_says_why_there_is_none(tmp_path):
    measured, why = C.run.measured_curve(tmp_path / "kernel.json")
    assert measured is None and "does not exist" in why
    (tmp_path / "kernel.json").write_text('{"numbers": {"curves": {}}}')
    measured, why = C.run.measured_curve(tmp_path / "kernel.json")
    assert measured is None and why.startswith("no measured curve: ValueError")


def test_analyse_on_toy_corpora_feeds_every_table_and_the_results(monkeypatch, tmp_path):
    toy = {
        "probeedit": [case("a\nb\nc\nd\n", "a\nb\nX\nd\n")],
        "realedits-flask": [case("x = 1\ny = 2\n", "x = 1\ny = 3\n", "r/0")],
    }

    def load(name, **kw):
        if name not in toy:
            raise FileNotFoundError(name)
        return corpora.Corpus(name, "toy: test", toy[name])

    monkeypatch.setattr(corpora, "load_corpus", load)
    params = dict(
        C.profiles.PROFILES["cpu"],
        corpora=("probeedit", "heval-fix-py"),
        extra_corpora=("realedits-flask",),
        min_spans=(1, 8),
        kernel_curve=str(tmp_path / "none.json"),
        profile="cpu",
    )
    run = C.run.analyse(params, tok)
    assert run.paper_set == ["probeedit"] and run.order == [
        "probeedit",
        "pooled",
        "realedits-flask",
    ]
    assert "heval-fix-py: NOT AVAILABLE" in C.show.corpora_report(run)
    assert run.measured is None and "does not exist" in run.measured_unavailable
    assert list(run.curves) == [C.run.REFERENCE_CURVE]
    assert list(C.show.table2(run).index.get_level_values(0).unique()) == [
        "ProbeEdit",
        "Pooled",
        "RealEdits-Flask",
    ]
    assert list(C.show.token_level_table(run).columns[:3]) == ["line level", "m=1", "m=8"]
    assert set(run.bounds_vs_m.corpus) == set(run.order)
    numbers = C.run.numbers(run, C.text.percentile_finding(run.variants))
    assert numbers["bounds_measured_curve"] is None
    assert numbers["token_level_f"]["pooled"][1] == round(run.token_tables["pooled"].f_tok[0], 6)
    assert numbers["line"]["probeedit"] == {
        k: round(v, 6) if isinstance(v, float) else v for k, v in run.summary["probeedit"].items()
    }
    for plot in (
        C.show_figures.plot_span_histograms,
        C.show_figures.plot_token_cover,
        C.show_figures.plot_bounds_vs_m,
    ):
        fig = plot(run)
        assert fig.axes
        plt.close(fig)


def test_prose_numbers_drop_a_trailing_point():
    from cadlib.chapters.ceiling.text import _fmt

    assert [_fmt(x) for x in (72.999999, 69.75, 70.5, 3.0)] == ["73", "69.75", "70.5", "3"]
