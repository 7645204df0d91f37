"""Tokenization at the copy boundaries (chapter 6, App. K): does a transcript's ids equal the
tokenizer's own encoding of the same text, and does the difference move the model?

:func:`naive_transcript_ids` encodes a transcript piece by piece (the paper's fixed-id-table
approach) where :func:`cadlib.decoding.fsm.transcript` respects the tokenizer's boundaries;
:func:`boundary_table` counts canonical copy / gen windows of both over whole corpora, and
:func:`boundary_effect` compares a model's next-id distributions at every op boundary.
"""

from __future__ import annotations

import pandas as pd
import torch

from cadlib.escape import encode_gen_body
from cadlib.grammar import (
    COPY_CLOSE,
    COPY_OPEN,
    GEN_CLOSE,
    GEN_OPEN,
    PROGRAM_CLOSE,
    PROGRAM_OPEN,
    Copy,
)
from cadlib.oracle import oracle_program
from cadlib.resolver import copied_text

from .fsm import token_table, transcript

__all__ = ["naive_transcript_ids", "op_literal_starts", "boundary_table", "boundary_effect"]


def naive_transcript_ids(program, doc: str, tokenizer) -> list[int]:
    """The transcript text encoded piece by piece (each literal, number, splice and body
    on its own, the paper's fixed-id-table approach) instead of at the tokenizer's own
    boundaries: what :func:`cadlib.decoding.fsm.transcript` would be without boundary handling."""
    enc = token_table(tokenizer).encode
    lines, out = doc.split("\n"), list(enc(PROGRAM_OPEN + "\n"))
    for op in program:
        if isinstance(op, Copy):
            out += enc(COPY_OPEN) + enc(str(op.start)) + enc("-") + enc(str(op.end))
            out += enc(COPY_CLOSE) + enc("\n" + copied_text(lines, op.start, op.end) + "\n")
        else:
            out += enc(GEN_OPEN + "\n") + enc(encode_gen_body(op.text) + "\n")
            out += enc(GEN_CLOSE) + enc("\n")
    return out + list(enc(PROGRAM_CLOSE))


def boundary_table(corpora: dict, tokenizers: dict) -> pd.DataFrame:
    """How often the transcript's ids differ from the tokenizer's canonical encoding of the
    same text, with and without boundary handling (oracle programs of every case).

    A copy boundary is canonical when ``encode(text(w)) == w`` for the window ``w`` = the
    ids that end the range, the splice, and the next op's literal; a gen boundary likewise
    for opener + body + closer. ``whole`` compares the entire transcript.
    """
    rows = []
    for tname, tk in tokenizers.items():
        table = token_table(tk)
        for cname, cases in corpora.items():
            c = dict(tokenizer=tname, corpus=cname, cases=len(cases), copies=0, gens=0)
            for case in cases:
                program = oracle_program(case.doc, case.gold)
                for variant, ids in (
                    ("ours", transcript(program, case.doc, table).ids),
                    ("naive", naive_transcript_ids(program, case.doc, table)),
                ):
                    w = _windows(ids, table)
                    c[f"copy_{variant}"] = c.get(f"copy_{variant}", 0) + sum(w["copy"])
                    c[f"gen_{variant}"] = c.get(f"gen_{variant}", 0) + sum(w["gen"])
                    c[f"whole_{variant}"] = c.get(f"whole_{variant}", 0) + w["whole"]
                c["copies"] += len(program.copies)
                c["gens"] += len(program.gens)
            rows.append(c)
    return pd.DataFrame(rows)


def _windows(ids, table) -> dict:
    """Canonical-or-not of each copy window and gen window of a transcript's ids."""
    tb = table.token_bytes
    text = lambda xs: b"".join(tb[i] for i in xs).decode(errors="replace")  # noqa: E731
    is_canon = lambda xs: list(table.encode(text(xs))) == list(xs)  # noqa: E731
    ends = op_literal_starts(ids, table) + [len(ids)]
    out = {"copy": [], "gen": [], "whole": is_canon(ids)}
    for a, b in zip(ends, ends[1:], strict=False):
        body = text(ids[a:b])
        nxt = ids[b : b + 3] if b < len(ids) else []
        if body.startswith("<copy"):
            close = body.index('"/>')
            k = a + max(j for j in range(b - a + 1) if len(text(ids[a : a + j])) <= close)
            out["copy"].append(is_canon(list(ids[k:b]) + list(nxt)))
        elif body.startswith("<gen"):
            out["gen"].append(is_canon(list(ids[a:b]) + list(nxt)))
    return out


def op_literal_starts(ids, table) -> list[int]:
    """Indices of the ids that start an op literal (``<copy``, ``<gen``, ``</program>``)."""
    tb, out, offset = table.token_bytes, [], 0
    text = b"".join(tb[i] for i in ids)
    starts = {m for lit in (b"<copy", b"<gen>", b"</program>") for m in _find_all(text, lit)}
    for k, i in enumerate(ids):
        if offset in starts:
            out.append(k)
        offset += len(tb[i])
    return out


def _find_all(text: bytes, sub: bytes) -> list[int]:
    out, k = [], text.find(sub)
    while k >= 0:
        out.append(k)
        k = text.find(sub, k + 1)
    return out


def boundary_effect(model, tokenizer, inputs: list) -> pd.DataFrame:
    """Does the boundary handling change what the model predicts? At every op boundary
    (the position that predicts ``<``/``</``) of each oracle transcript, compare the
    model's next-id distribution after our ids with that after the naive piecewise ids of
    the same text: KL divergence (nats), top-1 agreement, and agreement of the FSM's
    masked choice. Boundaries whose preceding ids are identical in both are reported as
    such (their distributions are equal by construction)."""
    table = token_table(tokenizer)
    choices = torch.tensor(sorted({table.lt[0], table.op_literals["close"][0]}))
    rows = []
    for x in inputs:
        ours = list(transcript(x.program, x.case.doc, table).ids)
        naive = naive_transcript_ids(x.program, x.case.doc, table)
        starts = [op_literal_starts(ids, table) for ids in (ours, naive)]
        lo, ln = (
            _logits_at(model, x.edit_prompt, ids, st)
            for ids, st in zip((ours, naive), starts, strict=True)
        )
        for k, (a, b) in enumerate(zip(*starts, strict=True)):
            p, q = torch.log_softmax(lo[k], -1), torch.log_softmax(ln[k], -1)
            rows.append(
                dict(
                    corpus=x.corpus,
                    case=x.case.id,
                    boundary=k,
                    same_prefix=ours[:a] == naive[:b],
                    kl=float((p.exp() * (p - q)).sum()),
                    top1_agree=bool(p.argmax() == q.argmax()),
                    fsm_choice_agree=bool(p[choices].argmax() == q[choices].argmax()),
                )
            )
    return pd.DataFrame(rows)


def _logits_at(model, prompt, ids, positions) -> torch.Tensor:
    """Logits predicting ``ids[p]`` for each ``p`` in ``positions``: shape (len(positions), V)."""
    keep = torch.tensor([len(prompt) + p - 1 for p in positions], device=model.device)
    x = torch.tensor([list(prompt) + list(ids)], device=model.device)
    with torch.inference_mode():
        return model(input_ids=x, logits_to_keep=keep).logits[0].float()
