"""The decoder's drafts (issue 17 §3): prompt lookup inside bodies and speculative op headers,
verified in the forward that decides their first id. Forced runs produce the plain decoder's
output byte for byte and exactly the forwards the accounting predicts for the composition
(:func:`cadlib.costs.accounting.composed`); the engines return the logits a verify forward needs."""

import pytest
import torch
from costs.test_accounting import observed, predicted
from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib.corpora import EditCase, load_corpus
from cadlib.costs import accounting as A
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.drafts import Drafter, composition_drafts
from cadlib.decoding.engines import as_engine
from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.methods import prepare
from cadlib.decoding.prompt_lookup import NgramIndex, lookup_draft, ngram_index

pytestmark = pytest.mark.usefixtures("one_torch_thread")

DOC = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
GOLD = "a = 1\nb = 2\nc = 30\nd = 4\ne = 5\n"
DRAFTS = {s: composition_drafts(s) for s in A.COMPOSITIONS if "no-JF" not in s}


def forced_forwards(model, tok, case, drafts, draft_max_ids="engine"):
    """``(result, [(kind, ids fed, context)])`` of a forced run with ``drafts``."""
    x = prepare("t", case, tok)
    decoder = CopyDecoder(model, tok, drafts=drafts, draft_max_ids=draft_max_ids)
    with observed(model) as seen:
        res = decoder.decode(case.doc, prompt_ids=x.edit_prompt, program=x.program)
    fw = res.trace.forwards
    assert [f.n_tokens for f in fw] == [n for n, _ in seen]
    return res, [(f.kind, f.n_tokens, ctx) for f, (_, ctx) in zip(fw, seen, strict=True)]


def assert_drafts_match_the_accounting(model, tok, case):
    x = prepare("t", case, tok)
    tr = transcript(x.program, case.doc, tok)
    plain = CopyDecoder(model, tok).decode(case.doc, prompt_ids=x.edit_prompt, program=x.program)
    for setting, drafts in DRAFTS.items():
        res, got = forced_forwards(model, tok, case, drafts)
        assert res.text == case.gold and res.transcript == plain.transcript, setting
        acc = A.composed(x.edit_prompt, tr, x.program, case.doc, tok, setting)
        assert got == predicted(acc), (case.id, setting)
        info = res.trace.info
        assert info["draft_accepted_gen"] <= info["draft_accepted"] <= info["draft_ids"]


def test_forced_drafts_run_the_predicted_forwards_on_a_toy_edit(model, tok):
    assert_drafts_match_the_accounting(model, tok, EditCase("toy/0", DOC, GOLD, "c = 30."))


def test_forced_drafts_run_the_predicted_forwards_when_a_range_is_guessed_again(model, tok):
    # the copy after the body starts at 29, not at the guessed 28 (line 28 deleted): its range
    # is guessed again at its later decisions (cadlib.decoding.drafts.HeaderDrafts._range_rest)
    doc = "\n".join(f"v{i}" for i in range(1, 31))
    gold = doc.replace("v27\nv28\n", "w27\n")
    assert_drafts_match_the_accounting(model, tok, EditCase("toy/1", doc, gold, "w27."))


