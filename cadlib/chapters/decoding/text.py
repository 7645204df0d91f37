"""Chapter 6's generated prose (notebooks/06_decoding.ipynb): the Answer, the summaries its
conclusion cites, and what the evidence run (``results/decoding.full.json``) timed; the goals
and why one was missed are :mod:`.text_goals`'. Every sentence here depends on the run's
numbers; what is always the same is markdown in the notebook."""

from __future__ import annotations

import pandas as pd

from cadlib.decoding.methods import DRAFTED
from cadlib.record.provenance import evidence_caption
from cadlib.record.replay import replayed_run_note

from .run import FULL
from .run_goals import goals_from_numbers
from .text_goals import goals_markdown

__all__ = [
    "answer",
    "run_summary",
    "accounting_summary",
    "dominance_markdown",
    "full_run_markdown",
    "evidence_markdown",
]


def answer(numbers: dict, where: str) -> str:
    """The chapter's question answered with its own numbers (the opening's **Answer.**): the
    pooled timed sample's wall-clock speedups over autoregressive decoding, the bound from the
    same forward-cost grid, and the free run (``numbers`` of
    :func:`cadlib.chapters.decoding.run.numbers`)."""
    speed = numbers["speed"]
    cad, pld = speed["pooled/Copy-as-Decode"], speed["pooled/prompt lookup"]
    drafted = speed.get(f"pooled/{DRAFTED}")
    bound = next(
        (b for b in numbers["cost_model"]["timed_bounds"] if b["corpus"] == "pooled"), None
    )
    free = next((r for r in numbers["free_run"] if r["corpus"] == "pooled"), None)
    with_drafts = f" ({drafted['speedup']:.2f}× with its drafts)" if drafted else ""
    if cad["speedup"] > pld["speedup"]:
        rank = "faster than prompt lookup even without its drafts"
    elif drafted and drafted["speedup"] > pld["speedup"]:
        rank = "faster than prompt lookup only with its drafts"
    else:
        rank = "slower than prompt lookup"
    out = [
        f"On the timed sample ({cad['cases']} cases, {cad['T']:,} output ids; {where}), "
        f"forced-oracle Copy-as-Decode produces the same output {cad['speedup']:.2f}× faster "
        f"than autoregressive decoding{with_drafts}, against {pld['speedup']:.2f}× for "
        f"prompt lookup: {rank}."
    ]
    if bound is not None:
        out.append(
            f"The paper's bound bnd_exact, from the forward costs of the same run, is "
            f"{bound['bnd_exact_grid']:.2f}×: the plain decoder realizes "
            f"{bound['realized_over_bnd_exact']:.0%} of it, because every op also costs "
            "decision forwards that the bound does not charge."
        )
    if free is not None:
        out.append(
            f"Decoding freely, the untrained model's programs parse in "
            f"{free['parse rate']:.0%} and resolve strictly in "
            f"{free['strict-resolve rate']:.0%} of {free['cases']} runs (by construction "
            f"of the FSM), with exact match in {free['EM (byte-exact)']:.0%}."
        )
    return " ".join(out)


def run_summary(
    speed: pd.DataFrame, bounds: pd.DataFrame | None, label: str, effect: pd.DataFrame | None = None
) -> str:
    """Markdown of a run's headline figures per corpus (forward ratios, wall-clock speedups
    with their range, the bounds from the same forward-cost grid,
    :func:`cadlib.costs.cost_model.timed_bounds`) and of the boundary effect: what the chapter's
    conclusion cites, since they change with the case subset and the machine."""
    by = speed.set_index(["corpus", "method"])
    if bounds is not None and "corpus" in bounds.columns:
        bounds = bounds.set_index("corpus")

    def wall(r):
        return f"{r.speedup:.2f}× [{r.speedup_min:.2f}–{r.speedup_max:.2f}]"

    lines = []
    corpora = [c for c in dict.fromkeys(speed.corpus) if c != "pooled"]
    for corpus in [*corpora, "pooled"] if "pooled" in set(speed.corpus) else corpora:
        cad, pld = (by.loc[(corpus, m)] for m in ("Copy-as-Decode", "prompt lookup"))
        drafted = by.loc[(corpus, DRAFTED)] if (corpus, DRAFTED) in by.index else None
        fw_d = f", {drafted.forward_ratio:.2f}× with its drafts" if drafted is not None else ""
        wall_d = f" ({wall(drafted)} with drafts)" if drafted is not None else ""
        bnd = ""
        if bounds is not None and corpus in bounds.index:
            b = bounds.loc[corpus]
            bnd = (
                f"; bnd_exact {b['bnd_exact_grid']:.2f}×, bnd_fsm {b['bnd_fsm_grid']:.2f}× "
                f"(same grid), realized / bnd_exact {b['realized_over_bnd_exact']:.2f}"
            )
        lines.append(
            f"* **{corpus}** (T = {int(cad['T'])} ids): forward ratio (autoregressive forwards "
            f"/ its forwards) {cad.forward_ratio:.2f}× for Copy-as-Decode{fw_d}, "
            f"{pld.forward_ratio:.2f}× for prompt lookup; wall-clock speedup {wall(cad)}"
            f"{wall_d} vs {wall(pld)}{bnd}"
        )
    text = f"*This run ({label}), forced-oracle decoding:*\n\n" + "\n".join(lines)
    if effect is not None and len(effect):
        differ = effect[~effect.same_prefix]
        if len(differ):
            kl = differ.kl
            text += (
                f"\n\nWhere our ids and the naive ids differ at an op boundary ({len(differ)} "
                f"of {len(effect)}), the next-id distribution moves by a median "
                f"{kl.median():.3f} nats (KL; from {kl.min():.3f} to {kl.max():.3f}, "
                f"{int((kl < 0.1).sum())} below 0.1), while the FSM's masked choice agreed "
                f"at {int(effect.fsm_choice_agree.sum())} of {len(effect)} boundaries and "
                f"the unmasked top-1 at {int(effect.top1_agree.sum())}."
            )
    return text


