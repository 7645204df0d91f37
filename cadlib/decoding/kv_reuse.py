"""Copies without prefill: which prompt KV entries a copy can reuse (issue 32, beyond the paper).

The exact splice (paper §2.4) feeds the ``N`` ids of copied lines ``i..j`` to the model in one
parallel forward. Yet those lines already sit in the KV cache: the edit prompt shows the whole
document, numbered (``"{k}| {line}"``, :func:`cadlib.prompts.number_lines`). The *reuse* copy
mode (``CopyDecoder(copy_kv="reuse")``) copies the prompt's entries of each matching id to the
output position instead (keys re-rotated for the new RoPE position, :mod:`cadlib.decoding.cache`)
and computes only the rest in one forward. It is approximate: a reused entry was computed in the
prompt's context, not the output's, so later decisions may differ from exact decoding; the
copied *text* is exact by construction.

This module is the model-free half, shared by the decoder and :mod:`cadlib.costs.accounting`:

* :class:`PromptIndex` finds, for the ids of a copy of lines ``i..j``, an in-order match in the
  prompt's ids of those lines (``difflib``'s longest matching blocks; ids that do not match,
  mostly line starts, which merge differently after ``"| "``, are computed);
* :class:`Policy` says which matched ids are recomputed anyway (the research question of the
  issue): the first ``first`` ids of each copied line, the last ``last`` ids of the copy (the
  ones nearest the next decision). The copy's last id is always computed: its logits decide
  the next id.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from cadlib.prompts import number_lines

__all__ = [
    "COPY_KV_MODES",
    "REUSE_ENGINES",
    "Policy",
    "parse_policy",
    "check_copy_kv",
    "PromptIndex",
    "feed_sources",
    "line_starts",
]

#: Copy modes of :class:`cadlib.decoding.decoder.CopyDecoder`: ``prefill`` (the exact splice,
#: default) and ``reuse`` (prompt KV entries moved to the copy's positions).
COPY_KV_MODES = ("prefill", "reuse")
#: Engines that can run the reuse mode (llama.cpp cannot: ``LlamaCppEngine.check_copy_kv``).
REUSE_ENGINES = ("transformers",)


@dataclass(frozen=True)
class Policy:
    """Which matched ids of a copy are recomputed anyway.

    ``first``: the first ``first`` ids of every copied line (line starts: where the prompt's
    context, ``"k| "``, differs most from the output's); ``last``: the last ``last`` ids of
    the copy (nearest the next decision; at least 1, since the last id's logits decide it);
    ``every``: recompute everything (the control: exact up to float rounding)."""

    first: int = 0
    last: int = 1
    every: bool = False

    def __post_init__(self):
        if self.first < 0 or self.last < 1:
            raise ValueError(f"policy needs first >= 0 and last >= 1, got {self}")

    @property
    def name(self) -> str:
        if self.every:
            return "all"
        parts = [f"first={self.first}"] if self.first else []
        parts += [f"last={self.last}"] if self.last > 1 else []
        return ",".join(parts) or "none"


_POLICY = re.compile(r"(first|last)=(\d+)")


def parse_policy(spec: str | Policy) -> Policy:
    """``"none"`` (reuse every matched id but the copy's last), ``"all"`` (recompute all),
    ``"first=K"``, ``"last=K"`` or ``"first=K,last=M"``."""
    if isinstance(spec, Policy):
        return spec
    if spec == "none":
        return Policy()
    if spec == "all":
        return Policy(every=True)
    fields = {}
    for part in str(spec).split(","):
        m = _POLICY.fullmatch(part.strip())
        if m is None or m.group(1) in fields:
            raise ValueError(
                f"unknown recompute policy {spec!r}; expected 'none', 'all', "
                "'first=K', 'last=K' or 'first=K,last=M'"
            )
        fields[m.group(1)] = int(m.group(2))
    return Policy(**fields)


def check_copy_kv(
    copy_kv: str, engine: str, drafts: bool = False, min_span: int = 0, recompute="none"
) -> Policy:
    """Check a copy mode's options before any model loads (what ``cad edit`` calls): raise
    ``ValueError`` with one line saying what is wrong; return the parsed policy."""
    if copy_kv not in COPY_KV_MODES:
        raise ValueError(f"unknown copy mode {copy_kv!r}; expected one of {COPY_KV_MODES}")
    policy = parse_policy(recompute)
    if copy_kv == "reuse":
        if engine not in REUSE_ENGINES:
            raise ValueError(
                f"copy mode 'reuse' runs on {', '.join(REUSE_ENGINES)} only: "
                f"{engine} cannot copy KV cells to new positions"
            )
        if drafts or min_span:
            raise ValueError("copy mode 'reuse' needs min_span 0 and no drafts")
    return policy


def line_starts(ids, token_bytes) -> list[int]:
    """Positions in ``ids`` (copied text) where a line starts: 0 and every id after one whose
    bytes end a line (contain ``\\n``)."""
    return [k for k in range(len(ids)) if k == 0 or b"\n" in token_bytes[ids[k - 1]]]


class PromptIndex:
    """Where each document line sits among the prompt's ids.

    ``prompt`` are the ids the cache holds from position 0 (the edit prompt); the numbered
    document is located in their bytes (its last occurrence). A prompt without it (a custom
    ``prompt_ids``) gives no matches: every id is computed.
    """

    def __init__(self, prompt, doc: str, token_bytes):
        self.prompt, self.token_bytes = list(prompt), token_bytes
        ends, total = [], 0
        for i in self.prompt:
            total += len(token_bytes[i])
            ends.append(total)
        self.ends = ends
        text = b"".join(token_bytes[i] for i in self.prompt)
        numbered = number_lines(doc).encode()
        base = text.rfind(numbered)
        self.found = base >= 0
        self.lines = []  # (first content byte, end byte) of each line in the prompt's bytes
        width = len(str(len(doc.split("\n"))))
        at = base
        for k, line in enumerate(doc.split("\n"), start=1):
            start = at + len(f"{k:>{width}}| ".encode())
            end = start + len(line.encode())
            self.lines.append((start, end))
            at = end + 1

    def region(self, i: int, j: int) -> range:
        """Prompt positions of the ids that overlap the bytes of lines ``i..j`` (1-based,
        inclusive; the separators between them included)."""
        if not self.found:
            return range(0)
        lo, hi = self.lines[i - 1][0], self.lines[j - 1][1]
        if hi <= lo:
            return range(0)
        return range(_first_end_after(self.ends, lo), _first_end_after(self.ends, hi - 1) + 1)

    def matches(self, splice, i: int, j: int) -> list[int | None]:
        """For each id of ``splice`` (the ids of a copy of lines ``i..j``), the prompt position
        of the id it is matched to, in order (``None``: no match)."""
        region = self.region(i, j)
        out: list[int | None] = [None] * len(splice)
        ref = [self.prompt[p] for p in region]
        sm = difflib.SequenceMatcher(None, list(splice), ref, autojunk=False)
        for a, b, n in sm.get_matching_blocks():
            for k in range(n):
                out[a + k] = region[b + k]
        return out

    def sources(self, splice, i: int, j: int, policy: Policy) -> list[int | None]:
        """:meth:`matches` after ``policy``: the prompt position each splice id reuses, or
        ``None`` where it is computed."""
        out = self.matches(splice, i, j)
        if policy.every or not out:
            return [None] * len(out)
        for k in line_starts(splice, self.token_bytes):
            for d in range(policy.first):
                if k + d < len(out):
                    out[k + d] = None
        for k in range(max(0, len(out) - policy.last), len(out)):
            out[k] = None
        return out


def _first_end_after(ends: list[int], byte: int) -> int:
    """Index of the first id whose bytes end after ``byte`` (the id holding that byte)."""
    lo, hi = 0, len(ends)
    while lo < hi:
        mid = (lo + hi) // 2
        if ends[mid] > byte:
            hi = mid
        else:
            lo = mid + 1
    return lo


def feed_sources(feed, kinds, lines, index: PromptIndex, policy: Policy) -> list[int | None]:
    """The source of every id of one forward's ``feed`` (ids of ``kinds``): a prompt position
    for a reused splice id, ``None`` for a computed one. ``lines`` = ``(i, j)`` of the copy the
    feed's splice ids belong to; a feed without splice ids is computed whole."""
    out: list[int | None] = [None] * len(feed)
    at = [k for k, kind in enumerate(kinds) if kind == "splice"]
    if not at:
        return out
    if at != list(range(at[0], at[-1] + 1)) or at[-1] != len(feed) - 1:
        raise ValueError("a copy's splice ids must end the feed, in one run")
    splice = [feed[k] for k in at]
    for k, src in zip(at, index.sources(splice, *lines, policy), strict=True):
        out[k] = src
    return out
