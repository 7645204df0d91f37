"""Chapter 6's generated prose (notebooks/06_decoding.ipynb): the Answer, the summaries its
conclusion cites, and what the evidence run (``results/decoding.full.json``) timed; the goals
and why one was missed are :mod:`.text_goals`'. Every sentence here depends on the run's
numbers; what is always the same is markdown in the notebook."""

from __future__ import annotations

import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.decoding.methods import DRAFTED, DRAFTED_SETTING
from cadlib.record.provenance import evidence_caption
from cadlib.record.replay import replayed_run_note

from .run import FULL
from .run_accounting import DEVELOPMENT_DATA, family, task
from .run_goals import goals_from_numbers
from .text_goals import goals_markdown

__all__ = [
    "answer",
    "predicted_sentence",
    "losses_sentence",
    "timed_sentence",
    "run_summary",
    "accounting_summary",
    "dominance_markdown",
    "full_run_markdown",
    "evidence_markdown",
]


def answer(numbers: dict, where: str) -> str:
    """The chapter's question answered per stratum (the opening's **Answer.**, from ``numbers``
    of :func:`cadlib.chapters.decoding.run.numbers`): the median case's predicted speedup per
    corpus family beside prompt lookup's (:func:`predicted_sentence`), where plain
    Copy-as-Decode loses (:func:`losses_sentence`), the timed sample's median case per corpus
    and its pooled figure labelled with what carries it (:func:`timed_sentence`), and the share
    of the bound it realizes per timed corpus."""
    out = [predicted_sentence(numbers), losses_sentence(numbers), timed_sentence(numbers, where)]
    bounds = [b for b in numbers["cost_model"]["timed_bounds"] if b["corpus"] != "pooled"]
    if bounds:
        share = _span([b["realized_over_bnd_exact"] for b in bounds], "{:.0%}")
        out.append(
            f"Per timed corpus it realizes {share} of the paper's bound bnd_exact on the same "
            "forward costs, as each op also costs decision forwards the bound does not charge."
        )
    return " ".join(out)


def _paren(label: str) -> str:
    """`` (label)``, or nothing where the page has named the run already (``label`` empty)."""
    return f" ({label})" if label else ""


def _span(values, fmt: str = "{:.2f}×") -> str:
    """``lo–hi`` of ``values`` in ``fmt``, or one figure when they print alike."""
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo.rstrip('×%')}–{hi}"


def _families(corpora) -> dict[str, list[str]]:
    """``corpora`` grouped by family (:func:`.run_accounting.family`), in order."""
    out: dict[str, list[str]] = {}
    for corpus in corpora:
        out.setdefault(family(corpus), []).append(corpus)
    return out


def _tag(corpora: list[str]) -> str:
    """``"development data; "`` for a corpus the book's choices were made on."""
    return "development data; " if corpora[0] in DEVELOPMENT_DATA else ""


def _medians(numbers: dict, method: str, setting: str) -> dict[str, float]:
    """The median case's predicted speedup over autoregressive decoding, per corpus."""
    return {
        r["corpus"]: r["median_speedup"]
        for r in numbers["cost_model"]["predicted_speedups"]
        if r["method"] == method and r["setting"] == setting and r["corpus"] != "pooled"
    }


def predicted_sentence(numbers: dict) -> str:
    """Per corpus family, the median case's predicted speedup of plain Copy-as-Decode and of
    prompt lookup (its fastest setting), and on how many corpora each decoder beats it."""
    cad, pld = (
        _medians(numbers, "Copy-as-Decode", "m=0"),
        _medians(numbers, "prompt lookup", "best"),
    )
    drafted = _medians(numbers, "Copy-as-Decode", DRAFTED_SETTING)
    parts = []
    for name, cs in _families(cad).items():
        note = f"{len(cs)} languages; " if len(cs) > 1 else _tag(cs)
        ours, rival = _span([cad[c] for c in cs]), _span([pld[c] for c in cs])
        parts.append(f"{ours} on {name} ({note}prompt lookup {rival})")
    wins = sum(cad[c] > pld[c] for c in cad)
    drafted_wins = sum(drafted[c] > pld[c] for c in drafted)
    return (
        "By the median case of each corpus, forced-oracle Copy-as-Decode's predicted speedup "
        f"over autoregressive decoding is {_and(parts)}: it beats prompt lookup on {wins} of "
        f"{len(cad)} corpora, and on {drafted_wins} with its drafts."
    )


