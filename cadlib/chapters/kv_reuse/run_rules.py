"""Selection rules for the reuse copy on development corpora: agreement against recompute (#51).

Chapter 6c's fixed windows recompute almost every copied id before they agree often enough.
This run puts issue 51's selection rules (:mod:`cadlib.decoding.kv_select`: ``seams=K``,
``deviation=R``, both) side by side, one curve per rule family
(:data:`cadlib.chapters.kv_reuse.profiles.RULES`), on development corpora only
(:data:`~cadlib.chapters.kv_reuse.profiles.RULE_DEV`). The protocol, fixed before measuring
(:data:`PROTOCOL`):

* SmolLM2-135M-Instruct on ``transformers`` (fp32, one torch thread), decisions teacher-forced
  along the oracle program, compared with the exact splice
  (:func:`cadlib.chapters.kv_reuse.run.case_agreement`, decoder
  :class:`~cadlib.decoding.kv_select.SelectingDecoder`);
* :data:`CASES` seeded cases per corpus (seed 0) among prompts within each corpus's cap: a small
  sample, sized for a shared 2-core machine, run round-robin over the corpora
  (:func:`interleave`) and written after every case, so that a run cut short covers each corpus
  (``complete`` says whether it ran to the end);
* per setting: agreement on the cases that reuse anything (never diluted by cases that reuse
  nothing), the cases with a flipped decision, the share of copied ids recomputed and what the
  rule spent to decide (:func:`curve_table`);
* the choice (:func:`choose_rule`,
  :data:`~cadlib.chapters.kv_reuse.profiles.RULE_CHOICE`), declared before the run.

Nothing is timed. Run it with ``python -m cadlib.chapters.kv_reuse.commands rules --out
results/kv_reuse.rules.json``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from cadlib.decoding.kv_reuse import parse_policy
from cadlib.decoding.kv_select import SelectingDecoder
from cadlib.models import SMOLLM2
from cadlib.record.provenance import monitor
from cadlib.record.results import read_results_file, run_report, write_run_report

from .profiles import (
    AGREEMENT_THRESHOLD,
    GATED,
    RULE_CHOICE,
    RULE_CHOSEN,
    RULE_DEV,
    RULE_MAX_RECOMPUTE,
    RULES,
)
from .run import case_agreement, load_setup, reusing_table, sample_cases

__all__ = [
    "RESULTS",
    "GATED_RESULTS",
    "COMMAND",
    "CASES",
    "PROTOCOL",
    "family",
    "interleave",
    "decision_columns",
    "rules_run",
    "committed_rules",
    "committed_gated",
    "curve_table",
    "choose_rule",
]

#: The committed run chapter 6c shows.
RESULTS = "kv_reuse.rules.json"
#: The margin-gated fallback's run (:data:`~cadlib.chapters.kv_reuse.profiles.GATED`, same cases).
GATED_RESULTS = "kv_reuse.gated.json"
#: The command that records the rules run (``--gated``: the gated run) with
#: :mod:`cadlib.chapters.kv_reuse.commands`.
COMMAND = "python -m cadlib.chapters.kv_reuse.commands rules"
#: ``{corpus: (cases, max prompt ids)}`` of the development sample (seeded order, seed 0).
CASES = {
    "heval-fix-py": (4, 800),
    "heval-fix-js": (4, 800),
    "realedits-flask": (4, 1000),
    "probeedit": (4, 1300),
}
#: Everything the run fixes before it measures (recorded with it).
PROTOCOL = dict(
    model=SMOLLM2,
    corpora=list(RULE_DEV),
    cases=CASES,
    rules=RULES,
    threshold=AGREEMENT_THRESHOLD,
    max_recompute=RULE_MAX_RECOMPUTE,
    choice=RULE_CHOICE,
    seed=0,
    timed=False,
)
_KEEP = ["corpus", "case", "policy", "step", "agree", "kl", "splice", "reused", "check_ids"]
#: Kept too when a run's rules gate an exact fallback (what the fallbacks cost).
_FALLBACK = ["fallbacks", "fallback_ids"]


def family(policy: str) -> str:
    """The rule family of ``policy``: :data:`~cadlib.chapters.kv_reuse.profiles.RULES`, or
    :data:`~cadlib.chapters.kv_reuse.profiles.GATED`."""
    for name, settings in {**RULES, **GATED}.items():
        if policy in settings:
            return name
    raise KeyError(f"{policy!r} is in no rule family")


def decision_columns(rows: pd.DataFrame) -> dict:
    """Rows as ``{column: [values]}`` (KL to 5 decimals): compact for the committed file; the
    fallbacks' counts only where some rule gates one."""
    keep = _KEEP + (_FALLBACK if rows.get("fallbacks", pd.Series([0])).any() else [])
    rows = rows[keep].assign(kl=rows.kl.round(5), agree=rows.agree.astype(bool))
    return {c: rows[c].tolist() for c in keep}


