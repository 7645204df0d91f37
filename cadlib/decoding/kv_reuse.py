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
  the next id. Beside these fixed windows (issue 51), two *selection rules*: ``seams``
  recomputes the first ids after each seam (a copy whose output predecessor is not its
  predecessor in the document: EPIC's chunk starts), ``deviation`` the copy's ids whose keys
  deviate most at a check layer (CacheBlend); both need the decode's context, so
  :class:`cadlib.decoding.kv_select.SelectingDecoder` runs them (:func:`select_sources`). So
  does a *margin gate* (``margin``): where a decision's top two allowed logits lie closer than
  the margin, the reused entries are recomputed exactly and the decision is made again.
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
    "is_seam",
    "top_share",
    "select_sources",
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
    ``every``: recompute everything (the control: exact up to float rounding).
    Selection rules (issue 51): ``seams``: the first ``seams`` ids of a copy that starts at a
    seam (:func:`is_seam`); ``deviation``: the share of the copy's matched ids whose keys at
    check layer ``layer`` deviate most from the reused ones (:func:`top_share`).
    ``margin`` (logits; 0: off) gates an exact fallback: at a decision whose top two allowed
    logits differ by less, everything the cache holds since its first reused entry is
    recomputed exactly and the decision made again
    (:meth:`cadlib.decoding.kv_select.SelectingDecoder`)."""

    first: int = 0
    last: int = 1
    every: bool = False
    seams: int = 0
    deviation: float = 0.0
    layer: int = 1
    margin: float = 0.0

    def __post_init__(self):
        if self.first < 0 or self.last < 1 or self.seams < 0:
            raise ValueError(f"policy needs first, seams >= 0 and last >= 1, got {self}")
        if not 0.0 <= self.deviation <= 1.0 or self.layer < 1:
            raise ValueError(f"policy needs 0 <= deviation <= 1 and layer >= 1, got {self}")
        if self.margin < 0:
            raise ValueError(f"policy needs margin >= 0, got {self}")

    @property
    def needs_context(self) -> bool:
        """Whether a rule needs the decode's context (:mod:`cadlib.decoding.kv_select`)."""
        return bool(self.seams or self.deviation or self.margin)

    @property
    def name(self) -> str:
        if self.every:
            return "all"
        parts = [f"first={self.first}"] if self.first else []
        parts += [f"last={self.last}"] if self.last > 1 else []
        parts += [f"seams={self.seams}"] if self.seams else []
        if self.deviation:
            at = f"@{self.layer}" if self.layer != 1 else ""
            parts.append(f"deviation={self.deviation:g}{at}")
        parts += [f"margin={self.margin:g}"] if self.margin else []
        return ",".join(parts) or "none"


_POLICY = re.compile(r"(first|last|seams)=(\d+)")
_DEVIATION = re.compile(r"deviation=(\d*\.?\d+)(?:@(\d+))?")
_MARGIN = re.compile(r"margin=(\d*\.?\d+)")


def parse_policy(spec: str | Policy) -> Policy:
    """``"none"`` (reuse every matched id but the copy's last), ``"all"`` (recompute all), or
    comma-separated fields: ``"first=K"``, ``"last=K"``, ``"seams=K"``, ``"deviation=R"`` or
    ``"deviation=R@L"`` (check layer ``L``, default 1), ``"margin=X"`` (the exact fallback's
    gate, in logits), e.g. ``"seams=4,deviation=0.15"`` or ``"seams=16,margin=1"``."""
    if isinstance(spec, Policy):
        return spec
    if spec == "none":
        return Policy()
    if spec == "all":
        return Policy(every=True)
    fields = {}
    for part in str(spec).split(","):
        key, value = _field(part.strip())
        if key is None or key in fields:
            raise ValueError(
                f"unknown recompute policy {spec!r}; expected 'none', 'all' or fields "
                "'first=K', 'last=K', 'seams=K', 'deviation=R[@L]', 'margin=X' joined by commas"
            )
        fields[key] = value
        if key == "deviation":
            fields["layer"] = int(_DEVIATION.fullmatch(part.strip()).group(2) or 1)
    return Policy(**fields)


def _field(part: str) -> tuple[str | None, float | int | None]:
    """One field of a policy spec as ``(name, value)``; ``(None, None)`` if it is none."""
    if m := _POLICY.fullmatch(part):
        return m.group(1), int(m.group(2))
    if d := _DEVIATION.fullmatch(part):
        return "deviation", float(d.group(1))
    if g := _MARGIN.fullmatch(part):
        return "margin", float(g.group(1))
    return None, None


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
        if policy.needs_context:
            raise ValueError(
                f"policy {policy.name!r} needs the decode's context: "
                "use cadlib.decoding.kv_select.SelectingDecoder"
            )
        starts = line_starts(splice, self.token_bytes)
        return select_sources(self.matches(splice, i, j), starts, policy)


def select_sources(
    matches: list, starts: list[int], policy: Policy, seam: bool = False, deviations=None
) -> list[int | None]:
    """The prompt position each splice id reuses (``None``: computed), from ``matches``
    (:meth:`PromptIndex.matches`), the copied lines' ``starts`` (:func:`line_starts`), whether
    the copy starts at a ``seam`` and, for the deviation rule, each id's key ``deviations``
    (ignored where an id has no match). Every rule adds recomputed ids; none removes any."""
    out = list(matches)
    if policy.every or not out:
        return [None] * len(out)
    for k in starts:
        for d in range(policy.first):
            if k + d < len(out):
                out[k + d] = None
    for k in range(max(0, len(out) - policy.last), len(out)):
        out[k] = None
    if seam:
        for k in range(min(policy.seams, len(out))):
            out[k] = None
    if policy.deviation:
        if deviations is None or len(deviations) != len(out):
            raise ValueError("the deviation rule needs one deviation per splice id")
        for k in top_share(matches, deviations, policy.deviation):
            out[k] = None
    return out


def top_share(matches: list, deviations, share: float) -> list[int]:
    """Positions of the ``round(share * m)`` matched ids (``m``: ids with a match, half
    rounded up) whose ``deviations`` are largest (ties: the earlier id), in order."""
    matched = [k for k, s in enumerate(matches) if s is not None]
    n = int(share * len(matched) + 0.5)
    ranked = sorted(matched, key=lambda k: (-float(deviations[k]), k))
    return sorted(ranked[:n])


def is_seam(previous: dict | None, lines: tuple[int, int]) -> bool:
    """Whether a copy of ``lines`` (``(i, j)``) starts at a seam: its output predecessor (the
    ``previous`` op record, ``kind`` and ``lines``) is not line ``i - 1`` of the document, i.e.
    it follows anything but a copy ending at line ``i - 1`` (a ``gen``, a line jump, the
    prompt)."""
    if previous is None or previous.get("kind") != "copy" or previous.get("lines") is None:
        return True
    return int(previous["lines"][1]) != int(lines[0]) - 1


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
