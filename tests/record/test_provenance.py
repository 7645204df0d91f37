"""The provenance every results file carries: its commit and the load while it ran."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from cadlib.paths import repo_root
from cadlib.record import provenance as prov
from cadlib.record.results import write_results


def load(mean: float, busiest=()) -> dict:
    return {
        "samples": 3,
        "seconds": 12.0,
        "load_avg_1m": {"mean": 1.0, "max": 1.2},
        "other_cores": {"mean": mean, "max": mean + 0.1},
        "busiest_other": list(busiest),
    }


def test_a_run_is_busy_only_above_the_threshold():
    assert not prov.busy(load(prov.BUSY_CORES))
    assert prov.busy(load(prov.BUSY_CORES + 0.01))


def test_the_caption_says_quiet_busy_or_not_recorded():
    assert "not recorded" in prov.load_caption({})
    quiet = {"provenance": {"commit": "a", "load": load(0.02), "busy": False}}
    assert prov.load_caption(quiet).endswith("a quiet machine.")
    busy = {
        "provenance": {
            "commit": "a",
            "load": load(0.9, [{"name": "pytest", "cores": 0.9}]),
            "busy": True,
        }
    }
    caption = prov.load_caption(busy)
    assert "**a busy machine**" in caption and "pytest 0.90" in caption
    assert "0.90 of a core busy" in caption
    assert prov.load_label(quiet) == "quiet (0.02 of a core)"
    assert prov.load_label(busy) == "busy (0.90 of a core)"
    assert prov.load_label({}) == "not recorded"


def test_the_commit_is_head_with_a_dirty_mark_when_tracked_files_differ():
    commit = prov.git_commit(repo_root())
    assert commit is None or re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", commit)
    assert prov.git_commit(repo_root() / "no-such-folder") is None


def test_the_commit_recorded_is_the_one_checked_out_when_the_monitor_started(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "PATH": os.environ["PATH"],
    }

    def commit():
        subprocess.run(
            ["git", "-C", str(tmp_path), "commit", "-q", "--allow-empty", "-m", "c"],
            check=True,
            env=env,
        )
        return prov.git_commit(tmp_path)

    first = commit()
    watch = prov.LoadMonitor(interval=3600, root=tmp_path)
    later = commit()  # a commit made while the run goes on
    watch.stop()
    assert later != first and prov.provenance(tmp_path, watch)["commit"] == first
    assert prov.provenance(tmp_path, prov.LoadMonitor(interval=3600))["commit"] == later


def test_every_results_file_records_its_provenance(tmp_path, monkeypatch):
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    path = write_results("x", {"n": 1}, profile="cpu", model=None, tokenizer=None)
    record = json.loads(path.read_text())
    assert set(record["provenance"]) == {"commit", "load", "busy"}
    assert record["provenance"]["load"]["samples"] >= 1


@pytest.fixture
def spinner():
    """A process that spins on one core and is not this process's child (a child's load is
    the run's own, and not counted)."""
    out = subprocess.run(
        ["sh", "-c", f"{sys.executable} -c 'while True: pass' >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(out.stdout)
    yield pid
    os.kill(pid, signal.SIGKILL)


def test_the_monitor_sees_another_process_spinning(spinner):
    monitor = prov.LoadMonitor(interval=3600)  # sampled by hand below
    prov.sample_other_load()
    time.sleep(1.5)
    monitor.sample()
    monitor.stop()
    summary = monitor.summary()
    assert summary["other_cores"]["max"] > prov.BUSY_CORES
    assert summary["busiest_other"][0]["name"].startswith("python")


def test_the_quiet_check_says_busy_with_exit_1(spinner, capsys):
    assert prov.main(["check", "1.5"]) == 1
    assert "the machine is busy" in capsys.readouterr().err


def test_the_report_warns_about_a_run_recorded_busy(tmp_path, capsys):
    quiet, busy = tmp_path / "a.json", tmp_path / "b.json"
    quiet.write_text(json.dumps({"provenance": {"load": load(0.0), "busy": False}}))
    busy.write_text(json.dumps({"provenance": {"load": load(0.8), "busy": True}}))
    assert prov.main(["report", str(quiet)]) == 0
    assert prov.main(["report", str(quiet), str(busy)]) == 1
    out = capsys.readouterr()
    assert "a quiet machine" in out.out and "recorded on a busy machine" in out.err
    assert prov.main(["bogus"]) == 2
    assert prov.main(["report"]) == 1 and "wrote no results file" in capsys.readouterr().err


def test_an_evidence_run_is_captioned_with_its_file_date_commit_and_load():
    record = {
        "profile": "full",
        "created": "2026-11-20T10:00:00+00:00",
        "provenance": {"commit": "0123456789abcdef", "load": load(0.01), "busy": False},
    }
    caption = prov.evidence_caption(record, "decoding.full.json")
    assert caption.startswith(
        "*Evidence run `decoding.full.json`: profile full, recorded "
        "2026-11-20 at commit `0123456789`."
    )
    assert caption.endswith("a quiet machine.*")
    old = prov.evidence_caption({"profile": "large", "created": "2026-11-01"}, "fim.large.json")
    assert "not recorded" in old and "commit" not in old