def losses_sentence(numbers: dict) -> str:
    """Where plain Copy-as-Decode loses to autoregressive decoding, per corpus family: the
    cases predicted slower and those that need more forwards (``numbers.accounting.strata``);
    for a family of translations, how many of its tasks lose in at least one language and its
    worst corpus."""
    rows = numbers["accounting"]["strata"]
    if not any(r["slower_than_ar"] or r["more_forwards_than_ar"] for r in rows):
        return "It is predicted faster than autoregressive decoding on every case of every corpus."
    parts, more = [], []
    for name, cs in _families([r["corpus"] for r in rows]).items():
        fam = [r for r in rows if r["corpus"] in cs]
        slower, cases = sum(r["slower_than_ar"] for r in fam), sum(r["cases"] for r in fam)
        text = f"{slower} of {cases} {name} cases"
        if len(cs) > 1:  # translations of the same tasks: count the tasks too
            tasks = {task(c) for r in fam for c in r["slower_cases"]}
            worst = max(fam, key=lambda r: r["slower_than_ar"])
            text += (
                f" (in {len(tasks)} of the {max(r['cases'] for r in fam)} tasks its languages "
                f"share; {CORPUS_LABELS.get(worst['corpus'], worst['corpus'])} "
                f"{worst['slower_than_ar']} of {worst['cases']})"
            )
        parts.append(text)
        more.append(str(sum(r["more_forwards_than_ar"] for r in fam)))
    return (
        f"Where it loses: it is predicted slower than autoregressive decoding on {_and(parts)}, "
        f"and needs more forwards on {_and(more)} of them."
    )


def _and(parts: list[str]) -> str:
    """``a, b and c``."""
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def _carrier(validation: pd.DataFrame) -> tuple[str, int, int, float]:
    """The corpus with the largest share of the timed sample's autoregressive time: its name,
    its timed cases, all timed cases and its share (what carries a pooled ratio of sums)."""
    ar = validation[validation.method == "autoregressive"]
    by = ar.groupby("corpus").measured_s.sum().sort_values(ascending=False)
    corpus = by.index[0]
    return corpus, int((ar.corpus == corpus).sum()), len(ar), float(by.iloc[0] / by.sum())


