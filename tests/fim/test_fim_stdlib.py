"""The differential check at scale (cadlib.fim.stdlib, cadlib.fim.disagreements), chapter 8's
run helpers (cadlib.chapters.fim_constraint.run) and the one home of pending UTF-8 bytes
(cadlib.fim.mask.PendingBytes)."""

import ast
import json

import pandas as pd
import pytest

from cadlib.chapters import fim_constraint as FX
from cadlib.fim import disagreements as D
from cadlib.fim import stdlib as S
from cadlib.fim.mask import PendingBytes
from cadlib.metrics import rate_cell

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
        assert SOURCES[c["file"]][c["a"] : c["b"]] == c["middle"]
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
    json.dumps(FX.run.clean(summary))  # strict JSON


def test_disagreements_are_placed_and_categorized_by_the_edit():
    program = 'x = f"a{b!r:>{w}}c" + "{d}"\n'
    assert D.fstring_fields(program) == [(7, 17)]
    assert D.edit_location(program, 8, 9) == "f-string field"
    assert D.edit_location(program, 22, 23) == "elsewhere"  # braces in a plain string
    assert D.edit_location(program, 5, 6) == "elsewhere"  # the f-string's literal text
    # a category only for what is at the edit, not anywhere in the program
    assert D.categorize('x = "\\N{BULLET}"\n', 8, 9) == "unicode escape"
    assert D.categorize('x = "\\N{BULLET}"\ny = 1\n', 17, 18) == "uncategorized"
    assert D.categorize("if a:\n\tpass\n", 7, 8) == "tabs"
    assert D.categorize("if a:\n\tpass\nx = 1\n", 13, 14) == "uncategorized"
    assert D.categorize("x = 1\n", 0, 1, "insert '\\t' at 0") == "tabs"
    assert D.categorize("x = 1\r\n", 0, 1) == "carriage return"
    assert D.categorize('x = f"{a}"\n', 7, 8) == "uncategorized"  # fields' syntax is checked
    assert D.categorize('x = f"{a}" + b\n', 13, 14) == "uncategorized"  # not in a field
    assert D.edit_span("abcdef", "abXcdef", 2) == (1, 3)
    assert D.edit_span("abcdef", "abdef", 2) == (2, 3)


def test_summary_counts_false_rejections_and_uncategorized_as_failures():
    rows = pd.DataFrame(
        dict(
            check=["true_middle", "edit", "edit", "edit"],
            file="a.py",
            left_cut="boundary",
            right_cut="boundary",
            viable=True,
            truth=[True, True, False, False],
            ours=[True, False, True, True],
            where=["", "elsewhere", "f-string field", "elsewhere"],
            category=["", "tabs", "uncategorized", "unicode escape"],
        )
    )
    rows["agree"] = rows.truth == rows.ours
    s = S.stdlib_summary(rows)
    assert s["disagreements"] == 3 and s["false_rejections"] == 1
    assert s["uncategorized"] == 1 and s["failures"] == 2
    assert s["disagreements_by_where"] == {"elsewhere": 2, "f-string field": 1}


ISSUE_34_CUTS = [  # (file, a, b, edit at i of the middle): false rejections at e91294e
    ("numbers.py", 1884, 2038, lambda m: m[:2] + m[3:]),  # delete '\n' at 2
    ("numbers.py", 9724, 9734, lambda m: m[:7] + "@" + m[8:]),  # replace 'a' by '@' at 7
    ("contextlib.py", 1323, 1545, lambda m: m[:118] + m[115:118] + m[118:]),  # duplicate '@ab'
]


@pytest.fixture(scope="module")
def stdlib():
    return S.stdlib_sources()


@pytest.mark.parametrize("file,a,b,edit", ISSUE_34_CUTS)
def test_the_false_rejections_of_issue_34_are_accepted(stdlib, file, a, b, edit):
    src = stdlib[file]
    s, e = S._window(S._boundaries(src), a, b, 1500, 1500)
    left, middle, right = src[s:a], src[a:b], src[b:e]
    edited = edit(middle)
    assert edited != middle and "@" in edited
    c = S.FIMConstraint(left, right)
    assert c.feed(edited) and c.can_end()
    assert S.python_accepts(left + edited + right)


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
    assert rate_cell(3, 12).startswith("3/12 (25%, CI ")
    assert rate_cell(0, 0) == "0/0"
    rows = pd.DataFrame(
        dict(
            system="s",
            arm=["a", "a", "b"],
            case=["1", "2", "1"],
            parses=[True, False, True],
            em=False,
            passed=[True, None, False],
            end=["model ended", "budget, not closable", "budget, closable"],
            output=["x", "y", "z"],
            body_tokens=[3, 48, 48],
        )
    )
    t = FX.run.validity_table(rows, ["arm"])
    assert t.n.tolist() == [2, 1] and t.ended_and_parses.tolist() == [1, 0]
    assert t.parse_ci95[0][0] < 0.5 < t.parse_ci95[0][1]
    recs = FX.run.case_records(
        rows, rows.iloc[:0].assign(problem=[], cut=[], middle=[], new_tokens=[])
    )
    assert [r["closed_by"] for r in recs] == ["model", "budget", "budget"]
    assert recs[1]["forwards"] == 48