def rules_run(out: str | Path, progress: bool = True, gated: bool = False) -> dict:
    """Every setting of :data:`RULES` (``gated``: ``none``, the chosen rule and every setting
    of :data:`GATED`) on :data:`CASES`, written with its provenance to the JSON file ``out``
    after each case (``complete`` false until the last), the choice with it."""
    monitor()
    model, tokenizer, _ = load_setup(dict(model=SMOLLM2, profile="rules"))
    families = {"none": ("none",), "chosen": (RULE_CHOSEN,), **GATED} if gated else RULES
    policies = [p for settings in families.values() for p in settings]
    samples = {
        name: sample_cases([name], n, tokenizer, cap, PROTOCOL["seed"])[name]
        for name, (n, cap) in CASES.items()
    }
    order = interleave([samples[name] for name in RULE_DEV])
    frames, report = [], {}
    for k, x in enumerate(order):
        frames.append(case_agreement(model, tokenizer, x, policies, SelectingDecoder))
        if progress:
            print(f"{x.corpus} {x.case.id}: done ({k + 1}/{len(order)})", flush=True)
        rows = pd.concat(frames, ignore_index=True)
        report = _report(rows, model, k == len(order) - 1, families)
        write_run_report(report, out)
    return report


def interleave(lists: list[list]) -> list:
    """The items of ``lists`` round-robin (first of each, then second of each, ...): a run cut
    short still covers every corpus."""
    out = []
    for k in range(max((len(x) for x in lists), default=0)):
        out += [x[k] for x in lists if k < len(x)]
    return out


def _report(rows: pd.DataFrame, model, complete: bool, families: dict = RULES) -> dict:
    """The run's report so far (written after every case: a cut run keeps what it measured)."""
    layers = int(model.config.num_hidden_layers)
    columns = decision_columns(rows)
    return run_report(
        "rules",
        COMMAND,
        protocol=dict(PROTOCOL, rules=families),
        layers=layers,
        complete=complete,
        chosen=choose_rule(curve_table(columns, layers)),
        rows=columns,
    )


def committed_rules() -> dict | None:
    """The committed run (``results/kv_reuse.rules.json``), or ``None``."""
    return read_results_file(RESULTS)


def committed_gated() -> dict | None:
    """The committed gated run (``results/kv_reuse.gated.json``), or ``None``."""
    return read_results_file(GATED_RESULTS)


def curve_table(columns: dict, layers: int) -> pd.DataFrame:
    """Per setting, from ``columns`` (a run's rows): its rule ``family``; ``cases`` that reuse
    anything, ``idle`` ones, ``flipped`` ones (at least one decision differs), agreement
    ``rate`` with its interval on the reusing cases; ``recomputed`` (share of copied ids
    recomputed, pooled over every case), ``check`` (what deciding cost, in copied-id
    forwards: check-layer ids times check layers over ``layers`` per copied id), ``fallback``
    (ids the margin gate's exact fallbacks fed again, per copied id; 0 without a gate) and
    ``spent`` (``recomputed`` + ``fallback``: what the choice weighs)."""
    rows = pd.DataFrame(columns).assign(split="dev")
    if "fallback_ids" not in rows:
        rows = rows.assign(fallback_ids=0)
    table = reusing_table(rows, by=("policy",))
    per = rows.drop_duplicates(["corpus", "case", "policy"]).groupby("policy", sort=False)
    cost = per.apply(
        lambda g: g.check_ids.sum() * _layer(g.name) / layers / max(1, g.splice.sum()),
        include_groups=False,
    )
    fed_again = per.apply(
        lambda g: g.fallback_ids.sum() / max(1, g.splice.sum()), include_groups=False
    )
    table = table.assign(
        family=table.policy.map(family),
        check=table.policy.map(cost),
        fallback=table.policy.map(fed_again),
        flip_rate=table.flipped / table.cases.clip(lower=1),
    )
    return table.assign(spent=table.recomputed + table.fallback)


def _layer(policy: str) -> int:
    """The check layer of ``policy`` (1 unless ``@L`` names another)."""
    return parse_policy(policy).layer


def choose_rule(
    table: pd.DataFrame,
    threshold: float = AGREEMENT_THRESHOLD,
    max_recompute: float = RULE_MAX_RECOMPUTE,
) -> dict:
    """:data:`~cadlib.chapters.kv_reuse.profiles.RULE_CHOICE` on :func:`curve_table`: the
    setting that recomputes the least (``spent``: the fallbacks' ids count as recomputed)
    among those whose reusing-case agreement reaches ``threshold`` (``met`` true), else the
    most agreeing among those spending at most ``max_recompute`` (``met`` false; ties: less
    spent). ``policy`` is ``None`` when no setting reuses anything within the budget."""
    t = table[(table.cases > 0) & (table.policy != "none")]
    if "spent" not in t:
        t = t.assign(spent=t.recomputed)
    ok = t[t.rate >= threshold]
    if not ok.empty:
        best = ok.sort_values(["spent", "rate"], ascending=[True, False], kind="stable")
        return _chosen(best.iloc[0], True)
    t = t[t.spent <= max_recompute]
    if t.empty:
        return dict(policy=None, met=False)
    best = t.sort_values(["rate", "spent"], ascending=[False, True], kind="stable")
    return _chosen(best.iloc[0], False)


def _chosen(row, met: bool) -> dict:
    return dict(
        policy=str(row.policy),
        met=met,
        rate=round(float(row.rate), 6),
        recomputed=round(float(row.recomputed), 6),
    )
