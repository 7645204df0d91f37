"""The two-primitive edit-program grammar (paper §2.1): ``Copy`` and ``Gen`` ops in a ``Program``.

Canonical text form::

    <program><copy lines="i-j"/><gen>
    new text
    </gen></program>

Line indices are 1-based and inclusive. A ``Gen`` holds the text it emits; its rendering
escapes reserved literals (:mod:`cadlib.escape`) and pads the body with one newline on each
side, which the parser strips again (the paper's strip-at-most-one rule, §2.2), so
``parse_program(p.render()) == p`` for every program.

:func:`parse_program` reads a whole program and raises :class:`ProgramSyntaxError` naming the
offset and what was expected; :class:`StreamingParser` reads one that arrives in pieces, as
during decoding, and hands out each op as soon as it is complete.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .escape import decode_gen_body, encode_gen_body

__all__ = [
    "Copy",
    "Gen",
    "Op",
    "Program",
    "ProgramSyntaxError",
    "parse_program",
    "StreamingParser",
    "PROGRAM_OPEN",
    "PROGRAM_CLOSE",
    "GEN_OPEN",
    "GEN_CLOSE",
    "COPY_OPEN",
    "COPY_CLOSE",
]

PROGRAM_OPEN, PROGRAM_CLOSE = "<program>", "</program>"
GEN_OPEN, GEN_CLOSE = "<gen>", "</gen>"
COPY_OPEN, COPY_CLOSE = '<copy lines="', '"/>'


@dataclass(frozen=True)
class Copy:
    """Copy lines ``start..end`` (1-based, inclusive) of the input document."""

    start: int
    end: int

    def render(self) -> str:
        return f"{COPY_OPEN}{self.start}-{self.end}{COPY_CLOSE}"

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True)
class Gen:
    """Emit ``text`` verbatim (the text as it appears in the output, unescaped)."""

    text: str

    def render(self) -> str:
        return f"{GEN_OPEN}\n{encode_gen_body(self.text)}\n{GEN_CLOSE}"

    def __str__(self) -> str:
        return self.render()


Op = Copy | Gen


@dataclass(frozen=True)
class Program:
    """A sequence of ops; ``str(program)`` is its canonical text."""

    ops: tuple[Op, ...]

    def __init__(self, ops):
        object.__setattr__(self, "ops", tuple(ops))

    def render(self) -> str:
        return PROGRAM_OPEN + "".join(op.render() for op in self.ops) + PROGRAM_CLOSE

    def __str__(self) -> str:
        return self.render()

    def __iter__(self) -> Iterator[Op]:
        return iter(self.ops)

    def __len__(self) -> int:
        return len(self.ops)

    @property
    def copies(self) -> list[Copy]:
        return [op for op in self.ops if isinstance(op, Copy)]

    @property
    def gens(self) -> list[Gen]:
        return [op for op in self.ops if isinstance(op, Gen)]


class ProgramSyntaxError(ValueError):
    """A program text that the grammar rejects; ``pos`` is the 0-based character offset."""

    def __init__(self, message: str, pos: int, text: str = ""):
        self.pos = pos
        context = text[max(0, pos - 20) : pos + 20]
        where = f" near {context!r}" if text else ""
        super().__init__(f"at offset {pos}: {message}{where}")


class _NeedMore(Exception):
    """The text ends before the op is complete (the streaming parser waits for more)."""


_RANGE = re.compile(r"(-?\d+)-(-?\d+)")
_SPACE = re.compile(r"\s*")


def _expect(text: str, pos: int, literal: str, what: str) -> int:
    """Consume ``literal`` at ``pos`` or fail, telling a truncated text from a wrong one."""
    if text.startswith(literal, pos):
        return pos + len(literal)
    rest = text[pos:]
    if literal.startswith(rest):
        raise _NeedMore
    raise ProgramSyntaxError(f"expected {what} {literal!r}", pos, text)


def _scan_copy(text: str, pos: int) -> tuple[Copy, int]:
    pos = _expect(text, pos, COPY_OPEN, "copy opener")
    m = _RANGE.match(text, pos)
    if not m or m.end() == len(text):
        if re.fullmatch(r"-?\d*(-(-?\d*)?)?", text[pos:]):
            raise _NeedMore
        raise ProgramSyntaxError('expected a line range "i-j" with integers i, j', pos, text)
    i, j = int(m.group(1)), int(m.group(2))
    if i < 1 or j < 1:
        raise ProgramSyntaxError(f"line indices are 1-based, got {i}-{j}", pos, text)
    if i > j:
        raise ProgramSyntaxError(f"inverted line range {i}-{j} (i > j)", pos, text)
    return Copy(i, j), _expect(text, m.end(), COPY_CLOSE, "copy closer")


def _scan_gen(text: str, pos: int) -> tuple[Gen, int]:
    pos = _expect(text, pos, GEN_OPEN, "gen opener")
    end = text.find(GEN_CLOSE, pos)
    if end < 0:
        raise _NeedMore
    body = text[pos:end]
    body = body[1:] if body.startswith("\n") else body
    body = body[:-1] if body.endswith("\n") else body
    return Gen(decode_gen_body(body)), end + len(GEN_CLOSE)


def _scan_op(text: str, pos: int) -> tuple[Op | None, int]:
    """Scan one op (or the program closer, returned as ``None``) starting at ``pos``."""
    rest = text[pos:]
    if rest.startswith("<copy"):
        return _scan_copy(text, pos)
    if rest.startswith("<gen"):
        return _scan_gen(text, pos)
    if rest.startswith("</program"):
        return None, _expect(text, pos, PROGRAM_CLOSE, "program closer")
    if any(lit.startswith(rest) for lit in (COPY_OPEN, GEN_OPEN, PROGRAM_CLOSE)):
        raise _NeedMore
    tag = re.match(r"</?[\w-]*", rest)
    if tag:
        raise ProgramSyntaxError(
            f"unknown tag {tag.group()!r}; expected <copy, <gen> or </program>", pos, text
        )
    raise ProgramSyntaxError("text outside ops; expected <copy, <gen> or </program>", pos, text)


def parse_program(text: str) -> Program:
    """Parse the full text of a program.

    Whitespace is allowed around ops; anything else outside an op is an error. Raises
    :class:`ProgramSyntaxError` for an unclosed ``<gen>``, an unknown tag, a bad or missing
    range, ``i > j``, indices below 1, text outside ops, a missing ``</program>`` and an
    empty program.
    """
    parser = StreamingParser()
    ops = parser.feed(text)
    parser.close()
    return Program(ops)


class StreamingParser:
    """Incremental parser: ``feed`` text as it arrives, get each op when it completes.

    >>> p = StreamingParser()
    >>> p.feed('<program><copy lines="1-')
    []
    >>> p.feed('2"/><gen>x</ge')
    [Copy(start=1, end=2)]
    >>> p.feed('n></program>')
    [Gen(text='x')]
    >>> p.done
    True
    """

    def __init__(self):
        self.text = ""
        self.pos = 0
        self.started = False
        self.done = False
        self.n_ops = 0

    def feed(self, chunk: str) -> list[Op]:
        """Append ``chunk`` and return the ops it completed, in order."""
        self.text += chunk
        ops: list[Op] = []
        try:
            while not self.done:
                ops.extend(self._step())
        except _NeedMore:
            pass
        return ops

    def _step(self) -> list[Op]:
        text = self.text
        pos = _SPACE.match(text, self.pos).end()
        if not self.started:
            self.pos = _expect(text, pos, PROGRAM_OPEN, "program opener")
            self.started = True
            return []
        if pos == len(text):
            raise _NeedMore
        op, end = _scan_op(text, pos)
        self.pos = end
        if op is None:
            if self.n_ops == 0:
                raise ProgramSyntaxError("empty program: expected at least one op", pos, text)
            self.done = True
            trailing = _SPACE.match(text, end).end()
            if trailing != len(text):
                raise ProgramSyntaxError("text after </program>", trailing, text)
            return []
        self.n_ops += 1
        return [op]

    def close(self) -> None:
        """Declare the end of input; raise if the program is not complete."""
        if self.done:
            trailing = _SPACE.match(self.text, self.pos).end()
            if trailing != len(self.text):
                raise ProgramSyntaxError("text after </program>", trailing, self.text)
            return
        pos = _SPACE.match(self.text, self.pos).end()
        if not self.started:
            raise ProgramSyntaxError("expected '<program>'", pos, self.text)
        if self.text.startswith(GEN_OPEN, pos):
            raise ProgramSyntaxError("unclosed <gen>: expected '</gen>'", pos, self.text)
        if pos < len(self.text):
            raise ProgramSyntaxError("truncated op", pos, self.text)
        raise ProgramSyntaxError("missing '</program>'", pos, self.text)
