"""The token-level FSM (paper §2.3, Appendix "States"): id tables, masks, ranges, </gen>."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cadlib.decoding.fsm import CopyGenFSM, TokenTable, token_table, transcript
from cadlib.escape import RESERVED
from cadlib.grammar import Copy, Gen, Program, parse_program
from cadlib.models import load_tokenizer
from cadlib.models.tokenizer import qwen25_tokenizer
from cadlib.resolver import resolve


@pytest.fixture(scope="module")
def smol():
    return token_table(load_tokenizer("smollm2-135m-instruct"))


@pytest.fixture(scope="module")
def qwen():
    return token_table(qwen25_tokenizer())


def walk(fsm, ids, state=None):
    state = state or fsm.initial()
    for i in ids:
        state = fsm.advance(state, i)
    return state


def to_await_op(fsm):
    """The state after ``<program>\\n``."""
    return walk(fsm, fsm.table.program_open)


# ----- id tables ------------------------------------------------------------------------------

# fmt: off
literal__smollm2__qwen25 = [
    ("<program>", [44, 18041, 46], [27, 14906, 29]),
    ("</gen>", [9617, 1639, 46], [522, 4370, 29]),
    ('<copy lines="', [44, 9654, 3204, 2671], [27, 8560, 5128, 428]),
    ("</program>", [9617, 18041, 46], [522, 14906, 29]),
]
# fmt: on


@pytest.mark.parametrize("literal,smol_ids,qwen_ids", literal__smollm2__qwen25)
def test_literal_ids_of_both_tokenizers(smol, qwen, literal, smol_ids, qwen_ids):
    assert list(smol.encode(literal)) == smol_ids
    assert list(qwen.encode(literal)) == qwen_ids


def test_table_ids(smol, qwen):
    """The closing literal is encode("</gen>\n") up to the id that completes </gen>."""
    assert smol.gen_close == (9617, 1639, 46) and smol.after_gen_close == (198,)
    assert qwen.gen_close == (522, 4370, 397) and qwen.after_gen_close == ()  # ">\n" is one id
    assert smol.op_literals["gen"] == (44, 1639, 46)  # SmolLM2 merges "\n" with indentation
    assert qwen.op_literals["gen"] == (27, 4370, 397)
    assert sorted(smol.digits.values()) == list("0123456789")


def test_table_is_cached_per_tokenizer(qwen):
    assert token_table(qwen25_tokenizer()) is qwen


@pytest.mark.parametrize("which", ["smol", "qwen"])
def test_paper_decision_masks(which, request):
    """AWAIT_OP: {<} before the first op, {<, </} after; AFTER_LT: {copy, gen}."""
    table = request.getfixturevalue(which)
    fsm = CopyGenFSM(table, "a\nb")
    state = to_await_op(fsm)
    lt, lt_slash = table.op_literals["copy"][0], table.op_literals["close"][0]
    assert fsm.allowed(state).single == lt  # minimum-one-op: "<" is forced
    state = fsm.advance(state, lt)
    assert set(fsm.allowed(state).ids.tolist()) == {
        table.op_literals["copy"][1],
        table.op_literals["gen"][1],
    }
    after_copy = walk(fsm, table.encode('copy lines="1-2'), state)
    after_copy = walk(fsm, [i for i, _ in fsm.copy_end(1, 2)], after_copy)  # "/> + splice
    assert after_copy.op == 1
    assert set(fsm.allowed(after_copy).ids.tolist()) == {lt, lt_slash}


def test_state_repr_shows_the_cursor(smol):
    fsm = CopyGenFSM(smol, "\n".join("x" * 12))
    state = walk(fsm, smol.encode('<copy lines="12-'), to_await_op(fsm))
    assert repr(state) == '<COPY_LINES op=0: <copy lines="12-\u2588>'


# ----- ranges ---------------------------------------------------------------------------------


def allowed_text(fsm, state):
    return sorted(fsm.table.token_bytes[i].decode() for i in fsm.allowed(state).ids.tolist())


def test_range_digits_respect_the_document(smol):
    fsm = CopyGenFSM(smol, "\n".join(["x"] * 12))  # 12 lines
    at = walk(fsm, smol.op_literals["copy"], to_await_op(fsm))
    assert allowed_text(fsm, at) == list("123456789")  # no leading zero
    one = walk(fsm, smol.encode("1"), at)
    assert allowed_text(fsm, one) == ["-", "0", "1", "2"]
    two = walk(fsm, smol.encode("2"), at)
    assert fsm.allowed(two).single == smol.dash[0]  # 2x > 12: "-" is forced
    j = walk(fsm, smol.encode("1-"), at)
    assert allowed_text(fsm, j) == list("123456789")
    j5 = walk(fsm, smol.encode("5-"), at)
    assert allowed_text(fsm, j5) == ["1", "5", "6", "7", "8", "9"]  # j >= 5: 1x, 5..9
    j51 = walk(fsm, smol.encode("1"), j5)
    assert allowed_text(fsm, j51) == ["0", "1", "2"]  # 1 < 5: no terminator yet
    with pytest.raises(ValueError, match="not a valid range token"):
        walk(fsm, smol.encode("3"), j51)  # 13 > 12


def multi_digit_table() -> TokenTable:
    """A toy tokenizer with multi-digit tokens ("12", "345") and greedy longest match."""
    pieces = [
        '<copy lines="',
        '"/>',
        "<gen>\n",
        "</gen>",
        "<program>\n",
        "</program>",
        "<",
        "</",
        "-",
        "\n",
        "\t",
        "12",
        "345",
        *"0123456789",
        *"abcdefghijklmnopqrstuvwxyz ",
        "<eos>",
    ]
    vocab = [p.encode() for p in pieces]

    def encode(text):
        out, i = [], 0
        while i < len(text):
            k = max(
                (k for k, p in enumerate(pieces[:-1]) if text.startswith(p, i)),
                key=lambda k: len(pieces[k]),
            )
            out.append(k)
            i += len(pieces[k])
        return out

    return TokenTable("toy", vocab, encode, frozenset({len(pieces) - 1}), (len(pieces) - 1,))


def test_multi_digit_tokens_are_admitted_only_as_valid_prefixes():
    table = multi_digit_table()
    fsm = CopyGenFSM(table, "\n".join(["x"] * 150))
    at = walk(fsm, table.op_literals["copy"], to_await_op(fsm))
    assert "12" in allowed_text(fsm, at) and "345" not in allowed_text(fsm, at)  # 345 > 150
    after_12 = walk(fsm, [table.encode("12")[0]], at)
    assert set(allowed_text(fsm, after_12)) == set("0123456789") | {"-"}
    assert "12" not in allowed_text(fsm, after_12)  # 1212 > 150
    program = Program([Copy(12, 123), Gen("ok")])
    tr = transcript(program, fsm.doc, table)
    assert parse_program(tr.program_text(table)) == program


# ----- the gen body and </gen> ----------------------------------------------------------------


def body_state(fsm):
    return walk(fsm, fsm.table.op_literals["gen"], walk(fsm, [], to_await_op(fsm)))


@pytest.mark.parametrize("which", ["smol", "qwen"])
def test_gen_close_is_the_exact_id_sequence(which, request):
    table = request.getfixturevalue(which)
    fsm = CopyGenFSM(table, "a")
    body = walk(fsm, table.encode("x = a "), body_state(fsm))
    spellings = {
        tuple(table.encode(p)) + tuple(table.encode(q))
        for p, q in [("<", "/gen>"), ("</", "gen>"), ("</g", "en>"), ("</ge", "n>")]
    }
    spellings |= {tuple(table.encode("<")) + tuple(table.encode("/")) + tuple(table.encode("gen>"))}
    spellings |= {tuple(table.encode("</gen>")), tuple(table.encode("</gen>\n"))}
    spellings = {ids for ids in spellings if ids[: len(table.gen_close)] != table.gen_close}
    for ids in spellings:  # every other spelling is refused at the id that completes it
        with pytest.raises(ValueError, match="reserved literal"):
            walk(fsm, ids, body)
    closed = walk(fsm, table.gen_close, body)
    assert closed.op == 1 and closed.phase == "op"


@pytest.mark.parametrize("which", ["smol", "qwen"])
def test_only_the_detector_id_can_complete_gen_close(which, request):
    """After ``</``, ``gen``: ``>`` (SmolLM2) or ``>\n`` (Qwen2.5) closes; every other id
    that starts with ``>`` (``>\n``, ``>"``, ``></``, ...) would complete ``</gen>``: refused."""
    table = request.getfixturevalue(which)
    fsm = CopyGenFSM(table, "a")
    partial = walk(fsm, table.gen_close[:-1], body_state(fsm))
    allowed = fsm.allowed(partial)
    gt = [i for i, b in enumerate(table.token_bytes) if b.startswith(b">")]
    assert [i for i in gt if i in allowed] == [table.gen_close[-1]]


def test_gen_close_split_across_tokens_is_detected_exactly_once(smol):
    """Body "a</gen" (spelled '<', '/', 'gen'), then the real closer: one gen op, whose text
    keeps the partial literal."""
    fsm = CopyGenFSM(smol, "a")
    ids = list(smol.op_literals["gen"]) + smol.encode("a<") + smol.encode("/gen")
    ids += list(smol.gen_close) + list(smol.newline) + list(smol.op_literals["close"])
    state, closes = to_await_op(fsm), 0
    for i in ids:
        new = fsm.advance(state, i)
        closes += new.op > state.op
        state = new
    assert closes == 1 and state.phase == "done"
    text = b"".join(smol.token_bytes[i] for i in smol.program_open + tuple(ids)).decode()
    assert parse_program(text) == Program([Gen("a</gen")])


def test_eos_and_special_tokens_are_masked_in_bodies(smol):
    fsm = CopyGenFSM(smol, "a", vocab_size=len(smol.token_bytes) + 64)
    allowed = fsm.allowed(body_state(fsm))
    assert not any(i in allowed for i in smol.special_ids)
    assert not any(i in allowed for i in range(len(smol.token_bytes), fsm.vocab_size))


# ----- random walks: every program parses and resolves strictly -------------------------------


def random_walk(fsm, rng: torch.Generator, budget: int, boost: float) -> list[int]:
    """Masked argmax under random logits. With probability ``boost`` per body step, one id is
    pushed up: the next id of ``</gen>`` (so bodies close) or a trap (another spelling of
    ``</gen>``, ``>\n``, ``<``: what the mask must refuse)."""
    table, state, ids, chosen = fsm.table, fsm.initial(), [], 0
    traps = [
        *table.lt,
        *table.encode("/"),
        *table.encode("gen>"),
        *table.encode(">\n"),
        *table.encode("</"),
        *table.encode("copy"),
        *table.newline,
    ]
    while state.phase != "done":
        allowed = fsm.allowed(state)
        if allowed.single is None and chosen >= budget:
            for tok in fsm.closing_ids(state):
                state = fsm.advance(state, tok)
                ids.append(tok)
            break
        logits = torch.randn(fsm.vocab_size, generator=rng)
        u = torch.rand(2, generator=rng).tolist()
        if state.phase == "gen" and u[0] < boost:
            pool = [table.gen_close[state.closer]] * 3 + traps
            logits[pool[int(u[1] * len(pool))]] += 20.0
        tok = allowed.single if allowed.single is not None else allowed.argmax(logits)
        chosen += allowed.single is None
        state = fsm.advance(state, tok)
        ids.append(tok)
    return ids


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_lines=st.integers(1, 130),
    seed=st.integers(0, 2**31 - 1),
    budget=st.integers(0, 80),
    boost=st.sampled_from([0.0, 0.3, 0.7]),
    which=st.sampled_from(["smol", "qwen"]),
)
def test_random_logits_always_yield_a_program_that_resolves_strictly(
    smol, qwen, n_lines, seed, budget, boost, which
):
    table = smol if which == "smol" else qwen
    doc = "\n".join(f"line {k} <gen> </gen>" for k in range(1, n_lines + 1))
    fsm = CopyGenFSM(table, doc, vocab_size=len(table.token_bytes) + 7)
    ids = random_walk(fsm, torch.Generator().manual_seed(seed), budget, boost)
    splice = _splice_positions(fsm, ids)
    program_text = b"".join(
        table.token_bytes[i] for k, i in enumerate(ids) if k not in splice
    ).decode(errors="replace")
    program = parse_program(program_text)
    resolve(program, doc, mode="strict")
    # no reserved literal hides in a body: each occurs exactly as often as the ops need it
    count = {lit: program_text.count(lit) for lit in RESERVED}
    assert count["<gen>"] == count["</gen>"] == len(program.gens)
    assert count["<copy"] == len(program.copies) and count["</copy>"] == 0
    assert count["</program>"] == 1


