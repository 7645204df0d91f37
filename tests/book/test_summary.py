import html
import math

import pytest

from cadlib.book import summary as S
from cadlib.book import verdicts as V
from cadlib.book.summary import headlines, render, spec, tables
from cadlib.chapters import chapter_values, evidence_runs, notebooks, shown_results
from cadlib.paths import repo_root
from cadlib.record.results import results_name


def record(numbers, paper=None, profile="cpu"):
    return {"numbers": numbers, "paper": paper or {}, "profile": profile, "hardware": {}}


def test_lookup_follows_dotted_paths_and_keys_with_spaces():
    tree = {"a": {"pooled (paper's three)": {"byte-exact": 3}}, "x.y": {"z": 1}}
    assert S.lookup(tree, "a.pooled (paper's three).byte-exact") == 3
    assert S.lookup(tree, "x.y.z") == 1
    with pytest.raises(KeyError):
        S.lookup(tree, "a.missing")


_LITERALS = "App. K: Qwen2.5 short literals (App. A) that are one token"
_GEN_CLOSE = "App. I: Qwen2.5 </gen> detector ids equal to the paper's (522 4370 29)"
_ROUND_TRIP = "oracle round trip, byte-exact (pooled 3 corpora)"


def _qwen(gen_close, short_single=10):
    return {
        "portability": {
            "qwen2.5": {
                "literals": {"short_single": short_single, "short_total": 10},
                "fsm": {"gen_close": gen_close},
            }
        }
    }


def test_verdicts_are_computed_from_the_results():
    results = {
        "losslessness": record(
            {
                "round_trip": {"pooled (paper's three)": {"byte-exact": 481}},
                "escape_fuzz": {"round_trip": 9999},
                **_qwen([522, 4370], 9),
            }
        ),
    }
    table = S.headline_table(results).set_index("figure")
    assert table.loc[_LITERALS, "status"] == V.CONTRADICTS
    # the resolver round-trips every input by construction: shown, never counted
    assert table.loc[_ROUND_TRIP, "status"] == V.BY_CONSTRUCTION
    # the escape cannot fail on fuzz strings: shown, never counted, whatever the number
    assert table.loc["escape fuzz round trips (of 10,000)", "status"] == V.BY_CONSTRUCTION
    assert (table[table.chapter == "ceiling"].status == V.NOT_YET_RUN).all()
    assert math.isclose(table.loc["escape fuzz round trips (of 10,000)", "ratio"], 0.9999)


def test_a_reason_never_turns_a_difference_into_agreement():
    h = next(h for h in S.all_headlines() if h.why and h.tolerance.kind == "exact")
    results = {h.chapter: record(_nested(h.ours, (h.paper or 1) * 10 / h.scale))}
    row = S.headline_table(results).set_index("figure").loc[h.label]
    assert row.status == V.CONTRADICTS and row.why == h.why


def _nested(dotted, value):
    out = value
    for key in reversed(dotted.split(".")):
        out = {key: out}
    return out


def test_paper_figures_agree_with_what_the_chapters_recorded():
    """Each headline's paper figure equals the chapter's own record of it (no drift)."""
    results = S.load_all(repo_root() / "results")
    for h in S.all_headlines():
        if h.paper_key and h.chapter in results:
            assert S.lookup(results[h.chapter]["paper"], h.paper_key) == pytest.approx(
                h.paper, abs=1e-9
            ), h.label


# --- the summary page's HTML (layout checked in a browser by tests/test_book.py) -------------


def _rows(**overrides):
    base = {
        "chapter": "ceiling",
        "figure": "f",
        "where": "Table 2",
        "unit": "",
        "paper": 1.0,
        "ours": 1.0,
        "ratio": 1.0,
        "status": V.EXACT,
        "why": "",
        "profile": "cpu",
    }
    return {**base, **overrides}


def test_headline_html_groups_by_chapter_and_keeps_every_figure():
    table = S.headline_table({})
    out = S.headline_html(table)
    assert all(html.escape(h.label) in out for h in S.all_headlines())
    chapters = list(dict.fromkeys(h.chapter for h in S.all_headlines()))
    assert out.count('<tr class="cad-group">') == len(chapters)
    for chapter in chapters:
        assert f'href="../notebooks/{notebooks()[chapter]}.html"' in out
    assert out.count("<table") == 1 and "table-layout: fixed" in out


