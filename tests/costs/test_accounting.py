"""The accounting predicts the forwards the decoders run: checked against their traces on real
runs (the tiny random model; SmolLM2 in one slow test), plus the laws the counts obey."""

import contextlib

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib.corpora import EditCase, load_corpus
from cadlib.costs import accounting as A
from cadlib.costs.accounting import forwards as accounting_forwards
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.methods import ar_along, prepare, prompt_lookup_along
from cadlib.decoding.prompt_lookup import lookup_draft, ngram_index
from cadlib.escape import encode_gen_body
from cadlib.grammar import Gen, Program
from cadlib.oracle import oracle_program

pytestmark = pytest.mark.usefixtures("one_torch_thread")

DOC = "def add(a, b):\n    return a - b\n\n\nprint(add(1, 2))\n"
GOLD = "def add(a, b):\n    total = a + b\n    return total\n\n\nprint(add(1, 2))\n"
PLD_SETTINGS = [(5, 1), (10, 2), (40, 3)]


# ----- the decoders' own forwards, as the model sees them ---------------------------------------


@contextlib.contextmanager
def observed(model):
    """Record ``(ids fed, cache length before)`` of every forward of ``model``."""
    seen = []

    def hook(module, args, kwargs):
        cache = kwargs.get("past_key_values") or kwargs.get("cache")
        seen.append((kwargs["input_ids"].shape[1], int(cache.get_seq_length())))

    handle = model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        yield seen
    finally:
        handle.remove()


def traced(model, run):
    """``(kind, ids fed, context)`` of each forward of ``run()`` (which returns a Trace)."""
    with observed(model) as seen:
        trace = run()
    assert [f.n_tokens for f in trace.forwards] == [n for n, _ in seen]
    return [(f.kind, f.n_tokens, ctx) for f, (_, ctx) in zip(trace.forwards, seen, strict=True)]


def predicted(acc: A.Accounting):
    return [(f.kind, f.n_ids, f.context) for f in acc.forwards]


def assert_all_methods_match(model, tok, corpus: str, case, min_spans=(0, 4, 10**6)):
    x = prepare(corpus, case, tok)
    T = len(x.target) - 1
    got = traced(model, lambda: ar_along(model, x.regen_prompt, x.target))
    assert got == predicted(A.autoregressive(len(x.regen_prompt), x.target))
    for K, n in PLD_SETTINGS:
        got = traced(
            model, lambda K=K, n=n: prompt_lookup_along(model, x.regen_prompt, x.target, K, n)
        )
        assert got == predicted(A.prompt_lookup(x.regen_prompt, x.target, K, n)), (K, n)
    tr = transcript(x.program, case.doc, tok)
    for m in min_spans:
        decoder = CopyDecoder(model, tok, min_span=m)
        res = None

        def run(decoder=decoder):
            nonlocal res
            res = decoder.decode(case.doc, prompt_ids=x.edit_prompt, program=x.program)
            return res.trace

        got = traced(model, run)
        assert res.text == case.gold
        acc = A.copy_as_decode(len(x.edit_prompt), tr, m, T)
        assert got == predicted(acc), m
        assert acc.decode_forwards == len(got) - 1


def _by_size(cases):
    return sorted(cases, key=lambda c: (len(c.doc) + len(c.gold), c.id))