def _splice_positions(fsm, ids) -> set:
    state, out = fsm.initial(), set()
    for k, i in enumerate(ids):
        if state.pending and state.pending[0][1] == "splice":
            out.add(k)
        state = fsm.advance(state, i)
    return out


# ----- the transcript -------------------------------------------------------------------------


def test_transcript_layout(smol):
    doc = "def f(x):\n    return x\n"
    program = Program([Copy(1, 1), Gen("    return x + 1"), Copy(3, 3)])
    tr = transcript(program, doc, smol)
    assert tr.text(smol) == (
        '<program>\n<copy lines="1-1"/>\ndef f(x):\n<gen>\n    return x + 1\n</gen>\n'
        '<copy lines="3-3"/>\n\n</program>'
    )
    assert parse_program(tr.program_text(smol)) == program
    splice = [i for i, k in zip(tr.ids, tr.kinds, strict=True) if k == "splice"]
    assert b"".join(smol.token_bytes[i] for i in splice) == b"\ndef f(x):\n" + b"\n\n"
    assert set(tr.kinds) == {"forced", "choice", "gen", "splice"}


def test_transcript_minus_tags_is_the_resolved_text_plus_newline(smol):
    doc = "a\nb\nc\nd"
    program = Program([Copy(1, 2), Gen("X\n"), Copy(4, 4)])
    text = transcript(program, doc, smol).text(smol)
    tag_lines = (
        "<program>\n",
        '<copy lines="1-2"/>\n',
        "<gen>\n",
        "</gen>\n",
        '<copy lines="4-4"/>\n',
        "</program>",
    )
    for tag in tag_lines:
        text = text.replace(tag, "", 1)
    assert text == resolve(program, doc) + "\n"


def test_transcript_escapes_reserved_literals(smol):
    program = Program([Gen("if a </gen> b: <copy lines")])
    tr = transcript(program, "x", smol)
    assert parse_program(tr.program_text(smol)) == program


def test_transcript_rejects_out_of_range_programs(smol):
    with pytest.raises(ValueError, match="range"):
        transcript(Program([Copy(1, 3)]), "a\nb", smol)


def test_splice_is_retokenized_across_the_boundary(smol):
    """A copied line with trailing spaces tokenizes as in running text before "<"."""
    table = smol
    ids = table.splice_ids("x = 1  ")
    assert list(ids) + list(table.lt) == table.encode("\nx = 1  \n<")
    assert list(ids) != table.encode("\nx = 1  \n")  # the naive encoding differs here
