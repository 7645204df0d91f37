"""Issue 51's selection rules for the reuse copy: seams, key deviation at a check layer, both
(cadlib.decoding.kv_reuse.select_sources and cadlib.decoding.kv_select)."""

import pytest
import torch
from costs.test_accounting import DOC, GOLD

from cadlib.corpora import EditCase
from cadlib.decoding.cache import forward, new_cache
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.fsm import token_table
from cadlib.decoding.kv_reuse import (
    Policy,
    PromptIndex,
    check_copy_kv,
    is_seam,
    parse_policy,
    select_sources,
    top_share,
)
from cadlib.decoding.kv_select import SelectingDecoder, key_deviations, top_two_gap
from cadlib.decoding.methods import prepare

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_rules_parse_and_name_themselves():
    specs = ("seams=4", "deviation=0.15", "deviation=0.3@2", "seams=8,deviation=0.3")
    for spec in (*specs, "margin=0.5", "seams=16,margin=2"):
        assert parse_policy(spec).name == spec
    assert parse_policy("margin=1.5") == Policy(margin=1.5) and Policy(margin=1).needs_context
    assert parse_policy("deviation=0.2@1") == Policy(deviation=0.2, layer=1)
    assert parse_policy("seams=4,deviation=.5") == Policy(seams=4, deviation=0.5)
    bad_specs = ("seams=-1", "deviation=1.5", "deviation=0.1@0", "seams=2,seams=3", "dev=0.1")
    for bad in (*bad_specs, "margin=-1", "margin=1,margin=2"):
        with pytest.raises(ValueError):
            parse_policy(bad)


def test_a_seam_is_any_copy_that_does_not_continue_the_previous_line():
    copy = dict(kind="copy", lines=(3, 5))
    assert not is_seam(copy, (6, 9))  # contiguous: continues the document
    assert is_seam(copy, (7, 9))  # a line jump (line 6 deleted)
    assert is_seam(copy, (3, 4))  # a repeat
    assert is_seam(dict(kind="gen", lines=None), (6, 9))  # after generated text
    assert is_seam(None, (1, 4)) and is_seam(dict(kind="prompt", lines=None), (1, 4))


def test_seams_recompute_the_first_ids_only_at_a_seam():
    matches = list(range(10, 20))
    at_seam = select_sources(matches, [0], Policy(seams=3), seam=True)
    assert at_seam == [None, None, None, *range(13, 19), None]
    assert select_sources(matches, [0], Policy(seams=3), seam=False) == [*range(10, 19), None]


def test_top_share_picks_the_largest_deviations_of_matched_ids():
    matches = [None, 1, 2, 3, 4, 5, 6, 7, 8, 9]  # 9 matched
    dev = [99.0, 0.1, 5.0, 0.2, 3.0, 0.0, 4.0, 0.3, 0.4, 0.5]  # the unmatched id never counts
    assert top_share(matches, dev, 1 / 3) == [2, 4, 6]  # round(3.0) = 3, the three largest
    assert top_share(matches, dev, 0.0) == []
    assert top_share(matches, dev, 1.0) == list(range(1, 10))
    got = select_sources(matches, [0], Policy(deviation=1 / 3), deviations=dev)
    assert [k for k, s in enumerate(got) if s is None] == [0, 2, 4, 6, 9]  # + the last id
    share = sum(s is None for s, m in zip(got, matches, strict=True) if m is not None) / 9
    assert share == pytest.approx(4 / 9)  # 3 by deviation, the last id always
    with pytest.raises(ValueError):
        select_sources(matches, [0], Policy(deviation=0.5))  # no deviations given


def test_combined_rules_take_the_union():
    matches = list(range(10))
    dev = [0, 0, 0, 0, 0, 0, 0, 9, 0, 0]
    got = select_sources(matches, [0], Policy(seams=2, deviation=0.1), seam=True, deviations=dev)
    assert [k for k, s in enumerate(got) if s is None] == [0, 1, 7, 9]


def test_context_rules_need_the_selecting_decoder(tok):
    table = token_table(tok)
    x = prepare("toy", EditCase("toy", DOC, GOLD, "Fix add."), tok)
    index = PromptIndex(x.edit_prompt, DOC, table.token_bytes)
    splice = table.splice_ids("\n".join(DOC.split("\n")[0:2]))
    with pytest.raises(ValueError, match="SelectingDecoder"):
        index.sources(splice, 1, 2, parse_policy("seams=2"))
    rule = check_copy_kv("reuse", "transformers", recompute="seams=4,deviation=0.2")
    assert rule == Policy(seams=4, deviation=0.2)  # cad edit runs it in a SelectingDecoder


