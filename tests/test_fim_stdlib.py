"""The differential check at scale (cadlib.fim.stdlib), chapter 8's report helpers
(cadlib.fim.report) and the one home of pending UTF-8 bytes (cadlib.fim.mask.PendingBytes)."""

import ast
import json

import pandas as pd
import pytest

from cadlib.fim import report as R
from cadlib.fim import stdlib as S
from cadlib.fim.mask import PendingBytes

MODULE = '''"""A module."""
import os


def f(x, y=2):
    s = "a string with spaces"
    if x:
        return x + y  # a comment
    return [i for i in range(y)]


class C:
    def g(self):
        return f(1)


X = {"k": (1, 2.5, 'v')}
'''
SOURCES = {"a.py": MODULE, "b.py": "def h():\n    return 1\n\n\nY = h()\n"}


def test_windows_are_whole_top_level_statements():
    bounds = S._boundaries(MODULE)
    assert bounds[0] == 0 and bounds[-1] == len(MODULE)
    for a, b in [(60, 70), (150, 160), (0, 5)]:
        s, e = S._window(bounds, a, b, max_left=10, max_right=10)
        assert s <= a <= b <= e and s in bounds and e in bounds
        ast.parse(MODULE[s:e])


def test_cuts_are_seeded_and_reassemble_a_module():
    cuts = S.stdlib_cuts(SOURCES, 12, seed=3)
    assert cuts == S.stdlib_cuts(SOURCES, 12, seed=3)
    assert {c["file"] for c in cuts} <= set(SOURCES)
    for c in cuts:
        assert SOURCES[c["file"]][c["a"]:c["b"]] == c["middle"]
        ast.parse(c["left"] + c["middle"] + c["right"])
    with pytest.raises(ValueError):
        S.stdlib_cuts(SOURCES, -1)


def test_differential_agrees_and_counts(tmp_path):
    frame = S.stdlib_differential(S.stdlib_cuts(SOURCES, 6, seed=1), n_edits=3, progress=False)
    summary = S.stdlib_summary(frame)
    assert summary["cuts"] == 6 and summary["edits"] == 18
    assert summary["disagreements"] == 0 and summary["uncategorized"] == 0
    assert summary["true_middles_accepted"]["k"] == 6
    lo, hi = summary["edit_agreement"]["ci95"]
    assert 0 < lo <= 1 == hi
    assert "6 cuts of" in S.summary_markdown(summary, "t")
    json.dumps(R.clean(summary))  # strict JSON


def test_disagreements_are_put_in_known_categories():
    assert S.categorize('x = f"{a}"\n') == "f-string"
    assert S.categorize('x = "\\N{BULLET}"\n') == "unicode escape"
    assert S.categorize("if a:\n\tpass\n") == "tabs"
    assert S.categorize("x = 1\r\n") == "carriage return"
    assert S.categorize("x = 1\n") == "uncategorized"


def test_the_interpreters_standard_library_is_found_and_hashed():
    sources = S.stdlib_sources(max_chars=3000)
    man = S.manifest(sources)
    assert man["files"] == len(sources) > 0 and len(man["sha256"]) == 64
    with pytest.raises(FileNotFoundError):
        S.stdlib_sources("/nonexistent-folder")


def test_pending_bytes_keep_unfinished_characters():
    p = PendingBytes()
    assert p.push(b"\xe3\x83") == "" and p and p.bytes == b"\xe3\x83"
    assert p.push(b"\xbca") == "\u30fca" and not p
    assert p.push(b"\xa2") is None and not p  # a lone continuation byte: invalid
    assert p.push("x") == "x"


def test_rates_carry_n_and_a_wilson_interval():
    assert R.rate_cell(3, 12).startswith("3/12 (25%, CI ")
    assert R.rate_cell(0, 0) == "0/0"
    rows = pd.DataFrame(dict(system="s", arm=["a", "a", "b"], case=["1", "2", "1"],
                             parses=[True, False, True], em=False, passed=[True, None, False],
                             end=["model ended", "budget, not closable", "budget, closable"],
                             output=["x", "y", "z"], body_tokens=[3, 48, 48]))
    t = R.validity_table(rows, ["arm"])
    assert t.n.tolist() == [2, 1] and t.ended_and_parses.tolist() == [1, 0]
    assert t.parse_ci95[0][0] < 0.5 < t.parse_ci95[0][1]
    recs = R.case_records(rows, rows.iloc[:0].assign(problem=[], cut=[], middle=[],
                                                     new_tokens=[]))
    assert [r["closed_by"] for r in recs] == ["model", "budget", "budget"]
    assert recs[1]["forwards"] == 48
