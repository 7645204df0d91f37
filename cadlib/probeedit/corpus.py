"""The corpus: which cases each (document, operation) cell gets, the 154 cases, their Table 2
statistics, and ``python -m cadlib.probeedit``."""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

from cadlib import paper as _paper
from cadlib.cases import Corpus, EditCase
from cadlib.costs.spans import line_cover, summarize_line_cover
from cadlib.models.tokenizer import qwen25_tokenizer

from .builders import _BUILDERS, _Doc
from .spec import DOCUMENTS, N_CASES, OPERATIONS, SEED, VERSION, documents

__all__ = [
    "cases_per_cell",
    "corpus_stats",
    "main",
    "probeedit_corpus",
    "stats_markdown",
    "write_jsonl",
]


def cases_per_cell(document: str, operation: str) -> int:
    """How many cases (document, operation) gets: 14 per operation, split 4/4/3/3 over the
    documents with the two 4s rotating, which gives 38 or 39 cases per document."""
    d, o = list(DOCUMENTS).index(document), OPERATIONS.index(operation)
    return 4 if (d - o) % len(DOCUMENTS) in (0, 1) else 3


def _rng(document: str, operation: str, what: str) -> random.Random:
    # a str seed is hashed with SHA-512 by random.seed: the same on every run and machine
    return random.Random(f"probeedit/{VERSION}/{SEED}/{document}/{operation}/{what}")


def _cell(document: str, operation: str, text: str) -> list[EditCase]:
    candidates = _BUILDERS[operation](_Doc(document, text), _rng(document, operation, "build"))
    seen, unique = set(), []
    for c in candidates:  # identical golds (e.g. two spots of one number) count once
        if c.gold != c.doc and (c.doc, c.gold) not in seen:
            seen.add((c.doc, c.gold))
            unique.append(c)
    k = cases_per_cell(document, operation)
    if len(unique) < k:
        raise RuntimeError(f"{document}/{operation}: {len(unique)} candidates, need {k}")
    chosen = _rng(document, operation, "pick").sample(range(len(unique)), k)
    cases = []
    for n, index in enumerate(sorted(chosen)):
        c = unique[index]
        meta = {
            "operation": operation,
            "document": document,
            "document_kind": DOCUMENTS[document],
            "params": c.params,
            "generator": f"cadlib.probeedit {VERSION}",
        }
        cases.append(
            EditCase(f"probeedit/{document}/{operation}/{n}", c.doc, c.gold, c.instruction, meta)
        )
    return cases


def probeedit_corpus() -> Corpus:
    """The 154 ProbeEdit cases: every (document, operation) cell, in document then
    operation order, ids ``probeedit/<document>/<operation>/<k>``."""
    cases = []
    for document, text in documents().items():
        for operation in OPERATIONS:
            cases.extend(_cell(document, operation, text))
    if len(cases) != N_CASES:
        raise RuntimeError(f"ProbeEdit has {len(cases)} cases, expected {N_CASES}")
    source = f"generated:cadlib/data/probeedit (cadlib.probeedit {VERSION})"
    return Corpus("probeedit", source, cases)


# --------------------------------------------------------------------------- statistics


def corpus_stats(cases=None, tokenizer=None) -> dict:
    """Table 2's line-level columns for a corpus (ProbeEdit by default), in Qwen2.5 BPE.

    The definitions are :mod:`cadlib.costs.spans`'s (one place for them, shared with
    :mod:`cadlib.chapters.ceiling`): ``T`` = gold tokens;
    ``T_copy`` = the sum over oracle copy spans of the tokens of each span's lines, tokenized
    on their own as a splice would prefill them; ``T_gen = T - T_copy`` (it absorbs joining
    newlines and tokenization seams, so it can be slightly negative for a pure deletion);
    ``f_line = T_copy / T``; ``K`` = number of copy spans; span mean / p50 / p95 in tokens
    (numpy's linearly interpolated percentiles). Adds per-operation and per-document counts
    and the mean document and gold lengths.
    """
    tok = tokenizer or qwen25_tokenizer()
    cases = probeedit_corpus() if cases is None else cases
    if not cases:
        raise ValueError("corpus_stats needs at least one case")
    table2 = summarize_line_cover(line_cover(cases, tok, progress=False))
    return {
        "n": table2["n"],
        "per_operation": dict(Counter(c.meta.get("operation") for c in cases)),
        "per_document": dict(Counter(c.meta.get("document") for c in cases)),
        **{k: table2[k] for k in ("T", "T_copy", "T_gen", "f_line", "K")},
        "span_mean": table2["mean"],
        "span_p50": table2["p50"],
        "span_p95": table2["p95"],
        "gold_tokens_mean": table2["T"] / len(cases),
        "doc_tokens_mean": sum(tok.count(c.doc) for c in cases) / len(cases),
        "tokenizer": tok.name,
    }


def stats_markdown(stats: dict | None = None) -> str:
    """The ours-vs-paper table of :func:`corpus_stats` as markdown (for the README)."""
    ours = stats or corpus_stats()
    rows = [
        ("cases n", "n", "{:,}"),
        ("gold tokens T", "T", "{:,}"),
        ("copied tokens T_copy", "T_copy", "{:,}"),
        ("generated tokens T_gen", "T_gen", "{:,}"),
        ("line-level copy fraction f_line", "f_line", "{:.1%}"),
        ("copy spans K", "K", "{:,}"),
        ("mean copy span (tokens)", "span_mean", "{:.1f}"),
        ("p50 copy span (tokens)", "span_p50", "{:.1f}"),
        ("p95 copy span (tokens)", "span_p95", "{:.1f}"),
        ("mean gold tokens per case", "gold_tokens_mean", "{:.1f}"),
    ]
    out = ["| statistic | ours | paper (Table 2) | ours / paper |", "| --- | ---: | ---: | ---: |"]
    for label, key, fmt in rows:
        a, b = ours[key], _paper.PROBEEDIT_STATS[key]
        out.append(f"| {label} | {fmt.format(a)} | {fmt.format(b)} | {a / b:.2f} |")
    return "\n".join(out)


def write_jsonl(path: str | Path, cases=None) -> Path:
    """Write the cases (ProbeEdit by default) as JSON lines: id, instruction, doc, gold, meta."""
    cases = probeedit_corpus() if cases is None else cases
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for c in cases:
            row = {
                "id": c.id,
                "instruction": c.instruction,
                "doc": c.doc,
                "gold": c.gold,
                "meta": c.meta,
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cadlib.probeedit", description=__doc__)
    parser.add_argument("--write", metavar="DIR", help="write DIR/probeedit.jsonl")
    parser.add_argument("--stats", action="store_true", help="print the corpus statistics")
    args = parser.parse_args(argv)
    if not (args.write or args.stats):
        parser.error("nothing to do: give --write DIR and/or --stats")
    corpus = probeedit_corpus()
    if args.write:
        print(write_jsonl(Path(args.write) / "probeedit.jsonl", corpus))
    if args.stats:
        stats = corpus_stats(corpus)
        print(json.dumps(stats, indent=1))
        print(stats_markdown(stats))
    return 0
