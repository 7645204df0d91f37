"""Allowed-token masks: the vocabulary trie equals feeding every token on its own."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib.fim import FIMConstraint, FIMLogitsProcessor, TokenTrie, allowed_mask
from cadlib.fim.mask import byte_token_viable, naive_allowed_mask, token_texts, utf8_split

PIECES = [
    "x",
    "xy",
    " x",
    " ",
    "  ",
    "    ",
    "\n",
    "\n    ",
    "(",
    ")",
    "()",
    "):",
    ":",
    "=",
    " = ",
    "==",
    "1",
    "12",
    "1.",
    "e5",
    '"',
    '"a',
    'a"',
    "'''",
    "#",
    "# c",
    "\\",
    "in",
    "int",
    "return",
    " return",
    "re",
    "if",
    " if ",
    "else",
    ",",
    ", ",
    "é",
    "[",
    "]",
    "pass",
    "def",
    " f",
    "(x",
    "0",
    "or",
    "\t",
    ".",
    "..",
    "...",
    "->",
    "*",
    "**",
]
STATES = [
    ("def f(x):\n    ", "\n"),
    ("x = [1, ", "]\n"),
    ('s = "ab', '"\n'),
    ("if a:\n", ""),
    ("x = 1", "\ny = 2\n"),
    ("def f():\n    ret", "urn 1\n"),
    ("# co", "\nx = 1\n"),
    ("x = (1 +\n", ")\n"),
    ("", ""),
    ("y = 0", " if a else 1\n"),
]


def naive(constraint, texts):
    return np.array([bool(t) and constraint.fork().feed(t) for t in texts])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=25, unique=True),
    st.sampled_from(STATES),
    st.sampled_from(["", "x", " ", "\n", "(", "  "]),
)
def test_trie_equals_feeding_each_token(vocab, state, fed):
    left, right = state
    c = FIMConstraint(left, right)
    c.feed(fed)
    trie = TokenTrie(vocab)
    assert (trie.allowed(c) == naive(c, vocab)).all()


def test_partial_characters_need_valid_utf8():
    c = FIMConstraint('s = "', '"\n')
    assert utf8_split(b"a\xe3\x83") == ("a", b"\xe3\x83") and utf8_split(b"\xa2") is None
    assert byte_token_viable(c, b"\xe3\x83") and byte_token_viable(c, b"\xbc", b"\xe3\x83")
    assert not byte_token_viable(c, b"\xa2")  # a continuation byte cannot start a character
    assert not byte_token_viable(FIMConstraint("x = b'", "'\n"), b"\xe3\x83")  # bytes: ASCII


def test_trie_ranges_cover_subtrees():
    trie = TokenTrie(["a", "ab", "abc", "b", None, "abd"])
    assert sorted(trie.order.tolist()) == [0, 1, 2, 3, 5]
    root_a = dict(trie.children[0])["a"]
    assert sorted(trie.order[trie.lo[root_a] : trie.hi[root_a]].tolist()) == [0, 1, 2, 5]


def test_smollm2_mask_equals_naive_on_a_sample(tok):
    texts = token_texts(tok)
    assert len(texts) == 49152 and texts[tok.eos_token_id] is None
    rng = random.Random(0)
    for left, right in STATES[:6]:
        c = FIMConstraint(left, right)
        mask = allowed_mask(c, tok)
        sample = rng.sample(range(len(texts)), 600) + [tok.eos_token_id]
        assert (mask[sample] == naive_allowed_mask(c, tok, token_ids=sample)[sample]).all()
        assert mask[tok.eos_token_id] == c.can_end()


def test_logits_processor_masks_and_feeds_generated_tokens(tok):
    import torch

    c = FIMConstraint("def f(x):\n    return x", "\n")
    prompt = [1, 2, 3]
    proc = FIMLogitsProcessor(c, tok, prompt_length=len(prompt))
    scores = proc(torch.tensor([prompt]), torch.zeros(1, len(tok)))
    eos = tok.eos_token_id
    assert scores[0, eos] == 0  # "return x" can end
    close = tok.convert_tokens_to_ids(")")
    assert scores[0, close] == float("-inf")
    plus = tok.encode(" +", add_special_tokens=False)
    scores = proc(torch.tensor([prompt + plus]), torch.zeros(1, len(tok)))
    assert c.middle_length == 2 and scores[0, eos] == float("-inf")


@pytest.mark.slow
def test_constrained_generation_with_a_random_model_stays_valid(tok):
    """Even a random-weight model only produces middles the constraint allows."""
    import torch

    from cadlib.models import load_model

    model = load_model("tiny-random", device="cpu", seed=0)
    left, right = "def f(x):\n    return x", "\n"
    c = FIMConstraint(left, right)
    prompt = tok.encode(left, return_tensors="pt")
    proc = FIMLogitsProcessor(c, tok, prompt_length=prompt.shape[1])
    torch.manual_seed(0)
    out = model.generate(
        prompt,
        max_new_tokens=12,
        do_sample=True,
        logits_processor=[proc],
        pad_token_id=tok.eos_token_id,
    )
    ids = out[0, prompt.shape[1] :].tolist()
    ended = ids[-1] == tok.eos_token_id
    middle = tok.decode([i for i in ids if i != tok.eos_token_id])
    check = FIMConstraint(left, right)
    assert all(check.feed(ch) for ch in middle)
    if ended:
        from cadlib.fim.differential import python_accepts

        assert python_accepts(left + middle + right)


def test_smollm2_mask_equals_naive_on_the_whole_vocabulary(tok):
    """The oracle of the fast mask: one fork per token, every id, on states where the walk
    takes its shortcuts (inside a name, between symbols mid-line, at a line start)."""
    for left, right, fed in [
        ("def f(x):\n    return x", "\n", ""),
        ("x = [1, ", "]\n", " "),
        ("def f():\n", "", "    "),
    ]:
        c = FIMConstraint(left, right)
        c.feed(fed)
        assert (allowed_mask(c, tok) == naive_allowed_mask(c, tok)).all()


# ----- one mask base ---------------------------------------------------------------------------


def test_the_three_masks_are_mask_processors(tok):
    import torch

    from cadlib.chapters.fim_constraint.run_edits import GenBodyMask
    from cadlib.decoding.generate_processor import GrammarLogitsProcessor
    from cadlib.decoding.processors import MaskProcessor

    masks = [
        GrammarLogitsProcessor(tok, "a\nb\n", prompt_length=0),
        FIMLogitsProcessor(FIMConstraint("x = ", "\n"), tok, prompt_length=0),
        GenBodyMask("x = ", "\n", tok),
    ]
    assert all(isinstance(m, MaskProcessor) for m in masks)
    scores = torch.randn(1, len(tok), generator=torch.Generator().manual_seed(0))
    for m in masks:  # the base's call and its one-row form agree
        ids = [] if m is masks[0] else tok.encode("1 +", add_special_tokens=False)
        row = m.mask_row(ids, scores[0])
        assert torch.equal(m(torch.tensor([ids], dtype=torch.long), scores)[0], row)
        assert 0 < torch.isfinite(row).sum() < len(tok)


# the left context, right context and generated text of each state; the last two split
# multi-byte characters over byte tokens (the mask then continues the pending bytes)
MIDDLES = [
    ("def f(x):\n    return x", "\n", " + 1 if x else 2"),
    ("x = [1, ", "]\n", "2, (3)"),
    ('s = "', '"\n', "a🦀ꙮ b"),
    ("x = 1  ", "\ny = 2\n", "# 𝔘 ok"),
]


def finite(scores) -> set:
    return set(np.flatnonzero(np.isfinite(np.asarray(scores))).tolist())


@pytest.mark.parametrize("left, right, text", MIDDLES)
def test_fim_mask_new_call_equals_the_old_one(tok, left, right, text):
    """After each generated token, the allowed ids through the MaskProcessor call (batch of
    one, prompt first), through one row (the base's mask_row) and the old way (the module's
    allowed_mask of a constraint fed by hand, applied by apply_mask) are the same set."""
    import torch

    from cadlib.fim.logits import apply_mask
    from cadlib.fim.mask import PendingBytes

    ids = tok.encode(text, add_special_tokens=False)
    prompt, width = [5, 6, 7], len(tok) + 3  # logits wider than the tokenizer: never allowed
    batch = FIMLogitsProcessor(FIMConstraint(left, right), tok, prompt_length=len(prompt))
    row = FIMLogitsProcessor(FIMConstraint(left, right), tok, prompt_length=len(prompt))
    fed, pending, texts = FIMConstraint(left, right), PendingBytes(), token_texts(tok)
    was_pending = False
    for n in range(len(ids) + 1):
        if n:
            fed.feed(pending.push(texts[ids[n - 1]]))
            was_pending |= bool(pending)
        new = batch(torch.tensor([prompt + ids[:n]]), torch.zeros(1, width))
        assert new.shape == (1, width)
        one = row.mask_row(prompt + ids[:n], torch.zeros(width))
        old = apply_mask(torch.zeros(width), allowed_mask(fed, tok, pending=pending.bytes))
        assert finite(new[0]) == finite(one) == finite(old)
        assert finite(new[0]) <= set(range(len(tok)))
    assert batch.constraint.middle_length == row.constraint.middle_length == fed.middle_length
    assert was_pending == any(isinstance(texts[i], bytes) for i in ids)


def test_body_mask_takes_both_calls(tok):
    """GenBodyMask: the decoder's body hook (one row, scores (V,)) and the MaskProcessor call
    (ids (1, seq), scores (1, V)) give the same masks and the same step records."""
    import torch

    from cadlib.chapters.fim_constraint.run_edits import GenBodyMask

    left, right = 'def f(a):\n    """Doc."""\n    x = a\n', "\n    return x\n"
    ids = tok.encode("\n    x = x + 1 # é🦀\n", add_special_tokens=False)
    hook, batch = GenBodyMask(left, right, tok), GenBodyMask(left, right, tok)
    for n in range(len(ids) + 1):
        one = hook(ids[:n], torch.zeros(len(tok)))
        two = batch(torch.tensor([ids[:n]], dtype=torch.long), torch.zeros(1, len(tok)))
        assert finite(one) == finite(two[0])
    assert hook.middle == batch.middle == "    x = x + 1 # é🦀"
    assert len(hook.mask_s) == len(batch.mask_s) == len(ids) + 1
    assert hook.middle_chars == batch.middle_chars
    with pytest.raises(ValueError, match="batch size 1"):
        batch(torch.tensor([ids, ids]), torch.zeros(2, len(tok)))


def test_smollm2_mask_equals_naive_inside_fstring_fields(tok):
    """Where a token may end an f-string field, the expression's syntax decides (checked with
    its text, beside the tables): inside a field, after a pending ``!``, after an invalid
    expression's pending ``!`` (every token is re-checked), in a format spec, and before an
    f-string opens."""
    states = [
        ('x = f"{a', '"\n'),
        ('x = f"{a b', '}"\n'),
        ('x = f"{a!', '"\n'),
        ('x = f"{a b!', '"\n'),
        ('x = f"{a:', '}"\n'),
        ("x = f", '"{a}"\n'),
    ]
    for left, right in states:
        c = FIMConstraint(left, right)
        assert (allowed_mask(c, tok) == naive_allowed_mask(c, tok)).all(), left
    texts = token_texts(tok)
    closes = [i for i, t in enumerate(texts) if isinstance(t, str) and t.startswith("}")]
    good, bad = FIMConstraint('x = f"{a', '"\n'), FIMConstraint('x = f"{a b', '"\n')
    assert allowed_mask(good, tok)[closes].any() and not allowed_mask(bad, tok)[closes].any()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=25, unique=True),
    st.sampled_from(STATES),
    st.lists(st.sampled_from(PIECES + ["-", "(", "[", "- -"]), max_size=5),
)
def test_lean_charts_give_the_previous_mask(vocab, state, fed):
    """The mask with lean charts (issue 34 §5: finished entries dropped, push chains built
    directly) equals the mask of the previous implementation on the same states, token by
    token along a fed middle."""
    from cadlib.fim.benchmark import _constraint

    left, right = state
    new, old = _constraint(left, right, True), _constraint(left, right, False)
    vocab = [*vocab, "-" * 9, "(((", "((((x", "- -", "[[[[", "~~~~"]  # chains of pushes
    trie_new, trie_old = TokenTrie(vocab), TokenTrie(vocab)
    for piece in ["", *fed]:
        new.feed(piece)
        old.feed(piece)
        assert (trie_new.allowed(new) == trie_old.allowed(old)).all()
        assert new.can_end() == old.can_end()


@pytest.mark.slow
def test_compare_masks_runs_both_arms_alternating_with_equal_masks(tok, humanevalpack_dir):
    from cadlib.corpora import load_corpus
    from cadlib.fim.benchmark import MASK_ARMS, compare_masks, mask_speed_summary

    corpus = load_corpus("heval-fix-py", local_dir=humanevalpack_dir)
    frame = compare_masks(
        corpus[:10],
        tok,
        n_problems=1,
        middle_chars=30,
        repeats=1,
        gc_modes=("default", "disabled"),
        progress=False,
    )
    assert set(frame.arm) == set(MASK_ARMS) and frame.equal.all()
    first = frame[frame.step == 1].arm.tolist()  # step 1 runs the arms in reverse order
    assert first[:2] == list(reversed(MASK_ARMS))
    summary = mask_speed_summary(frame)
    assert len(summary) == 2 * len(MASK_ARMS) and all(s["all_equal"] for s in summary)
    assert all(("median_ratio_to_first" in s) == (s["arm"] != list(MASK_ARMS)[0]) for s in summary)
    assert (frame[frame.gc == "disabled"].gc_collections == 0).all()


def test_smollm2_mask_equals_naive_where_a_token_opens_an_fstring(tok):
    """A token that opens an f-string and ends a field (``f"{``… ``}``) after a name that a
    quote would make its prefix, or anywhere: the expression is checked there too."""
    for left, right in [("x = f", "\n"), ("x = r", "\n"), ("x = ", "\n"), ("x = [1, ", "]\n")]:
        c = FIMConstraint(left, right)
        assert (allowed_mask(c, tok) == naive_allowed_mask(c, tok)).all(), left
    trie = TokenTrie.for_tokenizer(tok)
    assert set(trie.field_openers_inside) <= set(trie.field_openers) <= set(trie.field_enders)
