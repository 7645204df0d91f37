"""The grammar as a ``transformers`` LogitsProcessor: pure (any call order), equal to the
decoder's choices inside ``generate()``, with prompt lookup, and program-only (tiny random
Llama on CPU)."""

import random

import pytest
import torch
from test_decoder import DOC, GOLD
from transformers import LogitsProcessorList

from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.fsm import transcript
from cadlib.decoding.generate_processor import GrammarLogitsProcessor
from cadlib.oracle import oracle_program
from cadlib.prompts import edit_prompt_ids

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def prompt(tok):
    return edit_prompt_ids(tok, "Fix the bug in add.", DOC)


def prefixes(prompt, ids):
    return [torch.tensor([prompt + list(ids[:k])]) for k in range(len(ids) + 1)]


def test_logits_processor_is_pure(model, tok, prompt):
    ids = transcript(oracle_program(DOC, GOLD), DOC, tok).ids
    calls = prefixes(prompt, ids)
    scores = torch.randn(
        len(calls), model.config.vocab_size, generator=torch.Generator().manual_seed(1)
    )
    shared = GrammarLogitsProcessor(tok, DOC, len(prompt))
    reference = [
        GrammarLogitsProcessor(tok, DOC, len(prompt))(x, s[None])
        for x, s in zip(calls, scores, strict=True)
    ]
    order = list(range(len(calls))) * 2
    random.Random(0).shuffle(order)
    for k in order:  # any call order, repeated calls, one shared processor
        torch.testing.assert_close(shared(calls[k], scores[k][None]), reference[k])
    for k, ref in enumerate(reference[:-1]):  # and the program's next id is always allowed
        assert torch.isfinite(ref[0, ids[k]])


def test_generate_with_the_processor_matches_the_decoder(model, tok, prompt):
    n = 40
    proc = GrammarLogitsProcessor(tok, DOC, len(prompt))
    x = torch.tensor([prompt])
    out = model.generate(
        x,
        logits_processor=LogitsProcessorList([proc]),
        do_sample=False,
        max_new_tokens=n,
        pad_token_id=tok.eos_token_id,
    )
    generated = out[0, len(prompt) :].tolist()
    ours = CopyDecoder(model, tok, max_new_tokens=n).decode(DOC, prompt_ids=prompt)
    assert ours.transcript.ids[: len(generated)] == tuple(generated)


def test_prompt_lookup_with_the_processor_matches_greedy(model, tok, prompt):
    """transformers' prompt lookup calls processors on candidate sequences: a pure
    processor keeps its output equal to greedy search."""
    x = torch.tensor([prompt])
    common = dict(do_sample=False, max_new_tokens=40, pad_token_id=tok.eos_token_id)
    greedy = model.generate(
        x,
        logits_processor=LogitsProcessorList([GrammarLogitsProcessor(tok, DOC, len(prompt))]),
        **common,
    )
    lookup = model.generate(
        x,
        logits_processor=LogitsProcessorList([GrammarLogitsProcessor(tok, DOC, len(prompt))]),
        prompt_lookup_num_tokens=4,
        **common,
    )
    assert lookup.tolist() == greedy.tolist()


def test_program_only_processor_emits_a_parsable_program(model, tok, prompt):
    proc = GrammarLogitsProcessor(tok, DOC, len(prompt), copy_text=False)
    out = model.generate(
        torch.tensor([prompt]),
        logits_processor=LogitsProcessorList([proc]),
        do_sample=False,
        max_new_tokens=12,
        pad_token_id=tok.eos_token_id,
    )
    state = proc.state(tuple(out[0, len(prompt) :].tolist()))
    assert state is not None  # every generated id was allowed
