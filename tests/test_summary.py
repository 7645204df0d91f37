import math

import pytest

from cadlib import summary as S
from cadlib.results import repo_root


def record(numbers, paper=None, profile="cpu"):
    return {"numbers": numbers, "paper": paper or {}, "profile": profile, "hardware": {}}


def test_lookup_follows_dotted_paths_and_keys_with_spaces():
    tree = {"a": {"pooled (paper's three)": {"byte-exact": 3}}, "x.y": {"z": 1}}
    assert S.lookup(tree, "a.pooled (paper's three).byte-exact") == 3
    assert S.lookup(tree, "x.y.z") == 1
    with pytest.raises(KeyError):
        S.lookup(tree, "a.missing")


def test_status_marks():
    results = {
        "losslessness": record({"round_trip": {"pooled (paper's three)": {"byte-exact": 482}},
                                "escape_fuzz": {"round_trip": 9999}}),
    }  # fmt: skip
    table = S.headline_table(results).set_index("figure")
    assert table.loc["oracle round trip, byte-exact (pooled 3 corpora)", "status"] == S.REPRODUCED
    assert table.loc["escape fuzz round trips (of 10,000)", "status"] == S.UNEXPLAINED
    assert (table[table.chapter == "ceiling"].status == S.NOT_RUN).all()
    assert math.isclose(table.loc["escape fuzz round trips (of 10,000)", "ratio"], 0.9999)


def test_explained_differences_carry_their_reason():
    h = next(h for h in S.HEADLINES if h.why)
    results = {h.chapter: record(_nested(h.ours, (h.paper or 1) * 10 / h.scale))}
    row = S.headline_table(results).set_index("figure").loc[h.label]
    assert row.status == S.DIFFERS and row.why == h.why


def _nested(dotted, value):
    out = value
    for key in reversed(dotted.split(".")):
        out = {key: out}
    return out


def test_paper_figures_agree_with_what_the_chapters_recorded():
    """Each headline's paper figure equals the chapter's own record of it (no drift)."""
    results = S.load_all(repo_root() / "results")
    for h in S.HEADLINES:
        if h.paper_key and h.chapter in results:
            assert S.lookup(results[h.chapter]["paper"], h.paper_key) == pytest.approx(
                h.paper, abs=1e-9
            ), h.label
