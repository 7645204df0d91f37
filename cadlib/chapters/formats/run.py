"""Chapter 4's measurement: round trips of every case through every format, their summaries,
the paper's Table 3 as a frame, the Pareto front, and :func:`numbers`, the results dict
(``results/formats.json``). The formats themselves: :mod:`.run_formats`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm import tqdm

from cadlib import paper as _paper
from cadlib.corpora import load_corpus
from cadlib.grammar import Program
from cadlib.metrics import equal_up_to_one_newline
from cadlib.models.tokenizer import Tokenizer, qwen25_tokenizer
from cadlib.oracle import oracle_program

from .run_failures import FAILURE_CATEGORIES, ApplyError
from .run_formats import FORMATS, TABLE3_FORMATS, EditFormat
from .run_unified_diff import git_version

__all__ = [
    "RoundTrip",
    "by_corpus",
    "evaluate_formats",
    "failure_counts",
    "failure_table",
    "numbers",
    "paper_numbers",
    "paper_table3",
    "pareto_front",
    "round_trip",
    "summarize",
]

# ---------------------------------------------------------------------------------------------
# Round trips and the evaluation table
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoundTrip:
    """One case in one format: the emitted text, its token count and what applying gave."""

    case_id: str
    format: str
    text: str
    output: str | None
    tokens: int
    units: int
    em: bool
    em_r: bool
    category: str | None
    detail: str


def round_trip(
    case, fmt: EditFormat | str, tokenizer: Tokenizer | None = None, program: Program | None = None
) -> RoundTrip:
    """Render ``case`` in ``fmt``, parse it back, apply it, compare with gold byte for byte."""
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    program = program if program is not None else oracle_program(case.doc, case.gold)
    text = fmt.render(case.doc, case.gold, program)
    output, error, category, detail = None, None, None, ""
    try:
        output = fmt.apply(case.doc, text)
    except ApplyError as err:
        error = err
    em = output == case.gold
    if not em:
        category, detail = fmt.diagnose(case.doc, case.gold, output, error)
    em_r = output is not None and equal_up_to_one_newline(output, case.gold)
    tokens = (tokenizer or qwen25_tokenizer()).count(text)
    return RoundTrip(
        case.id, fmt.name, text, output, tokens, fmt.units(text), em, em_r, category, detail
    )


def _as_corpora(corpora) -> list:
    if isinstance(corpora, Mapping):
        return [(name, cases) for name, cases in corpora.items()]
    return [
        (c, load_corpus(c)) if isinstance(c, str) else (getattr(c, "name", "corpus"), c)
        for c in corpora
    ]


def evaluate_formats(
    corpora,
    formats: Iterable[str] = TABLE3_FORMATS,
    tokenizer: Tokenizer | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """One row per case x format: tokens, units, byte-exact ``em``, tolerant ``em_r``,
    failure ``category`` and ``detail`` (paper §4.4, Table 3).

    ``corpora``: corpus names, :class:`cadlib.corpora.Corpus` objects, or a mapping
    name -> cases. Every case of every corpus is evaluated.
    """
    fmts = [FORMATS[name] for name in formats]
    tok = tokenizer or qwen25_tokenizer()
    rows = []
    for name, cases in _as_corpora(corpora):
        for case in tqdm(cases, desc=name, disable=not progress, mininterval=5):
            program = oracle_program(case.doc, case.gold)
            for fmt in fmts:
                rt = round_trip(case, fmt, tok, program)
                rows.append(
                    {
                        "corpus": name,
                        "case_id": case.id,
                        "format": fmt.name,
                        "tokens": rt.tokens,
                        "units": rt.units,
                        "em": rt.em,
                        "em_r": rt.em_r,
                        "category": rt.category,
                        "detail": rt.detail,
                        **fmt.extra(case.doc, case.gold),
                    }
                )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------------


def _with_pooled(df: pd.DataFrame, members: Iterable[str], name: str) -> pd.DataFrame:
    members = [m for m in members if m in set(df["corpus"])]
    if not members:
        return df
    pooled = df[df["corpus"].isin(members)].assign(corpus=name)
    return pd.concat([df, pooled], ignore_index=True)


def _category_counts(categories: pd.Series) -> str:
    counts = categories.dropna().value_counts()
    return ", ".join(f"{cat}: {n}" for cat, n in sorted(counts.items())) or "-"


def _summary_row(rows: pd.DataFrame) -> dict:
    tokens = rows["tokens"].to_numpy()
    return {
        "n": len(rows),
        "mean": float(tokens.mean()),
        "median": float(np.median(tokens)),
        "p95": float(np.percentile(tokens, 95)),  # numpy's default linear interpolation
        "total": int(tokens.sum()),
        "rt_em": float(rows["em"].mean()),
        "em": int(rows["em"].sum()),
        "fails": int((~rows["em"]).sum()),
        "em_r": float(rows["em_r"].mean()),
        "failures": _category_counts(rows["category"]),
        "ambiguous_cases": _ambiguous_cases(rows),
    }


def _ambiguous_cases(rows: pd.DataFrame) -> float:
    """S/R only: cases with at least one anchor that matches more than one place."""
    if "ambiguous_anchors" not in rows or rows["ambiguous_anchors"].isna().all():
        return float("nan")
    return int((rows["ambiguous_anchors"] > 0).sum())


def summarize(
    df: pd.DataFrame,
    reference: str = "cad",
    pooled: Iterable[str] | None = ("heval-fix-py", "heval-fix-js", "probeedit"),
    pooled_name: str = "pooled",
) -> pd.DataFrame:
    """Per corpus x format: n, mean / median / p95 / total tokens, RT-EM (byte-exact), fails,
    tolerant EM, failure categories, and Δ vs ``reference`` in total tokens (%) and in EM
    count, as in the paper's Table 3. ``pooled`` adds a row block over those corpora."""
    if pooled:
        df = _with_pooled(df, pooled, pooled_name)
    out = []
    for (corpus, fmt), rows in df.groupby(["corpus", "format"], sort=False):
        out.append({"corpus": corpus, "format": fmt, **_summary_row(rows)})
    table = pd.DataFrame(out)
    ref = table[table["format"] == reference].set_index("corpus")
    if len(ref):
        ref_total, ref_em = table["corpus"].map(ref["total"]), table["corpus"].map(ref["em"])
        table["delta_tok_pct"] = 100 * (table["total"] / ref_total - 1)
        table["delta_em"] = table["em"] - ref_em
    return table.reset_index(drop=True)


