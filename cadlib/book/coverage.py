"""The coverage map: every table, figure and appendix of the paper, and where it lives here.

Each item of the paper (Tables 1-24 as the paper numbers them, its figures, Appendices A-Q and
the headline numbers of its abstract and introduction) names the chapter that treats it and
the summary headlines that compare it, or why nothing here does. An item one chapter treats is
declared in that chapter's ``headlines.COVERAGE``, the others here (:data:`BOOK_ITEMS`).
Verdicts are never typed here: an item's verdicts are those :mod:`cadlib.book.summary` computes
for its headlines; an item without headlines says what it is (text only, shown in a chapter
without a verdict, not run here, or missing from our copy of the paper).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from .summary import all_headlines, headline_table

__all__ = ["BOOK_ITEMS", "Item", "all_items", "coverage_markdown", "coverage_table", "paper_order"]

SHOWN = "shown in the chapter, no summary verdict"
TEXT = "no figures to check (a qualitative table or a diagram)"
NOT_RUN_HERE = "not run here"
PARTLY = "partly shown in the chapter, the rest not run here"
MISSING = "not in our copy of the paper"


@dataclass(frozen=True)
class Item:
    """One item of the paper: ``chapters`` (notebook stems) that treat it; ``headlines``
    (summary labels, or a label prefix ending in ``*``) that compare it; otherwise ``status``
    (one of the module's constants) and ``note`` say why there is no verdict."""

    item: str
    what: str
    chapters: tuple[str, ...] = ()
    headlines: tuple[str, ...] = ()
    status: str = SHOWN
    note: str = ""


_GPU = "needs a GPU"

#: The items no single chapter treats: those of several chapters (the abstract's figures, a
#: table two chapters share) and those nothing here reproduces. Each chapter's own items are
#: its ``headlines.COVERAGE``; :func:`all_items` merges the two in the paper's order.
BOOK_ITEMS: tuple[Item, ...] = (
    Item(
        "Abstract / §1",
        "line copy fraction 74-98 %, kernel 6.8-303×, bnd_exact, 482/482, "
        "pooled EM at ε = 1, SFT EM 12-17 %",
        ("01_losslessness", "02_kernel", "03_ceiling", "05_perturbation", "07_sft_pilot"),
        (
            "oracle round trip*",
            "HEvalFix-Py line copy*",
            "HEvalFix-JS line copy*",
            "ProbeEdit line copy*",
            "*bnd_exact*",
            "*s at the largest N*",
            "pooled trimmed*",
            "SFT+FSM Py-only: held-out EM",
        ),
    ),
    Item(
        "Table 4",
        "strict vs clipped resolver on the 482 oracle programs",
        ("01_losslessness", "05_perturbation"),
    ),
    Item(
        "Table 5",
        "free-run format-cost latency on vLLM (RTX 3090)",
        (),
        (),
        NOT_RUN_HERE,
        f"{_GPU} and vLLM; no chapter serves a model with vLLM",
    ),
    Item("Table 10", "positioning against prior KV-reuse mechanisms", (), (), TEXT),
    Item(
        "Table 11",
        "the measured s(N) curve",
        ("02_kernel", "03_ceiling"),
        ("*s(8)", "*s at the largest N*"),
        MISSING,
        "only its N = 8 and N = 512 points are quoted",
    ),
    Item("Table 12", "referenced, not reproduced in our copy", (), (), MISSING),
    Item("Table 15", "referenced, not reproduced in our copy", (), (), MISSING),
    *(Item(f"Table {n}", "not reproduced in our copy", (), (), MISSING) for n in (18, 19, 20, 21)),
    Item(
        "Table 23",
        "7B QLoRA vs 1.5B full-parameter",
        (),
        (),
        NOT_RUN_HERE,
        f"{_GPU} and the hub model Qwen2.5-Coder-7B-Instruct; QLoRA is not implemented here",
    ),
    Item(
        "Table 24",
        "constrained-decoding benchmark (bench_m2_constrained.py)",
        (),
        (),
        MISSING,
        "named in the reproduction list only",
    ),
    Item("Figure 1", "mechanism comparison (diagram)", (), (), TEXT),
    Item(
        "Figure 2",
        "a program on a concrete case (diagram)",
        (),
        (),
        TEXT,
        "redrawn in the introduction by cadlib.book.figures.mechanism_figure",
    ),
    *(Item(f"Figure {n}", "not reproduced in our copy", (), (), MISSING) for n in (4, 5)),
    Item(
        "App. A",
        "FSM states, Qwen2.5 token ids, forced prefills",
        ("01_losslessness", "06_decoding"),
        ("App. A:*",),
    ),
    *(Item(f"App. {x}", "not identified in our copy", (), (), MISSING) for x in "BC"),
    *(Item(f"App. {x}", "not identified in our copy", (), (), MISSING) for x in "EFG"),
    Item(
        "App. H",
        "fixed costs c_mask, c_sync, c_forced, τ",
        ("02_kernel", "06_decoding"),
        ("c_mask*",),
    ),
    Item(
        "App. J",
        "minimum-span policy (Table 17)",
        ("02_kernel", "03_ceiling"),
        ("*m* strict*", "*m* safe*"),
    ),
    Item(
        "App. Q",
        "prompt-level grammar on a hosted model",
        (),
        (),
        NOT_RUN_HERE,
        "needs a hosted (closed) model; nothing here calls one",
    ),
)

#: The kinds of item in the order the paper presents them.
_PARTS = ("Abstract", "Table", "Figure", "App.")


def paper_order(item: Item) -> tuple[int, int, str]:
    """Where ``item`` comes in the paper: the abstract, then Tables, Figures and Appendices,
    each by number (or letter)."""
    part, _, number = item.item.partition(" ")
    return (_PARTS.index(part), int(number) if number.isdigit() else 0, number)


def all_items() -> tuple[Item, ...]:
    """:data:`BOOK_ITEMS` and every chapter's ``headlines.COVERAGE``, in the paper's order."""
    from cadlib.chapters import chapter_values  # the chapters' headlines import this module

    chapters = chapter_values("headlines", "COVERAGE").values()
    return tuple(sorted((*BOOK_ITEMS, *(i for items in chapters for i in items)), key=paper_order))


def _matches(pattern: str, label: str) -> bool:
    core = pattern.strip("*")
    if pattern.startswith("*") and pattern.endswith("*"):
        return core in label
    if pattern.endswith("*"):
        return label.startswith(core)
    if pattern.startswith("*"):
        return label.endswith(core)
    return label == pattern


def _labels(item: Item) -> list[str]:
    return [h.label for h in all_headlines() if any(_matches(p, h.label) for p in item.headlines)]


def coverage_table(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per item: chapters, the verdicts of its headlines (counted), or its status."""
    table = headline_table() if table is None else table
    status = dict(zip(table["figure"], table["status"], strict=True))
    rows = []
    for item in all_items():
        counts = Counter(status[label] for label in _labels(item))
        verdicts = ", ".join(f"{n} {v}" for v, n in counts.items())
        rows.append(
            {
                "item": item.item,
                "what": item.what,
                "chapters": item.chapters,
                "verdicts": verdicts or item.status,
                "note": item.note,
            }
        )
    return pd.DataFrame(rows)


def coverage_markdown(table: pd.DataFrame | None = None) -> str:
    """:func:`coverage_table` as a MyST table with links to the chapters."""
    lines = ["| item | what | where | verdicts | note |", "| --- | --- | --- | --- | --- |"]
    for r in coverage_table(table).itertuples(index=False):
        where = ", ".join(f"{{doc}}`ch. {int(c[:2])} </notebooks/{c}>`" for c in r.chapters)
        lines.append(f"| {r.item} | {r.what} | {where or '—'} | {r.verdicts} | {r.note} |")
    return "\n".join(lines)
