"""Free-run output identity of the reuse copy mode (issue 32): does a model decoding on its own
write the same program with the reuse copy as with the exact splice?

Teacher-forced agreement (:func:`.chapter.case_agreement`) scores every decision on its own,
along the oracle program. In a free run (the model's own masked greedy decisions, no oracle) one
flipped decision changes everything after it, so a free run is the test a user sees. Each case of
the agreement sample is decoded twice per policy, exact and reuse, with the same budget, and the
transcripts are compared id for id. A run whose program copies nothing reuses nothing and is
identical by construction; the table counts those apart (``reused``), so identity is read on the
runs that reused prompt entries.
"""

from __future__ import annotations

import pandas as pd
from tqdm import tqdm

from cadlib.decoding.decoder import CopyDecoder

from .chapter import with_split

__all__ = ["free_run_rows", "identity_table", "identity_numbers", "identity_markdown"]


def _first_difference(a, b) -> int | None:
    """The first index where two id sequences differ (the shorter one's length if one is a
    prefix of the other), or ``None`` when they are equal."""
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return k
    return None if len(a) == len(b) else min(len(a), len(b))


def free_run_rows(
    model, tokenizer, inputs: dict, policies, max_new_tokens: int, progress: bool = True
) -> pd.DataFrame:
    """One row per (case, policy) of ``inputs`` (``{corpus: [CaseInputs]}``): the exact and the
    reuse free run (``max_new_tokens`` decisions each) of the edit prompt, ``identical`` (the
    same transcript ids), ``first_difference`` (its index, -1 when identical), the exact run's
    ``ids`` and ``spliced`` ids, the ids the reuse run took from the prompt (``reused``), and
    ``split`` (``dev`` / ``test``, as the agreement sample)."""
    rows = []
    for corpus, xs in inputs.items():
        for x in tqdm(xs, desc=f"free runs {corpus}", disable=not progress):
            exact = CopyDecoder(model, tokenizer, max_new_tokens=max_new_tokens).decode(
                x.case.doc, prompt_ids=x.edit_prompt
            )
            for policy in policies:
                res = CopyDecoder(
                    model,
                    tokenizer,
                    max_new_tokens=max_new_tokens,
                    copy_kv="reuse",
                    recompute=policy,
                ).decode(x.case.doc, prompt_ids=x.edit_prompt)
                diff = _first_difference(exact.transcript.ids, res.transcript.ids)
                rows.append(
                    dict(
                        corpus=corpus,
                        case=x.case.id,
                        policy=policy,
                        identical=diff is None,
                        first_difference=-1 if diff is None else diff,
                        ids=len(exact.transcript.ids),
                        spliced=exact.n_spliced,
                        reused=int(res.trace.info.get("reused_ids", 0)),
                    )
                )
    return with_split(pd.DataFrame(rows))


def identity_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per split and policy: runs, identical runs, the runs that reused prompt entries and how
    many of those were identical (the ones that test the mode), and the median position of the
    first differing id among the runs that differ."""
    out = []
    for (split, policy), g in rows.groupby(["split", "policy"], sort=False):
        used = g[g.reused > 0]
        differ = g[~g.identical]
        out.append(
            dict(
                split=split,
                policy=policy,
                runs=len(g),
                identical=int(g.identical.sum()),
                reused_any=len(used),
                identical_reused=int(used.identical.sum()),
                first_difference_median=(
                    float(differ.first_difference.median()) if len(differ) else None
                ),
            )
        )
    return pd.DataFrame(out)


def identity_numbers(table: pd.DataFrame) -> dict:
    """The results file's ``free_runs``: the counts of :func:`identity_table` per split and
    policy (counts only: what a re-run must reproduce exactly)."""
    return {
        split: {
            r.policy: dict(
                runs=int(r.runs),
                identical=int(r.identical),
                reused_any=int(r.reused_any),
                identical_reused=int(r.identical_reused),
            )
            for r in g.itertuples()
        }
        for split, g in table.groupby("split", sort=False)
    }


def identity_markdown(table: pd.DataFrame, tokens: int) -> str:
    """One sentence on the held-out free runs (``test`` split of :func:`identity_table`): per
    policy, how many of the runs that reused prompt entries wrote the exact splice's
    transcript."""
    test = table[table.split == "test"]
    if not len(test):
        return ""
    per = "; ".join(
        f"`{r.policy}` {r.identical_reused} of {r.reused_any}"
        + (f" (and {r.runs - r.reused_any} that reused nothing)" if r.runs > r.reused_any else "")
        for r in test.itertuples()
    )
    return (
        f"**Free runs** (the untrained model's own decisions, {tokens} at most), held-out "
        f"corpora: runs that reused prompt entries and wrote the exact splice's transcript "
        f"id for id: {per}."
    )
