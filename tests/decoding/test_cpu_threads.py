"""Default threads that hold up on a busy machine (issue 36.2) and the benchmark that checks
it: measured idle cores, OpenMP's passive wait policy, the benchmark's JSON (with a stand-in
for ``cad edit``: no timing here is a reported number)."""

import json
import sys

from cadlib.cli import thread_bench as cli_thread_bench
from cadlib.costs import thread_bench
from cadlib.decoding import cpu_threads
from cadlib.decoding.cpu_threads import default_threads, idle_cores, passive_openmp


def stat(*cores):
    """A /proc/stat text: ``(idle, busy)`` jiffies per core."""
    rows = [f"cpu{i} {busy} 0 0 {idle} 0 0 0 0 0 0" for i, (idle, busy) in enumerate(cores)]
    return "cpu 1 2 3 4 5 6 7 8 0 0\n" + "\n".join(rows) + "\nintr 1 2\n"


def test_idle_cores_counts_the_idle_share_of_each_usable_core(monkeypatch):
    monkeypatch.setattr(cpu_threads, "usable_cores", lambda: [0, 1])
    texts = iter([stat((100, 100), (100, 100)), stat((200, 100), (110, 190))])
    # core 0: all 100 new jiffies idle; core 1: 10 of 100 idle
    assert abs(idle_cores(0, read=lambda: next(texts)) - 1.1) < 1e-9


def test_default_threads_follow_the_idle_cores(monkeypatch):
    monkeypatch.setattr(cpu_threads, "usable_cores", lambda: [0, 1, 2, 3])
    assert default_threads(idle=0.1) == 1  # everything busy: still one thread
    assert default_threads(idle=1.2) == 1  # one other core's worth of load on 2 of 4 busy
    assert default_threads(idle=2.6) == 3
    assert default_threads(idle=9.0) == 4  # never more than the usable cores
    monkeypatch.setattr(cpu_threads, "idle_cores", lambda: None)
    assert default_threads() == 4  # unmeasurable: all usable cores


def test_passive_openmp_leaves_a_users_policy_alone():
    env = {}
    assert passive_openmp(env) and env == {"OMP_WAIT_POLICY": "PASSIVE"}
    env = {"OMP_WAIT_POLICY": "ACTIVE"}
    assert not passive_openmp(env) and env == {"OMP_WAIT_POLICY": "ACTIVE"}


FAKE_CAD = """\
import sys
threads = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv else "2"
print("cad: edit: 3 ops (2 copy, 1 gen), 5 copied / 2 generated tokens, 4 forwards, "
      f"0.25 s, 28.0 tokens/s (m, transformers, {threads} thread(s))", file=sys.stderr)
"""


def test_benchmark_writes_every_load_setting_and_case(tmp_path):
    fake = tmp_path / "fake_cad.py"
    fake.write_text(FAKE_CAD.replace("thread(s)", "threads"))
    out = tmp_path / "bench.json"
    report = thread_bench.thread_benchmark(out, repeats=2, command=[sys.executable, str(fake)])
    assert json.loads(out.read_text()) == report
    keys = {(r["load"], r["setting"], r["case"]) for r in report["records"]}
    settings = thread_bench.SETTINGS
    assert keys == {
        (load, setting, case)
        for load in ("quiet", "busy")
        for setting in settings
        for case in ("rename", "3-line")
    }
    for record in report["records"]:
        assert len(record["runs"]) == 2
        want = 1 if record["setting"] == "threads 1" else 2
        assert all(run["threads"] == want and run["decode_s"] == 0.25 for run in record["runs"])
    assert set(report["provenance"]) == {"commit", "load", "busy"}


def test_the_table_compares_the_default_with_one_thread_per_load_and_case():
    def record(load, setting, case, seconds, threads):
        return {
            "load": load,
            "setting": setting,
            "case": case,
            "runs": [{"decode_s": s, "wall_s": s + 4, "threads": threads} for s in seconds],
        }

    report = {
        "records": [
            record("busy", "default", "rename", [30.0, 32.0, 90.0], 1),
            record("busy", "threads 1", "rename", [15.0, 16.0, 17.0], 1),
            record("quiet", "default", "rename", [5.0, 5.0, 5.0], 2),
            record("quiet", "threads 1", "rename", [10.0, 10.0, 10.0], 1),
        ]
    }
    table = thread_bench.thread_table(report)
    assert table.loc[("busy", "rename", "default"), "decode s"] == 32.0  # the median
    assert table.loc[("busy", "rename", "default"), "decode / one thread's"] == 2.0
    assert table.loc[("quiet", "rename", "default"), "decode / one thread's"] == 0.5
    assert table.loc[("quiet", "rename", "threads 1"), "decode / one thread's"] == 1.0
    assert table.loc[("quiet", "rename", "default"), "wall s"] == 9.0
    assert cli_thread_bench.thread_reading(table) == (
        "With idle-core threads and OpenMP's passive wait, on a quiet machine the default ran "
        "2 thread(s) and took 0.50–0.50× one thread's decode time; on a busy machine the "
        "default ran 1 thread(s) and took 2.00–2.00× one thread's decode time."
    )


def test_benchmark_cases_are_valid_programs(tmp_path):
    from cadlib.resolver import resolve

    for doc, program in thread_bench.bench_cases(tmp_path).values():
        text = resolve(program.read_text(), doc.read_text())
        assert text != doc.read_text()


def test_the_command_passes_its_engine_on(monkeypatch, tmp_path, capsys):
    from cadlib.cli import thread_bench as command

    calls = []
    monkeypatch.setattr(thread_bench, "thread_benchmark", lambda *args: calls.append(args))
    out = tmp_path / "bench.json"
    assert command.main(["--out", str(out), "--repeats", "1"]) == 0
    assert command.main(["--out", str(out), "--engine", "llama.cpp"]) == 0
    assert calls == [
        (str(out), 1, ["--device", "cpu"]),
        (str(out), 3, ["--engine", "llama.cpp"]),
    ]
    assert capsys.readouterr().out == f"wrote {out}\nwrote {out}\n"
