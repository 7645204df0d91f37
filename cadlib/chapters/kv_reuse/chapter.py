"""Chapter 6c's profiles, setup and cases, the reusable share, the agreement with exact
decoding and the results numbers (the package docstring, :mod:`cadlib.chapters.kv_reuse`, says
what the chapter measures)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from cadlib.corpora import CORPUS_LABELS, load_corpus, seeded_subset
from cadlib.costs.accounting import copy_sources
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.fsm import transcript
from cadlib.decoding.methods import (
    METHODS,
    prepare,
)
from cadlib.metrics import wilson_ci
from cadlib.models import (
    QWEN2_SMOKE,
    SMOLLM2,
    load_model,
    load_tokenizer,
    quiet_transformers,
    resolve_device,
    set_threads,
)
from cadlib.record import style
from cadlib.record.replay import replayed_run_note
from cadlib.record.results import setting_label

from .flips import decision_distances

__all__ = [
    "EVIDENCE_PROFILE",
    "EVIDENCE_COMMAND",
    "evidence_note",
    "PROFILES",
    "answer",
    "DEV",
    "TEST",
    "POLICIES",
    "AGREEMENT_THRESHOLD",
    "THRESHOLD_REASON",
    "load_setup",
    "agreement_inputs",
    "sample_cases",
    "reuse_shares",
    "share_table",
    "masked_log_probs",
    "case_agreement",
    "agreement_rows",
    "agreement_table",
    "with_split",
    "threshold_verdict",
    "plot_tradeoff",
    "timing_table",
    "kv_numbers",
    "run_summary",
]

#: Development corpora (policies are chosen here) and the held-out test corpora.
DEV = ("heval-fix-py", "heval-fix-js", "probeedit")
TEST = ("heval-fix-java", "heval-fix-go", "heval-fix-cpp", "heval-fix-rust", "realedits-flask")
#: Recompute policies (:func:`cadlib.decoding.kv_reuse.parse_policy`), from reusing the most to the
#: control ``all`` (every id computed: the exact splice, up to float rounding).
#: ``first=4,last=32`` and ``first=8,last=64`` were added after a development run
#: (HEvalFix-Py/JS, 3 cases each) put both at the threshold there, recomputing about two
#: thirds and five sixths of the copied ids: the upper end of the trade-off.
POLICIES = (
    "none",
    "first=1",
    "first=2",
    "last=16",
    "first=2,last=16",
    "first=4,last=32",
    "first=8,last=64",
    "all",
)

#: Declared before measuring: the share of decisions whose greedy choice must equal the exact
#: splice's on the held-out corpora (pooled point estimate) for the mode to be acceptable.
AGREEMENT_THRESHOLD = 0.995
THRESHOLD_REASON = (
    "the greedy agreement of two exact engines with each other: transformers vs llama.cpp on "
    "the same GGUF, 99.47 % of 937 decisions in chapter 6b (results/llama_cpp.json), rounded "
    "to 99.5 %; an approximation that disagrees more often than two exact engines do is "
    "distinguishable from engine noise"
)

_EVERY = (*DEV, *TEST)
PROFILES = {
    # A few minutes on 2 cores (one torch thread): shares on 40 cases per corpus with both
    # tokenizers; agreement on one short case per HumanEvalFix / Flask corpus (ProbeEdit's
    # prompts, ~1,000 ids, are too long for this profile), three policies.
    "cpu": dict(
        model=SMOLLM2,
        share_cases=40,
        agreement_cases={c: 1 for c in _EVERY if c != "probeedit"},
        max_prompt=500,
        policies=("none", "first=2", "first=2,last=16"),
        timing_cases=0,
        repeats=0,
        timing_policies=(),
        free_run_tokens=48,
    ),
    # The larger run (quiet machine, ~1 hour on 2 cores): shares on every case,
    # agreement on 3 cases per corpus and every policy, and the interleaved timing of chapter
    # 6's four methods and reuse at four policies on the first agreement case per corpus.
    "full": dict(
        model=SMOLLM2,
        share_cases=None,
        agreement_cases={c: 3 for c in _EVERY},
        max_prompt={**{c: 1200 for c in _EVERY}, "probeedit": 1300},
        policies=POLICIES,
        timing_cases=1,
        repeats=3,
        timing_policies=("none", "first=2", "first=2,last=16", "first=8,last=64"),
        free_run_tokens=96,
    ),
    # Speed only (quiet machine, ~30 minutes on 2 cores): the cpu profile's shares and
    # agreement plus one ProbeEdit case, and the interleaved timing on the first case of each
    # corpus (make record CHAPTER=06c_kv_reuse PROFILE=timing). It also times first=8,last=64,
    # the policy the policy search chose on development cases (policy_search.py), so that the
    # speed goals can be judged at the policy that meets the threshold on every held-out case.
    "timing": dict(
        model=SMOLLM2,
        share_cases=40,
        agreement_cases={c: 1 for c in _EVERY},
        max_prompt={**{c: 500 for c in _EVERY}, "probeedit": 1300},
        policies=("none", "first=2", "first=2,last=16"),
        timing_cases=1,
        repeats=3,
        timing_policies=("none", "first=2", "first=2,last=16", "first=8,last=64"),
        free_run_tokens=48,
    ),
    # The agreement evidence (no timing; ~30 min on 2 cores): shares on every case, five
    # held-out cases per test corpus and two per development corpus for agreement and free
    # runs, prompts up to 1,000 ids (ProbeEdit 1,300), the cpu profile's policies
    # (make record CHAPTER=06c_kv_reuse PROFILE=agreement).
    "agreement": dict(
        model=SMOLLM2,
        share_cases=None,
        agreement_cases={**{c: 2 for c in DEV}, **{c: 5 for c in TEST}},
        max_prompt={**{c: 1000 for c in _EVERY}, "probeedit": 1300},
        policies=("none", "first=2", "first=2,last=16"),
        timing_cases=0,
        repeats=0,
        timing_policies=(),
        free_run_tokens=48,
    ),
    # CI's check of the code path: a tiny random Qwen2 (its decisions mean nothing).
    "smoke": dict(
        model=QWEN2_SMOKE,
        share_cases=3,
        agreement_cases={"heval-fix-py": 1, "heval-fix-java": 1},
        max_prompt=500,
        policies=("none", "first=1", "all"),
        timing_cases=1,
        repeats=1,
        timing_policies=("none",),
        free_run_tokens=8,
    ),
}

#: The profile the book's chapter 6c shows (its evidence run, committed with its records).
EVIDENCE_PROFILE = "agreement"
#: The command that recorded it.
EVIDENCE_COMMAND = "make record CHAPTER=06c_kv_reuse PROFILE=agreement"


def evidence_note() -> str:
    """The sentence chapter 6c shows when it is its evidence run
    (:func:`cadlib.record.replay.replayed_run_note`)."""
    return replayed_run_note("kv_reuse", EVIDENCE_PROFILE, EVIDENCE_COMMAND)


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


def _decisions(model, tokenizer, x, **kw) -> tuple[list, object]:
    """The masked log-probabilities at every decision of a forced decode of ``x`` (and the
    result)."""
    seen = []
    dec = CopyDecoder(
        model,
        tokenizer,
        max_new_tokens=10**6,
        on_decision=lambda a, lg: seen.append((a.ids is None, masked_log_probs(a, lg))),
        **kw,
    )
    res = dec.decode(x.case.doc, prompt_ids=x.edit_prompt, program=x.program)
    return seen, res


def case_agreement(model, tokenizer, x, policies=POLICIES) -> pd.DataFrame:
    """One row per (policy, decision) of case ``x``: ``kind`` (``gen`` for a body id, else
    ``choice``), ``since_copy`` (ids since the last copied id, ``None`` before any copy:
    :func:`cadlib.chapters.kv_reuse.flips.decision_distances`), ``agree`` (same masked greedy
    choice as the exact splice) and ``kl`` (KL(exact || reuse) of the masked distributions,
    nats), plus the case's spliced and reused ids under that policy."""
    exact, exact_res = _decisions(model, tokenizer, x)
    since = decision_distances(exact_res.transcript.kinds)
    if len(since) != len(exact):
        raise RuntimeError(f"{x.case.id}: {len(exact)} decisions, {len(since)} in the transcript")
    rows = []
    for policy in policies:
        got, res = _decisions(model, tokenizer, x, copy_kv="reuse", recompute=policy)
        if len(got) != len(exact):
            raise RuntimeError(f"{x.case.id}: {len(got)} decisions under reuse, {len(exact)} exact")
        splice, reused = res.n_spliced, res.trace.info.get("reused_ids", 0)
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
                )
            )
    return pd.DataFrame(rows)