@pytest.fixture(scope="module")
def code_cases(humanevalpack_dir):
    """The three shortest HumanEvalFix-Py cases and a median-size Python and JavaScript one."""
    py = _by_size(load_corpus("heval-fix-py", local_dir=humanevalpack_dir))
    js = _by_size(load_corpus("heval-fix-js", local_dir=humanevalpack_dir))
    return [("heval-fix-py", c) for c in (*py[:3], py[len(py) // 2])] + [
        ("heval-fix-js", js[len(js) // 2])
    ]


def test_predictions_match_the_traces_on_a_toy_edit(model, tok):
    assert_all_methods_match(model, tok, "toy", EditCase("toy", DOC, GOLD, "Fix add."))


def test_predictions_match_the_traces_on_humanevalfix_cases(model, tok, code_cases):
    for corpus, case in code_cases:
        assert_all_methods_match(model, tok, corpus, case)


@pytest.mark.slow
def test_predictions_match_the_traces_on_a_probeedit_case(model, tok):
    """The shortest ProbeEdit case: ~1,600 ids of prose, long copies and long bodies."""
    assert_all_methods_match(model, tok, "probeedit", _by_size(load_corpus("probeedit"))[0])


@pytest.mark.slow
@pytest.mark.hf_model
def test_predictions_match_smollm2_traces(tok, code_cases):
    from cadlib.models import load_model

    smol = load_model("smollm2-135m-instruct", device="cpu", dtype="float32")
    for corpus, case in code_cases[3:]:
        assert_all_methods_match(smol, tok, corpus, case, min_spans=(0, 4))


# ----- prompt lookup's drafts are transformers' -------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    seq=st.lists(st.integers(0, 4), min_size=2, max_size=40),
    K=st.integers(1, 6),
    n=st.integers(1, 3),
)
def test_drafts_are_those_of_transformers(seq, K, n):
    from transformers.generation.candidate_generator import PromptLookupCandidateGenerator

    hf = PromptLookupCandidateGenerator(
        num_output_tokens=K, max_matching_ngram_size=n, max_length=len(seq) + 5
    )
    firsts = ngram_index(seq, 3)  # a larger table than n needs is shared between settings
    for length in range(2, len(seq) + 1):
        cand, _ = hf.get_candidates(torch.tensor([seq[:length]]))
        assert list(lookup_draft(seq, length, K, n, firsts)) == cand[0, length:].tolist()


# ----- laws -------------------------------------------------------------------------------------

ids = st.lists(st.integers(0, 6), min_size=1, max_size=60)


@settings(max_examples=100, deadline=None)
@given(P=st.integers(1, 50), target=ids)
def test_autoregressive_is_one_forward_per_output_token(P, target):
    acc = A.autoregressive(P, target)
    assert acc.decode_forwards == acc.T == len(target) - 1
    assert acc.ids_fed == P + len(target) - 1


@settings(max_examples=100, deadline=None)
@given(prompt=ids, target=ids, K=st.sampled_from([5, 10, 20, 40]), n=st.integers(1, 3))
def test_prompt_lookup_feeds_the_output_once_plus_rejected_drafts(prompt, target, K, n):
    """Each round emits its accepted ids plus one, so rounds + accepted = T; every id fed
    beyond prompt + T is a rejected draft id; never more forwards than autoregressive."""
    acc = A.prompt_lookup(prompt, target, K, n)
    verify = acc.forwards[1:]
    assert all(1 <= f.n_ids <= K + 1 for f in verify)
    assert acc.ids_fed >= len(prompt) + acc.T
    assert acc.decode_forwards <= A.autoregressive(len(prompt), target).decode_forwards
    contexts = [f.context for f in verify]
    assert contexts == sorted(set(contexts))  # the cache only grows between rounds
    assert all(f.context >= len(prompt) for f in verify)


def test_prompt_lookup_copies_a_repeated_text_in_few_forwards():
    text = list(range(30))  # one draft of 30 ids, 29 accepted, then the bonus id 99
    acc = A.prompt_lookup(text, text + [99], K=40, n=2)
    assert acc.decode_forwards == 1 and acc.ids_fed == 30 + 31


texts = st.text(alphabet="ab <>/=\n\t", min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(body=texts)
def test_an_all_gen_program_is_autoregressive_plus_fixed_header_forwards(tok, body):
    """A single ``<gen>`` op: one forward per body id, plus forwards that do not depend on
    the body (the op choice, the ``</gen>`` ids, ``</program>``)."""
    table = token_table(tok)
    empty = A.copy_as_decode(10, transcript(Program([Gen("x")]), "doc", tok))
    header = empty.decode_forwards - len(table.body_ids("x"))
    acc = A.copy_as_decode(10, transcript(Program([Gen(body)]), "doc", tok))
    assert acc.decode_forwards == header + len(table.body_ids(encode_gen_body(body)))
    assert {f.kind for f in acc.forwards[1:]} <= {"choice", "gen", "forced"}


lines = st.lists(st.text(alphabet="ab (),:=\t", max_size=12), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None)
@given(doc=lines, gold=lines, m=st.integers(0, 12))
def test_copy_as_decode_feeds_every_fed_id_once_whatever_m(tok, doc, gold, m):
    """The prompt and each transcript id but the last feed's are fed exactly once, however
    the splices are chunked; a larger m never saves a forward; contexts are cumulative."""
    doc, gold = "\n".join(doc), "\n".join(gold)
    tr = transcript(oracle_program(doc, gold), doc, tok)
    base, acc = A.copy_as_decode(7, tr, 0), A.copy_as_decode(7, tr, m)
    last = accounting_forwards._feeds(tr)[-1][0]
    assert acc.ids_fed == base.ids_fed == 7 + len(tr) - len(last)
    assert acc.decode_forwards >= base.decode_forwards
    decisions = sum(k in A.DECISION_KINDS for k in tr.kinds)
    assert base.decode_forwards == decisions - 1  # one forward before each decision
    ctx = np.cumsum([0] + [f.n_ids for f in acc.forwards[:-1]])
    assert [f.context for f in acc.forwards] == ctx.tolist()


# ----- corpus tables ----------------------------------------------------------------------------


def _toy_corpora():
    cases = [EditCase(f"toy/{k}", DOC * (k + 1), GOLD * (k + 1), "Fix add.") for k in range(4)]
    return {"toy": cases, "toy2": [EditCase("t2/0", GOLD, DOC, "Undo.")]}


def test_corpus_tables_best_setting_and_summary(tok):
    rows = A.corpus_forwards(
        _toy_corpora(), tok, grid=[(5, 1), (40, 3)], compositions=(), progress=False
    )
    assert set(rows.method) == {"autoregressive", "prompt lookup", "Copy-as-Decode", A.BOUND}
    assert len(rows) == 5 * (1 + 2 + 2 + 1)
    ar = rows[rows.method == "autoregressive"]
    assert (ar.forwards == ar["T"]).all() and (ar.forwards_per_token == 1).all()
    best = A.best_prompt_lookup(rows)
    pld = rows[rows.method == "prompt lookup"].groupby(["corpus", "setting"]).forwards.sum()
    for corpus, setting in best.items():
        assert pld[corpus, setting] == pld[corpus].min()
    summary = A.forwards_summary(rows, seed=0)
    assert list(dict.fromkeys(summary.corpus)) == ["toy", "toy2", "pooled"]
    pooled = summary[summary.corpus == "pooled"].set_index(["method", "setting"])
    assert pooled.loc[("prompt lookup", "best"), "cases"] == 5
    assert (summary.fpt_lo <= summary.median_fpt).all()
    assert (summary.median_fpt <= summary.fpt_hi).all()
    pd.testing.assert_frame_equal(summary, A.forwards_summary(rows, seed=0))  # seeded


def test_best_setting_breaks_ties_by_ids_fed():
    rows = pd.DataFrame(
        dict(
            corpus="c",
            case=["a", "a"],
            method="prompt lookup",
            setting=["K=5 n=1", "K=40 n=1"],
            forwards=[3, 3],
            ids_fed=[50, 40],
        )
    )
    assert A.best_prompt_lookup(rows)["c"] == "K=40 n=1"


def test_bootstrap_median_interval():
    med, lo, hi = A.bootstrap_median([1.0, 2.0, 3.0, 4.0, 100.0], seed=0)
    assert med == 3.0 and lo <= med <= hi
    assert A.bootstrap_median([2.0] * 5) == (2.0, 2.0, 2.0)


def test_setting_grid(tok):
    rows = A.corpus_forwards(_toy_corpora(), tok, grid=[(5, 1), (40, 3)], progress=False)
    grid = A.setting_grid(rows)
    assert list(grid.index) == ["K=5 n=1", "K=40 n=3"] and list(grid.columns) == ["toy", "toy2"]
    pld = rows[(rows.method == "prompt lookup") & (rows.corpus == "toy")]
    for setting, part in pld.groupby("setting"):
        assert grid.loc[setting, "toy"] == part.forwards.sum() / part["T"].sum()
