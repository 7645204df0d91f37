"""The drafts of :mod:`cadlib.decoding.drafts`: each source on its own (prompt lookup, cursor
lookup, op headers, and the program position they share), how :class:`Drafter` composes them,
and what it proposes at every position of a set of transcripts, pinned for every combination of
kinds and caps (recorded from the drafter before it was split into one class per strategy,
issue 33)."""

import hashlib
import itertools
import random

import pytest

from cadlib.corpora import EditCase, load_corpus
from cadlib.costs import accounting as A
from cadlib.decoding.drafts import (
    BODY_PLD,
    CursorDrafts,
    Drafter,
    HeaderDrafts,
    ProgramPosition,
    PromptLookupDrafts,
)
from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.methods import prepare
from cadlib.decoding.prompt_lookup import lookup_draft, ngram_index
from cadlib.grammar import Copy, Gen, Program

SUBSETS = [k for r in (1, 2, 3) for k in itertools.combinations(Drafter.KINDS, r)]
CAPS = (None, 3, 8)
LINES30 = "\n".join(f"v{i}" for i in range(1, 31))
DOC = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5"
K, N = BODY_PLD


@pytest.fixture(scope="module")
def toy(tok):
    """``(table, prompt ids, transcript)`` of ``<copy 1-2><gen>c = 30</gen><copy 4-5>`` on DOC."""
    x = prepare("toy", EditCase("toy/0", DOC, DOC.replace("c = 3", "c = 30"), "c = 30."), tok)
    assert list(x.program) == [Copy(1, 2), Gen("c = 30"), Copy(4, 5)]
    return token_table(tok), x.edit_prompt, transcript(x.program, DOC, tok)


def at(tr, p):
    """The transcript before position ``p`` and the kind of ``p``: what a source is told."""
    return tr.ids[:p], tr.kinds[:p], tr.kinds[p]


def test_the_program_position_knows_the_ops_before_and_the_open_body(toy):
    table, _, tr = toy
    position = ProgramPosition(table)
    body, closer = tr.kinds.index("gen"), tr.ids.index(table.gen_close[0])
    assert position.ops_before(tr.ids, tr.kinds, body) == (Copy(1, 2), 2)
    assert position.open_body(*at(tr, body)) == ()  # the body's first id: an empty body
    assert position.open_body(*at(tr, body + 2)) == tr.ids[body : body + 2]
    assert position.closer_begun(tr.ids[body : closer + 1]) == 1
    assert position.open_body(*at(tr, closer + 1)) is None  # the closer has begun
    assert position.open_body(*at(tr, body - 2)) is None  # not a body id


def test_prompt_lookup_drafts_look_in_the_prompt_and_the_ids_inside_a_body(toy):
    table, prompt, tr = toy
    source = PromptLookupDrafts(ProgramPosition(table), prompt, K, N)
    body, closer = tr.kinds.index("gen"), tr.ids.index(table.gen_close[0])
    assert source.propose(*at(tr, body - 2), None) is None  # a choice: not its turn
    seq = [*prompt, *tr.ids[: body + 2]]
    draft = source.propose(*at(tr, body + 2), None)
    assert draft and draft == list(lookup_draft(seq, len(seq), K, N, ngram_index(seq, N)))
    assert source.propose(*at(tr, closer + 1), None) is None  # the headers' turn


