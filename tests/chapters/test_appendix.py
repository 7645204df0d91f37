"""Appendices K, L, M: tokenizer portability, the pointer-decoder cost, speculative decoding."""

import math

import pytest

from cadlib import paper
from cadlib.cases import EditCase
from cadlib.chapters.ceiling import run_estimates as E
from cadlib.chapters.ceiling import text as ceiling_text
from cadlib.chapters.losslessness import run_portability as K
from cadlib.chapters.perturbation.run import anchor_counts
from cadlib.costs.spans import line_cover
from cadlib.models.tokenizer import QWEN36, qwen25_tokenizer, reference_agreement

DOC = "def f(x):\n    y = x + 1\n    return y\n"
GOLD = "def f(x):\n    y = x + 2\n    return y\n"
CASES = [EditCase("t/0", DOC, GOLD, ""), EditCase("t/1", "a\nb\nc\n", "a\nB\nc\n", "")]


def test_qwen25_short_literals_are_single_tokens_and_gen_close_has_three_ids():
    tok = qwen25_tokenizer()
    counts = K.literal_counts(K.literal_table(tok))
    assert counts["short_single"] == counts["short_total"] == len(paper.LITERAL_IDS)
    fsm = K.fsm_summary(tok)
    assert len(fsm["gen_close"]) == len(paper.APPENDIX_K["gen_close_ids"])
    assert fsm["gen_close"][:2] == list(paper.APPENDIX_K["gen_close_ids"][:2])
    assert fsm["gen_close_merges_newline"]  # ">\n" is one Qwen2.5 id


def test_qwen36_loads_offline_and_transcripts_round_trip():
    toks, missing = K.load([QWEN36])
    assert not missing
    check = K.transcript_check(CASES, toks[QWEN36])
    assert check["accepted"] == check["round_trip"] == len(CASES)


def test_transcript_check_counts_merges_across_literals_on_qwen25():
    check = K.transcript_check(CASES, qwen25_tokenizer())
    assert check["accepted"] == check["round_trip"] == len(CASES)
    assert check["merges"].get("<program> end", 0) == len(CASES)  # "<program>" + "\n" merge


def test_unloadable_tokenizer_is_reported_not_raised():
    toks, missing = K.load(["no-such-org/no-such-tokenizer"])
    assert not toks and "no-such-org/no-such-tokenizer" in missing


@pytest.fixture(scope="module")
def stats():
    return E.op_stats(CASES, line_cover(CASES, qwen25_tokenizer(), progress=False))


def test_composition_without_fixed_costs_is_bnd_exact(stats):
    from cadlib.costs.bounds import bound_exact

    N, s = [1, 8, 512], [1.0, 6.79, 90.5]
    ours = E.composition_speedup(stats, N, s, 1.0, gen_fixed=0, copy_fixed=0)
    assert ours == pytest.approx(bound_exact(stats.T, stats.T_gen, stats.spans, N, s))
    assert E.composition_speedup(stats, N, s, 2.5) > E.composition_speedup(stats, N, s, 1.0)
    with pytest.raises(ValueError):
        E.composition_speedup(stats, N, s, 0.0)


def test_pointer_table_orders_the_decoders(stats):
    table = E.pointer_table({"t": stats}, {"c": ([1, 8, 512], [1.0, 6.79, 90.5])})
    row = table.iloc[0]
    assert row["span pointer"] >= row["Copy-as-Decode"]  # N/s(N) >= 0 per op
    assert math.isclose(row["paper advantage per op"], paper.APPENDIX_L["pointer_advantage_per_op"])
    assert "0.15" in ceiling_text.pointer_finding(table, "c")


def test_op_stats_rejects_mismatched_covers():
    with pytest.raises(ValueError):
        E.op_stats(CASES, [])


def test_perturb_prose_counts_anchors():
    counts = anchor_counts(CASES)
    assert counts["cases"] == counts["last_line_empty"] == counts["last_copy_ends_last"] == 2
    assert counts["copies_start_line_1"] == 2


def _vocab_loaded(name):
    toks, missing = K.load([name])
    if missing:
        pytest.skip(f"{name} not fetched (make vocab): {missing[name]}")
    return toks[name]


def test_deepseek_coder_splits_the_three_literals_the_paper_names():
    tok = _vocab_loaded("deepseek-coder")
    agree, n = reference_agreement("deepseek-coder", tok)
    assert agree >= n - 1  # the conversion matches llama.cpp's expected ids
    n_ids = K.literal_counts(K.literal_table(tok))["n_ids"]
    assert all(n_ids[lit] == 2 for lit in paper.APPENDIX_K["deepseek_two_id_literals"])
    check = K.transcript_check(CASES, tok)
    assert check["accepted"] == check["round_trip"] == len(CASES)


def test_llama3_encodes_every_short_literal_as_one_token():
    tok = _vocab_loaded("llama-3")
    counts = K.literal_counts(K.literal_table(tok))
    assert counts["short_single"] == counts["short_total"]
