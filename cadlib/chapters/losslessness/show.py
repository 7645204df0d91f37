"""Chapter 1's tables beyond those its measurements already are: Appendix K's comparison of
the tokenizers loaded here (:func:`portability_table`)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

__all__ = ["portability_table"]


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