def accounting_summary(summary: pd.DataFrame, best: pd.Series, min_span: int = 0) -> str:
    """Markdown of the accounting's headline per corpus: pooled forwards per gold id of the
    best prompt-lookup setting vs Copy-as-Decode at ``min_span``, and which needs fewer (what
    the chapter's conclusion cites: it is computed, never typed)."""
    lines = []
    for corpus, g in summary.groupby("corpus", sort=False):
        by = g.set_index(["method", "setting"]).pooled_fpt
        cad = by[("Copy-as-Decode", f"m={min_span}")]
        pld_setting = best.get(corpus, "best")
        pld = by[("prompt lookup", pld_setting)]
        fewer = "Copy-as-Decode" if cad < pld else "prompt lookup"
        lines.append(
            f"* **{corpus}** ({int(g.cases.iloc[0])} cases): Copy-as-Decode (m={min_span}) "
            f"{cad:.3f} forwards per gold id vs prompt lookup ({pld_setting}) {pld:.3f}: "
            f"**{fewer}** needs fewer ({max(cad, pld) / min(cad, pld):.2f}×)."
        )
    return "**Forwards on every case** (exact, no model):\n\n" + "\n".join(lines)


def dominance_markdown(validation: pd.DataFrame, label: str) -> str:
    """How much of the timed sample's autoregressive time its longest case and its heaviest
    corpus take, and the pooled wall-clock speedup of each timed method with and without that
    corpus, from the per-case measurements (:func:`cadlib.costs.cost_model.validation`). The pooled
    speedup is a ratio of sums, so long cases weigh in it by their length; this says how
    much, rather than assuming the stratified sample keeps it small."""
    ar = validation[validation.method == "autoregressive"].set_index("case")
    total = ar.measured_s.sum()
    top = ar.measured_s.idxmax()
    by_corpus = ar.groupby("corpus").measured_s.sum().sort_values(ascending=False)
    corpus, share = by_corpus.index[0], by_corpus.iloc[0] / total
    n_in = int((ar.corpus == corpus).sum())
    rest = ar.index[ar.corpus != corpus]
    per = []
    for method in [
        m
        for m in ("Copy-as-Decode", "Copy-as-Decode +drafts", "prompt lookup")
        if m in set(validation.method)
    ]:
        m = validation[validation.method == method].set_index("case").measured_s
        with_all = total / m.reindex(ar.index).sum()
        without = ar.measured_s[rest].sum() / m.reindex(rest).sum() if len(rest) else float("nan")
        per.append(f"{method} {with_all:.2f}× with it, {without:.2f}× without it")
    verb = "dominates" if share > 0.5 else "does not dominate"
    return (
        f"*Does one corpus or one long case dominate the pooled wall clock? ({label})* Of "
        f"the sample's autoregressive decode time, the longest timed case ({top}) takes "
        f"{ar.measured_s[top] / total:.0%}, and {corpus} ({n_in} of {ar.index.size} "
        f"timed cases) {share:.0%}, so {corpus} {verb} the pooled ratio of sums. Pooled "
        f"wall-clock speedup over autoregressive decoding, per-case measurements, with and "
        f"without {corpus}: " + "; ".join(per) + ". The per-corpus rows (with their case "
        "counts) are the figures to quote; the every-case accounting of §2 prices every "
        "case of every corpus."
    )


def full_run_markdown(full: dict) -> str:
    """What the full run timed and its goals (:func:`.text_goals.goals_markdown`), generated
    from its results."""
    n = full["numbers"]
    per = pd.Series(n["timed_cases"]).value_counts().to_dict()
    head = (
        f"**The `full` run** ({full['params']['label']}; {sum(per.values())} timed cases: "
        + ", ".join(f"{c} {k}" for c, k in per.items())
        + f"; {full['params']['repeats']} interleaved repeats; "
        f"{n['runtime_s'] / 60:.0f} minutes). Regenerate with `{FULL}`."
    )
    label = full["params"]["label"]
    return "\n\n".join(
        [
            head,
            dominance_markdown(pd.DataFrame(n["cost_model"]["validation"]), "full run"),
            "Its goals, re-judged from its numbers under this chapter's rules (development and "
            "test sets; plain Copy-as-Decode against the bound; undecided within the cost model's "
            "error on that run):",
            goals_markdown(goals_from_numbers(n), label),
        ]
    )


def evidence_markdown(full: dict | None, params: dict) -> str:
    """The chapter's section on its evidence run (``results/decoding.full.json``): at the
    ``full`` profile (``params["profile"]``; the run the book shows) that this chapter *is*
    that run, with its provenance; at a smaller one the full run's timed sample and goals
    beside this run's (its speed table is
    :func:`cadlib.chapters.decoding.show.evidence_table`); the command that records it when
    none is committed."""
    if full is None:
        return f"No `full` run is committed; it is recorded by `{FULL}`."
    profile = params["profile"]
    caption = evidence_caption(full, "decoding.full.json")
    if profile == full["profile"]:
        return f"{replayed_run_note('decoding', profile, FULL)}\n\n{caption}"
    return f"{full_run_markdown(full)}\n\n{caption}"
