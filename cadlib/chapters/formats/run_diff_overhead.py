"""Which unified-diff settings give the paper's diff overhead (Table 3, "Δ vs CaD")?

Our unified diff (``diff -u``: 3 context lines, file and hunk headers) costs far more tokens
relative to the Copy-as-Decode program than the paper's Table 3 says (+36.9 % / +64.1 % /
+48.0 % on HEvalFix-Py / -JS / ProbeEdit), and the paper does not state its diff settings.
This probe counts the overhead (total diff tokens / total program tokens - 1) for a bounded
grid of settings — context lines 0-3, with or without the ``---``/``+++`` file headers,
with or without the ``@@ -a,b +c,d @@`` line numbers — on every case, and how many cases a
subset would have to be drawn from to reach the paper's figure (the share of cases whose own
overhead is at or below it). Token counts only: nothing is applied here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import pandas as pd

from cadlib.models.tokenizer import Tokenizer, qwen25_tokenizer
from cadlib.oracle import oracle_program

from .run_unified_diff import render_unified_diff

__all__ = ["SETTINGS", "render_variant", "overhead_table"]

#: (context lines, file headers kept, hunk line numbers kept) tried, ours (3, True, True) first.
SETTINGS = tuple(
    (context, files, numbers)
    for context in (3, 2, 1, 0)
    for files in (True, False)
    for numbers in (True, False)
)

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.M)


def render_variant(doc: str, gold: str, context: int, files: bool, numbers: bool) -> str:
    """The unified diff of ``doc`` -> ``gold`` with ``context`` lines, optionally without the
    file headers and with bare ``@@`` hunk separators instead of line numbers."""
    text = render_unified_diff(doc, gold, context)
    if not files:
        text = "".join(line for line in text.splitlines(keepends=True)[2:])
    if not numbers:
        text = _HUNK.sub("@@", text)
    return text


def overhead_table(
    corpora: Mapping[str, Iterable], paper: Mapping[str, float], tokenizer: Tokenizer | None = None
) -> pd.DataFrame:
    """One row per corpus x setting: overhead in percent over all cases, the paper's figure,
    and the share of cases whose own overhead is at most the paper's (a subset can only reach
    the paper's figure by drawing mostly from those)."""
    tok = tokenizer or qwen25_tokenizer()
    rows = []
    for name, cases in corpora.items():
        cases = list(cases)
        cad = [tok.count(str(oracle_program(c.doc, c.gold))) for c in cases]
        for context, files, numbers in SETTINGS:
            diff = [
                tok.count(render_variant(c.doc, c.gold, context, files, numbers)) for c in cases
            ]
            limit = paper.get(name, 0)
            below = sum(100 * (d / p - 1) <= limit for d, p in zip(diff, cad, strict=True))
            rows.append(
                {
                    "corpus": name,
                    "context": context,
                    "file headers": files,
                    "hunk numbers": numbers,
                    "n": len(cases),
                    "diff mean": sum(diff) / len(cases),
                    "overhead %": 100 * (sum(diff) / sum(cad) - 1),
                    "paper %": paper.get(name),
                    "cases at or below paper": below / len(cases),
                }
            )
    return pd.DataFrame(rows)
