"""Compositions of Copy-as-Decode (issue 17 §3), counted exactly: the draft simulator on
hand-made transcripts whose forwards are known, its agreement with the decoder's own
accounting when nothing is drafted, speculative headers on a hand-made program, and the laws
the counts obey on real cases (drafts never add forwards; jump-forward never costs any)."""

import pytest

from cadlib.corpora import EditCase, load_corpus
from cadlib.costs import accounting as A
from cadlib.decoding.drafts import Drafter
from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.methods import prepare
from cadlib.grammar import Copy, Gen

KINDS = ("forced", "choice", "gen", "gen", "gen", "choice")
IDS = (10, 11, 12, 13, 14, 15)


def shape(forwards):
    return [(f.kind, f.n_ids, f.context, f.logits) for f in forwards]


def test_no_draft_is_one_forward_per_decision():
    fw = A.simulate_forwards(3, IDS, KINDS)
    # decisions at 1..5: the prefill carries the prompt and the forced id 0
    # (a forward is named after the id it feeds: the decision before)
    assert shape(fw) == [
        ("prefill", 4, 0, 1),
        ("choice", 1, 4, 1),
        ("gen", 1, 5, 1),
        ("gen", 1, 6, 1),
        ("gen", 1, 7, 1),
    ]


def test_an_exact_draft_decides_its_ids_and_the_bonus_in_one_forward():
    fw = A.simulate_forwards(3, IDS, KINDS, draft=lambda p: [12, 13, 14] if p == 2 else None)
    # before decision 2: id 1 + the draft of positions 2..4; position 5 is the bonus
    assert shape(fw) == [("prefill", 4, 0, 1), ("verify", 4, 4, 4)]


def test_a_wrong_draft_keeps_its_accepted_prefix():
    fw = A.simulate_forwards(3, IDS, KINDS, draft=lambda p: [12, 99, 99] if p == 2 else None)
    # id 12 accepted, 13 is the bonus, then 14 and 15 are decided one by one
    assert shape(fw) == [
        ("prefill", 4, 0, 1),
        ("verify", 4, 4, 4),
        ("gen", 1, 6, 1),
        ("gen", 1, 7, 1),
    ]


def test_without_jump_forward_every_forced_id_is_decided():
    fw = A.simulate_forwards(3, IDS, KINDS, jump_forward=False)
    assert shape(fw)[0] == ("prefill", 3, 0, 1) and len(fw) == 6


DOC = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5"
GOLD = "a = 1\nb = 2\nc = 30\nd = 4\ne = 5"


@pytest.fixture(scope="module")
def toy(tok):
    x = prepare("toy", EditCase("toy/0", DOC, GOLD, "Make c thirty."), tok)
    return x, transcript(x.program, DOC, tok)


def drafts_at_first_decisions(tok, x, tr, kinds):
    """``{position: draft}`` the drafter proposes at each op's first decision."""
    table = token_table(tok)
    drafter = Drafter(kinds, table, DOC, x.edit_prompt)
    return {
        p: drafter.propose(tr.ids[:p], tr.kinds[:p], tr.kinds[p], op)
        for p, op in A.first_decisions(tr, table).items()
    }


def test_the_toy_program_and_its_header_guesses(tok, toy):
    x, tr = toy
    assert list(x.program) == [Copy(1, 2), Gen("c = 30"), Copy(4, 5)]
    table = token_table(tok)
    starts = A.op_starts(tr, table)
    assert len(starts) == len(x.program) + 1  # three ops and </program>
    heads = drafts_at_first_decisions(tok, x, tr, ("headers",))
    assert len(heads) == len(starts)
    for pos in heads:
        assert tr.kinds[pos] in A.DECISION_KINDS
    # after the body that replaced one line, the guess resumes at line 4 up to the end (5)
    # and, the tail being short, carries "/>, the splice and </program>: the rest exactly
    after_gen = max(p for p in heads if p < starts[3])
    assert list(tr.ids[after_gen:]) == heads[after_gen]


def test_a_started_closer_drafts_the_rest_of_the_program(tok, toy):
    x, tr = toy
    table = token_table(tok)
    first_close = next(
        p for p in range(len(tr.ids)) if tr.kinds[p] == "gen" and tr.ids[p] == table.gen_close[0]
    )
    drafter = Drafter(("headers",), table, DOC, x.edit_prompt)
    p = first_close + 1
    draft = drafter.propose(tr.ids[:p], tr.kinds[:p], tr.kinds[p], None)
    assert draft == list(tr.ids[p:])
    # without the headers there is nothing to guess there
    assert (
        Drafter(("cursor",), table, DOC, x.edit_prompt).propose(
            tr.ids[:p], tr.kinds[:p], tr.kinds[p], None
        )
        == []
    )


