"""Chapter 1's measurements: oracle round trips, the escape under adversarial input, the
literal audit, the byte-exact edge cases and Table 4 (paper §4.3, Table 4, Appendix I), and
:func:`numbers`, the chapter's results dict.

Oracle programs are resolved through the deployment code path and compared with the gold
under three equalities: byte-exact, the paper's "byte-exact up to a single trailing newline"
and trimmed (``.strip()``). The escape is fuzzed with adversarial strings built as the paper
describes (a gold sample with a reserved literal inserted at a random position, optionally at
a token boundary). A grammar-literal audit lists the Qwen2.5 ids of the structural literals.
"""

from __future__ import annotations

import random

import pandas as pd

from cadlib import paper as _paper
from cadlib.endpoint_noise import perturbation_trials
from cadlib.escape import ENTITIES, RESERVED, decode_gen_body, encode_gen_body
from cadlib.grammar import Gen, Program
from cadlib.metrics import byte_equal, equal_stripped, equal_up_to_one_newline
from cadlib.models.tokenizer import Tokenizer, qwen25_tokenizer
from cadlib.oracle import oracle_program
from cadlib.resolver import resolve

__all__ = [
    "EDGE_CASES",
    "round_trip_table",
    "round_trip_summary",
    "PAPER_CORPORA",
    "adversarial_strings",
    "escape_fuzz",
    "literal_audit",
    "splitlines_program",
    "paper_escape_round_trips",
    "edge_case_table",
    "table4",
    "numbers",
]


#: (doc, gold) pairs for the byte-exact edge cases the paper's convention does not cover.
EDGE_CASES = {
    "empty doc and gold": ("", ""),
    "empty gold": ("a\nb\n", ""),
    "empty doc": ("", "new\n"),
    "no trailing newline": ("a\nb", "a\nB"),
    "trailing newline added": ("a\nb", "a\nb\n"),
    "trailing newline removed": ("a\nb\n", "a\nb"),
    "several trailing newlines": ("a\n", "a\n\n\n"),
    "runs of blank lines": ("a\n\n\n\nb\n", "a\n\nb\n\n\n\nc\n"),
    "CRLF line endings": ("a\r\nb\r\n", "a\r\nB\r\n"),
    "LF to CRLF": ("a\nb\n", "a\r\nb\r\n"),
    "reserved literals in gold": ("x\n", 'if a </gen> b:\n    <copy lines="1-2"/>\n</program>\n'),
    "entity characters in gold": ("x\n", "\u27e8\u2024gen\u27e9 and \u27e8copy\n"),
    "Unicode line separator": ("a\u2028b\n", "a\u2028c\n"),
    "non-ASCII text": ("caf\u00e9\n", "caf\u00e9 \u2615\n\u4e2d\u6587\n"),
}


def round_trip_table(corpus) -> pd.DataFrame:
    """One row per case: the oracle program's shape and the three equalities of §4.3."""
    rows = []
    for case in corpus:
        program = oracle_program(case.doc, case.gold)
        out = resolve(str(program), case.doc)  # through the program text, as deployed
        rows.append(
            {
                "id": case.id,
                "ops": len(program),
                "copies": len(program.copies),
                "byte_exact": byte_equal(out, case.gold),
                "paper_exact": equal_up_to_one_newline(out, case.gold),
                "trimmed": equal_stripped(out, case.gold),
                "reserved_in_gold": any(lit in case.gold for lit in RESERVED),
            }
        )
    return pd.DataFrame(rows)


PAPER_CORPORA = ("probeedit", "heval-fix-py", "heval-fix-js")


