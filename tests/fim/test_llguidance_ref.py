"""The llguidance reference: its grammar takes our benchmark's true middles and still rejects."""

from __future__ import annotations

import pytest

llg = pytest.importorskip("llguidance")


@pytest.fixture(scope="module")
def tokenizer():
    from cadlib.models import load_tokenizer

    return load_tokenizer("smollm2-135m-instruct")


def accepts(tokenizer, text: str) -> bool:
    import llguidance.hf

    from cadlib.fim.llguidance_ref import PYTHON_LIKE

    grammar = llg.LLMatcher.grammar_from_lark(PYTHON_LIKE)
    matcher = llg.LLMatcher(llguidance.hf.from_tokenizer(tokenizer), grammar, log_level=0)
    return all(matcher.consume_token(t) for t in tokenizer.encode(text, add_special_tokens=False))


def test_the_grammar_takes_python_and_rejects_a_stray_closer(tokenizer):
    source = (
        '\n@dec\ndef f(a, *b) -> int:  # c\n    """doc\n    """\n'
        "    return [x ** 2 for x in b][0] + 0x1F\n"
    )
    assert accepts(tokenizer, source) and accepts(tokenizer, "s = rb'\\x00' + f\"{a!r}\"\n")
    assert not accepts(tokenizer, "x = 1)\n") and not accepts(tokenizer, "x = $\n")


def test_the_reference_times_every_true_middle_of_the_benchmark(tokenizer):
    from cadlib.corpora import load_corpus
    from cadlib.fim.llguidance_ref import llguidance_summary, time_llguidance

    frame = time_llguidance(load_corpus("heval-fix-py"), tokenizer, n_problems=2, repeats=1)
    s = llguidance_summary(frame)
    assert s["problems"] == 2 and not s["rejected_problems"] and s["masks"] > 20
    masks = frame[frame.step >= 0]
    assert (masks.n_allowed > 0).all() and (masks.n_allowed < tokenizer.vocab_size).all()