def test_cursor_drafts_look_in_the_lines_ahead_then_fall_back_to_prompt_lookup(toy):
    table, prompt, tr = toy
    position = ProgramPosition(table)
    cursor = CursorDrafts(
        position, table, DOC.split("\n"), K, N, PromptLookupDrafts(position, prompt, K, N)
    )
    body = tr.kinds.index("gen")
    ahead = list(table.body_ids("c = 3\nd = 4\ne = 5"))  # the lines after the copy of 1-2
    assert cursor.propose(*at(tr, body), None) == ahead[:K] == cursor.first_ids(2)
    assert cursor.propose(*at(tr, body + 2), None) == ahead[2 : 2 + K]  # after its "\nc"
    # a body id found nowhere ahead: the prompt-lookup rule over the prompt and the ids
    unseen = table.op_literals["close"][1]
    assert unseen not in ahead
    ids, kinds = (*tr.ids[: body + 2], unseen), (*tr.kinds[: body + 2], "gen")
    fallback = PromptLookupDrafts(ProgramPosition(table), prompt, K, N).after(ids)
    assert fallback and cursor.propose(ids, kinds, "gen", None) == fallback
    assert cursor.propose(*at(tr, body - 2), None) is None


def test_header_drafts_guess_the_next_op_and_carry_the_cursors_lines(toy):
    table, prompt, tr = toy
    lines = DOC.split("\n")
    headers = HeaderDrafts(ProgramPosition(table), table, lines)
    firsts = A.first_decisions(tr, table)  # {an op's first decision: its first position}
    (first, start), (opener, _) = list(firsts.items())[:2]
    whole = [*table.op_literals["copy"], *table.encode("1"), *table.dash, *table.encode("5")]
    assert headers.propose(*at(tr, first), start) == whole[first - start :]  # the whole doc
    gen = list(table.op_literals["gen"])
    assert headers.propose(*at(tr, opener), opener) == gen  # after a copy, a <gen>
    body = tr.kinds.index("gen")
    assert headers.propose(*at(tr, body + 2), None) is None  # an open body: not its turn
    closer = tr.ids.index(table.gen_close[0]) + 1  # then the rest of the program, exactly
    assert headers.propose(*at(tr, closer), None) == list(tr.ids[closer:])
    position = ProgramPosition(table)
    cursor = CursorDrafts(position, table, lines, K, N, PromptLookupDrafts(position, prompt, K, N))
    with_cursor = HeaderDrafts(position, table, lines, cursor)
    assert with_cursor.propose(*at(tr, opener), opener) == [*gen, *cursor.first_ids(2)]


@pytest.mark.parametrize(
    ("kinds", "sources"),
    [
        (("pld",), [PromptLookupDrafts]),
        (("cursor",), [CursorDrafts]),
        (("pld", "cursor"), [CursorDrafts]),
        (("headers",), [HeaderDrafts]),
        (("pld", "headers"), [HeaderDrafts, PromptLookupDrafts]),
        (("cursor", "headers"), [HeaderDrafts, CursorDrafts]),
        (("pld", "cursor", "headers"), [HeaderDrafts, CursorDrafts]),
    ],
)
def test_the_drafter_asks_the_headers_then_one_body_source(tok, kinds, sources):
    drafter = Drafter(kinds, token_table(tok), DOC, [1, 2, 3])
    assert [type(source) for source in drafter.sources] == sources
    assert len({id(source.position) for source in drafter.sources}) == 1
    if {"cursor", "headers"} <= set(kinds):
        assert drafter.sources[0].cursor is drafter.sources[1]


def random_program(doc: str, rng: random.Random) -> Program:
    """A program of 2-6 ops over ``doc`` that no edit asked for: copies of any range (out of
    order, overlapping, short or to the end) between bodies of one to three lines, some of
    them near-copies of document lines, so the drafts meet guesses that miss."""
    lines = doc.split("\n")
    ops, copy_next = [], rng.random() < 0.5
    for _ in range(rng.randint(2, 6)):
        if copy_next:
            start = rng.randint(1, len(lines))
            ops.append(Copy(start, rng.choice([start, len(lines), rng.randint(start, len(lines))])))
        else:
            picked = rng.sample(lines, min(rng.randint(1, 3), len(lines)))
            ops.append(Gen("\n".join(line[: rng.randint(0, len(line))] + "x" for line in picked)))
        copy_next = not copy_next
    return Program(ops)


