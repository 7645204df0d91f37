"""Chapter 8's constraint beside the published mask engines (issue 52): soundness,
completeness and speed side by side, each row labelled by what its engine supports.

The anchors' figures are quoted, never measured here: MaskBench (the llguidance authors' mask
benchmark, ``jsonschemabench/maskbench``) times one thread's mask per token on JSON-schema
grammars with a 128k-token vocabulary, on a server CPU. Those engines do other work than ours:
a context-free grammar over the prefix only, where ours follows Python's indentation and
checks that the right context can still follow the middle. So the table compares nothing and
counts nothing; it says how far apart the numbers are and why they may be.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["Anchor", "ANCHORS", "OURS", "VOCABULARY", "side_by_side"]


@dataclass(frozen=True)
class Anchor:
    """A published mask engine: its mask time per token (microseconds; ``None`` where its
    source gives none), the vocabulary it was timed with, what it supports and the source."""

    name: str
    mean_us: float | None
    p99_us: float | None
    vocabulary: str
    supports: str
    source: str


_PREFIX_ONLY = "JSON-schema grammars, prefix only"

#: The anchors issue 52 names, as their sources report them.
ANCHORS = (
    Anchor("llguidance", 47.0, 460.0, "128k", _PREFIX_ONLY, "MaskBench (quoted)"),
    Anchor("XGrammar", 292.0, None, "128k", _PREFIX_ONLY, "MaskBench (quoted)"),
)

#: What our constraint supports (the row's label).
OURS = "Python 3.11, indentation, right context"


#: Vocabulary sizes of the tokenizers the mask-speed run may name.
VOCABULARY = {"smollm2-135m-instruct": "49k"}


def _vocabulary(tokenizer: str) -> str:
    size = VOCABULARY.get(tokenizer)
    return f"{size} ({tokenizer})" if size else tokenizer


def _tail(report: dict) -> tuple[str, float, dict]:
    """The mask-speed run's tail percentile (p99; p90 in runs recorded before issue 52 named
    p99), its value in microseconds and the summary row it is read from (the current mask,
    default collector, no ballast)."""
    row = next(
        r
        for r in report["summary"]
        if r["gc"] == "default" and not r["ballast_millions"] and r["arm"] == report["arms"][0]
    )
    tail = "p99" if "p99_ms" in row else "p90"
    return tail, row[f"{tail}_ms"] * 1e3, row


def side_by_side(
    maskspeed: dict, differentials: list[dict], witnesses: list[dict], reference: dict | None = None
) -> pd.DataFrame:
    """One row per engine: mask mean and tail per token (µs), the vocabulary, what it
    supports, its soundness evidence (witness completions CPython rejected, of those found;
    accepted prefixes left without a witness, undecided), its completeness evidence (true
    middles rejected; ``can_end`` against ``ast.parse`` on perturbed middles), and where the
    figures come from. Ours reads the committed
    ``maskspeed``, ``differentials`` (:func:`.run_evidence.load_runs`) and ``witnesses``
    (:func:`.run_evidence.load_witness_runs`) runs; the anchors report neither check. With
    ``reference`` (the committed ``llguidance`` command's run), llguidance measured here on
    our tokenizer and states, by a grammar that does less than ours, is a row of its own."""
    tail, tail_us, row = _tail(maskspeed)
    found = sum(w["summary"]["witnesses_found"] for w in witnesses)
    undecided = sum(w["summary"]["no_witness"] for w in witnesses)
    failed = sum(w["summary"]["failures"] for w in witnesses)
    edits = sum(d["summary"]["edits"] for d in differentials)
    disagreements = sum(d["summary"]["disagreements"] for d in differentials)
    true = [d["summary"]["true_middles_accepted"] for d in differentials]
    middles = sum(t["n"] for t in true)
    ours = {
        "engine": "ours (cadlib.fim)",
        "mean µs": round(row["mean_ms"] * 1e3),
        f"{tail} µs": round(tail_us),
        "vocabulary": _vocabulary(maskspeed["tokenizer"]),
        "supports": OURS,
        "witnesses CPython rejected": f"{failed} of {found:,}",
        "accepted, no witness (undecided)": f"{undecided:,}",
        "true middles rejected": f"{middles - sum(t['k'] for t in true)} of {middles:,}",
        "can_end ≠ ast.parse": f"{disagreements} of {edits:,}",
        "source": "measured here, one thread",
    }
    rows = [ours, *([] if reference is None else [_measured(reference, tail)])] + [
        {
            "engine": a.name,
            "mean µs": a.mean_us,
            f"{tail} µs": a.p99_us if tail == "p99" else None,
            "vocabulary": a.vocabulary,
            "supports": a.supports,
            **dict.fromkeys(_CHECKS, "not reported"),
            "source": a.source,
        }
        for a in ANCHORS
    ]
    return pd.DataFrame(rows).set_index("engine")


def _measured(reference: dict, tail: str) -> dict:
    """llguidance as :func:`cadlib.fim.llguidance_ref.time_llguidance` measured it here."""
    s = reference["summary"]
    return {
        "engine": f"{reference['engine']}, measured here",
        "mean µs": round(s["mean_us"]),
        f"{tail} µs": round(s["p99_us"]) if tail == "p99" else None,
        "vocabulary": _vocabulary(reference["tokenizer"]),
        "supports": "Python-like lexemes in brackets, prefix only",
        **dict.fromkeys(_CHECKS, "not checked"),
        "true middles rejected": f"{len(s['rejected_problems'])} of {s['problems']}",
        "source": "measured here, one thread",
    }


#: The soundness and completeness columns (an anchor reports none of them).
_CHECKS = (
    "witnesses CPython rejected",
    "accepted, no witness (undecided)",
    "true middles rejected",
    "can_end ≠ ast.parse",
)
