"""The decoder's streaming API (:meth:`CopyDecoder.stream`, :mod:`cadlib.decoding.streaming`):
op by op, or with generated text as it is written (``cad edit --stream``); joined, the pieces
are the run's resolution, and the stream holds the run's result once exhausted."""

import pytest

from cadlib.decoding.decoder import CopyDecoder, DecodeResult
from cadlib.decoding.streaming import TextStream
from cadlib.grammar import Copy, Gen, Program
from cadlib.oracle import oracle_program
from cadlib.prompts import edit_prompt_ids
from cadlib.resolver import resolve

DOC = "def add(a, b):\n    total = a - b\n    return total\n\n\nprint(add(1, 2))\n"
GOLD = "def add(a, b):\n    total = a + b\n    return total\n\n\nprint(add(1, 2))\n"


class _Table:
    """One id per character (the ids are code points)."""

    token_bytes = [chr(i).encode() for i in range(0x3000)]


class _Run:
    def __init__(self):
        self.ids, self.kinds = [], []


def _pieces(program: Program, doc: str, as_written: bool) -> list[str]:
    """The text a :class:`TextStream` adds at each id of ``program``, written one character per
    decision, as a model writes."""
    stream, run, pieces = TextStream(_Table(), doc, as_written), _Run(), []
    for ch in str(program):
        run.ids.append(ord(ch))
        run.kinds.append("gen")
        pieces.append("".join(stream.feed(run)))
    return pieces


@pytest.mark.parametrize("body", ["x = 1\ny = 2\n" * 3, "a </gen> and \u27e8 b", ""])
def test_as_written_gives_generated_text_before_its_op_closes(body):
    doc = "one\ntwo\nthree\n"
    program = Program([Copy(1, 1), Gen(body), Copy(3, 4)])
    pieces = _pieces(program, doc, as_written=True)
    assert "".join(pieces) == resolve(program, doc)
    closed = str(program).index("</gen>")  # the body's text was out before its op completed
    written = "".join(pieces[:closed])
    assert written.startswith("one")
    if "<" not in body:  # held back: at most a tail that could be an entity or "\n</gen>"
        assert len(written) >= len("one\n") + len(body) - TextStream.HOLD


def test_op_by_op_gives_each_op_once_it_completes():
    doc = "one\ntwo\nthree\n"
    program = Program([Copy(1, 1), Gen("x = 1\ny = 2"), Copy(3, 4)])
    pieces = [p for p in _pieces(program, doc, as_written=False) if p]
    assert pieces == ["one", "\nx = 1\ny = 2", "\nthree\n"]


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("as_written", [False, True])
def test_stream_holds_the_result_of_the_same_run(model, tok, as_written):
    prompt = edit_prompt_ids(tok, "Fix the bug in add.", DOC)
    decoder = CopyDecoder(model, tok, max_new_tokens=30)
    for program in (None, oracle_program(DOC, GOLD)):
        stream = decoder.stream(DOC, prompt_ids=prompt, program=program, as_written=as_written)
        assert stream.result is None
        text = "".join(stream)
        assert isinstance(stream.result, DecodeResult) and text == stream.result.text
        assert (
            stream.result.transcript
            == decoder.decode(DOC, prompt_ids=prompt, program=program).transcript
        )
