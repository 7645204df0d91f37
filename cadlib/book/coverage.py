"""The coverage map: every table, figure and appendix of the paper, and where it lives here.

Each item of the paper (Tables 1-24 as the paper numbers them, its figures, Appendices A-Q and
the headline numbers of its abstract and introduction) names the chapter that treats it and
the summary headlines that compare it, or why nothing here does. Verdicts are never typed
here: an item's verdicts are those :mod:`cadlib.book.summary` computes for its headlines; an item
without headlines says what it is (text only, shown in a chapter without a verdict, not run
here, or missing from our copy of the paper).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from .summary import HEADLINES, headline_table

__all__ = ["Item", "ITEMS", "coverage_table", "coverage_markdown"]

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
ITEMS: tuple[Item, ...] = (
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
        "Table 1",
        "experimental setup (hardware, sweep, fixed costs, corpora)",
        ("02_kernel",),
        ("c_mask*",),
    ),
    Item(
        "Table 2",
        "line-level copy ceiling and the three bounds",
        ("03_ceiling",),
        (
            "HEvalFix-Py gold*",
            "HEvalFix-Py copy*",
            "HEvalFix-Py p50*",
            "HEvalFix-JS gold*",
            "HEvalFix-JS copy*",
            "*line copy fraction*",
            "*bnd_exact*",
        ),
    ),
    Item(
        "Table 3",
        "edit formats head to head: tokens and round-trip EM",
        ("04_formats",),
        ("*round-trip EM*", "*mean output tokens", "*unified diff token overhead*"),
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
    Item(
        "Table 6",
        "selector learnability pilot (untrained baselines, SFT+FSM)",
        ("07_sft_pilot",),
        ("FSM-constrained untrained*", "SFT+FSM Py-only*"),
    ),
    Item("Table 7", "selector failure taxonomy", ("07_sft_pilot",)),
    Item("Table 8", "EM under endpoint noise ε", ("05_perturbation",), ("*trimmed EM at ε*",)),
    Item(
        "Table 9",
        "Copy-as-Decode vs prompt-lookup decoding (architecture)",
        ("06_decoding",),
        ("prompt lookup*",),
        TEXT,
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
    Item(
        "Table 13",
        "token-level copy ceiling by minimum span m",
        ("03_ceiling",),
        ("*token-level*",),
    ),
    Item(
        "Table 14",
        "oracle programs under endpoint perturbation",
        ("05_perturbation",),
        ("*trimmed EM at ε*",),
    ),
    Item("Table 15", "referenced, not reproduced in our copy", (), (), MISSING),
    Item("Table 16", "fixed costs per op (c_mask, c_sync, c_forced)", ("02_kernel",), ("c_mask*",)),
    Item("Table 17", "minimum-span policy m*", ("02_kernel",), ("*m* strict*", "*m* safe*")),
    *(Item(f"Table {n}", "not reproduced in our copy", (), (), MISSING) for n in (18, 19, 20, 21)),
    Item("Table 22", "cross-corpus generalization of the Combined checkpoint", ("07_sft_pilot",)),
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
    Item("Figure 3", "kernel speedup s(N)", ("02_kernel",), ("*s(8)", "*s at the largest N*")),
    *(Item(f"Figure {n}", "not reproduced in our copy", (), (), MISSING) for n in (4, 5)),
    Item(
        "Figure 6", "EM collapse under endpoint noise", ("05_perturbation",), ("*trimmed EM at ε*",)
    ),
    Item("Figure 7", "the FSM", ("06_decoding",), ("free-run FSM*",)),
    Item(
        "App. A",
        "FSM states, Qwen2.5 token ids, forced prefills",
        ("01_losslessness", "06_decoding"),
        ("App. A:*",),
    ),
    *(Item(f"App. {x}", "not identified in our copy", (), (), MISSING) for x in "BC"),
    Item("App. D", "token-level copy ceiling", ("03_ceiling",), ("*token-level*",)),
    *(Item(f"App. {x}", "not identified in our copy", (), (), MISSING) for x in "EFG"),
    Item(
        "App. H",
        "fixed costs c_mask, c_sync, c_forced, τ",
        ("02_kernel", "06_decoding"),
        ("c_mask*",),
    ),
    Item(
        "App. I",
        "escape round trip, fuzz, end-of-gen detector",
        ("01_losslessness",),
        ("escape fuzz*", "App. I:*"),
    ),
    Item(
        "App. J",
        "minimum-span policy (Table 17)",
        ("02_kernel", "03_ceiling"),
        ("*m* strict*", "*m* safe*"),
    ),
    Item(
        "App. K",
        "tokenizer portability: literal ids, the FSM's id table",
        ("01_losslessness",),
        ("App. K*",),
        SHOWN,
        "Qwen2.5, Qwen3.5/3.6, SmolLM2, DeepSeek-Coder and Llama 3 "
        "(llama.cpp's vocabulary files), offline; CodeLlama's own vocabulary needs the hub; "
        "the splice adapter (paged attention) is not built here",
    ),
    Item(
        "App. L",
        "pointer-decoder cost estimate",
        ("03_ceiling",),
        ("App. L*",),
        SHOWN,
        "its text is not in our copy; the §5 formula on our spans and both curves",
    ),
    Item(
        "App. M",
        "composition with speculative decoding",
        ("03_ceiling",),
        ("App. M*",),
        SHOWN,
        "its text is not in our copy; the §5 formula on our spans and both curves",
    ),
    Item("App. N", "token-level primitive", ("03_ceiling",), ("*token-level*",)),
    Item(
        "App. O",
        "SFT training details, ablations, cross-corpus",
        ("07_sft_pilot",),
        (),
        PARTLY,
        "the training recipe and the cross-corpus rows are in chapter 7; its "
        "ablations (each a fine-tuning run of the 1.5B on a GPU) are not run here",
    ),
    Item(
        "App. P",
        "end-to-end smoke test on an untrained 7B",
        ("06_decoding",),
        (),
        NOT_RUN_HERE,
        "the 7B base needs a GPU and the hub; chapter 6 runs the same decoder on SmolLM2",
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
    return [h.label for h in HEADLINES if any(_matches(p, h.label) for p in item.headlines)]


def coverage_table(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per item: chapters, the verdicts of its headlines (counted), or its status."""
    table = headline_table() if table is None else table
    status = dict(zip(table["figure"], table["status"], strict=True))
    rows = []
    for item in ITEMS:
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