def test_forced_drafts_run_the_predicted_forwards_on_real_cases(model, tok, humanevalpack_dir):
    py = load_corpus("heval-fix-py", local_dir=humanevalpack_dir)
    js = load_corpus("heval-fix-js", local_dir=humanevalpack_dir)
    short = sorted(py, key=lambda c: len(c.doc) + len(c.gold))
    for case in (*short[:3], short[len(short) // 2], js[len(js) // 2]):
        assert_drafts_match_the_accounting(model, tok, case)


@pytest.mark.parametrize("cap", [1, 3, 8])
def test_a_draft_cap_runs_the_forwards_the_accounting_predicts_for_it(model, tok, cap):
    doc = "\n".join(f"v{i}" for i in range(1, 31))
    case = EditCase("toy/1", doc, doc.replace("v27\nv28\n", "w27\n"), "w27.")
    x = prepare("t", case, tok)
    tr = transcript(x.program, case.doc, tok)
    drafts = composition_drafts("m=0 +cursor +headers")
    res, got = forced_forwards(model, tok, case, drafts, draft_max_ids=cap)
    uncapped = forced_forwards(model, tok, case, drafts, draft_max_ids=None)[0]
    assert res.text == case.gold and res.transcript == uncapped.transcript
    acc = A.composed(
        x.edit_prompt, tr, x.program, case.doc, tok, "m=0 +cursor +headers", draft_max_ids=cap
    )
    assert got == predicted(acc)
    assert res.trace.info["draft_ids"] <= cap * res.trace.n_forwards
    assert res.trace.info["draft_ids"] < uncapped.trace.info["draft_ids"]


def test_the_decoder_takes_its_engines_draft_cap(model, tok):
    engine = as_engine(model)
    assert engine.draft_max_ids is None and CopyDecoder(model, tok).draft_max_ids is None
    engine.draft_max_ids = 5
    try:
        assert CopyDecoder(engine, tok, drafts=("headers",)).draft_max_ids == 5
        assert CopyDecoder(engine, tok, draft_max_ids=None).draft_max_ids is None
    finally:
        engine.draft_max_ids = None
    with pytest.raises(ValueError, match="max_ids >= 1"):
        CopyDecoder(model, tok, drafts=("headers",), draft_max_ids=0)


def test_drafts_stop_at_the_engines_cache_size(model, tok):
    """An engine whose cache holds fewer ids than the run needs (llama.cpp's ``n_ctx``): the
    decoder cuts each draft to what fits after the feed, so no verify forward runs past it
    (the feed itself is the engine's to refuse), and the output is the uncapped run's."""
    doc = "\n".join(f"v{i}" for i in range(1, 31))
    case = EditCase("toy/1", doc, doc.replace("v27\nv28\n", "w27\n"), "w27.")
    x = prepare("t", case, tok)
    cap = len(x.edit_prompt) + len(transcript(x.program, case.doc, tok).ids) - 20
    drafts = composition_drafts("m=0 +cursor +headers")
    free = forced_forwards(model, tok, case, drafts)[1]
    assert any(k == "verify" and n + ctx > cap for k, n, ctx in free)  # uncapped: past it
    engine = as_engine(model)
    engine.n_ctx = cap
    with observed(model) as seen:
        res = CopyDecoder(engine, tok, drafts=drafts).decode(
            case.doc, prompt_ids=x.edit_prompt, program=x.program
        )
    kinds = [f.kind for f in res.trace.forwards]
    assert res.text == case.gold and len(kinds) == len(seen)
    assert all(n + ctx <= cap for k, (n, ctx) in zip(kinds, seen, strict=True) if k == "verify")


def test_a_well_guessed_header_saves_forwards(model, tok):
    case = EditCase("toy/0", DOC, GOLD, "c = 30.")
    plain = forced_forwards(model, tok, case, ())[1]
    heads = forced_forwards(model, tok, case, ("headers",))[1]
    assert len(heads) < len(plain) and any(kind == "verify" for kind, _, _ in heads)


def test_free_runs_with_drafts_decide_what_the_plain_decoder_decides(model, tok):
    """Greedy verification keeps the plain decoder's choices (the tiny model's logits are far
    from ties here; a real model may flip a near-tie: chapter 6 reports the agreement)."""
    plain = CopyDecoder(model, tok, max_new_tokens=40).decode(DOC, "Set c to 30.")
    for drafts in DRAFTS.values():
        res = CopyDecoder(model, tok, max_new_tokens=40, drafts=drafts).decode(DOC, "Set c to 30.")
        assert res.transcript == plain.transcript, drafts
        assert res.budget_closed == plain.budget_closed
        assert res.trace.n_forwards <= plain.trace.n_forwards


def test_drafts_refuse_what_they_cannot_verify(model, tok):
    with pytest.raises(ValueError, match="unknown drafts"):
        CopyDecoder(model, tok, drafts=("magic",))
    with pytest.raises(ValueError, match="min_span=0"):
        CopyDecoder(model, tok, drafts=("pld",), min_span=4)
    x = prepare("t", EditCase("toy/0", DOC, GOLD, "c = 30."), tok)
    with pytest.raises(ValueError, match="localized-edit"):
        CopyDecoder(model, tok, drafts=("pld",)).decode(
            DOC, prompt_ids=x.edit_prompt, program=x.program, free_gen=True
        )


def test_an_engine_keeps_the_logits_of_the_last_positions(model):
    session = as_engine(model).new_session()
    ids = [5, 17, 300, 42, 9]
    every = as_engine(model).new_session().forward(ids, all_logits=True)
    kept = session.forward(ids, keep=3)
    assert kept.shape == (3, every.shape[1])
    torch.testing.assert_close(kept, every[-3:], rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="keep=6"):
        session.forward(ids, keep=6)


@settings(max_examples=60, deadline=None)
@given(
    seq=st.lists(st.integers(0, 4), min_size=2, max_size=40),
    K=st.integers(1, 6),
    n=st.integers(1, 3),
    split=st.integers(0, 40),
)
def test_the_growing_index_drafts_what_the_whole_sequence_index_drafts(seq, K, n, split):
    index = NgramIndex(K, n)
    index.extend(seq[: min(split, len(seq))])
    for length in range(max(2, len(index.seq)), len(seq) + 1):
        index.extend(seq[len(index.seq) : length])
        assert index.draft() == list(lookup_draft(seq, length, K, n, ngram_index(seq, n)))


def test_the_drafter_guesses_the_first_header_from_the_document_alone(tok):
    table = token_table(tok)
    drafter = Drafter(("headers",), table, DOC, [1, 2, 3])
    guess = drafter.propose([], [], "choice", 0)
    text = b"".join(table.token_bytes[i] for i in guess).decode()
    assert text == '<copy lines="1-6'  # the whole document, 6 lines (the last one empty)
    assert drafter.propose([], [], "choice", None) == []  # not an op's first decision