@pytest.fixture(scope="module")
def transcripts(tok):
    """``[(doc, prompt ids, transcript)]``: the oracle transcripts of toy and real cases, then
    transcripts of seeded random programs over two of their documents."""
    short = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5"
    py = sorted(load_corpus("heval-fix-py"), key=lambda c: len(c.doc) + len(c.gold))
    cases = [
        EditCase("toy/0", short, short.replace("c = 3", "c = 30"), "Make c thirty."),
        EditCase("toy/1", short + "\n", short.replace("c = 3", "c = 30") + "\n", "c = 30."),
        EditCase("toy/2", LINES30, LINES30.replace("v27\nv28\n", "w27\n"), "w27, no v28."),
        *py[:3],
        py[len(py) // 2],
        *load_corpus("probeedit")[:2],
    ]
    out = []
    for case in cases:
        x = prepare("t", case, tok)
        out.append((case.doc, x.edit_prompt, transcript(x.program, case.doc, tok)))
    rng = random.Random(33)
    for doc, prompt, _ in (out[2], out[-1]):
        for _ in range(6):
            out.append((doc, prompt, transcript(random_program(doc, rng), doc, tok)))
    return out


def drafts_along(tr, table, doc, prompt, kinds, cap) -> list[list[int]]:
    """What one drafter proposes at every position of ``tr``, in order, told the op's first
    position at an op's first decision (as the accounting and the decoder tell it)."""
    drafter = Drafter(kinds, table, doc, prompt, max_ids=cap)
    firsts = A.first_decisions(tr, table)
    return [
        drafter.propose(tr.ids[:p], tr.kinds[:p], tr.kinds[p], firsts.get(p))
        for p in range(len(tr.ids))
    ]


def fingerprint(transcripts, table, kinds, cap) -> str:
    """A digest of every draft along every transcript (drafts compared id for id)."""
    h = hashlib.sha256()
    for doc, prompt, tr in transcripts:
        h.update(repr(drafts_along(tr, table, doc, prompt, kinds, cap)).encode())
    return h.hexdigest()[:16]


#: :func:`fingerprint` of each (kinds, cap), recorded from the single-class drafter.
RECORDED = {
    (("pld",), None): "1597c58cefe55eec",
    (("pld",), 3): "6a0490251bd559d9",
    (("pld",), 8): "4c484c11da75fcb6",
    (("cursor",), None): "7316a5a169e779b2",
    (("cursor",), 3): "35f5853e15d0996b",
    (("cursor",), 8): "87c7ba59389fe6bd",
    (("headers",), None): "f5a1658d294b0795",
    (("headers",), 3): "e7d2154ede701e18",
    (("headers",), 8): "a0eac5fb456ccd4c",
    (("pld", "cursor"), None): "7316a5a169e779b2",
    (("pld", "cursor"), 3): "35f5853e15d0996b",
    (("pld", "cursor"), 8): "87c7ba59389fe6bd",
    (("pld", "headers"), None): "22f294ba6e0d284a",
    (("pld", "headers"), 3): "ee42a143d24a08c7",
    (("pld", "headers"), 8): "e0bda6e0cb093086",
    (("cursor", "headers"), None): "182a6921145493d0",
    (("cursor", "headers"), 3): "f8240c5785ceb0af",
    (("cursor", "headers"), 8): "21b255e83382bd76",
    (("pld", "cursor", "headers"), None): "182a6921145493d0",
    (("pld", "cursor", "headers"), 3): "f8240c5785ceb0af",
    (("pld", "cursor", "headers"), 8): "21b255e83382bd76",
}


@pytest.mark.parametrize("kinds", SUBSETS, ids="+".join)
def test_the_drafts_along_transcripts_are_the_recorded_ones(tok, transcripts, kinds):
    table = token_table(tok)
    got = {cap: fingerprint(transcripts, table, kinds, cap) for cap in CAPS}
    assert got == {cap: RECORDED[kinds, cap] for cap in CAPS}
