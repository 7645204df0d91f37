"""Token-level greedy longest-match cover (paper §3 "Copy ceiling" (b), Appendix D)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib.oracle import TokenCover, greedy_cover, longest_matches, token_cover

ids = st.lists(st.integers(0, 4), max_size=40)  # a tiny alphabet: many repeated matches
min_span = st.integers(1, 6)


def brute_longest(doc, gold, i):
    """Longest prefix of gold[i:] that occurs in doc, by brute force."""
    best = 0
    for j in range(len(doc)):
        k = 0
        while i + k < len(gold) and j + k < len(doc) and gold[i + k] == doc[j + k]:
            k += 1
        best = max(best, k)
    return best


def test_identical_sequences_are_one_copy():
    cover = token_cover([1, 2, 3, 4], [1, 2, 3, 4], min_span=2)
    assert cover.copies == ((0, 0, 4),)
    assert cover.copy_fraction == 1.0 and cover.n_generated == 0


def test_disjoint_sequences_copy_nothing():
    cover = token_cover([1, 2, 3], [7, 8], min_span=1)
    assert cover.copies == () and cover.copy_fraction == 0.0 and cover.n_generated == 2


def test_matches_shorter_than_min_span_are_generated():
    doc, gold = [1, 2, 3, 9, 5, 6, 7, 8], [1, 2, 3, 0, 5, 6, 7, 8]
    assert token_cover(doc, gold, 3).copies == ((0, 0, 3), (4, 4, 4))
    assert token_cover(doc, gold, 4).copies == ((4, 4, 4),)
    assert token_cover(doc, gold, 5).copies == ()


def test_greedy_takes_the_longest_match_from_the_left():
    # from gold position 0 the longest match is [1, 2] (doc 0); the greedy step then
    # continues at gold position 2, although [2, 3, 4, 5] would have been longer.
    doc, gold = [1, 2, 0, 2, 3, 4, 5], [1, 2, 3, 4, 5]
    assert token_cover(doc, gold, 2).copies == ((0, 0, 2), (2, 4, 3))
    assert token_cover(doc, gold, 3).copies == ((1, 3, 4),)  # 1 is generated first


def test_ties_go_to_the_leftmost_document_position():
    assert token_cover([5, 6, 5, 6], [5, 6], 1).copies == ((0, 0, 2),)


def test_empty_inputs():
    assert token_cover([], [1, 2], 1) == TokenCover((), 2, 1)
    empty = token_cover([1, 2], [], 1)
    assert empty.copies == () and empty.copy_fraction == 1.0


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "8"])
def test_min_span_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="min_span must be an integer >= 1"):
        token_cover([1], [1], bad)


@settings(max_examples=300)
@given(ids, ids, min_span)
def test_cover_is_a_valid_greedy_longest_match_cover(doc, gold, m):
    cover = token_cover(doc, gold, m)
    assert cover.reconstruct(doc, gold) == gold
    at = 0
    for g, d, length in cover.copies:
        assert g >= at and length >= m
        assert gold[g : g + length] == doc[d : d + length]
        assert length == brute_longest(doc, gold, g)  # the longest match, no shorter
        for skipped in range(at, g):  # generated positions: no match of m tokens starts there
            assert brute_longest(doc, gold, skipped) < m
        at = g + length
    for skipped in range(at, len(gold)):
        assert brute_longest(doc, gold, skipped) < m
    assert cover.n_copied + cover.n_generated == len(gold) == cover.n_gold


@given(ids, ids)
def test_min_span_one_copies_every_gold_token_that_occurs_in_the_document(doc, gold):
    cover = token_cover(doc, gold, 1)
    assert cover.n_copied == sum(1 for t in gold if t in set(doc))


@given(ids, ids)
def test_longest_match_table_agrees_with_brute_force(doc, gold):
    best_len, best_pos = longest_matches(doc, gold)
    for i in range(len(gold)):
        assert best_len[i] == brute_longest(doc, gold, i)
        n, j = int(best_len[i]), int(best_pos[i])
        assert gold[i : i + n] == doc[j : j + n]


@given(ids, ids)
def test_one_table_serves_every_min_span(doc, gold):
    table = longest_matches(doc, gold)
    for m in (1, 2, 4, 8):
        assert greedy_cover(*table, m) == token_cover(doc, gold, m)
