"""The decoder: copy splice == stepping, forced programs reproduce gold, budget, streaming
(tiny random Llama on CPU)."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cadlib.decoding.cache import forward, new_cache
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.fsm import token_table, transcript
from cadlib.grammar import Copy, Gen, Program, parse_program
from cadlib.oracle import oracle_program
from cadlib.prompts import edit_prompt_ids
from cadlib.resolver import resolve

DOC = "def add(a, b):\n    total = a - b\n    return total\n\n\nprint(add(1, 2))\n"
GOLD = "def add(a, b):\n    total = a + b\n    return total\n\n\nprint(add(1, 2))\n"


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def prompt(tok):
    return edit_prompt_ids(tok, "Fix the bug in add.", DOC)


# ----- the splice -----------------------------------------------------------------------------


def test_splice_gives_the_logits_of_stepping(model, tok, prompt):
    """One forward over the N copied ids == N one-id forwards (paper §2.4, App. K)."""
    table = token_table(tok)
    span = list(table.splice_ids("\n".join(DOC.split("\n")[0:3])))
    spliced, stepped = new_cache(model), new_cache(model)
    forward(model, prompt, spliced)
    forward(model, prompt, stepped)
    all_spliced = forward(model, span, spliced, logits_to_keep=0)
    all_stepped = torch.stack([forward(model, [i], stepped)[-1] for i in span])
    torch.testing.assert_close(all_spliced, all_stepped, rtol=1e-4, atol=1e-4)
    nxt = table.lt  # and the logits after the next id agree too
    torch.testing.assert_close(
        forward(model, list(nxt), spliced), forward(model, list(nxt), stepped), rtol=1e-4, atol=1e-4
    )


def test_splicing_does_not_change_the_decisions(model, tok, prompt):
    spliced = CopyDecoder(model, tok, max_new_tokens=30).decode(DOC, prompt_ids=prompt)
    stepped = CopyDecoder(model, tok, max_new_tokens=30, min_span=10**9).decode(
        DOC, prompt_ids=prompt
    )
    assert spliced.transcript == stepped.transcript
    if spliced.n_spliced:
        assert "copy-step" in stepped.trace.forwards_by_kind()
        assert stepped.trace.n_forwards > spliced.trace.n_forwards


# ----- forced programs ------------------------------------------------------------------------

lines = st.lists(
    st.text(alphabet="ab <>/\tgen=\n", max_size=8).map(lambda s: s.replace("\n", "")),
    min_size=1,
    max_size=6,
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(doc_lines=lines, gold_lines=lines)
def test_forced_oracle_programs_reproduce_gold_byte_exactly(model, tok, doc_lines, gold_lines):
    doc, gold = "\n".join(doc_lines), "\n".join(gold_lines)
    program = oracle_program(doc, gold)
    dec = CopyDecoder(model, tok)
    result = dec.decode(doc, "Edit.", program=program)
    assert result.text == gold and result.error is None
    assert result.transcript == transcript(program, doc, tok)
    assert 0.0 <= result.agreement <= 1.0


def test_forced_humanevalfix_cases(model, tok, humanevalpack_dir):
    from cadlib.corpora import load_corpus

    dec = CopyDecoder(model, tok)
    for case in load_corpus("heval-fix-py")[:3]:
        result = dec.decode(case.doc, case.instruction, program=oracle_program(case.doc, case.gold))
        assert result.text == case.gold


def test_stream_yields_the_resolved_text_op_by_op(model, tok, prompt):
    program = oracle_program(DOC, GOLD)
    chunks = list(CopyDecoder(model, tok).stream(DOC, prompt_ids=prompt, program=program))
    assert len(chunks) == len(program) and "".join(chunks) == GOLD


def test_ops_and_forward_records(model, tok, prompt):
    program = Program([Copy(1, 1), Gen("    total = a + b"), Copy(3, 7)])
    result = CopyDecoder(model, tok).decode(DOC, prompt_ids=prompt, program=program)
    kinds = [op["kind"] for op in result.ops]
    assert kinds == ["prompt", "copy", "gen", "copy", "close"]
    assert [op["lines"] for op in result.ops if op["kind"] == "copy"] == [(1, 1), (3, 7)]
    assert result.trace.forwards[0].kind == "prefill"
    assert result.trace.forwards_by_kind()["splice"] == 2  # one forward per copy op
    assert sum(op["forwards"] for op in result.ops) == result.trace.n_forwards


# ----- guarantees in free run -----------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, 1, 3, 7, 20])
def test_budget_closes_the_program_validly(model, tok, prompt, budget):
    result = CopyDecoder(model, tok, max_new_tokens=budget).decode(DOC, prompt_ids=prompt)
    assert result.error is None and result.budget_closed
    assert result.n_chosen <= budget
    assert resolve(parse_program(result.program_text), DOC, mode="strict") == result.text


class EOSLover(torch.nn.Module):
    """A fake LM whose argmax is always EOS (and random otherwise): EOS must stay masked."""

    def __init__(self, config, eos: int):
        super().__init__()
        self.config, self.eos = config, eos
        self.head = torch.nn.Linear(1, config.vocab_size)
        self.gen = torch.Generator().manual_seed(0)

    def get_output_embeddings(self):
        return self.head

    @property
    def device(self):
        return torch.device("cpu")

    def forward(self, input_ids, cache=None, use_cache=None, logits_to_keep=0):
        n = input_ids.shape[1] if not logits_to_keep else logits_to_keep
        logits = torch.randn(1, n, self.config.vocab_size, generator=self.gen)
        logits[..., self.eos] = 100.0
        return type("Out", (), {"logits": logits})()


def test_eos_never_ends_a_program_mid_op(model, tok):
    fake = EOSLover(model.config, tok.eos_token_id)
    result = CopyDecoder(fake, tok, max_new_tokens=40).decode(DOC, prompt_ids=[1, 2, 3])
    assert result.error is None and tok.eos_token_id not in result.transcript.ids


def test_free_run_text_is_the_transcript_without_tags(model, tok, prompt):
    result = CopyDecoder(model, tok, max_new_tokens=25).decode(DOC, prompt_ids=prompt)
    assert result.text == resolve(result.program, DOC)
    assert 0.0 <= result.copy_fraction <= 1.0
