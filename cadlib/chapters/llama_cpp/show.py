"""Chapter 6b's tables: the committed draft-cap run, pooled per engine and arm (the run's
tables and numbers: :mod:`.run`)."""

from __future__ import annotations

import pandas as pd

from cadlib.costs.draft_policy import arm_label, pooled

__all__ = ["policy_table"]


def policy_table(report: dict) -> pd.DataFrame:
    """The development run pooled per engine and arm: decode seconds, forwards, draft ids fed
    and accepted, and each arm's time over the plain decoder's."""
    table = pooled(pd.DataFrame(report["dev"]))
    plain = table.xs("plain", level="arm")["decode_s"]
    ratio = table["decode_s"] / plain.reindex(table.index.get_level_values("engine")).to_numpy()
    table = table.assign(over_plain=ratio.round(3)).round({"decode_s": 3})
    order = ["plain", *map(arm_label, report["protocol"]["caps"])]
    engines = list(dict.fromkeys(table.index.get_level_values("engine")))
    return table.reindex(pd.MultiIndex.from_product([engines, order], names=table.index.names))
