"""The reuse copy mode (issue 32): the prompt index and policies, the cache move with RoPE
re-rotation, the decoder's reuse forwards, and the accounting's prediction of them."""

import pytest
import torch
from costs.test_accounting import DOC, GOLD, predicted, traced

from cadlib.corpora import EditCase, load_corpus
from cadlib.costs import accounting as A
from cadlib.decoding.cache import forward, forward_reusing, new_cache
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.kv_reuse import Policy, PromptIndex, line_starts, parse_policy
from cadlib.decoding.methods import prepare

pytestmark = pytest.mark.usefixtures("one_torch_thread")

POLICIES = ("none", "first=1", "last=4", "first=2,last=8", "all")


def test_policies_parse_and_name_themselves():
    for spec in POLICIES:
        assert parse_policy(spec).name == spec
    assert parse_policy("last=1") == Policy()
    for bad in ("some", "first=-1", "last=0", "first=1,first=2", "every=3"):
        with pytest.raises(ValueError):
            parse_policy(bad)


def test_the_index_finds_each_line_among_the_prompt_ids(tok):
    x = prepare("toy", EditCase("toy", DOC, GOLD, "Fix add."), tok)
    table = token_table(tok)
    index = PromptIndex(x.edit_prompt, DOC, table.token_bytes)
    assert index.found
    for k, line in enumerate(DOC.split("\n"), start=1):
        text = b"".join(table.token_bytes[x.edit_prompt[p]] for p in index.region(k, k))
        assert line.encode() in text
    splice = table.splice_ids("\n".join(DOC.split("\n")[0:2]))
    got = index.matches(splice, 1, 2)
    hits = [(k, p) for k, p in enumerate(got) if p is not None]
    assert hits and all(splice[k] == x.edit_prompt[p] for k, p in hits)
    assert [p for _, p in hits] == sorted(p for _, p in hits)  # in order
    assert PromptIndex([1, 2, 3], DOC, table.token_bytes).matches(splice, 1, 2) == [None] * len(
        splice
    )


def test_policies_recompute_line_starts_and_the_tail(tok):
    table = token_table(tok)
    x = prepare("toy", EditCase("toy", DOC, GOLD, "Fix add."), tok)
    index = PromptIndex(x.edit_prompt, DOC, table.token_bytes)
    splice = table.splice_ids("\n".join(DOC.split("\n")[0:5]))
    none = index.sources(splice, 1, 5, parse_policy("none"))
    assert none[-1] is None and none == index.matches(splice, 1, 5)[:-1] + [None]
    first = index.sources(splice, 1, 5, parse_policy("first=1"))
    assert all(first[k] is None for k in line_starts(splice, table.token_bytes))
    assert index.sources(splice, 1, 5, parse_policy("all")) == [None] * len(splice)
    tail = index.sources(splice, 1, 5, parse_policy("last=4"))
    assert tail[-4:] == [None] * 4


def test_reused_first_layer_keys_equal_the_exact_ones(model):
    """Layer 0's keys depend on the id and its position only: moved and re-rotated, they must
    equal the keys an exact forward computes at the new positions."""
    ids = list(range(100, 140))
    exact, reuse = new_cache(model), new_cache(model)
    forward(model, ids[:20], exact)
    forward(model, ids[5:15], exact)
    forward(model, ids[:20], reuse)
    sources = [5, 6, None, 8, 9, 10, 11, None, 13, None]  # interleaved reused / computed
    forward_reusing(model, ids[5:15], sources, reuse)
    for a, b in zip(exact.layers[0].keys, reuse.layers[0].keys, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(exact.layers[0].values, reuse.layers[0].values)


def test_computing_every_id_is_the_plain_forward(model):
    ids = list(range(200, 230))
    a, b = new_cache(model), new_cache(model)
    forward(model, ids[:12], a)
    forward(model, ids[:12], b)
    torch.testing.assert_close(
        forward(model, ids[12:], a), forward_reusing(model, ids[12:], [None] * 18, b)
    )
    torch.testing.assert_close(a.layers[-1].keys, b.layers[-1].keys)


def test_reuse_needs_m0_without_drafts_and_a_known_mode(model, tok):
    for kw in (dict(min_span=4), dict(drafts=("pld",)), dict(copy_kv="share")):
        with pytest.raises(ValueError):
            CopyDecoder(model, tok, **({"copy_kv": "reuse"} | kw))


def assert_reuse_matches_accounting(model, tok, corpus, case, policies=POLICIES):
    x = prepare(corpus, case, tok)
    tr = transcript(x.program, case.doc, tok)
    exact = CopyDecoder(model, tok).decode(case.doc, prompt_ids=x.edit_prompt, program=x.program)
    for policy in policies:
        decoder, res = CopyDecoder(model, tok, copy_kv="reuse", recompute=policy), None

        def run(decoder=decoder):
            nonlocal res
            res = decoder.decode(case.doc, prompt_ids=x.edit_prompt, program=x.program)
            return res.trace

        got = traced(model, run)
        assert res.text == case.gold  # the copied text is exact by construction
        acc = A.copy_reuse(x.edit_prompt, tr, x.program, case.doc, tok, policy)
        assert got == predicted(acc), policy
        assert res.trace.info.get("reused_ids", 0) == acc.reused
        if policy == "none":
            assert acc.reused > 0
        if policy == "all":
            assert acc.reused == 0 and res.agreement == exact.agreement


def test_reuse_forwards_match_the_accounting_on_a_toy_edit(model, tok):
    assert_reuse_matches_accounting(model, tok, "toy", EditCase("toy", DOC, GOLD, "Fix add."))


def test_reuse_forwards_match_the_accounting_on_code_cases(model, tok, humanevalpack_dir):
    for name in ("heval-fix-py", "heval-fix-js"):
        cases = sorted(load_corpus(name, local_dir=humanevalpack_dir), key=lambda c: len(c.doc))
        assert_reuse_matches_accounting(model, tok, name, cases[len(cases) // 2])


def test_llama_cpp_refuses_reuse_in_one_line_and_says_why():
    from cadlib.decoding.engines import LlamaCppEngine  # the class only: no GGUF loads

    LlamaCppEngine.check_copy_kv(None, "prefill")
    with pytest.raises(NotImplementedError, match="cannot copy KV cells") as err:
        LlamaCppEngine.check_copy_kv(None, "reuse")
    assert "\n" not in str(err.value)
    assert "Y = X + 1" in LlamaCppEngine.check_copy_kv.__doc__


def test_options_are_checked_without_a_model():
    from cadlib.decoding.kv_reuse import check_copy_kv

    assert check_copy_kv("reuse", "transformers", recompute="first=2") == Policy(first=2)
    for args in (
        ("reuse", "llama.cpp"),
        ("share", "transformers"),
        ("reuse", "transformers", True),
    ):
        with pytest.raises(ValueError):
            check_copy_kv(*args)