def failure_table(df: pd.DataFrame) -> pd.DataFrame:
    """Every failed round trip with its category, the category's meaning and the detail."""
    fails = df[~df["em"]][["corpus", "case_id", "format", "category", "detail"]]
    return fails.assign(meaning=fails["category"].map(FAILURE_CATEGORIES)).reset_index(drop=True)


def failure_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Failures per (corpus, format) x category."""
    fails = df[~df["em"]]
    if fails.empty:
        return pd.DataFrame()
    return pd.crosstab([fails["corpus"], fails["format"]], fails["category"])


# ---------------------------------------------------------------------------------------------
# The paper's Table 3, the Pareto front, and the results numbers
# ---------------------------------------------------------------------------------------------


def paper_table3() -> pd.DataFrame:
    """The paper's Table 3 as a frame, with Δ tokens recomputed from its own totals."""
    rows = []
    for corpus, block in _paper.TABLE3.items():
        cad_total = block["cad"]["total"]
        for fmt in TABLE3_FORMATS:
            row = block[fmt]
            rows.append(
                {
                    "corpus": corpus,
                    "format": fmt,
                    "n": block["n"],
                    **row,
                    "delta_tok_pct": 100 * (row["total"] / cad_total - 1),
                    "delta_em": -row["fails"],
                }
            )
    return pd.DataFrame(rows)


def pareto_front(points: Iterable[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """The ``(tokens, em, name)`` points no other point beats on both axes (fewer or equal
    tokens and higher or equal EM), by increasing tokens."""
    front, best = [], -np.inf
    for point in sorted(points, key=lambda p: (p[0], -p[1])):
        if point[1] > best:
            front.append(point)
            best = point[1]
    return front


def by_corpus(table: pd.DataFrame) -> dict:
    """A :func:`summarize` table as the results file stores it: corpus -> format -> fields."""
    cols = [
        "n",
        "mean",
        "median",
        "p95",
        "total",
        "rt_em",
        "em_r",
        "fails",
        "failures",
        "ambiguous_cases",
        "delta_tok_pct",
        "delta_em",
    ]
    out = {}
    for rec in table.to_dict(orient="records"):
        out.setdefault(rec["corpus"], {})[rec["format"]] = {
            k: (None if pd.isna(rec[k]) else rec[k]) for k in cols
        }
    return out


def _case_counts(table: pd.DataFrame) -> str:
    """``164/164/154, pooled 482``: n per corpus in the table's order, then the pooled n."""
    n = table.drop_duplicates("corpus").set_index("corpus")["n"]
    per = "/".join(str(int(v)) for k, v in n.items() if k != "pooled")
    return f"{per}, pooled {int(n['pooled'])}"


def numbers(
    rows: pd.DataFrame,
    summary: pd.DataFrame,
    other: pd.DataFrame,
    failures: pd.DataFrame,
    formats: Iterable[str],
    extension_formats: Iterable[str],
    context: int = 3,
) -> dict:
    """The chapter's results record (``results/formats.json``, "numbers"): Table 3, the
    extension rows, the other languages, every failure of ``failures`` and the meaning of
    every category among all round trips (``rows``)."""
    formats, extension_formats = list(formats), list(extension_formats)
    paper = paper_table3()
    order = list(summary["corpus"].drop_duplicates())
    paper_n = paper.set_index("corpus").loc[order].reset_index()
    categories = sorted(set(rows["category"].dropna()))
    return {
        "note": f"ours: all cases ({_case_counts(summary)}); "
        f"paper: subsets ({_case_counts(paper_n)})",
        "table3": by_corpus(summary[summary["format"].isin(formats)]),
        "extensions": by_corpus(summary[summary["format"].isin(extension_formats)]),
        "other_languages": by_corpus(other),
        "failures": failures.drop(columns="meaning").to_dict(orient="records"),
        "failure_categories": {c: FAILURE_CATEGORIES[c] for c in categories},
        "unified_diff_context": context,
        "git_version": git_version(),
    }


def paper_numbers() -> dict:
    """The paper's side of ``results/formats.json``: Table 3 as printed (its S/R failures are
    all anchor ambiguity, as the paper says) and its printed Δ column."""
    paper = paper_table3()
    failures = [f"anchor-ambiguous: {n}" if n else "-" for n in paper["fails"]]
    return {
        "note": "Table 3 of the paper; delta_tok_pct recomputed from its printed totals",
        "table3": by_corpus(paper.assign(em_r=None, ambiguous_cases=None, failures=failures)),
        "printed_delta": {
            (r["corpus"] + " / " + r["format"]): r["delta_printed"]
            for r in paper.to_dict(orient="records")
        },
    }
