"""Where the reuse copy's decisions flip (cadlib.chapters.kv_reuse.run_flips): distances since the
last copy, their buckets, the flip table and its sentence."""

import pandas as pd
import pytest

from cadlib.chapters import kv_reuse as K
from cadlib.chapters.kv_reuse.run_flips import BEFORE_ANY_COPY


def test_distances_count_ids_since_the_last_copied_id():
    kinds = [
        "choice",
        "forced",
        "splice",
        "splice",
        "choice",
        "forced",
        "gen",
        "gen",
        "splice",
        "choice",
    ]
    assert K.run_flips.decision_distances(kinds) == [None, 0, 2, 3, 0]


@pytest.mark.parametrize(
    "d, bucket",
    [
        (None, BEFORE_ANY_COPY),
        (float("nan"), BEFORE_ANY_COPY),
        (0, "0 ids"),
        (3, "1-3 ids"),
        (15, "4-15 ids"),
        (400, "16+ ids"),
    ],
)
def test_buckets(d, bucket):
    assert K.run_flips.distance_bucket(d) == bucket


def rows(policy, agree_since):
    return pd.DataFrame(
        [
            dict(split="test", policy=policy, kind=kind, since_copy=d, agree=a)
            for kind, d, a in agree_since
        ]
    )


def test_the_flip_table_counts_flips_per_kind_and_bucket_and_the_sentence_reads_it():
    r = pd.concat(
        [
            rows(
                "none",
                [
                    ("choice", 0, False),
                    ("choice", 0, True),
                    ("gen", 5, True),
                    ("gen", None, True),
                    ("gen", 20, False),
                ],
            ),
            rows("all", [("choice", 0, True)]),
            rows("none", [("choice", 0, False)]).assign(split="dev"),
        ]
    )
    t = K.run_flips.flip_table(r).set_index(["policy", "kind", "after_copy"])
    assert t.loc[("none", "choice", "0 ids"), "flips"] == 1
    assert t.loc[("none", "choice", "0 ids"), "decisions"] == 2
    assert t.loc[("none", "gen", "16+ ids"), "flip_rate"] == 1
    text = K.text.flip_markdown(K.run_flips.flip_table(r), "none", min_decisions=2)
    assert "2 of 5 held-out decisions flipped (1 at `choice` decisions, 1 at `gen`" in text
    assert "densest at `choice` decisions 0 ids after a copy: 50.0% of 2" in text
    assert "against 33.3% of 3 elsewhere" in text
    assert (
        K.text.flip_markdown(K.run_flips.flip_table(r), "all")
        == "Under `all` no held-out decision flipped."
    )


def test_agreement_rows_carry_the_distance_since_the_last_copy(model, tok):
    from cadlib.corpora import EditCase
    from cadlib.decoding.methods import prepare

    doc = "def add(a, b):\n    return a - b\n\n\nprint(add(1, 2))\n"
    x = prepare("heval-fix-java", EditCase("t", doc, doc.replace("a - b", "a + b"), "Add."), tok)
    got = K.run.case_agreement(model, tok, x, ("none",))
    assert got.since_copy.isna().any() and (got.since_copy.dropna() >= 0).all()
    assert K.run_flips.flip_table(K.run.with_split(got)).decisions.sum() == len(got)