def test_headline_html_numbers_each_explanation_once_and_links_to_it():
    import pandas as pd

    table = pd.DataFrame(
        [
            _rows(figure="a", status=V.NOT_COMPARABLE, why="same reason"),
            _rows(figure="b", status=V.NOT_COMPARABLE, why="same reason"),
            _rows(figure="c", status=V.CONTRADICTS, why="other <reason>"),
            _rows(figure="d", status="a status this module does not know"),
        ]
    )
    out = S.headline_html(table)
    assert out.count('<li id="summary-note-1">same reason</li>') == 1
    assert '<li id="summary-note-2">other &lt;reason&gt;</li>' in out
    assert out.count('href="#summary-note-1"') == 2 and out.count('href="#summary-note-2"') == 1
    assert ">a status this module does not know</span>" in out  # shown as is, uncoloured


def test_format_value():
    assert S.format_value(None) == S.format_value(float("nan")) == "—"
    assert S.format_value(8872.0) == "8,872"
    assert S.format_value(74.1321, "%") == "74.13 %"
    assert S.format_value(2.7839, "×") == "2.784 ×"
    assert S.format_value(40.1, "tokens") == "40.1"  # other units go in their own span


def test_setting_html_says_shared_settings_once():
    hw = {"cpu": "X", "cores": 2, "torch": "2.13.0"}
    results = {
        "ceiling": {
            "profile": "cpu",
            "model": None,
            "tokenizer": "qwen2.5",
            "hardware": hw,
            "created": "2026-11-30T18:27:08+00:00",
        },
        "fim": {
            "profile": "cpu",
            "model": "m",
            "tokenizer": "t",
            "hardware": hw,
            "created": "2026-11-29T21:08:10+00:00",
        },
    }
    out = S.setting_html(results)
    assert "Every chapter: profile cpu; hardware X (2 cores); torch 2.13.0." in out
    assert "<th>hardware</th>" not in out and "<th>model</th>" in out
    assert "2026-11-30 18:27" in out and "T18:27:08" not in out
    results["fim"]["profile"] = "paper"
    assert "<th>profile</th>" in S.setting_html(results)


def test_chapter_notebooks_are_the_notebooks_that_write_each_results_file():
    shown = shown_results()
    for chapter, page in notebooks().items():
        notebook = repo_root() / "notebooks" / f"{page}.ipynb"
        assert notebook.exists(), notebook
        # the chapter names (writes, prints) the results file of the run it shows
        assert shown[chapter] in notebook.read_text(), (chapter, page, shown[chapter])
    assert {h.chapter for h in S.all_headlines()} <= set(notebooks())


def test_load_all_reads_the_largest_evidence_run_never_paper_or_smoke(tmp_path):
    from cadlib.book.summary import load_all

    (tmp_path / "kernel.json").write_text('{"chapter": "kernel", "profile": "cpu"}')
    (tmp_path / "kernel.paper.json").write_text('{"chapter": "kernel", "profile": "paper"}')
    (tmp_path / "decoding.json").write_text('{"profile": "cpu", "numbers": {}}')
    (tmp_path / "decoding.full.json").write_text('{"profile": "full", "numbers": {}}')
    got = load_all(tmp_path)
    assert list(got) == ["decoding", "kernel"]
    assert got["kernel"]["profile"] == "cpu" and got["decoding"]["profile"] == "full"


def _n_by_label(results):
    table = S.headline_table(results)
    return dict(zip(table.figure, table.n, strict=True)), table


def test_no_summary_row_reads_a_smaller_run_than_its_chapter_shows():
    """Issue 30: each model chapter's row is read from its largest committed run, and every
    committed run of another evidence profile is one the summary knows about."""
    import json

    folder = repo_root() / "results"
    read = S.load_all(folder)
    n_read, table = _n_by_label(read)
    chapters = {h.chapter for h in S.all_headlines()}
    for path in sorted(folder.glob("*.*.json")):
        chapter, profile = path.stem.split(".", 1)
        record = json.loads(path.read_text())
        if chapter not in chapters or "numbers" not in record or profile in ("paper", "smoke"):
            continue
        assert profile in evidence_runs().get(chapter, ()), path.name  # not ignored
        n_other, _ = _n_by_label({**read, chapter: record})
        rows = [h.label for h in S.all_headlines() if h.chapter == chapter]
        for label in rows:
            if not math.isnan(n_other[label] or math.nan):
                assert n_read[label] >= n_other[label], (label, path.name)
    for chapter, profiles in evidence_runs().items():  # those with headline rows
        if chapter in chapters and (folder / f"{chapter}.{profiles[0]}.json").exists():
            assert set(table[table.chapter == chapter].profile) == {profiles[0]}, chapter