def timed_sentence(numbers: dict, where: str) -> str:
    """The timed sample on the clock: per corpus the median case's measured speedup of plain
    Copy-as-Decode beside prompt lookup's, how many timed cases ran slower than
    autoregressive decoding, then the pooled ratio of sums labelled with the corpus that
    carries it (its share of the autoregressive time)."""
    val = pd.DataFrame(numbers["cost_model"]["validation"])
    wide = val.pivot_table(index=["corpus", "case"], columns="method", values="measured_s")
    speed = wide.drop(columns="autoregressive").rdiv(wide.autoregressive, axis=0)
    med = speed.groupby(level="corpus").median().reindex(list(dict.fromkeys(val.corpus)))
    cad, pld = med["Copy-as-Decode"], med["prompt lookup"]
    names = [CORPUS_LABELS.get(c, c) for c in med.index]
    slower = int((speed["Copy-as-Decode"] < 1).sum())
    pooled = numbers["speed"]
    carrier, n_in, n, share = _carrier(val)
    ours = _and([f"{v:.2f}× on {c}" for v, c in zip(cad, names, strict=True)])
    return (
        f"On the clock ({where}; {n} timed cases) the median case's speedup is {ours} (prompt "
        f"lookup {', '.join(f'{v:.2f}×' for v in pld)}), and {slower} of the {n} cases ran "
        "slower than autoregressive decoding. Pooled over them, "
        f"{pooled['pooled/Copy-as-Decode']['speedup']:.2f}× (prompt lookup "
        f"{pooled['pooled/prompt lookup']['speedup']:.2f}×) is a ratio of sums carried by "
        f"{CORPUS_LABELS.get(carrier, carrier)}'s {n_in} case{'s' * (n_in != 1)} "
        f"({share:.0%} of the autoregressive time)."
    )


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

    head = ["corpus", "T", "forward ratio: CaD", "+drafts", "PLD", "wall-clock: CaD", "+drafts"]
    head += ["PLD", "bnd_exact", "bnd_fsm", "realized / bnd_exact"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    corpora = [c for c in dict.fromkeys(speed.corpus) if c != "pooled"]
    for corpus in [*corpora, "pooled"] if "pooled" in set(speed.corpus) else corpora:
        cad, pld = (by.loc[(corpus, m)] for m in ("Copy-as-Decode", "prompt lookup"))
        drafted = by.loc[(corpus, DRAFTED)] if (corpus, DRAFTED) in by.index else None
        cells = [corpus, str(int(cad["T"])), f"{cad.forward_ratio:.2f}×"]
        cells += [
            f"{drafted.forward_ratio:.2f}×" if drafted is not None else "",
            f"{pld.forward_ratio:.2f}×",
            wall(cad),
        ]
        cells += [wall(drafted) if drafted is not None else "", wall(pld)]
        if bounds is not None and corpus in bounds.index:
            b = bounds.loc[corpus]
            cells += [f"{b['bnd_exact_grid']:.2f}×", f"{b['bnd_fsm_grid']:.2f}×"]
            cells += [f"{b['realized_over_bnd_exact']:.2f}"]
        else:
            cells += ["", "", ""]
        lines.append("| " + " | ".join(cells) + " |")
    text = (
        f"*This run{_paren(label)}, forced-oracle decoding, per corpus, then pooled (a ratio of "
        "sums, weighted by output length); T: gold ids; bounds on the same grid:*\n\n"
        + "\n".join(lines)
    )
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
    """Markdown of the accounting's headline per corpus: on how many corpora plain
    Copy-as-Decode (at ``min_span``) needs fewer forwards per gold id than the best
    prompt-lookup setting, then a table of both and which needs fewer (what the chapter's
    conclusion cites: it is computed, never typed)."""
    rows, wins, corpora = [], 0, 0
    for corpus, g in summary.groupby("corpus", sort=False):
        by = g.set_index(["method", "setting"]).pooled_fpt
        cad = by[("Copy-as-Decode", f"m={min_span}")]
        pld_setting = best.get(corpus, "best")
        pld = by[("prompt lookup", pld_setting)]
        fewer = "Copy-as-Decode" if cad < pld else "prompt lookup"
        if corpus != "pooled":
            wins, corpora = wins + (cad < pld), corpora + 1
        rows.append(
            f"| {corpus} | {int(g.cases.iloc[0])} | {cad:.3f} | {pld_setting} | {pld:.3f} "
            f"| **{fewer}** | {max(cad, pld) / min(cad, pld):.2f}× |"
        )
    return "\n".join(
        [
            f"**Forwards on every case** (exact, no model): plain Copy-as-Decode (m={min_span}) "
            f"needs fewer forwards per gold id than prompt lookup on {wins} of {corpora} "
            "corpora.",
            "",
            f"| corpus | cases | Copy-as-Decode m={min_span} | prompt lookup setting "
            "| prompt lookup | fewer | by |",
            "|---|---:|---:|---|---:|---|---:|",
            *rows,
        ]
    )


def dominance_markdown(validation: pd.DataFrame, label: str = "") -> str:
    """How much of the timed sample's autoregressive time its longest case and its heaviest
    corpus take (:func:`_carrier`), and the pooled wall-clock speedup of each timed method with
    and without that corpus, from the per-case measurements
    (:func:`cadlib.costs.cost_model.validation`). The pooled speedup is a ratio of sums, so long
    cases weigh in it by their length; this says how much, rather than assuming the stratified
    sample keeps it small."""
    ar = validation[validation.method == "autoregressive"].set_index("case")
    total = ar.measured_s.sum()
    top = ar.measured_s.idxmax()
    corpus, n_in, n, share = _carrier(validation)
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
        f"*What carries the pooled wall clock?{_paren(label)}* The longest timed case ({top}) "
        f"takes {ar.measured_s[top] / total:.0%} of the autoregressive time, {corpus} "
        f"({n_in} of {n} cases) {share:.0%}, so {corpus} {verb} the pooled ratio of sums. "
        f"Pooled speedup with and without {corpus}: " + "; ".join(per) + "."
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
