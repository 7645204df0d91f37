"""Pipeline losslessness checks (paper §4.3, Table 4, Appendix I).

Oracle programs are resolved through the deployment code path and compared with the gold
under three equalities: byte-exact, the paper's "byte-exact up to a single trailing newline"
and trimmed (``.strip()``). The escape is fuzzed with adversarial strings built as the paper
describes (a gold sample with a reserved literal inserted at a random position, optionally at
a token boundary). A grammar-literal audit lists the Qwen2.5 ids of the structural literals.
"""

from __future__ import annotations

import random
import warnings

import pandas as pd
from tqdm.auto import tqdm

from .escape import ENTITIES, RESERVED, decode_gen_body, encode_gen_body
from .grammar import Gen, Program
from .oracle import oracle_program
from .resolver import RangeClippedWarning, ResolveError, doc_lines, resolve
from .tokenizers import Tokenizer, qwen25_tokenizer

__all__ = [
    "PROFILES",
    "EDGE_CASES",
    "PAPER",
    "paper_equal",
    "round_trip_table",
    "adversarial_strings",
    "escape_fuzz",
    "literal_audit",
    "PAPER_LITERAL_IDS",
    "splitlines_program",
    "paper_escape_round_trips",
    "edge_case_table",
    "strict_vs_clipped",
]


#: Chapter parameters (the checks are cheap: both profiles run everything).
PROFILES = {
    "cpu": {"corpora": ["heval-fix-py", "heval-fix-js", "probeedit", "heval-fix-java",
                        "heval-fix-go", "heval-fix-cpp", "heval-fix-rust"],
            "n_fuzz": 10_000, "noise_trials": 5},
    "paper": {"corpora": ["heval-fix-py", "heval-fix-js", "probeedit", "heval-fix-java",
                          "heval-fix-go", "heval-fix-cpp", "heval-fix-rust"],
              "n_fuzz": 10_000, "noise_trials": 5},
}  # fmt: skip

#: The paper's figures (§4.3, Appendix I, Table 4).
PAPER = {
    "cases": {"probeedit": 154, "heval-fix-py": 164, "heval-fix-js": 164, "pooled": 482},
    "byte_exact_up_to_trailing_newline": "482/482",
    "trimmed": "482/482",
    "reserved_in_gold": "0/482",
    "escape_fuzz_round_trip": "10000/10000",
    "table4_strict_em": "482/482",
    "table4_clipped_em": "482/482",
    "table4_out_of_range": "0/482",
}

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


def paper_equal(a: str, b: str) -> bool:
    """The paper's byte-exact EM: equal after stripping at most one trailing newline each."""
    return a.removesuffix("\n") == b.removesuffix("\n")


def round_trip_table(corpus) -> pd.DataFrame:
    """One row per case: the oracle program's shape and the three equalities of §4.3."""
    rows = []
    for case in tqdm(corpus, desc=f"round trip {getattr(corpus, 'name', '')}", leave=False):
        program = oracle_program(case.doc, case.gold)
        out = resolve(str(program), case.doc)  # through the program text, as deployed
        rows.append(
            {
                "id": case.id,
                "ops": len(program),
                "copies": len(program.copies),
                "byte_exact": out == case.gold,
                "paper_exact": paper_equal(out, case.gold),
                "trimmed": out.strip() == case.gold.strip(),
                "reserved_in_gold": any(lit in case.gold for lit in RESERVED),
            }
        )
    return pd.DataFrame(rows)


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
        "program_round_trip": sum(
            resolve(str(Program([Gen(s)])), "") == s for s in strings
        ),
    }


#: The ids listed in the paper's appendix "Qwen2.5 token identifiers".
PAPER_LITERAL_IDS = {
    "<": 27, "</": 522, ">": 29, "copy": 8560, "gen": 4370, "program": 14906,
    " lines": 5128, '="': 428, '"/>': 9685, "/>": 2577,
}  # fmt: skip


def literal_audit(tokenizer: Tokenizer | None = None) -> pd.DataFrame:
    """The ids of each structural literal under ``tokenizer`` beside the paper's listing."""
    tok = tokenizer or qwen25_tokenizer()
    rows = []
    for literal, paper_id in PAPER_LITERAL_IDS.items():
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
        program = oracle_program(doc, gold)
        rows.append(
            {
                "case": name,
                "program": str(program),
                "ours byte-exact": resolve(str(program), doc) == gold,
                "splitlines byte-exact": splitlines_program(doc, gold) == gold,
                "splitlines paper-exact": paper_equal(splitlines_program(doc, gold), gold),
                "paper escape round-trips gold": paper_escape_round_trips(gold),
            }
        )
    return pd.DataFrame(rows)


def _resolve_modes(program: Program, case) -> dict:
    """Resolve one program in both modes: strict EM (or rejection) and clipped EM."""
    n = len(doc_lines(case.doc))
    out_of_range = any(not 1 <= op.start <= op.end <= n for op in program.copies)
    try:
        strict_ok = resolve(program, case.doc, mode="strict") == case.gold
        rejected = False
    except ResolveError:
        strict_ok, rejected = False, True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RangeClippedWarning)
        clipped_ok = resolve(program, case.doc, mode="clipped") == case.gold
    return {"out_of_range": out_of_range, "strict_em": strict_ok, "strict_rejected": rejected,
            "clipped_em": clipped_ok}  # fmt: skip


def strict_vs_clipped(cases, programs: list[Program]) -> dict:
    """Table 4 counts for ``programs`` (one per case) in strict and clipped mode."""
    rows = [_resolve_modes(p, c) for p, c in zip(programs, cases, strict=True)]
    frame = pd.DataFrame(rows)
    return {
        "cases": len(frame),
        "out_of_range": int(frame.out_of_range.sum()),
        "strict_em": int(frame.strict_em.sum()),
        "strict_rejected": int(frame.strict_rejected.sum()),
        "clipped_em": int(frame.clipped_em.sum()),
    }