def test_a_row_read_from_the_cpu_run_when_a_larger_one_is_committed_is_caught(tmp_path):
    """The check above fails on the old behaviour (cpu runs only)."""
    import json

    folder = repo_root() / "results"
    cpu = {c: json.loads((folder / f"{c}.json").read_text()) for c in evidence_runs()}
    larger = {c: S.load_all(folder)[c] for c in evidence_runs()}
    n_cpu, _ = _n_by_label(cpu)
    n_large, _ = _n_by_label(larger)
    smaller = [
        k
        for k in n_cpu
        if not math.isnan(n_cpu[k] or math.nan)
        and not math.isnan(n_large[k] or math.nan)
        and n_cpu[k] < n_large[k]
    ]
    assert smaller  # the cpu runs are smaller: reading them would fail the test above


def test_each_chapter_declares_its_own_rows_in_book_order():
    """A headline's chapter is the card whose ``headlines.HEADLINES`` declares it, and the
    summary lists the chapters' rows in book order, each chapter's rows together."""
    declared = chapter_values("headlines", "HEADLINES")
    for name, rows in declared.items():
        assert rows and {h.chapter for h in rows} == {name}, name
    assert S.all_headlines() == tuple(h for rows in declared.values() for h in rows)
    order = list(dict.fromkeys(h.chapter for h in S.all_headlines()))
    assert order == [c for c in notebooks() if c in declared]


def test_the_package_keeps_every_name_importable_from_cadlib_summary():
    for name in S.__all__:
        assert getattr(S, name) is not None, name
    assert S.all_headlines is headlines.all_headlines and S.Headline is spec.Headline
    assert S.headline_table is tables.headline_table and S.headline_html is render.headline_html
    assert S.judge_headline is tables.judge_headline


# --- issue 31: verdicts that can fail, on the quantity they name -----------------------------


def _status(results, label):
    return S.headline_table(results).set_index("figure").loc[label, "status"]


def test_gen_detector_is_shown_beside_the_literals_ids_never_judged_against_them():
    """The paper's 522 4370 29 are the ids of the literal ``</gen>``; our detector is read where
    a newline follows it (issue 49, finding 9): another id sequence, so no verdict either way."""
    same = {"losslessness": record(_qwen([522, 4370, 29]))}
    merged = {"losslessness": record(_qwen([522, 4370, 397]))}
    assert _status(same, _GEN_CLOSE) == V.NOT_COMPARABLE
    assert _status(merged, _GEN_CLOSE) == V.NOT_COMPARABLE
    row = S.headline_table(merged).set_index("figure").loc[_GEN_CLOSE]
    assert row.ours == 2  # still counted id by id, and shown
    assert "newline" in row.why and "literal" in row.why


def test_pooled_round_trips_of_the_papers_unidentified_subset_share_one_verdict_kind():
    """Table 3's pooled round-trip EM counts 97 cases the paper does not identify: unified diff
    and search/replace rows get the same kind and reason, whatever their EM (finding 9)."""
    by_label = {h.label: h for h in S.all_headlines()}
    udiff = by_label["unified diff round-trip EM (pooled)"].tolerance
    search = by_label["search/replace round-trip EM (pooled)"].tolerance
    assert udiff.kind == search.kind == V.NOT_COMPARABLE
    assert "97 unidentified" in udiff.reason and "97 unidentified" in search.reason
    perfect = {"formats": record({"table3": {"pooled": {"unified-diff": {"rt_em": 1.0}}}})}
    assert _status(perfect, "unified diff round-trip EM (pooled)") == V.NOT_COMPARABLE


def test_literal_ids_are_compared_with_the_papers():
    audit = [{"agrees": i < 8} for i in range(10)]
    row = (
        S.headline_table({"losslessness": record({"literal_audit": audit})})
        .set_index("figure")
        .loc["App. A: Qwen2.5 literal ids equal to the paper's"]
    )
    assert row.status == V.CONTRADICTS and row.ours == 8 and row.n == 10