def round_trip_summary(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per-corpus counts of :func:`round_trip_table` results, a pooled row over the paper's
    three corpora, and the paper's figure for each row."""
    rows = {}
    for name, t in tables.items():
        rows[name] = {
            "cases": len(t),
            "byte-exact": int(t.byte_exact.sum()),
            "paper-exact": int(t.paper_exact.sum()),
            "trimmed": int(t.trimmed.sum()),
            "reserved literal in gold": int(t.reserved_in_gold.sum()),
            "mean ops": round(float(t.ops.mean()), 2),
        }
    pooled = [tables[c] for c in PAPER_CORPORA if c in tables]
    if pooled:
        rows["pooled (paper's three)"] = (
            round_trip_summary({"pooled": pd.concat(pooled, ignore_index=True)}).iloc[0].to_dict()
        )
    frame = pd.DataFrame.from_dict(rows, orient="index")
    cases = _paper.LOSSLESSNESS["cases"]
    frame["paper"] = [
        f"{cases[n]}/{cases[n]}"
        if n in cases
        else "482/482"
        if n.startswith("pooled")
        else "not reported"
        for n in frame.index
    ]
    return frame.astype({c: int for c in frame.columns if c not in ("mean ops", "paper")})


def adversarial_strings(golds: list[str], n: int, seed: int = 0, tokenizer=None) -> list[str]:
    """``n`` strings: a gold sample with a reserved literal inserted at a random offset.

    Half of the insertions land on a token boundary of ``tokenizer`` (Qwen2.5 by default),
    half at an arbitrary character offset; some strings also carry an entity character, which
    the paper's scheme cannot round-trip and ours can.
    """
    tok = tokenizer or qwen25_tokenizer()
    rng = random.Random(seed)
    out = []
    for k in range(n):
        text = rng.choice(golds)
        if k % 2 == 0:
            ids = tok.encode(text)
            cut = len(tok.decode(ids[: rng.randint(0, len(ids))]))
        else:
            cut = rng.randint(0, len(text))
        literal = rng.choice(RESERVED + ("\u27e8", "\u27e8\u2024gen\u27e9"))
        out.append(text[:cut] + literal + text[cut:])
    return out


def escape_fuzz(strings: list[str]) -> dict:
    """Round-trip counts of the escape over ``strings``, and that no body closes early."""
    return {
        "n": len(strings),
        "round_trip": sum(decode_gen_body(encode_gen_body(s)) == s for s in strings),
        "gen_close_in_body": sum("</gen>" in encode_gen_body(s) for s in strings),
        "program_round_trip": sum(resolve(str(Program([Gen(s)])), "") == s for s in strings),
    }


def literal_audit(tokenizer: Tokenizer | None = None) -> pd.DataFrame:
    """The ids of each structural literal under ``tokenizer`` beside the paper's listing."""
    tok = tokenizer or qwen25_tokenizer()
    rows = []
    for literal, paper_id in _paper.LITERAL_IDS.items():
        ids = tok.encode(literal)
        rows.append(
            {
                "literal": literal,
                "paper id": paper_id,
                "our ids": ids,
                "paper id decodes to": tok.decode([paper_id]),
                "agrees": ids == [paper_id],
            }
        )
    return pd.DataFrame(rows)


def splitlines_program(doc: str, gold: str) -> str:
    """What a resolver built on ``str.splitlines()`` reproduces (for the edge-case table).

    It aligns and joins lines the same way but splits with ``splitlines()``, which drops a
    final newline and splits on ``\\r``, ``\\u2028`` and other separators: the usual way a
    round trip ends up "lossless up to a trailing newline".
    """
    lines = doc.splitlines()
    program = oracle_program("\n".join(lines), "\n".join(gold.splitlines()))
    return resolve(program, "\n".join(lines))


def paper_escape_round_trips(text: str) -> bool:
    """Whether the paper's escape (a ``str.replace`` chain each way) gives ``text`` back."""
    encoded = text
    for literal in RESERVED:  # longest first
        encoded = encoded.replace(literal, ENTITIES[literal])
    decoded = encoded
    for literal in RESERVED:
        decoded = decoded.replace(ENTITIES[literal], literal)
    return decoded == text


def edge_case_table(pairs: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """Byte-exactness of our oracle+resolver and of a ``splitlines()`` one on named pairs."""
    rows = []
    for name, (doc, gold) in pairs.items():
        program, naive = oracle_program(doc, gold), splitlines_program(doc, gold)
        rows.append(
            {
                "case": name,
                "program": str(program),
                "ours byte-exact": resolve(str(program), doc) == gold,
                "splitlines byte-exact": naive == gold,
                "splitlines paper-exact": equal_up_to_one_newline(naive, gold),
                "paper escape round-trips gold": paper_escape_round_trips(gold),
            }
        )
    return pd.DataFrame(rows)


def table4(loaded: dict, trials: int = 5, seed: int = 0) -> pd.DataFrame:
    """Table 4: strict vs clipped resolution of oracle programs and of eps=1 noisy ones.

    ``loaded`` maps corpus names to corpora. Rows: each corpus (and ``pooled``) under the
    oracle programs (eps = 0, one run per case), eps = 1 noise clamped to the document (the
    paper's protocol) and eps = 1 unclamped (indices may leave the document: what strict mode
    is for). Noise comes from :mod:`cadlib.endpoint_noise`, so it is the perturbation
    chapter's.
    """
    runs = []
    for name, cases in loaded.items():
        for label, eps, clamp, n in (
            ("oracle", 0, True, 1),
            ("eps=1 clamped", 1, True, trials),
            ("eps=1 unclamped", 1, False, trials),
        ):
            frame = perturbation_trials(
                cases, [eps], n, seed, clamp=clamp, corpus=name, progress=False
            )
            runs.append(frame.assign(setting=label))
    runs = pd.concat(runs, ignore_index=True)
    runs = pd.concat([runs, runs.assign(corpus="pooled")], ignore_index=True)
    clipped_ok = runs.em_exact
    strict_ok = runs.em_exact & ~runs.strict_rejected
    return (
        runs.assign(clipped_ok=clipped_ok, strict_ok=strict_ok)
        .groupby(["corpus", "setting"], sort=False)
        .agg(
            runs=("case", "size"),
            out_of_range=("out_of_range", "sum"),
            strict_rejected=("strict_rejected", "sum"),
            strict_em=("strict_ok", "sum"),
            clipped_em=("clipped_ok", "sum"),
        )
    )


def numbers(
    summary: pd.DataFrame,
    fuzz: dict,
    tokenizer: Tokenizer,
    portability: dict,
    portability_missing: dict,
    t4: pd.DataFrame,
) -> dict:
    """The ``numbers`` of ``results/losslessness.json``: the round-trip counts of
    :func:`round_trip_summary` (without the paper's column), the escape fuzz of
    :func:`escape_fuzz`, the :func:`literal_audit` under ``tokenizer``, whether every edge case
    is byte-exact, Appendix K's per-tokenizer records
    (:func:`~cadlib.chapters.losslessness.run_portability.record`) and the tokenizers that did
    not load, and Table 4 (:func:`table4`)."""
    return {
        "round_trip": summary.drop(columns="paper").to_dict(orient="index"),
        "escape_fuzz": fuzz,
        "literal_audit": literal_audit(tokenizer).to_dict(orient="records"),
        "edge_cases_byte_exact": bool(edge_case_table(EDGE_CASES)["ours byte-exact"].all()),
        "portability": portability,
        "portability_not_loaded": portability_missing,
        "table4": {f"{a} / {b}": v for (a, b), v in t4.astype(int).to_dict(orient="index").items()},
    }