def agreement_rows(
    model, tokenizer, inputs: dict, policies=POLICIES, progress: bool = True
) -> pd.DataFrame:
    """:func:`case_agreement` of every case of ``inputs`` (``{corpus: [CaseInputs]}``), with
    ``split`` = ``dev`` or ``test`` (:data:`DEV`, :data:`TEST`)."""
    frames = []
    for name, xs in inputs.items():
        for x in tqdm(xs, desc=f"agreement {name}", disable=not progress):
            frames.append(case_agreement(model, tokenizer, x, policies))
    if not frames:
        raise ValueError("no agreement cases: every corpus's sample is empty (max_prompt?)")
    return with_split(pd.concat(frames, ignore_index=True))


def with_split(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``split``: ``test`` for a held-out corpus (:data:`TEST`), else ``dev``."""
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


def plot_tradeoff(table: pd.DataFrame, threshold: float = AGREEMENT_THRESHOLD, title: str = ""):
    """Agreement (with its interval) against the share of spliced ids recomputed, one point
    per policy, one panel per split; the declared threshold as a line. Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib

    splits = list(dict.fromkeys(table.split))
    fig, axes = plt.subplots(1, len(splits), figsize=(4.5 * len(splits), 3.6), squeeze=False)
    for ax, split in zip(axes[0], splits, strict=True):
        t = table[table.split == split]
        ax.errorbar(t.recomputed, t.rate, yerr=[t.rate - t.lo, t.hi - t.rate], fmt="o", capsize=3)
        for k, (_, r) in enumerate(t.sort_values("recomputed", kind="stable").iterrows()):
            ax.annotate(
                r.policy,
                (r.recomputed, r.rate),
                fontsize=7,
                textcoords="offset points",
                xytext=(4, -10 if k % 2 == 0 else 6),
            )  # alternate: neighbours apart
        ax.axhline(threshold, ls="--", lw=1, color="grey", label=f"threshold {threshold:.1%}")
        ax.legend(loc="lower right", fontsize=7)
        ax.set(
            xlabel="share of spliced ids recomputed",
            ylabel="decision agreement",
            title=f"{split} ({t.cases.max()} cases)",
        )
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------------
# Numbers and the summary
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


def kv_numbers(
    shares: pd.DataFrame,
    agreement: pd.DataFrame,
    verdict: dict,
    timing: pd.DataFrame | None = None,
    free: dict | None = None,
) -> dict:
    """The results file's ``numbers``: shares per tokenizer / corpus / policy (counts and
    their ratio), agreement per split / policy (counts, rates, KL), the verdict, the free
    runs' identity counts (``free``: :func:`cadlib.chapters.kv_reuse.free_run.identity_numbers`)
    when made, and the median timings per mode when timed."""
    out = {"shares": {}, "agreement": {}, "verdict": verdict}
    if free is not None:
        out["free_runs"] = free
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
    return out


def run_summary(shares: pd.DataFrame, agreement: pd.DataFrame, verdict: dict) -> str:
    """Markdown of the chapter's findings (what the conclusion cites: computed, never typed)."""
    none = shares[shares.policy == "none"]
    share = "; ".join(
        f"{CORPUS_LABELS.get(r.corpus, r.corpus)} ({r.tokenizer}) {r.share_reused:.1%}"
        for r in none.itertuples()
    )
    test = agreement[agreement.split == "test"].set_index("policy")
    parts = [f"**Reusable share** of the spliced ids (policy `none`): {share}."]
    if len(test):
        rates = ", ".join(
            f"`{p}` {r.rate:.1%} (n = {r.decisions}, {r.recomputed:.0%} of copied ids recomputed)"
            for p, r in test.iterrows()
        )
        parts.append(f"**Held-out agreement** with the exact splice: {rates}.")
    best = verdict["best"]
    thr = f"{verdict['threshold']:.1%}"
    if best:
        parts.append(
            f"The declared threshold ({thr}) is met on the held-out corpora by "
            f"`{best}`, the policy that recomputes least among those that meet it."
        )
    else:
        control = (
            ""
            if "all" not in verdict["rates"]
            else f" (the control `all`, which reuses nothing: {verdict['rates']['all']:.1%}); "
            "the reuse mode stays opt-in, never the default"
        )
        parts.append(
            f"No policy meets the declared threshold ({thr}) on the held-out corpora{control}."
        )
    return "\n\n".join(parts)


def answer(numbers: dict) -> str:
    """The chapter's question answered with its own numbers (the opening's **Answer.**): the
    reusable share of the spliced ids (policy ``none``), as the range over the corpora
    measured per tokenizer (a pooled share would be carried by the corpora with the longest
    copies), the held-out agreement of each policy and the verdict against the threshold
    (``numbers`` of :func:`kv_numbers`)."""
    shares = []
    for tok, corpora in numbers["shares"].items():
        each = [
            c["none"]["reused"] / c["none"]["splice"]
            for c in corpora.values()
            if "none" in c and c["none"]["splice"]
        ]
        if each:
            shares.append(f"{min(each):.1%}–{max(each):.1%} with {tok}")
    test, verdict = numbers["agreement"].get("test", {}), numbers["verdict"]
    rates = ", ".join(f"`{p}` {r['rate']:.1%}" for p, r in test.items())
    out = [
        f"Most of each copy is reusable: on each corpus measured, the prompt's cache "
        f"entries can stand in for {' and '.join(shares)} of the spliced ids."
    ]
    if rates:
        out.append(
            f"The decisions that follow are another matter: on the held-out corpora "
            f"the reuse decoder's greedy decisions agree with the exact splice's at "
            f"{rates} of positions."
        )
    if verdict["best"]:
        out.append(
            f"`{verdict['best']}` meets the threshold declared before measuring "
            f"({verdict['threshold']:.1%})."
        )
    else:
        out.append(
            f"No policy meets the threshold declared before measuring "
            f"({verdict['threshold']:.1%}), so the reuse mode stays opt-in."
        )
    return " ".join(out)