def test_figures_of_another_tokenizer_model_or_unidentified_subset_are_not_comparable():
    by_label = {h.label: h for h in S.all_headlines()}
    for label in (
        "App. K: Llama 3 short literals (App. A) that are one token",
        "HEvalFix-Py unified diff token overhead vs Copy-as-Decode",
        "HEvalFix-JS unified diff token overhead vs Copy-as-Decode",
        "FSM-constrained untrained model: held-out EM",
    ):
        assert by_label[label].tolerance.kind == V.NOT_COMPARABLE, label


def test_round_trips_true_for_every_input_are_by_construction():
    by_label = {h.label: h for h in S.all_headlines()}
    for label in (_ROUND_TRIP, "Copy-as-Decode round-trip EM (pooled)"):
        assert by_label[label].tolerance.kind == V.BY_CONSTRUCTION, label


def test_the_papers_inconsistent_derived_figures_get_their_own_verdict():
    """App. L's printed 0.15 does not follow from the paper's own formula and curve."""
    from cadlib import paper as P

    label = "App. L: pointer's advantage per copy op, paper's curve (pooled)"
    row = {
        "corpus": "pooled",
        "curve": "paper 7B (reconstructed)",
        "K": 954,
        "advantage per op (mean)": P.APPENDIX_L["pointer_advantage_per_op"] * 15,
    }
    results = {"ceiling": record({"appendix_l": [row]})}
    assert _status(results, label) == V.PAPER_DISAGREES
    row["advantage per op (mean)"] = P.APPENDIX_L["pointer_advantage_per_op"]
    assert _status(results, label) == V.DERIVED


def test_the_ratio_plot_keeps_zeros_and_sets_not_comparable_rows_apart():
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    table = pd.DataFrame(
        [
            _rows(figure="zero", ours=0.0, ratio=0.0, status=V.NOT_COMPARABLE),
            _rows(figure="same", status=V.EXACT),
            _rows(figure="other", ours=3.0, ratio=3.0, status=V.NOT_COMPARABLE),
            _rows(figure="none", ours=None, ratio=None, status=V.NOT_YET_RUN),
        ]
    )
    like, other = render.ratio_rows(table)
    assert list(like.figure) == ["same"] and list(other.figure) == ["zero", "other"]
    fig = S.plot_ratios(table)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    ticks = sorted(zip(ax.get_yticks(), labels, strict=True))
    assert [t for _, t in ticks] == ["ceiling: other", "ceiling: zero", "ceiling: same"]


def test_the_summary_reads_the_run_each_chapter_shows():
    """A summary row quotes the run its chapter page shows (the evidence run where the chapter
    is committed at one), never a smaller one, nor a larger one the page does not show."""
    from cadlib.book.summary import load_all

    rows = load_all()
    for chapter, name in shown_results().items():
        if chapter in rows:
            shown_profile = name.removesuffix(".json").partition(".")[2] or "cpu"
            assert rows[chapter]["profile"] == shown_profile, (chapter, name)


def test_chapter_runtimes_time_the_recorded_runs_not_their_replays():
    """A page replayed from its records executes in seconds; the table gives the span of the
    recorded measurement instead, for the run the page shows and for its cpu profile."""
    from cadlib.book.summary import chapter_runtimes
    from cadlib.record.results import load_committed

    table = chapter_runtimes()
    shown = shown_results()
    for chapter, page in notebooks().items():
        row = table.loc[page]
        assert shown[chapter] == results_name(chapter, row.profile)
        provenance = (load_committed(chapter, row.profile) or {}).get("provenance") or {}
        span = (provenance.get("load") or {}).get("seconds")
        if span:  # a model chapter: its measurement, never less
            assert row.measured == round(span / 60, 1)
        assert row["cpu profile"] > 0
    assert table["cpu profile"].sum() > 10  # the committed cpu runs took minutes, not seconds


def test_every_chapter_beyond_the_paper_is_listed_as_such(monkeypatch):
    """A chapter whose card names no section of the paper (6b, 6c, 8) appears in the summary's
    "beyond the paper" list, with its own entries or, without any, its question (issue 49)."""
    from cadlib.chapters import cards

    beyond = {card.notebook for card in cards() if not card.paper}
    assert beyond  # 6b, 6c and 8 today
    assert beyond <= {stem for stem, _ in S.beyond_the_paper()}
    monkeypatch.setattr(headlines, "chapter_values", lambda role, attribute: {})
    listed = dict(S.beyond_the_paper())
    assert set(listed) == beyond  # a chapter with a paper section and no entry is not listed
    assert all(text.startswith("the whole chapter: ") for text in listed.values())
