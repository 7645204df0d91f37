"""The decoding-method protocol: each method runs along a prepared case (tiny random model),
names select methods in order, an unknown name fails clearly, and chapter 6's timing loop
refuses a method that misses the gold."""

import pytest

from cadlib.cases import EditCase
from cadlib.chapters import decoding
from cadlib.decoding.decoder import CopyDecoder, Trace
from cadlib.decoding.methods import (
    METHODS,
    Autoregressive,
    CopyAsDecode,
    DecodingMethod,
    PromptLookup,
    ar_along,
    make_methods,
    prepare,
    prompt_lookup_along,
)
from cadlib.oracle import oracle_program
from cadlib.prompts import edit_prompt_ids

pytestmark = pytest.mark.usefixtures("one_torch_thread")

DOC = "def add(a, b):\n    total = a - b\n    return total\n\n\nprint(add(1, 2))\n"
GOLD = "def add(a, b):\n    total = a + b\n    return total\n\n\nprint(add(1, 2))\n"


@pytest.fixture(scope="module")
def x(tok):
    return prepare("toy", EditCase("add", DOC, GOLD, "Fix the bug in add."), tok)


@pytest.fixture(scope="module")
def methods(model, tok):
    return make_methods(model, CopyDecoder(model, tok), (8, 2))


def test_methods_are_built_in_display_order(methods):
    assert [m.name for m in methods] == list(METHODS)
    assert [type(m) for m in methods] == [Autoregressive, PromptLookup, CopyAsDecode]
    assert all(isinstance(m, DecodingMethod) for m in methods)


def test_every_method_runs_along_the_gold(methods, x):
    ar, pld, cad = (m.run(x) for m in methods)
    T = len(x.target)
    assert ar.reproduced and ar.result is None and ar.trace.n_forwards == T
    assert pld.reproduced and pld.result is None
    emitted = 1 + pld.trace.info["accepted"] + pld.trace.info["rounds"]  # first id + n + bonus
    assert T <= emitted <= T + 1  # the last round's bonus id may fall past the end
    assert pld.trace.n_forwards < ar.trace.n_forwards  # the copied lines come as drafts
    assert cad.reproduced and cad.result.text == GOLD and cad.trace is cad.result.trace
    assert cad.result.n_spliced > 0


def test_copy_as_decode_reports_a_missed_gold(model, tok, x):
    wrong = prepare("toy", EditCase("add", DOC, GOLD, "Fix the bug in add."), tok)
    wrong.program = oracle_program(DOC, DOC)  # copies the buggy document
    run = CopyAsDecode(CopyDecoder(model, tok)).run(wrong)
    assert not run.reproduced and run.result.text == DOC
    params = dict(repeats=1, warmup=0, min_span=0, pld_num_tokens=8, pld_max_ngram=2)
    with pytest.raises(RuntimeError, match="Copy-as-Decode did not reproduce the gold of add"):
        decoding.run_timing.time_on_gold(model, tok, [wrong], params, progress=False)


def test_names_select_methods_and_loops_plug_in(x):
    calls = []

    def loop(model, prompt, target, *setting):
        calls.append((model, len(prompt), len(target), setting))
        return Trace()

    picked = make_methods(
        "engine", None, (20, 3), ("prompt lookup", "autoregressive"), ar=loop, lookup=loop
    )
    assert [m.name for m in picked] == ["prompt lookup", "autoregressive"]
    for m in picked:
        m.run(x)
    regen, T = len(x.regen_prompt), len(x.target)
    assert calls == [("engine", regen, T, (20, 3)), ("engine", regen, T, ())]


def test_an_unknown_method_name_lists_the_valid_ones(model):
    with pytest.raises(
        ValueError, match="'beam search'.*autoregressive, prompt lookup, Copy-as-Decode"
    ):
        make_methods(model, None, names=("autoregressive", "beam search"))


# ----- the baselines along a target -----------------------------------------------------------


@pytest.fixture(scope="module")
def prompt(tok):
    return edit_prompt_ids(tok, "Fix the bug in add.", DOC)


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
