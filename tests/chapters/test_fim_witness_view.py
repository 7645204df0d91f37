"""Chapter 8's soundness view: the committed witness runs' table and outcome-dependent
sentence (:mod:`cadlib.chapters.fim_constraint.text_witness`, ``show_stdlib.witness_table``)."""

from cadlib.chapters.fim_constraint import run_evidence, show_stdlib, text_witness


def _run(codebase="Python 3.11.7 standard library", failures=0, no_witness=2):
    example = dict(file="os.py", a=1, b=9, variant="stray closer", prefix="x)", witness="")
    return {
        "codebase": codebase,
        "command": "python -m cadlib.chapters.fim_constraint.commands witness --cuts 3",
        "summary": dict(
            cuts=3,
            prefixes_checked=100,
            witnesses_found=100 - no_witness,
            witnesses_parsed=100 - no_witness - failures,
            failures=failures,
            no_witness=no_witness,
            dead_prefixes=7,
            failure_examples=[example] if failures else [],
        ),
    }


def test_no_failure_sentence():
    text = text_witness.witness_markdown([_run(), _run("pandas.core (pandas 2.2.3)")])
    assert "0 soundness failures" in text and "196 witnesses" in text
    assert "no witness within its limit for 4 of the 200" in text and "undecided" in text
    assert "rejected" not in text


def test_failure_sentence_names_the_example():
    text = text_witness.witness_markdown([_run(failures=3)])
    assert text.startswith("CPython rejected 3 of 98 witnesses")
    assert "`can_end()` accepted a program CPython rejects" in text
    assert "os.py (stray closer)" in text and "'x)'" in text
    assert "0 soundness failures" not in text


def test_every_witness_found_has_no_limit_clause():
    assert "undecided" not in text_witness.witness_markdown([_run(no_witness=0)])


def test_no_run_committed():
    assert "No soundness run committed" in text_witness.witness_markdown([])


def test_witness_table_one_column_per_codebase():
    table = show_stdlib.witness_table([_run(), _run("pandas.core", failures=1)])
    assert list(table.columns) == ["Python 3.11.7 standard library", "pandas.core"]
    assert table.loc["soundness failures"].tolist() == [0, 1]
    assert table.loc["witnesses CPython parsed"].tolist() == [98, 97]


def test_load_witness_runs_skips_missing(monkeypatch):
    got = {"fim.witness.json": _run()}
    monkeypatch.setattr(run_evidence, "read_results_file", got.get)
    assert [r["codebase"] for r in run_evidence.load_witness_runs()] == [_run()["codebase"]]


def test_witness_command_writes_its_report(tmp_path, monkeypatch):
    from cadlib.chapters.fim_constraint import commands

    src = "def f(x):\n    if x:\n        return [x, 'a']\n    return None\n\n\ny = f(1)\n"
    monkeypatch.setattr(commands, "stdlib_sources", lambda folder=None: {"m.py": src})
    out = tmp_path / "w.json"
    args = commands.parser().parse_args(
        ["witness", "--cuts", "2", "--max-middle", "30", "--out", str(out)]
    )
    report = args.report(args)
    assert report["command"].startswith(f"{commands.PROG} witness --cuts 2 --seed 0")
    assert report["summary"]["cuts"] == 2 and report["summary"]["failures"] == 0
    assert out.exists() and text_witness.witness_markdown([report]).startswith("CPython parsed")