def test_key_deviation_is_zero_at_layer_0_and_leaves_the_cache_alone(model):
    """Layer 0's keys depend on the id and its position only, so re-rotated they deviate by
    rounding; layer 1's see the new context (the first 20 ids, not 5) and deviate."""
    ids = list(range(100, 140))
    cache = new_cache(model)
    forward(model, ids[:20], cache)
    before = [(x.keys.clone(), x.values.clone()) for x in cache.layers]
    sources = [None, *range(6, 15)]
    zero = key_deviations(model, cache, ids[5:15], sources, layer=0)
    one = key_deviations(model, cache, ids[5:15], sources, layer=1)
    assert float(zero.max()) < 1e-3 and zero[0] == 0
    assert float(one[1:].min()) > 10 * float(zero.max()) and one[0] == 0
    for x, (k, v) in zip(cache.layers, before, strict=True):
        torch.testing.assert_close(x.keys, k, rtol=0, atol=0)
        torch.testing.assert_close(x.values, v, rtol=0, atol=0)


def test_the_selecting_decoder_is_the_reuse_decoder_on_windows_and_counts_its_checks(model, tok):
    x = prepare("toy", EditCase("toy", DOC, GOLD, "Fix add."), tok)
    kw = dict(prompt_ids=x.edit_prompt, program=x.program)
    plain = CopyDecoder(model, tok, copy_kv="reuse", recompute="first=1").decode(DOC, **kw)
    same = SelectingDecoder(model, tok, recompute="first=1").decode(DOC, **kw)
    assert same.text == plain.text == GOLD
    assert same.trace.info["reused_ids"] == plain.trace.info["reused_ids"] > 0
    assert same.trace.info["seams"] >= 1 and "check_ids" not in same.trace.info
    every = SelectingDecoder(model, tok, recompute="deviation=1").decode(DOC, **kw)
    assert every.text == GOLD and every.trace.info["reused_ids"] == 0
    assert (
        every.trace.info["check_ids"] >= every.n_spliced and every.trace.info["check_layers"] == 1
    )
    with pytest.raises(ValueError):
        SelectingDecoder(model, tok, copy_kv="prefill")


def test_copy_decoder_selects_only_for_a_context_rule(model, tok):
    from cadlib.decoding.kv_select import copy_decoder

    assert type(copy_decoder(model, tok, "reuse", "seams=2")) is SelectingDecoder
    assert type(copy_decoder(model, tok, "reuse", "deviation=0.2@2")) is SelectingDecoder
    assert type(copy_decoder(model, tok, "reuse", "first=8,last=64")) is CopyDecoder
    assert type(copy_decoder(model, tok)) is CopyDecoder


def test_the_gap_is_taken_over_the_allowed_ids_only():
    from cadlib.decoding.fsm import Allowed

    logits = torch.tensor([9.0, 1.0, 4.0, 3.0])
    assert top_two_gap(Allowed(ids=torch.tensor([1, 2, 3])), logits) == 1.0
    assert top_two_gap(Allowed(banned=torch.tensor([0]), vocab_size=4), logits) == 1.0
    assert top_two_gap(Allowed(ids=torch.tensor([2])), logits) == float("inf")


def _logits_at_decisions(decoder, x):
    seen = []
    decoder.on_decision = lambda allowed, logits: seen.append(logits.detach().clone())
    return seen, decoder.decode(DOC, prompt_ids=x.edit_prompt, program=x.program)


def test_the_margin_gate_decides_on_exact_logits_and_counts_its_cost(model, tok):
    """A gate that always fires (margin beyond any gap) makes every decision on exact logits,
    where plain reuse differs from the exact splice; a zero margin is no gate."""
    x = prepare("toy", EditCase("toy", DOC, GOLD, "Fix add."), tok)
    exact, _ = _logits_at_decisions(CopyDecoder(model, tok), x)
    reuse, plain = _logits_at_decisions(SelectingDecoder(model, tok), x)
    gated, res = _logits_at_decisions(SelectingDecoder(model, tok, recompute=Policy(margin=1e9)), x)
    assert len(exact) == len(reuse) == len(gated) and res.text == GOLD
    assert max(float((e - r).abs().max()) for e, r in zip(exact, reuse, strict=True)) > 1e-4
    for e, g in zip(exact, gated, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-4)
    info = res.trace.info
    assert info["fallbacks"] == res.trace.forwards_by_kind()["fallback"] >= 1
    assert 0 < info["fallback_reused"] <= info["reused_ids"] == plain.trace.info["reused_ids"]
    assert info["fallback_ids"] >= info["fallback_reused"] and "fallbacks" not in plain.trace.info
    off, _ = _logits_at_decisions(SelectingDecoder(model, tok, recompute=Policy(margin=0)), x)
    for r, o in zip(reuse, off, strict=True):
        torch.testing.assert_close(o, r, rtol=0, atol=0)
