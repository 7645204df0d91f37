"""Chapter 6c's run: its setup and cases, the reusable share, the agreement with exact decoding,
the free runs, and :func:`numbers`, the results file's ``numbers`` (the package docstring,
:mod:`cadlib.chapters.kv_reuse`, says what the chapter measures).

Free runs (issue 32): does a model decoding on its own write the same program with the reuse
copy as with the exact splice? Teacher-forced agreement (:func:`case_agreement`) scores every
decision on its own, along the oracle program. In a free run (the model's own masked greedy
decisions, no oracle) one flipped decision changes everything after it, so a free run is the
test a user sees. Each case of the agreement sample is decoded twice per policy, exact and
reuse, with the same budget, and the transcripts are compared id for id. A run whose program
copies nothing reuses nothing and is identical by construction; the table counts those apart
(``reused``), so identity is read on the runs that reused prompt entries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from cadlib.corpora import CORPUS_LABELS, load_corpus, seeded_subset
from cadlib.costs.accounting import copy_sources
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.fsm import transcript
from cadlib.decoding.methods import METHODS, prepare
from cadlib.metrics import wilson_ci
from cadlib.models import (
    load_model,
    load_tokenizer,
    quiet_transformers,
    resolve_device,
    set_threads,
)
from cadlib.record import style
from cadlib.record.results import setting_label

from .profiles import AGREEMENT_THRESHOLD, POLICIES, TEST
from .run_flips import decision_distances

__all__ = [
    "load_setup",
    "agreement_inputs",
    "sample_cases",
    "reuse_shares",
    "share_table",
    "masked_log_probs",
    "case_agreement",
    "agreement_rows",
    "with_split",
    "agreement_table",
    "reusing_table",
    "judge",
    "threshold_verdict",
    "free_run_rows",
    "identity_table",
    "identity_numbers",
    "timing_table",
    "numbers",
]


# --------------------------------------------------------------------------------------------
# Setup and cases
# --------------------------------------------------------------------------------------------


def load_setup(params: dict, device: str = "cpu"):
    """``(model, tokenizer, label)``: the book's plot style, quiet ``transformers``, one torch
    thread, the profile's model and tokenizer on ``device``, and the label every table
    carries (model, engine, ``params["profile"]``, then the machine)."""
    style.setup()
    quiet_transformers()
    set_threads(1)
    model = load_model(params["model"], device=str(resolve_device(device)))
    label = setting_label(
        f"model {params['model']} ({model.dtype}, transformers, "
        f"{model.config._attn_implementation})",
        "tokenizer: the model's",
        profile=params["profile"],
        threads=torch.get_num_threads(),
    )
    return model, load_tokenizer(params["model"]), label


def agreement_inputs(params: dict, tokenizer, seed: int = 0) -> dict:
    """The agreement sample: per corpus of ``params["agreement_cases"]``, that many seeded
    cases among those whose edit prompt has at most ``params["max_prompt"]`` ids (one cap, or
    ``{corpus: cap}``: ProbeEdit's prompts are all longer than 1,200 ids)."""
    out, cap = {}, params["max_prompt"]
    for name, n in params["agreement_cases"].items():
        limit = cap.get(name) if isinstance(cap, dict) else cap
        out.update(sample_cases([name], n, tokenizer, limit, seed))
    return out


def sample_cases(
    names, n: int | None, tokenizer, max_prompt: int | None = None, seed: int = 0
) -> dict:
    """``{corpus: [CaseInputs]}``: per corpus, the seeded subset of ``n`` cases
    (:func:`cadlib.corpora.seeded_subset`) among those whose edit prompt has at most
    ``max_prompt`` ids (``None``: all)."""
    out = {}
    for name in names:
        cases = load_corpus(name)
        if max_prompt is None:  # no filter: prepare only the subset
            out[name] = [prepare(name, c, tokenizer) for c in seeded_subset(cases, n, seed)]
            continue
        xs = [prepare(name, c, tokenizer) for c in cases]
        xs = [x for x in xs if len(x.edit_prompt) <= max_prompt]
        keep = {c.id for c in seeded_subset([x.case for x in xs], n, seed)}
        out[name] = [x for x in xs if x.case.id in keep]
    return out


# --------------------------------------------------------------------------------------------
# Reusable share (no model)
# --------------------------------------------------------------------------------------------


def reuse_shares(
    inputs: dict, tokenizer, policies=POLICIES, label: str = "", progress: bool = True
) -> pd.DataFrame:
    """One row per (corpus, case, policy): ``splice`` (copied ids along the oracle program)
    and ``reused`` (those the reuse decoder takes from the prompt's cache). ``label`` names
    the tokenizer."""
    rows = []
    for name, xs in inputs.items():
        for x in tqdm(xs, desc=f"shares {name} {label}", disable=not progress):
            tr = transcript(x.program, x.case.doc, tokenizer)
            for policy in policies:
                feeds = copy_sources(x.edit_prompt, tr, x.program, x.case.doc, tokenizer, policy)
                splice = sum(k == "splice" for _, kinds, _ in feeds for k in kinds)
                reused = sum(s is not None for _, _, src in feeds for s in src)
                rows.append(
                    dict(
                        tokenizer=label,
                        corpus=name,
                        case=x.case.id,
                        policy=policy,
                        splice=splice,
                        reused=reused,
                    )
                )
    return pd.DataFrame(rows)


def share_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per tokenizer, corpus and policy: cases, spliced ids, reused ids and the pooled share
    reused (reused / spliced)."""
    g = rows.groupby(["tokenizer", "corpus", "policy"], sort=False)
    out = g.agg(cases=("case", "nunique"), splice=("splice", "sum"), reused=("reused", "sum"))
    out["share_reused"] = out.reused / out.splice.clip(lower=1)
    return out.reset_index()


# --------------------------------------------------------------------------------------------
# Agreement with exact decoding (teacher-forced along the oracle program)
# --------------------------------------------------------------------------------------------


def masked_log_probs(allowed, logits: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of the decision's allowed ids (a body's: every id but the banned),
    as a (V,) tensor with ``-inf`` elsewhere: the distribution greedy decoding picks from."""
    mask = allowed.full_mask()
    return torch.log_softmax(logits.float().masked_fill(~mask, float("-inf")), dim=-1)


def _decisions(model, tokenizer, x, decoder=CopyDecoder, **kw) -> tuple[list, object]:
    """The masked log-probabilities at every decision of a forced decode of ``x`` by
    ``decoder`` (and the result)."""
    seen = []
    dec = decoder(
        model,
        tokenizer,
        max_new_tokens=10**6,
        on_decision=lambda a, lg: seen.append((a.ids is None, masked_log_probs(a, lg))),
        **kw,
    )
    res = dec.decode(x.case.doc, prompt_ids=x.edit_prompt, program=x.program)
    return seen, res


#: What a selection rule spends beside its recomputed ids (:mod:`cadlib.decoding.kv_select`'s
#: ``trace.info``): ids run through the check layers and which layer; the margin gate's exact
#: fallbacks, the ids they fed again and the reused entries they replaced.
_SPENT = ("check_ids", "check_layers", "fallbacks", "fallback_ids", "fallback_reused")


def case_agreement(model, tokenizer, x, policies=POLICIES, decoder=CopyDecoder) -> pd.DataFrame:
    """One row per (policy, decision) of case ``x``: ``kind`` (``gen`` for a body id, else
    ``choice``), ``since_copy`` (ids since the last copied id, ``None`` before any copy:
    :func:`cadlib.chapters.kv_reuse.run_flips.decision_distances`), ``agree`` (same masked greedy
    choice as the exact splice) and ``kl`` (KL(exact || reuse) of the masked distributions,
    nats), plus the case's spliced and reused ids under that policy and what a selection rule
    spent beside them (:data:`_SPENT`: :mod:`cadlib.decoding.kv_select`)."""
    exact, exact_res = _decisions(model, tokenizer, x)
    since = decision_distances(exact_res.transcript.kinds)
    if len(since) != len(exact):
        raise RuntimeError(f"{x.case.id}: {len(exact)} decisions, {len(since)} in the transcript")
    rows = []
    for policy in policies:
        got, res = _decisions(model, tokenizer, x, decoder, copy_kv="reuse", recompute=policy)
        if len(got) != len(exact):
            raise RuntimeError(f"{x.case.id}: {len(got)} decisions under reuse, {len(exact)} exact")
        splice, reused = res.n_spliced, res.trace.info.get("reused_ids", 0)
        check = {k: res.trace.info.get(k, 0) for k in _SPENT}
        for k, ((body, p), (_, q)) in enumerate(zip(exact, got, strict=True)):
            on = torch.isfinite(p)
            kl = float((p[on].exp() * (p[on] - q[on])).sum().clamp(min=0.0))
            rows.append(
                dict(
                    corpus=x.corpus,
                    case=x.case.id,
                    policy=policy,
                    step=k,
                    kind="gen" if body else "choice",
                    since_copy=since[k],
                    agree=bool(int(p.argmax()) == int(q.argmax())),
                    kl=kl,
                    splice=splice,
                    reused=reused,
                    **check,
                )
            )
    return pd.DataFrame(rows)


def agreement_rows(
    model, tokenizer, inputs: dict, policies=POLICIES, progress: bool = True
) -> pd.DataFrame:
    """:func:`case_agreement` of every case of ``inputs`` (``{corpus: [CaseInputs]}``), with
    ``split`` = ``dev`` or ``test`` (:data:`cadlib.chapters.kv_reuse.profiles.DEV`, ``TEST``)."""
    frames = []
    for name, xs in inputs.items():
        for x in tqdm(xs, desc=f"agreement {name}", disable=not progress):
            frames.append(case_agreement(model, tokenizer, x, policies))
    if not frames:
        raise ValueError("no agreement cases: every corpus's sample is empty (max_prompt?)")
    return with_split(pd.concat(frames, ignore_index=True))


def with_split(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``split``: ``test`` for a held-out corpus (``profiles.TEST``), else ``dev``."""
    return rows.assign(split=np.where(rows.corpus.isin(TEST), "test", "dev"))


def agreement_table(rows: pd.DataFrame, by=("split", "policy")) -> pd.DataFrame:
    """Per group (default: split and policy): cases, decisions, agreeing decisions, the
    agreement rate with its 95% Wilson interval, KL median / p90 / max, and the share of the
    spliced ids recomputed (1 - reused / spliced, pooled over the cases)."""
    out = []
    for key, g in rows.groupby(list(by), sort=False):
        cases = g.drop_duplicates(["corpus", "case"])
        n, k = len(g), int(g.agree.sum())
        lo, hi = wilson_ci(k, n)
        out.append(
            dict(
                zip(by, key if isinstance(key, tuple) else (key,), strict=True),
                cases=len(cases),
                decisions=n,
                agree=k,
                rate=k / n,
                lo=lo,
                hi=hi,
                kl_median=float(g.kl.median()),
                kl_p90=float(g.kl.quantile(0.9)),
                kl_max=float(g.kl.max()),
                recomputed=1 - cases.reused.sum() / max(1, cases.splice.sum()),
            )
        )
    return pd.DataFrame(out)


def reusing_table(rows: pd.DataFrame, by=("split", "policy")) -> pd.DataFrame:
    """:func:`agreement_table` over the cases that reuse any prompt entry (``cases``), with
    ``idle`` (the cases that reuse none: every copied id recomputed, so they agree by
    construction and cannot test the mode), ``flipped`` (reusing cases with at least one
    flipped decision) and ``recomputed`` over every case (what the policy costs). A group
    where no case reuses has ``cases`` 0 and no rate."""
    by = list(by)
    case = rows.groupby(list(dict.fromkeys([*by, "corpus", "case"])), sort=False).agg(
        reused=("reused", "first"), agree=("agree", "all")
    )
    case = case.reset_index().assign(
        idle=lambda c: c.reused.eq(0), flipped=lambda c: c.reused.gt(0) & ~c.agree
    )
    out = case.groupby(by, sort=False)[["idle", "flipped"]].sum().reset_index()
    out = out.merge(agreement_table(rows, by)[[*by, "recomputed"]], on=by)
    some = rows[rows.reused > 0]
    if len(some):
        out = out.merge(agreement_table(some, by).drop(columns="recomputed"), on=by, how="left")
    out = out.reindex(columns=[*by, "cases", *out.columns.drop([*by, "cases"], errors="ignore")])
    counts = ["cases", "idle", "flipped", "decisions", "agree"]
    out[counts] = out.reindex(columns=counts).fillna(0).astype(int)
    return out


def judge(rows: pd.DataFrame, policy: str, threshold: float = AGREEMENT_THRESHOLD) -> dict:
    """``policy`` on ``rows`` (one split), read where it reuses prompt entries: ``pooled``
    (its :func:`reusing_table` row over every corpus), ``per`` (one row per corpus),
    ``below`` (the corpora, labelled, whose reusing cases agree less than ``threshold``) and
    ``meets``: some case reuses an id, and the pooled agreement and every corpus's meet the
    threshold. Cases that reuse nothing never count toward it."""
    rows = rows[rows.policy == policy]
    pooled = reusing_table(rows.assign(pool="all"), by=("pool",)).iloc[0]
    per = reusing_table(rows, by=("corpus",))
    below = [
        CORPUS_LABELS.get(c, c) for c, x in zip(per.corpus, per.rate, strict=True) if x < threshold
    ]
    meets = bool(pooled.cases and pooled.rate >= threshold and not below)
    return dict(pooled=pooled, per=per, below=below, meets=meets)


def threshold_verdict(table: pd.DataFrame, threshold: float = AGREEMENT_THRESHOLD) -> dict:
    """On the held-out split: the policy that recomputes the least among those that reuse
    any id (the control ``all`` reuses none) and whose pooled agreement meets ``threshold``
    (``None`` if none does), and each policy's rate, the control's included."""
    test = table[table.split == "test"]
    ok = test[(test.rate >= threshold) & (test.policy != "all")]
    ok = ok.sort_values("recomputed", kind="stable")
    return dict(
        threshold=threshold,
        best=None if ok.empty else str(ok.policy.iloc[0]),
        rates={str(p): float(r) for p, r in zip(test.policy, test.rate, strict=True)},
    )


# --------------------------------------------------------------------------------------------
# Free runs: the same output?
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------------


def timing_table(timing: pd.DataFrame) -> pd.DataFrame:
    """Per corpus and method: median forwards, ids computed, decode seconds and gold ids per
    second over cases and repeats, and the exact splice's median decode time over this
    method's (its speedup over the exact splice)."""
    med = timing.groupby(["corpus", "method"], sort=False)[
        ["forwards", "ids_computed", "decode_s", "gold_ids_per_s"]
    ].median()
    exact = med.xs(METHODS[2], level="method").decode_s
    corpus = med.index.get_level_values("corpus")
    med["vs_exact_splice"] = exact.reindex(corpus).values / med.decode_s
    return med.reset_index()


def numbers(
    shares: pd.DataFrame,
    agreement: pd.DataFrame,
    verdict: dict,
    timing: pd.DataFrame | None = None,
    free_runs: pd.DataFrame | None = None,
    runtime_s: float | None = None,
) -> dict:
    """The results file's ``numbers``: shares per tokenizer / corpus / policy (counts and
    their ratio, :func:`share_table`), agreement per split / policy (counts, rates, KL,
    :func:`agreement_table`), the verdict, the free runs' identity counts (``free_runs``: the
    rows of :func:`free_run_rows`, counted by :func:`identity_numbers`) when made, the median
    timings per mode (``timing``: the rows of :func:`cadlib.chapters.kv_reuse.run_speed.time_modes`)
    when timed, and the notebook's ``runtime_s``."""
    out = {"shares": {}, "agreement": {}, "verdict": verdict}
    if free_runs is not None:
        out["free_runs"] = identity_numbers(identity_table(free_runs))
    for r in shares.itertuples():
        out["shares"].setdefault(r.tokenizer, {}).setdefault(r.corpus, {})[r.policy] = dict(
            cases=int(r.cases),
            splice=int(r.splice),
            reused=int(r.reused),
            share_reused=round(float(r.share_reused), 4),
        )
    for r in agreement.itertuples():
        out["agreement"].setdefault(r.split, {})[r.policy] = dict(
            cases=int(r.cases),
            decisions=int(r.decisions),
            agree=int(r.agree),
            rate=round(r.rate, 4),
            ci95=[round(r.lo, 4), round(r.hi, 4)],
            kl_median=float(f"{r.kl_median:.4g}"),
            kl_p90=float(f"{r.kl_p90:.4g}"),
            kl_max=float(f"{r.kl_max:.4g}"),
            recomputed=round(float(r.recomputed), 4),
        )
    if timing is not None and len(timing):
        out["timing"] = {}
        for r in timing_table(timing).itertuples():
            out["timing"].setdefault(r.corpus, {})[r.method] = dict(
                forwards=float(r.forwards),
                ids_computed=float(r.ids_computed),
                decode_s=float(r.decode_s),
                gold_ids_per_s=float(r.gold_ids_per_s),
                vs_exact_splice=float(r.vs_exact_splice),
            )
    if runtime_s is not None:
        out["runtime_s"] = runtime_s
    return out
