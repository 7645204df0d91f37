"""The resolved text of a decode as it is decoded: what
:meth:`cadlib.decoding.decoder.CopyDecoder.stream` yields.

:class:`TextStream` reads the run (:class:`cadlib.decoding.decode_run.DecodeRun`) after each
forward and returns the text its new ids add: each op's text once the op completes and, when
asked (``as_written``), a ``<gen>`` body's text while it is generated, less a tail that could
still turn out to be an escape entity or the body's closing ``\\n</gen>``, so that a long body
shows as it is written (``cad edit --stream``, issue 36). Joined, the pieces are the run's
resolution. :class:`DecodeStream` iterates those pieces over one run of the decoder and then
holds the run's :class:`cadlib.decoding.decoder.DecodeResult`.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator

from cadlib.escape import decode_gen_body
from cadlib.grammar import GEN_OPEN, StreamingParser
from cadlib.resolver import doc_lines, op_text

__all__ = ["TextStream", "DecodeStream"]


class TextStream:
    """The resolved text of one decode as it grows (module docstring): :meth:`feed` it the run
    after each forward. ``table`` is the run's token table (its ``token_bytes``), ``doc`` the
    document the program copies from."""

    HOLD = 12  # > the longest escape entity (10 characters) and "\\n</gen>"

    def __init__(self, table, doc: str, as_written: bool = False):
        self.tb, self.lines, self.as_written = table.token_bytes, doc_lines(doc), as_written
        self.parser, self.utf8 = StreamingParser(), codecs.getincrementaldecoder("utf-8")("replace")
        self.fed, self.ops, self.body = 0, 0, ""  # ids read, ops written, open body written

    def feed(self, run) -> list[str]:
        """The pieces of text that ``run``'s new ids add to the output: one per op completed,
        then (``as_written``) what the open body adds."""
        new = [
            self.tb[i]
            for i, k in zip(run.ids[self.fed :], run.kinds[self.fed :], strict=True)
            if k != "splice"
        ]
        self.fed = len(run.ids)
        out = []
        for op in self.parser.feed(self.utf8.decode(b"".join(new))):
            text = op_text(op, self.lines)
            out.append(self._start() + text[len(self.body) :])
            self.ops, self.body = self.ops + 1, ""
        partial = self._open_body() if self.as_written else ""
        if len(partial) > len(self.body):
            out.append((self._start() if not self.body else "") + partial[len(self.body) :])
            self.body = partial
        return out

    def _start(self) -> str:
        """The newline that joins the next op to the previous ones (none before the first,
        nor inside a body already begun)."""
        return "\n" if self.ops and not self.body else ""

    def _open_body(self) -> str:
        """The safe, decoded prefix of the ``<gen>`` body being generated ("" if none)."""
        rest = self.parser.text[self.parser.pos :].lstrip()
        if not self.parser.started or not rest.startswith(GEN_OPEN):
            return ""
        raw = rest[len(GEN_OPEN) :]
        cut = max(0, len(raw) - self.HOLD)
        while "\u27e8" in raw[max(0, cut - 10) : cut]:  # no entity may straddle the cut
            cut = raw.index("\u27e8", max(0, cut - 10))
        safe = raw[:cut]
        return decode_gen_body(safe[1:] if safe.startswith("\n") else safe)


class DecodeStream(Iterator[str]):
    """The text pieces of one decoder run (:meth:`TextStream.feed` after each forward), as an
    iterator; once it is exhausted, ``result`` holds the run's
    :class:`cadlib.decoding.decoder.DecodeResult` (``None`` before).

    ``steps`` is the decoder's loop: a generator that yields the run after each forward and
    returns the result."""

    def __init__(self, steps, text: TextStream):
        self.result = None
        self._pieces = self._run(steps, text)

    def __next__(self) -> str:
        return next(self._pieces)

    def _run(self, steps, text: TextStream) -> Iterator[str]:
        while True:
            try:
                run = next(steps)
            except StopIteration as stop:
                self.result = stop.value
                return
            yield from text.feed(run)