def test_the_cursor_drafts_the_replaced_line_into_the_body(tok, toy):
    x, tr = toy
    table = token_table(tok)
    body = [p for p in range(len(tr.ids)) if tr.kinds[p] == "gen"]
    drafter = Drafter(("cursor",), table, DOC, x.edit_prompt)
    start = body[0]
    draft = drafter.propose(tr.ids[:start], tr.kinds[:start], "gen", None)
    old = list(table.body_ids("\n".join(DOC.split("\n")[2:])))  # the lines after the copy
    assert draft == old[: len(draft)] and len(draft) == A.BODY_PLD[0]
    # "c = 30" vs "c = 3": the draft agrees with the body up to where the edit begins
    agree = next(k for k, (a, b) in enumerate(zip(draft, tr.ids[start:], strict=False)) if a != b)
    assert agree >= 1
    with_heads = drafts_at_first_decisions(tok, x, tr, ("cursor", "headers"))
    opener = max(p for p in with_heads if p < start)
    assert with_heads[opener][-len(draft) :] == draft  # the <gen> guess carries the body start


def test_a_range_the_first_guess_missed_is_guessed_again_at_each_decision(tok):
    # 30 lines; line 27 rewritten and line 28 deleted: ... <gen>w27</gen> then lines 29-30,
    # where the guess at the op's first decision resumes at 28 (the body replaced one line)
    doc = "\n".join(f"v{i}" for i in range(1, 31))
    gold = doc.replace("v27\nv28\n", "w27\n")
    x = prepare("toy", EditCase("toy/1", doc, gold, "w27, no v28."), tok)
    assert list(x.program)[-1] == Copy(29, 30)
    tr = transcript(x.program, doc, tok)
    table = token_table(tok)
    drafter = Drafter(("headers",), table, doc, x.edit_prompt)

    def draft(p):
        return drafter.propose(tr.ids[:p], tr.kinds[:p], tr.kinds[p], None)

    literal = A.op_starts(tr, table)[-2] + len(table.op_literals["copy"])  # 29's first digit
    digit = table.encode
    assert draft(literal)[:3] == [*digit("2"), *digit("8"), *table.dash]  # resume at 28
    assert list(tr.ids[literal : literal + 2]) == [*digit("2"), *digit("9")]
    # once "29" is decided: taken as the start, to the end (30), "/>, the splice of lines
    # 29-30 and </program>: the rest exactly, at the dash and at the end's first digit
    dash = literal + 2
    assert draft(dash) == list(tr.ids[dash:])
    assert draft(dash + len(table.dash)) == list(tr.ids[dash + len(table.dash) :])
    # after "29-30" (were the terminator a decision): "/>, the splice, </program>
    end = dash + len(table.dash) + 2
    assert draft(end) == list(tr.ids[end:])
    # outside a range, or without the headers, nothing
    assert draft(len(tr.ids) - 1) == []
    assert (
        Drafter(("cursor",), table, doc, x.edit_prompt).propose(
            tr.ids[:dash], tr.kinds[:dash], tr.kinds[dash], None
        )
        == []
    )


def test_headers_save_the_forwards_of_a_well_guessed_header(tok, toy):
    x, tr = toy
    plain = A.composed(x.edit_prompt, tr, x.program, DOC, tok, "m=0")
    heads = A.composed(x.edit_prompt, tr, x.program, DOC, tok, "m=0 +headers")
    assert plain.forwards == A.copy_as_decode(len(x.edit_prompt), tr, 0).forwards
    assert heads.decode_forwards < plain.decode_forwards
    assert heads.output == plain.output and heads.T == plain.T
    with pytest.raises(ValueError, match="unknown composition"):
        A.composed(x.edit_prompt, tr, x.program, DOC, tok, "m=0 +magic")


def test_bound_forwards_charge_body_ids_and_one_forward_per_copy(toy):
    x, tr = toy
    fw = A.bound_forwards(len(x.edit_prompt), tr)
    assert fw[0].kind == "prefill"
    assert sum(f.kind == "step" for f in fw) == tr.count("gen")
    assert sum(f.n_ids for f in fw if f.kind == "splice") == tr.count("splice")
    assert sum(f.kind == "splice" for f in fw) == len(x.program.copies)


def test_laws_of_the_compositions_on_real_cases(tok):
    cases = load_corpus("heval-fix-py")[:25] + load_corpus("probeedit")[:3]
    for case in cases:
        x = prepare("c", case, tok)
        tr = transcript(x.program, case.doc, tok)
        n = len(x.edit_prompt)
        base = A.copy_as_decode(n, tr, 0)
        assert A.simulate_forwards(n, tr.ids, tr.kinds) == base.forwards, case.id
        got = {
            s: A.composed(x.edit_prompt, tr, x.program, case.doc, tok, s) for s in A.COMPOSITIONS
        }
        assert got["m=0 no-JF"].decode_forwards == base.decode_forwards + tr.count("forced")
        for s in A.COMPOSITIONS[1:]:
            assert got[s].decode_forwards <= base.decode_forwards, (case.id, s)
            assert got[s].output == base.output and got[s].T == base.T
