"""Chapter 6's held-out speed protocol: what it declares, its statistics and goals on
constructed rows (each goal met and missed), and the whole run in its smoke form."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cadlib.chapters.decoding import profiles_heldout as P
from cadlib.chapters.decoding.run_heldout_stats import (
    ALL_TEST,
    FAMILY,
    case_latency,
    group_table,
    judge,
)
from cadlib.corpora import CORPORA, REALEDITS_TEST
from cadlib.decoding.methods import DRAFTED, TIMED


def test_the_protocol_keeps_test_and_development_apart():
    assert set(P.TEST_CORPORA).isdisjoint(P.DEVELOPMENT)
    assert set(P.RIVAL_SELECTION["cases"]) <= set(P.DEVELOPMENT)
    assert set(P.TEST_CORPORA) <= set(CORPORA) and set(REALEDITS_TEST) <= set(P.TEST_CORPORA)
    assert all(P.TIMED_CASES[c] >= 12 for c in P.REAL_EDIT_TEST)
    assert all(P.TIMED_CASES[c] >= 6 for c in P.HUMANEVALFIX_TEST)
    assert P.AR_REPEATS == 1 < P.REPEATS and set(P.METHODS) == set(TIMED)
    assert P.results_name("llama.cpp") == "decoding.heldout.llama-cpp.json"
    with pytest.raises(ValueError, match="unknown engine"):
        P.results_name("vllm")
    assert max(P.GRID["contexts"]) >= P.CONTEXT


def test_the_rival_is_never_chosen_on_a_test_corpus():
    from cadlib.chapters.decoding.run_heldout import choose_rival

    with pytest.raises(ValueError, match="development corpora only"):
        choose_rival([], None, dict(cases={"realedits-cobra": 2}, max_ids=None, grid=((10, 2),)))


def _rows(latency: dict, engine: str = "transformers", repeats: int = 1) -> pd.DataFrame:
    """Timed rows from ``{(corpus, case): {method: seconds}}``, each method ``repeats`` times
    (a slower second repeat, so the median is checked)."""
    rows = []
    for (corpus, case), by in latency.items():
        for method, s in by.items():
            for r in range(repeats):
                t = s * (1 + r)
                rows.append(
                    dict(
                        engine=engine,
                        corpus=corpus,
                        case=case,
                        method=method,
                        repeat=r,
                        T=100,
                        forwards=10,
                        wall_s=t,
                        decode_s=t / 2,
                    )
                )
    return pd.DataFrame(rows)


def _case(ar, pld, cad, drafted):
    return {"autoregressive": ar, "prompt lookup": pld, "Copy-as-Decode": cad, DRAFTED: drafted}


def test_groups_take_the_median_case_and_the_best_rival_by_median_latency():
    lat = {
        ("realedits-cobra", "a"): _case(10.0, 4.0, 3.0, 1.0),
        ("realedits-cobra", "b"): _case(20.0, 5.0, 30.0, 2.0),  # plain CaD slower than AR
        ("realedits-cobra", "c"): _case(30.0, 6.0, 2.0, 4.0),
    }
    table = group_table(case_latency(_rows(lat)))
    t = table.set_index(["group", "method"])
    assert t.loc[("realedits-cobra", "prompt lookup"), "speedup"] == pytest.approx(4.0)
    assert t.loc[("realedits-cobra", "Copy-as-Decode"), "slower_than_ar"] == 1
    drafted = t.loc[("realedits-cobra", DRAFTED)]
    assert drafted.best_rival == "prompt lookup"
    assert drafted.vs_rival == pytest.approx(2.5)  # median of 4, 2.5, 1.5
    assert drafted.vs_rival_lo <= drafted.vs_rival <= drafted.vs_rival_hi
    assert t.loc[("realedits-cobra", "Copy-as-Decode"), "slower_than_rival"] == 1


def test_each_goal_can_be_met_and_missed():
    def table(drafted_seconds: float, slow_case: bool):
        lat = {}
        for corpus in (*P.REAL_EDIT_TEST, *P.HUMANEVALFIX_TEST):
            for k in range(3):
                lat[(corpus, f"{corpus}/{k}")] = _case(20.0, 8.0, 5.0, drafted_seconds)
        if slow_case:
            lat[("heval-fix-go", "heval-fix-go/slow")] = _case(1.0, 8.0, 5.0, 9.0)
        return judge(group_table(case_latency(_rows(lat))))

    good, bad = table(2.0, False), table(9.0, True)
    assert good.met.all() and not bad.met.any()
    assert set(good.goal) == {g["key"] for g in P.GOALS}
    assert set(good[good.goal == "real-edits-2x"].group) == {
        "RealEdits-Requests",
        "RealEdits-Cobra",
    }
    assert set(good[good.goal == "humanevalfix-faster"].group) == {FAMILY}
    slow = bad[bad.goal == "slower-than-ar"].iloc[0]
    assert slow.group == ALL_TEST and slow["count"] == 1 and slow.cases == 19


@pytest.mark.slow
def test_the_smoke_run_writes_rows_goals_and_provenance(tmp_path):
    from cadlib.chapters.decoding.run_heldout import heldout_run, read_rows

    out = tmp_path / "heldout.json"
    report = heldout_run(out, smoke=True, progress=False)
    assert json.loads(out.read_text())["profile"] == "smoke"
    rows = read_rows(out)
    assert report["rows_file"] == "heldout.rows.jsonl"
    assert len(set(zip(rows.engine, rows.method, strict=True))) == len(P.ENGINES) * len(P.METHODS)
    assert (rows.method == "autoregressive").sum() == 2 * len(P.ENGINES)  # once per case
    again = group_table(case_latency(rows)).to_dict("records")
    assert [g["speedup"] for g in again] == pytest.approx([g["speedup"] for g in report["groups"]])
    assert {r["goal"] for r in report["goals"]} == {"slower-than-ar"}
    assert report["every_case"]["cases"]["heval-fix-py"] == 164
    assert "load" in report["provenance"] and report["rival_settings"]["transformers"] == [10, 2]


def _report(drafted_seconds: float) -> dict:
    lat = {}
    for corpus in (*P.REAL_EDIT_TEST, *P.HUMANEVALFIX_TEST):
        for k in range(3):
            lat[(corpus, f"{corpus}/{k}")] = _case(20.0, 8.0, 30.0, drafted_seconds)
    rows = pd.concat([_rows(lat), _rows(lat, engine="llama.cpp")])
    table = group_table(case_latency(rows))
    return dict(groups=table.to_dict("records"), goals=judge(table).to_dict("records"))


def test_the_sentences_say_met_or_missed_and_where_copy_as_decode_loses():
    from cadlib.chapters.decoding.text_heldout import goal_lines, loss_lines

    good, bad = _report(2.0), _report(25.0)
    assert "**missed**" not in goal_lines(good) and "**met**" not in goal_lines(bad)
    assert goal_lines(good).count("\n") == len(good["goals"]) - 1
    losses = loss_lines(good)  # plain CaD (30 s) is slower than AR (20 s) on every case
    assert (
        "Copy-as-Decode on transformers: slower than autoregressive decoding on 18 of 18" in losses
    )
    assert "trails the best rival on RealEdits-Requests" in losses


def test_the_headline_plot_has_one_panel_per_engine_and_the_table_one_row_per_mark():
    import matplotlib

    matplotlib.use("Agg")
    from cadlib.chapters.decoding.show_heldout import MARKED, heldout_table, plot_heldout

    report = _report(2.0)
    fig = plot_heldout(report)
    assert len(fig.axes) == 2 and [a.get_title() for a in fig.axes] == ["transformers", "llama.cpp"]
    table = heldout_table(report, "llama.cpp")
    assert len(table) == 8 * len(MARKED)  # 6 corpora, the family, all test cases
    assert table["vs best rival"].str.contains("prompt lookup").sum() == 16


def test_a_run_names_a_known_engine_and_writes_nothing_otherwise(tmp_path, capsys):
    from cadlib.chapters.decoding import commands
    from cadlib.chapters.decoding.run_heldout import heldout_run

    with pytest.raises(ValueError, match="unknown engine 'vllm'"):
        heldout_run(tmp_path / "x.json", engine="vllm")
    with pytest.raises(SystemExit, match="name the part with --engine"):
        commands.main(["heldout", "--out", str(tmp_path / "y.json")])
    assert not list(tmp_path.iterdir())


def test_the_parts_combine_in_engine_order():
    from cadlib.chapters.decoding.run_heldout_stats import combine

    a, b = _report(2.0), _report(25.0)
    both = combine([a, b])
    assert len(both["groups"]) == len(a["groups"]) + len(b["groups"])
    assert both["goals"][: len(a["goals"])] == a["goals"]


def test_the_answer_leads_with_the_test_corpora_and_the_goals_tabulate_each_verdict():
    from cadlib.chapters.decoding.show_heldout import goal_table
    from cadlib.chapters.decoding.text_heldout import answer_lead

    good, bad = _report(2.0), _report(25.0)
    lead = answer_lead(good)  # best rival: prompt lookup (8 s), drafted 2 s: 4x
    assert lead.count("On edits nobody here tuned on") == 2  # one sentence per engine
    assert "4.00× [4.00, 4.00] on RealEdits-Requests" in lead and "Java" not in lead
    assert "slower than autoregressive decoding on 0 of 18 test cases" in lead
    assert "on 18 of 18 test cases" in answer_lead(bad)
    assert set(goal_table(good).verdict) == {"met"} and set(goal_table(bad).verdict) == {"missed"}
    assert len(goal_table(good)) == len(good["goals"])
    one = goal_table(good, "llama.cpp")  # chapter 6b's view: one engine's goals
    assert set(one.engine) == {"llama.cpp"} and 0 < len(one) < len(good["goals"])


def test_a_part_is_read_by_one_name_from_either_chapter():
    from cadlib.chapters.decoding.profiles_heldout import ENGINES, committed_parts, results_name
    from cadlib.costs import heldout_report as HR

    assert [HR.part_name(e) for e in ENGINES] == [results_name(e) for e in ENGINES]
    assert HR.part_name("llama.cpp") == "decoding.heldout.llama-cpp.json"
    parts = committed_parts()
    for engine in ENGINES:
        assert HR.committed_part(engine) == parts.get(engine)
    assert HR.part_line("llama.cpp", None).startswith("llama.cpp: not recorded yet (`python -m")


def test_the_development_side_uses_the_same_statistics_and_names_its_pool():
    from cadlib.chapters.decoding.run_heldout_stats import ALL_DEVELOPMENT, development_groups
    from cadlib.chapters.decoding.show_heldout import development_frame

    lat = {
        ("heval-fix-py", "Python/0"): _case(10.0, 5.0, 4.0, 2.0),
        ("realedits-flask", "f/0"): _case(40.0, 10.0, 8.0, 4.0),
    }
    rows = _rows(lat).drop(columns="engine")
    table = development_groups(rows)
    assert set(table.group) == {"heval-fix-py", "realedits-flask", ALL_DEVELOPMENT}
    assert (table.engine == "transformers").all()
    frame = development_frame(rows)
    assert frame.set_index(["group", "method"]).loc[("realedits-flask", DRAFTED), "speedup"] == 10
    assert development_frame(None) is None


def test_parts_not_recorded_say_so_and_their_summary_rows_are_not_yet_run(monkeypatch):
    from cadlib.chapters.decoding import headlines
    from cadlib.chapters.decoding.text_heldout import parts_markdown

    assert parts_markdown({}).count("not recorded yet") == len(P.ENGINES)
    from cadlib.record import results

    monkeypatch.setattr(results, "read_results_file", lambda name: None)
    rows = [h for h in headlines.HEADLINES if h.label.startswith("held-out test")]
    assert rows and all(h.ours({}) is None for h in rows)
    part = _report(2.0)
    monkeypatch.setattr(results, "read_results_file", lambda name: part)
    fast = next(h for h in rows if "transformers: forced-oracle Copy-as-Decode +drafts" in h.label)
    assert fast.ours({}) == pytest.approx(4.0) and fast.n({}) == 3


def test_the_summary_rows_name_the_parts_groups_and_methods_as_the_protocol_does():
    from cadlib.chapters.decoding import headlines
    from cadlib.decoding.method_names import COPY_AS_DECODE

    assert headlines.HELDOUT_PARTS == {e: P.results_name(e) for e in P.ENGINES}
    assert headlines.HELDOUT_GROUPS == (*P.REAL_EDIT_TEST, P.FAMILY)
    assert headlines.HELDOUT_ALL == P.ALL_TEST and headlines.HELDOUT_METHODS == COPY_AS_DECODE


def _priced(corpus: str, speedups: tuple[float, float, float], slower: tuple[int, int]) -> dict:
    """An ``every_case`` block of one corpus: prompt lookup, plain and drafted Copy-as-Decode."""
    from cadlib.decoding.method_names import DRAFTED_SETTING

    keys = [
        ("prompt lookup", "best"),
        ("Copy-as-Decode", "m=0"),
        ("Copy-as-Decode", DRAFTED_SETTING),
    ]
    predicted = [
        dict(corpus=corpus, method=m, setting=s, cases=10, median_speedup=x, lo=x - 1, hi=x + 1)
        for (m, s), x in zip(keys, speedups, strict=True)
    ]
    counts = [
        dict(corpus=corpus, setting=s, cases=10, slower_than_ar=n)
        for (_, s), n in zip(keys[1:], slower, strict=True)
    ]
    return dict(predicted=predicted, slower=counts)


def test_every_case_pricing_is_one_row_per_test_corpus_without_the_pooled_row():
    from cadlib.chapters.decoding.show_heldout import every_case_table

    blocks = [
        _priced("heval-fix-java", (5.0, 2.0, 5.5), (23, 1)),
        _priced("pooled", (9, 9, 9), (0, 0)),
    ]
    every = dict(
        predicted=[r for b in blocks for r in b["predicted"]],
        slower=blocks[0]["slower"],
        cases={"heval-fix-java": 164},
    )
    table = every_case_table(dict(every_case=every))
    assert list(table.index) == ["HEvalFix-Java"]
    row = table.iloc[0]
    assert row["cases"] == 164 and row["Copy-as-Decode"] == "2.00× [1.00, 3.00]"
    assert row["Copy-as-Decode slower"] == 23 and row[f"{DRAFTED} slower"] == 1
    assert every_case_table(None) is None and every_case_table({"groups": []}) is None


def test_a_development_tick_says_development_once():
    from cadlib.chapters.decoding.run_heldout_stats import ALL_DEVELOPMENT
    from cadlib.chapters.decoding.show_heldout import _tick

    assert _tick("development", ALL_DEVELOPMENT).count("development") == 1
    assert _tick("development", "RealEdits-Flask") == "RealEdits-Flask (development)"
    assert _tick("test", "RealEdits-Cobra") == "RealEdits-Cobra"
