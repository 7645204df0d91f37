"""cadlib.book.summary.forward_costs: the one-id forward of SmolLM2 across chapters 2, 6 and 6b."""

import pandas as pd

from cadlib.book.summary import forward_costs as FC


def table(*rows):
    cols = ["chapter", "context", "one_id_forward_ms", "torch_threads", "load"]
    return pd.DataFrame([dict(zip(cols, r, strict=True)) for r in rows])


def test_reading_agrees_only_within_the_band():
    quiet = "quiet (0.01 other cores)"
    agree = table(("2 (kernel)", 256, 40.0, 1, quiet), ("6 (decoding)", 256, 48.0, 1, quiet))
    assert "they agree (ratio 1.20" in FC.forward_cost_reading(agree)
    apart = table(("2 (kernel)", 256, 40.0, 1, quiet), ("6 (decoding)", 256, 60.0, 1, quiet))
    assert "they do not agree (ratio 1.50" in FC.forward_cost_reading(apart)


def test_reading_sets_apart_other_threads_and_names_a_busy_run():
    t = table(
        ("2 (kernel)", 256, 40.0, 1, "quiet (0.01 other cores)"),
        ("6 (decoding)", 256, 45.0, 1, "busy (1.90 other cores)"),
        ("6b (llama.cpp)", 256, 30.0, 2, "not recorded"),
    )
    text = FC.forward_cost_reading(t)
    assert "Chapter 6b runs 2 torch threads" in text and "not compared" in text
    assert "busy machine: chapter(s) 6" in text
    assert "Fewer than two" in FC.forward_cost_reading(t.iloc[:1])


def test_the_committed_runs_give_one_row_per_timing_chapter():
    t = FC.one_id_forward_table()
    assert set(t.chapter) <= {"2 (kernel)", "6 (decoding)", "6b (llama.cpp)"}
    assert "2 (kernel)" in set(t.chapter)
    assert (t.one_id_forward_ms > 0).all() and (t.context > 0).all()


def test_the_html_table_fits_the_column_and_keeps_every_row():
    t = table(
        ("2 (kernel)", 256, 40.04, 1, "quiet (0.01 other cores)"),
        ("6 (decoding)", 256, 45.0, 1, "quiet (0.01 other cores)"),
    )
    t = t.assign(source="x", attention="eager", recorded="2026-12-03")
    html = FC.forward_cost_html(t)
    assert 'class="cad-fit' in html and html.count("<tr>") == 3 and ">40.0<" in html


def test_each_row_reads_the_run_its_chapter_shows_not_the_cpu_profile():
    """Chapter 6 shows its ``full`` run: the one-forward check reads that one (issue 49)."""
    from cadlib.chapters import shown_results

    shown = shown_results()
    t = FC.one_id_forward_table()
    for r in t.itertuples():
        chapter = {"2": "kernel", "6": "decoding", "6b": "llama_cpp"}[r.chapter.split()[0]]
        assert r.run == shown[chapter]
    cpu = FC.one_id_forward_table({"decoding": "decoding.json"})
    if "6 (decoding)" in set(t.chapter) and shown["decoding"] != "decoding.json":
        full_ms = t.set_index("chapter").loc["6 (decoding)", "one_id_forward_ms"]
        cpu_ms = cpu.set_index("chapter").loc["6 (decoding)", "one_id_forward_ms"]
        assert full_ms != cpu_ms  # another run, read from its own records
