"""The SFT pilot (paper §5, Tables 6, 7): split, training data, metrics, a training smoke test."""

import math

import pytest

from cadlib import sft
from cadlib.corpora import EditCase, load_corpus
from cadlib.grammar import Copy, Gen, Program
from cadlib.oracle import oracle_program

# --------------------------------------------------------------------------------------------
# The split
# --------------------------------------------------------------------------------------------


def fake_corpus(prefix, n):
    return [EditCase(f"{prefix}/{k}", "a\nb", "a\nc", "fix") for k in range(n)]


def test_split_sizes_follow_the_paper():
    corpora = {
        "heval-fix-py": fake_corpus("Python", 164),
        "heval-fix-js": fake_corpus("JavaScript", 164),
        "probeedit": fake_corpus("probeedit/doc/op", 154),
    }
    split = sft.make_split(corpora, seed=0)
    sizes = {n: (e["n_train"], e["n_held_out"]) for n, e in split["corpora"].items()}
    assert sizes == {"heval-fix-py": (131, 33), "heval-fix-js": (131, 33), "probeedit": (123, 31)}
    assert len(sft.training_cases(split, "py", corpora)) == 131
    assert len(sft.training_cases(split, "combined", corpora)) == 385  # the paper's Combined


def test_split_is_disjoint_complete_and_stable():
    cases = fake_corpus("Python", 164)
    ids = [c.id for c in cases]
    held = sft.held_out_ids(ids, seed=0)
    assert held == sft.held_out_ids(list(reversed(ids)), seed=0)[::-1]  # order-free rule
    assert sft.held_out_ids(ids, seed=0) == held  # same seed, same list
    assert sft.held_out_ids(ids, seed=1) != held
    split = sft.make_split({"heval-fix-py": cases}, seed=0)["corpora"]["heval-fix-py"]
    assert set(split["train"]).isdisjoint(split["held_out"])
    assert sorted(split["train"] + split["held_out"]) == sorted(ids)


def test_translations_of_a_task_share_a_side():
    py = [f"Python/{k}" for k in range(164)]
    js = [f"JavaScript/{k}" for k in range(164)]
    held_py = {i.split("/")[1] for i in sft.held_out_ids(py)}
    held_js = {i.split("/")[1] for i in sft.held_out_ids(js)}
    assert held_py == held_js


def test_training_cases_refuse_a_leak():
    corpora = {"heval-fix-py": fake_corpus("Python", 10)}
    split = sft.make_split(corpora, seed=0)
    entry = split["corpora"]["heval-fix-py"]
    entry["train"].append(entry["held_out"][0])
    entry["n"] += 1  # pretend the corpus had it twice
    corpora["heval-fix-py"] = corpora["heval-fix-py"] + [corpora["heval-fix-py"][0]]
    with pytest.raises((AssertionError, ValueError)):
        sft.training_cases(split, "py", corpora)


def test_saved_split_equals_the_seeded_function(humanevalpack_dir):
    saved = sft.load_split()
    corpora = {name: load_corpus(name, local_dir=humanevalpack_dir) for name in sft.SPLIT_CORPORA}
    assert sft.make_split(corpora, seed=saved["seed"], fraction=saved["fraction"]) == saved
    py = saved["corpora"]["heval-fix-py"]
    assert (py["n_train"], py["n_held_out"]) == (131, 33)
    held = set(py["held_out"])
    assert not held & set(py["train"])


def test_unknown_names_fail_loudly():
    with pytest.raises(ValueError, match="train set"):
        sft.training_cases({"corpora": {}}, "all", {})
    with pytest.raises(ValueError, match="part"):
        sft.split_cases({"corpora": {}}, "heval-fix-py", [], "test")


# --------------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------------


def test_wilson_ci_matches_known_values():
    lo, hi = sft.wilson_ci(12, 99)  # paper Table 6: 12/99 -> [7.0, 20.1] (rounded differently)
    assert (round(100 * lo, 1), round(100 * hi, 1)) == (7.1, 20.0)
    lo, hi = sft.wilson_ci(0, 33)  # paper: [0.0, 10.4]
    assert lo == 0.0 and round(100 * hi, 1) == 10.4
    lo, hi = sft.wilson_ci(17, 99)  # paper: [11.0, 26.0]
    assert (round(100 * lo, 1), round(100 * hi, 1)) == (11.0, 25.8)
    # closed form: (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
    z, k, n = 1.959963984540054, 5, 20
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    expected = ((centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n))
    assert sft.wilson_ci(k, n) == pytest.approx(expected, abs=1e-9)
    assert all(math.isnan(x) for x in sft.wilson_ci(0, 0))


