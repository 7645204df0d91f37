"""Per-step costs of the FIM constraint and of its mask (cadlib.fim.step_cost): every method
reports, the mask is checked before it is timed, and the mask's stages are its own steps."""

import numpy as np

from cadlib.corpora import load_corpus
from cadlib.fim import FIMConstraint, TokenTrie
from cadlib.fim.mask import token_texts
from cadlib.fim.step_cost import _ParserClock, mask_cost, per_step_cost


def test_per_step_cost_reports_every_method(humanevalpack_dir):
    corpus = load_corpus("heval-fix-py", local_dir=humanevalpack_dir)
    frame = per_step_cost(corpus[:6], n_problems=1, seed=0, middle_chars=12)
    assert set(frame.method) == {"incremental", "checked_unconstrained", "from_scratch"}
    final = frame.groupby("method").tail(1)
    assert final.can_end.all() and (frame.seconds > 0).all()


def test_mask_cost_checks_before_timing(tok, humanevalpack_dir):
    corpus = load_corpus("heval-fix-py", local_dir=humanevalpack_dir)
    frame = mask_cost(corpus[:10], tok, n_problems=1, middle_chars=12, naive_sample=200)
    trie = frame[frame.method == "trie"]
    assert len(trie) > 0 and trie.next_allowed.all() and trie.sample_agrees.all()


def test_mask_stages_compose_the_mask(tok):
    """The stages :func:`cadlib.fim.step_cost.mask_stages` times are the mask's own steps."""
    trie = TokenTrie.for_tokenizer(tok)
    c = FIMConstraint("def f(x):\n    return x", "\n")
    mask = np.zeros(trie.size, dtype=bool)
    trie._cover(mask, trie.tables.allowed(c._problem.lexer, c.branches))
    trie._fstring_fields(mask, c)
    trie._byte_tokens(mask, c)
    assert (mask == trie.allowed(c)).all()


def test_parser_clock_times_the_parser_without_changing_the_mask(tok):
    """:func:`cadlib.fim.step_cost.mask_stages` splits the lexical tables' time by evaluating
    them through a clocked lexer: the tables' answer is the same, the parser's share is counted
    (every fresh chart needs scans), and a trie the clock never sees counts nothing."""
    c = FIMConstraint("def f(x):\n    y = x", "\n    return y\n")
    clock = _ParserClock(c._problem.lexer)
    timed = TokenTrie(token_texts(tok)).tables.allowed(clock, c.branches)
    plain = TokenTrie(token_texts(tok)).tables.allowed(c._problem.lexer, c.branches)
    assert clock.seconds > 0 and clock._depth == 0
    assert [[a.tolist() for a in arrays] for arrays, _ in timed] == [
        [a.tolist() for a in arrays] for arrays, _ in plain
    ]
