"""The drafts of :mod:`cadlib.decoding.drafts`: what the composed :class:`Drafter` proposes at every
position of a set of transcripts, pinned for every combination of kinds and caps (recorded from
the drafter before it was split into one class per strategy, issue 33)."""

import hashlib
import itertools
import random

import pytest

from cadlib.corpora import EditCase, load_corpus
from cadlib.costs import accounting as A
from cadlib.decoding.drafts import Drafter
from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.methods import prepare
from cadlib.grammar import Copy, Gen, Program

SUBSETS = [k for r in (1, 2, 3) for k in itertools.combinations(Drafter.KINDS, r)]
CAPS = (None, 3, 8)
LINES30 = "\n".join(f"v{i}" for i in range(1, 31))


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
    cases = [EditCase("toy/0", short, short.replace("c = 3", "c = 30"), "Make c thirty."),
             EditCase("toy/1", short + "\n", short.replace("c = 3", "c = 30") + "\n", "c = 30."),
             EditCase("toy/2", LINES30, LINES30.replace("v27\nv28\n", "w27\n"), "w27, no v28."),
             *py[:3], py[len(py) // 2], *load_corpus("probeedit")[:2]]  # fmt: skip
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
    return [drafter.propose(tr.ids[:p], tr.kinds[:p], tr.kinds[p], firsts.get(p))
            for p in range(len(tr.ids))]  # fmt: skip


def fingerprint(transcripts, table, kinds, cap) -> str:
    """A digest of every draft along every transcript (drafts compared id for id)."""
    h = hashlib.sha256()
    for doc, prompt, tr in transcripts:
        h.update(repr(drafts_along(tr, table, doc, prompt, kinds, cap)).encode())
    return h.hexdigest()[:16]


#: :func:`fingerprint` of each (kinds, cap), recorded from the single-class drafter.
RECORDED = {
    (('pld',), None): '1597c58cefe55eec',
    (('pld',), 3): '6a0490251bd559d9',
    (('pld',), 8): '4c484c11da75fcb6',
    (('cursor',), None): '7316a5a169e779b2',
    (('cursor',), 3): '35f5853e15d0996b',
    (('cursor',), 8): '87c7ba59389fe6bd',
    (('headers',), None): 'f5a1658d294b0795',
    (('headers',), 3): 'e7d2154ede701e18',
    (('headers',), 8): 'a0eac5fb456ccd4c',
    (('pld', 'cursor'), None): '7316a5a169e779b2',
    (('pld', 'cursor'), 3): '35f5853e15d0996b',
    (('pld', 'cursor'), 8): '87c7ba59389fe6bd',
    (('pld', 'headers'), None): '22f294ba6e0d284a',
    (('pld', 'headers'), 3): 'ee42a143d24a08c7',
    (('pld', 'headers'), 8): 'e0bda6e0cb093086',
    (('cursor', 'headers'), None): '182a6921145493d0',
    (('cursor', 'headers'), 3): 'f8240c5785ceb0af',
    (('cursor', 'headers'), 8): '21b255e83382bd76',
    (('pld', 'cursor', 'headers'), None): '182a6921145493d0',
    (('pld', 'cursor', 'headers'), 3): 'f8240c5785ceb0af',
    (('pld', 'cursor', 'headers'), 8): '21b255e83382bd76',
}


@pytest.mark.parametrize("kinds", SUBSETS, ids="+".join)
def test_the_drafts_along_transcripts_are_the_recorded_ones(tok, transcripts, kinds):
    table = token_table(tok)
    got = {cap: fingerprint(transcripts, table, kinds, cap) for cap in CAPS}
    assert got == {cap: RECORDED[kinds, cap] for cap in CAPS}
