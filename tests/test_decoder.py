"""The decoder: copy splice == stepping, forced programs reproduce gold, budget, streaming,
and the pure grammar LogitsProcessor inside ``generate()`` (tiny random Llama on CPU)."""

import random

import pandas as pd
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import LogitsProcessorList

from cadlib.chapters.decoding.measure import run_summary, speed_table
from cadlib.decoding.cache import forward, new_cache
from cadlib.decoding.decoder import CopyDecoder, GrammarLogitsProcessor
from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.methods import ar_along, prompt_lookup_along
from cadlib.decoding.token_boundaries import boundary_table, naive_transcript_ids
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


# ----- the LogitsProcessor --------------------------------------------------------------------


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


# ----- the baselines and the chapter's tables -------------------------------------------------


def test_autoregressive_baseline_takes_one_forward_per_id(model, tok, prompt):
    target = tok.encode(GOLD, add_special_tokens=False) + [tok.eos_token_id]
    trace = ar_along(model, prompt, target)
    assert trace.n_forwards == len(target) and trace.forwards[0].kind == "prefill"


def test_prompt_lookup_baseline_emits_the_target(model, tok, prompt):
    """Every round accepts the matching draft prefix plus one id, so the ids emitted add up to
    the target, and copying the document needs far fewer forwards than ids."""
    target = tok.encode(DOC * 3, add_special_tokens=False)
    trace = prompt_lookup_along(model, prompt + target[:5], target, num_output_tokens=8)
    assert trace.info["accepted"] + trace.info["rounds"] + 1 == len(target)
    assert trace.n_forwards < len(target) / 2


def test_naive_transcript_is_the_same_text(tok):
    program = oracle_program(DOC, GOLD)
    ours = transcript(program, DOC, tok)
    naive = naive_transcript_ids(program, DOC, tok)
    assert tok.decode(naive) == ours.text(tok) and list(ours.ids) != naive


def test_boundary_table_counts_canonical_windows(tok):
    from cadlib.corpora import EditCase

    cases = [EditCase("a", DOC, GOLD, "Fix."), EditCase("b", "x\ny\n\nz", "x\nY\n\nz", "Fix.")]
    table = boundary_table({"toy": cases}, {"SmolLM2": tok}).iloc[0]
    assert table.copy_ours == table.copies and table.gen_ours == table.gens
    assert table.whole_ours == 2


def _speed_rows():
    return pd.DataFrame(
        [
            dict(
                corpus="c", case="k", method=m, repeat=r, T=100, forwards=f, decode_s=s, spliced=sp
            )
            for r in range(3)
            for m, f, s, sp in [
                ("autoregressive", 100, 10.0 + r, 0),
                ("Copy-as-Decode", 20, 2.0, 80),
                ("prompt lookup", 25, 4.0, 0),
            ]
        ]
    ).assign(accepted=lambda d: (d.method == "prompt lookup") * 70)


def test_speed_table_ratios():
    table = speed_table(_speed_rows()).set_index(["corpus", "method"])
    assert table.loc[("c", "Copy-as-Decode"), "forward_ratio"] == 5.0
    assert table.loc[("c", "Copy-as-Decode"), "speedup"] == 5.5  # median of 10/2, 11/2, 12/2
    assert table.loc[("c", "prompt lookup"), "free_share"] == 0.7
    assert table.loc[("pooled", "autoregressive"), "speedup"] == 1.0


def test_run_summary_cites_each_corpus_then_pooled():
    speed = speed_table(_speed_rows())
    bounds = pd.DataFrame([dict(corpus="c", bnd_exact_grid=6.0, bnd_fsm_grid=4.5,
                                realized_over_bnd_exact=0.9)])  # fmt: skip
    effect = pd.DataFrame(dict(same_prefix=[True, False, False], kl=[0.0, 0.05, 3.0],
                               fsm_choice_agree=[True, True, False],
                               top1_agree=[True, False, False]))  # fmt: skip
    text = run_summary(speed, bounds, "tiny, cpu", effect)
    lines = [x for x in text.splitlines() if x.startswith("* ")]
    assert [x.split("**")[1] for x in lines] == ["c", "pooled"]
    assert "(autoregressive forwards / its forwards) 5.00× for Copy-as-Decode" in lines[0]
    assert "wall-clock speedup 5.50× [5.00–6.00] vs 2.75× [2.50–3.00]" in lines[0]
    assert "bnd_exact 6.00×, bnd_fsm 4.50× (same grid), realized / bnd_exact 0.90" in lines[0]
    assert "bnd_exact" not in lines[1]
    assert text.startswith("*This run (tiny, cpu)")
    assert "(2 of 3)" in text and "from 0.050 to 3.000, 1 below 0.1" in text
    assert "FSM's masked choice agreed at 2 of 3" in text
    assert "nats" not in run_summary(speed, None, "x")
