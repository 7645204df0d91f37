"""Round trips of every case through every format, and their summaries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm import tqdm

from cadlib.corpora import load_corpus
from cadlib.grammar import Program
from cadlib.metrics import equal_up_to_one_newline
from cadlib.models.tokenizer import Tokenizer, qwen25_tokenizer
from cadlib.oracle import oracle_program

from .errors import FAILURE_CATEGORIES, ApplyError
from .registry import FORMATS, TABLE3_FORMATS, EditFormat

__all__ = [
    "RoundTrip",
    "evaluate_formats",
    "failure_counts",
    "failure_table",
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