DOC = "\n".join(f"line {k}" for k in range(1, 11))  # 10 lines
GOLD = DOC.replace("line 5", "line five")
CASE = EditCase("toy/1", DOC, GOLD, "Spell out five.")
ORACLE = Program([Copy(1, 4), Gen("line five"), Copy(6, 10)])


def score(text):
    return sft.score_program(CASE, text, system="test")


def test_the_oracle_is_what_we_think():
    assert oracle_program(DOC, GOLD) == ORACLE


@pytest.mark.parametrize(
    "program, start_acc, end_acc, category",
    [
        (ORACLE, 1.0, 1.0, "EM (fully correct)"),
        (Program([Copy(1, 4), Gen("line 5!"), Copy(6, 10)]), 1.0, 1.0,
         "Spans all correct, <gen>-text wrong"),
        (Program([Copy(1, 4), Gen("line five"), Copy(6, 10), Copy(1, 1)]), 1.0, 1.0,
         "Spans all correct, <gen>-text wrong"),  # op-count mismatch
        (Program([Copy(1, 3), Gen("line five"), Copy(6, 10)]), 1.0, 0.5,
         "Start correct, end off"),
        (Program([Copy(2, 4), Gen("line five"), Copy(7, 10)]), 0.0, 1.0,
         "End correct, start off"),
        (Program([Copy(1, 5), Gen("x"), Copy(5, 10)]), 0.5, 0.5, "Both endpoints off"),
        (Program([Gen(GOLD)]), 0.0, 0.0, "EM (fully correct)"),  # EM without any copy
        (Program([Copy(1, 4)]), 0.5, 0.5, "Both endpoints off"),  # missing copy counts wrong
    ],
)  # fmt: skip
def test_endpoint_accuracy_and_taxonomy(program, start_acc, end_acc, category):
    r = score(program.render())
    assert r.parsed
    assert (r.start_acc, r.end_acc) == (start_acc, end_acc)
    assert r.category == category


def test_scores_of_an_exact_program():
    r = score(ORACLE.render())
    assert r.em and r.trimmed_em and r.program_em and not r.out_of_range
    assert r.output == GOLD
    gen_only = score(Program([Gen(GOLD)]).render())
    assert gen_only.em and not gen_only.program_em  # another decomposition of the same gold


def test_parse_failure_and_out_of_range():
    bad = score('<program><copy lines="1-4"/><gen>\nx\n')
    assert not bad.parsed and bad.output is None and bad.category == "Parse failure"
    assert not bad.em and bad.n_oracle_copies == 2
    clipped = score(Program([Copy(1, 4), Gen("line five"), Copy(6, 12)]).render())
    assert clipped.out_of_range and clipped.em  # clipped like the paper's resolver


def test_trailing_newline_convention():
    assert sft.outputs_equal("a\nb\n", "a\nb")
    assert not sft.outputs_equal("a\nb\n\n", "a\nb")
    assert not sft.outputs_equal(" a", "a")


def test_summary_and_taxonomy_counts():
    programs = [
        ORACLE,
        Program([Copy(1, 3), Gen("line five"), Copy(6, 10)]),
        Program([Copy(2, 4), Gen("line five"), Copy(7, 10)]),
    ]
    results = []
    for seed, p in enumerate(programs):
        r = score(p.render())
        r.extra["seed"] = seed % 2
        r.wall_s = 0.1 * (seed + 1)
        results.append(r)
    results.append(score("<program>"))
    s = sft.summarize(results)
    assert (s["n"], s["em"], s["parsed"], s["program_em"]) == (4, 1, 3, 1)
    assert s["em_ci"] == pytest.approx(sft.wilson_ci(1, 4))
    assert s["start_acc"] == pytest.approx((2 + 2 + 0 + 0) / 8)
    assert s["end_acc"] == pytest.approx((2 + 1 + 2 + 0) / 8)
    assert s["wall_ms_median"] == pytest.approx(200.0)
    counts = sft.taxonomy(results)
    assert list(counts) == list(sft.TAXONOMY)
    assert sum(counts.values()) == 4
    assert counts["Parse failure"] == 1 and counts["EM (fully correct)"] == 1
