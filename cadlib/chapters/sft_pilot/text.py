"""Chapter 7's generated prose: every sentence whose words depend on the outcome.

The opening's **Answer.** (:func:`answer`) and the strata's reading (:func:`strata_markdown`)
are generated from the per-case records, multi-line documents first: one-line documents leave
no span to choose, so **Yes** is said only when McNemar's test on the multi-line stratum and the
declared pooled test (Holm) both say so. The conclusion (:func:`conclusion`) leads with the
strata and gives the paired tests of :mod:`cadlib.chapters.sft_pilot.run_paired` after them,
every number labelled with the run's setting. Beside them: the three
findings' answers, the decision-budget note, the training-time estimate, and the evidence run's
conclusion as the cpu chapter shows it (regenerated from its committed records).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from cadlib.cases import EditCase
from cadlib.decoding.fsm import transcript
from cadlib.metrics import ALPHA, format_p
from cadlib.record.results import results_name

from .run import (
    ONE_LINE,
    SEVERAL_LINES,
    case_record,
    committed_cases,
    evidence_profile,
    held_out_docs,
    profile_record,
    read_cases,
    stratum_counts,
)
from .run_examples import target_program
from .run_paired import DECLARED, pilot_findings
from .run_pilot import CRP, FSM_UNTRAINED, localized_system, sft_system
from .run_scoring import CaseResult, summarize

__all__ = [
    "REGENERATE",
    "answer",
    "budget_note",
    "conclusion",
    "estimate_markdown",
    "findings_markdown",
    "findings_section",
    "full_profile_summary",
    "profile_summary",
    "regenerated_conclusion",
    "run_conclusion",
    "run_findings",
    "strata_markdown",
]


def _find(comparisons: Sequence[dict], a: str, b: str, metric: str) -> dict | None:
    return next(
        (c for c in comparisons if (c["system_a"], c["system_b"], c["metric"]) == (a, b, metric)),
        None,
    )


def _p_clause(p_text: str) -> str:
    """``= 0.03`` or ``< 0.0001``: a bound reads without the equals sign."""
    return p_text if p_text.startswith("<") else f"= {p_text}"


def _pv(c: dict) -> str:
    verdict = "significant" if c["significant"] else "not significant"
    return (
        f"McNemar exact p = {format_p(c['p'])}, Holm {format_p(c['p_holm'])}: {verdict} at {ALPHA}"
    )


def _count(c: dict, side: str) -> str:
    return f"{c[side]}/{c['n']}"


def conclusion(
    systems: Mapping[str, Sequence[CaseResult]],
    comparisons: Sequence[dict],
    *,
    trained: str,
    untrained: str,
    prompt_level: str | None = None,
    localized: str | None = None,
    label: str = "",
    summaries: Mapping[str, Mapping] | None = None,
    strata: str = "",
) -> str:
    """The chapter's conclusion as Markdown, every figure taken from ``comparisons`` (the
    records of :func:`cadlib.chapters.sft_pilot.run_paired.compare`) and ``systems``.

    ``trained`` and ``untrained`` name the SFT and untrained FSM systems (same decoder);
    ``prompt_level`` the untrained prompt-level CRP system, ``localized`` the SFT model in
    localized-edit mode. ``strata`` (:func:`strata_markdown`: the one-line and multi-line
    documents apart) leads and carries the verdict; the declared pooled test (span-only EM of
    ``trained`` against ``untrained``, Holm) follows it, labelled as pooled. Without strata the
    pooled test answers **Yes** only when it is significant.
    """
    span = _find(comparisons, trained, untrained, "span_em")
    iou = _find(comparisons, trained, untrained, "span_iou")
    ident = _find(comparisons, trained, untrained, "identity")
    em = _find(comparisons, trained, untrained, "em")
    if span is None or iou is None or ident is None or em is None:
        raise ValueError(
            f"comparisons lack {trained!r} vs {untrained!r} on span_em, span_iou, "
            "identity or em: run compare() on that pair first"
        )
    out = [f"*{label}.*" if label else "", strata]
    declared = (
        f"span-only EM (every op and copy range equal to the oracle's, whatever the `<gen>` "
        f"text) is {_count(span, 'a')} for {trained} against {_count(span, 'b')} for "
        f"{untrained} on the same held-out cases ({_pv(span)})."
    )
    if strata:  # the strata carry the verdict; the pooled test follows, labelled
        out.append(f"Pooled over all documents, by the test declared for it, {declared}")
    else:
        learned = span["significant"] and span["a"] > span["b"]
        out.append(f"{'**Yes**' if learned else '**No**'}, by the test declared for it: {declared}")
    moved = iou["ci"][0] > 0 or iou["ci"][1] < 0
    out.append(
        f"Mean per-op span IoU goes from {iou['b']:.2f} to {iou['a']:.2f} (paired bootstrap "
        f"95% CI of the difference [{iou['ci'][0]:+.2f}, {iou['ci'][1]:+.2f}], Holm p "
        f"{_p_clause(format_p(iou['p_holm'], iou['test']))}: "
        f"{'significant' if iou['significant'] else 'not significant'}"
        f"{'' if iou['significant'] or not moved else ' after adjustment'}); but IoU also "
        f"rewards the degenerate policy of copying everything."
    )
    out.append(
        f"That policy is common: {_count(ident, 'a')} outputs of {trained} are the input "
        f"returned unchanged, against {_count(ident, 'b')} untrained ({_pv(ident)}). Such an "
        f"output gets the first start and the last end right by construction, so Table 6's "
        f"endpoint accuracies are also shown without these attempts."
    )
    if summaries and trained in summaries:
        s = summaries[trained]
        if s.get("n_non_identity"):
            out.append(
                f"Without them, {trained} has span-start accuracy "
                f"{s['start_acc_non_identity']:.2f} and span-end accuracy "
                f"{s['end_acc_non_identity']:.2f} on the other {s['n_non_identity']} attempts "
                f"(all attempts: {s['start_acc']:.2f} / {s['end_acc']:.2f})."
            )
    out.append(
        f"Exact match is {_count(em, 'a')} trained against {_count(em, 'b')} untrained ({_pv(em)})."
    )
    if localized and localized in systems:
        loc = systems[localized]
        k = sum(r.em for r in loc)
        out.append(
            f"With the oracle's spans given and only the `<gen>` bodies written by the model "
            f"(localized edit), EM is {k}/{len(loc)} against {_count(em, 'a')} with its own "
            "spans: "
            + (
                "with every span right it still fixes no bug, so bug fixing is a limit here "
                "whatever the spans."
                if k == 0
                else "what the rest of the gap to full EM consists of is not tested here."
            )
        )
    if prompt_level and prompt_level in systems:
        crp = systems[prompt_level]
        parsed = sum(r.parsed for r in crp)
        out.append(
            f"Without the FSM, the untrained model's replies parse as a program in "
            f"{parsed}/{len(crp)} cases ({prompt_level}); with it, every output parses by "
            f"construction, which is a property of the decoder, not evidence of learning."
        )
    return "\n\n".join(p for p in out if p)


def run_conclusion(
    ours: Mapping[str, Sequence[CaseResult]], comparisons: Sequence[dict], P: Mapping, label: str
) -> str:
    """This run's :func:`conclusion` (the first training set's model against the untrained
    systems, with the strata of :func:`strata_markdown`): the ``conclusion`` that
    :func:`cadlib.chapters.sft_pilot.run.numbers` records."""
    trained = sft_system(P["train_sets"][0])
    summaries = {k: summarize(v) for k, v in ours.items()}
    records = [case_record(r) for results in ours.values() for r in results]
    strata = strata_markdown(
        records, held_out_docs(), trained=trained, untrained=FSM_UNTRAINED, label=label
    )
    return conclusion(
        ours,
        comparisons,
        trained=trained,
        untrained=FSM_UNTRAINED,
        prompt_level=CRP,
        localized=localized_system(P["train_sets"][0]),
        label=label,
        summaries=summaries,
        strata=strata,
    )


def _verdict(learned: bool, multi: Mapping) -> str:
    """The Answer's first words: **Yes** only when the declared pooled test and the multi-line
    stratum both say so; one-line documents leave no span to choose."""
    if not multi["n"]:
        return "**Not tested** on multi-line documents: this run has none"
    if multi["evidence"]:
        return "**Yes**, on multi-line documents too" if learned else "**Not by the declared test**"
    return "**No** on multi-line documents"


def answer(
    numbers: Mapping,
    records: Sequence[Mapping],
    docs: Mapping[str, str] | None = None,
    trained: str | None = None,
    untrained: str = FSM_UNTRAINED,
) -> str:
    """The opening's **Answer.**, multi-line documents first: span-only EM of the trained model
    against the untrained one under the same FSM decoder per stratum (``records``: the run's
    per-case records; ``docs``: :func:`.run.held_out_docs`), then the declared pooled test
    (McNemar exact, Holm) labelled with what carries it, exact match and identity outputs.
    ``trained`` defaults to the first SFT+FSM system of Table 6 (``numbers``)."""
    t6, comparisons = numbers["table6"], numbers["comparisons"]
    trained = trained or next(s for s in t6 if s.startswith("SFT+FSM"))
    span = _find(comparisons, trained, untrained, "span_em")
    if span is None:
        raise ValueError(f"no span_em comparison of {trained!r} with {untrained!r}")
    strata = stratum_counts(records, held_out_docs() if docs is None else docs, trained, untrained)
    one, multi = strata["one"], strata["multi"]
    learned = span["significant"] and span["a"] > span["b"]
    a, b = t6[trained], t6[untrained]
    out = [_verdict(learned, multi)]
    if multi["n"]:
        out[0] += (
            f": there span-only EM is {multi['a']}/{multi['n']} for {trained} against "
            f"{multi['b']}/{multi['n']} untrained (McNemar exact p = {format_p(multi['p'])}), "
            f"{multi['kept']}/{multi['n_kept']} without identity outputs."
        )
    if one["n"]:
        out.append(
            f"On the {one['n']} one-line documents, where no span is left to choose, it scores "
            f"{one['a']}/{one['n']} against {one['b']}/{one['n']}."
        )
    carried = ", carried by the one-line documents" if learned and not multi["evidence"] else ""
    out.append(
        f"Pooled, the declared test gives {_count(span, 'a')} against {_count(span, 'b')} "
        f"({_pv(span)}){carried}. Exact match is {a['em']}/{a['n']} against "
        f"{b['em']}/{b['n']}; {a['identity']}/{a['n']} trained outputs return the input "
        f"unchanged ({b['identity']}/{b['n']} untrained)."
    )
    return " ".join(out)


def strata_markdown(
    records: Sequence[Mapping],
    docs: Mapping[str, str],
    *,
    trained: str,
    untrained: str,
    label: str = "",
) -> str:
    """What the strata show, as Markdown generated from the records
    (:func:`.run.stratum_counts`), multi-line documents first: span-only EM of ``trained``
    and ``untrained`` per stratum (and ``trained``'s without identity outputs), how many runs
    of each the decision budget closed, and McNemar's exact test of span-only EM on the
    multi-line stratum (unadjusted, at :data:`cadlib.metrics.ALPHA`): "evidence" of span
    selection on multi-line documents is claimed only when that test says so."""
    s = stratum_counts(records, docs, trained, untrained)
    one, multi, (closed_a, closed_b) = s["one"], s["multi"], s["closed"]
    reading = []
    if closed_a < closed_b:
        reading.append("learned the format and to stop")
    if one["n"] and one["a"] > one["b"]:
        reading.append("gets one-line functions right, where no span is left to choose")
    reading.append(
        "selects spans in multi-line functions"
        if multi["evidence"]
        else "no evidence that it selects spans in multi-line functions"
    )
    head = f"*By stratum ({label}):*" if label else "*By stratum:*"
    return (
        f"{head} on the {multi['n']} documents of {SEVERAL_LINES}, {trained} scores span-only "
        f"EM on {multi['a']}/{multi['n']} ({multi['kept']}/{multi['n_kept']} without identity "
        f"outputs) against {multi['b']}/{multi['n']} untrained (McNemar exact p = "
        f"{format_p(multi['p'])}, unadjusted); on the {one['n']} of {ONE_LINE}, where the "
        f"only program besides the identity rewrites that line, {one['a']}/{one['n']} "
        f"({one['identity']} identity outputs) against {one['b']}/{one['n']}. The decision "
        f"budget closed {closed_a}/{s['n']} trained runs and {closed_b}/{s['n']} untrained "
        "ones. Read together: the trained model " + "; ".join(reading) + "."
    )


_READ = {
    "learnable": ("span-only EM per case, SFT+FSM Py-only {a:.2f} against untrained {b:.2f}"),
    "combined helps": "EM per case, Combined {a:.2f} against Py-only {b:.2f}",
    "end harder": "start minus end accuracy per case {diff:+.2f}",
}


def findings_markdown(results: Mapping[str, dict], multi: Mapping | None = None) -> str:
    """One line per finding of :func:`pilot_findings`: **Yes** / **No**, the per-case means, n
    and the adjusted p; the finding not tested (one training set) is said to be so. Given the
    ``multi``-line stratum (:func:`.run.stratum_counts`), a pooled *learnable* **Yes** that the
    stratum does not bear out says so first."""
    lines = []
    for name in DECLARED:
        t = results.get(name)
        if t is None:
            lines.append(f"- *{name}*: not tested (this run trains one training set).")
            continue
        answer = (
            "**Yes**"
            if t["holds"]
            else "**No**, significant the other way"
            if t["p_holm"] < ALPHA
            else "**No**, not significant"
        )
        if name == "learnable" and t["holds"] and multi and not multi["evidence"]:
            answer = (
                f"**No** on multi-line documents ({multi['a']}/{multi['n']} against "
                f"{multi['b']}/{multi['n']}); **Yes** pooled, carried by the one-line ones"
            )
        lines.append(
            f"- *{name}*: {answer}; {_READ[name].format(**t)} over {t['n']} cases "
            f"(sign-flip p = {format_p(t['p'])}, Holm {format_p(t['p_holm'])}, "
            f"at {ALPHA})."
        )
    return "\n".join(lines)


def findings_section(
    records: Sequence[Mapping], train_sets: Sequence[str], docs: Mapping[str, str] | None = None
) -> str:
    """Markdown: the three findings' declared tests (:data:`cadlib.chapters.sft_pilot.run_paired.
    DECLARED`) and their answers on ``records`` (per-attempt case records), read against the
    multi-line stratum when the held-out ``docs`` are given."""
    declared = "\n".join(f"- *{k}*: {v}" for k, v in DECLARED.items())
    multi = None
    if docs is not None:
        trained = sft_system(train_sets[0])
        multi = stratum_counts(records, docs, trained, FSM_UNTRAINED)["multi"]
    answers = findings_markdown(pilot_findings(records, train_sets), multi)
    return (
        f"**The paper's three findings, as declared before the multi-seed runs** (unit: "
        f"the held-out case, averaged over seeds; sign-flip test, Holm over those tested):"
        f"\n\n{declared}\n\n**Answers on this run:**\n\n{answers}"
    )


def run_findings(ours: Mapping[str, Sequence[CaseResult]], P: Mapping) -> str:
    """:func:`findings_section` of this run's attempts, read against the multi-line stratum."""
    records = [case_record(r) for rs in ours.values() for r in rs]
    return findings_section(records, P["train_sets"], held_out_docs())


def budget_note(cases: Sequence[EditCase], tokenizer, budgets: Mapping[str, int]) -> str:
    """Markdown: how many of the cases' oracle programs fit in each decision budget (the ids
    the model chooses in the oracle's transcript: structural choices and body ids)."""
    need = [
        sum(k in ("choice", "gen") for k in transcript(target_program(c), c.doc, tokenizer).kinds)
        for c in cases
    ]
    parts = [
        f"{name}: {budget} decisions, enough for {sum(n <= budget for n in need)} of the "
        f"{len(need)} oracle programs"
        for name, budget in budgets.items()
    ]
    return (
        "*Decision budgets (the oracle program needs at most "
        + f"{max(need)}): "
        + ("; ".join(parts) + ".*")
    )


def estimate_markdown(table: pd.DataFrame, n_recorded: int, machine: str) -> str:
    """One paragraph: each set's estimated hours per run and in all, from
    :func:`cadlib.chapters.sft_pilot.run_training.run_estimates`, with the throughput it
    assumes and where that was measured."""
    parts = [
        f"{r.train_set}: {r.run_ids:,} training ids per run ({r.epochs} epochs, "
        f"{r.x_first:.1f}x the first set's; sum of squared lengths {r.squared_x_first:.1f}x), "
        f"about {r.hours:.1f} h per run, {r.runs * r.hours:.1f} h for its {r.runs} runs"
        for r in table.itertuples()
    ]
    rate = table.ids_per_s.iloc[0]
    return (
        f"*Estimated training time* at the median throughput of the {n_recorded} recorded "
        f"run(s) ({rate:.0f} training ids/s on {machine}; proportional to ids, so a lower "
        "bound where examples are longer): " + "; ".join(parts) + "."
    )


#: The command that regenerates each profile's results (from the repository root). Each
#: writes its executed copy under ``_build/`` and its results files
#: (``results/sft_pilot[.<profile>].json`` and ``.cases.jsonl``); the committed chapter is the
#: evidence run, rendered by ``make replay CHAPTER=07_sft_pilot PROFILE=<profile>``.
REGENERATE = {
    "cpu": "papermill --cwd notebooks notebooks/07_sft_pilot.ipynb _build/07_sft_pilot.cpu.ipynb "
    "-p profile cpu",
    "full": "make record CHAPTER=07_sft_pilot PROFILE=full  # about an hour on 2 cores",
    "seeds": "make record CHAPTER=07_sft_pilot PROFILE=seeds RESUME=1  # resumable; its hours "
    "first: python -m cadlib.chapters.sft_pilot.commands estimate seeds",
    "paper": "papermill --cwd notebooks notebooks/07_sft_pilot.ipynb "
    "_build/07_sft_pilot.paper.ipynb -p profile paper -p device cuda  # a GPU and the hub",
}


def profile_summary(profile: str) -> str:
    """Markdown: the generated conclusion of ``profile``'s committed run with its label, or
    "not run yet" and the command that runs it."""
    command = f"`{REGENERATE[profile]}`"
    record = profile_record(profile)
    if record is None or "conclusion" not in record["numbers"]:
        return (
            f"*Profile {profile}: not run yet (no results/{results_name('sft_pilot', profile)}"
            f" with a conclusion). Command:* {command}"
        )
    n = record["numbers"]
    return (
        f"*Profile {profile}, model {record['model']}, run {record['created'][:10]}; "
        f"regenerate with* {command}\n\n{n['conclusion']}"
    )


class _Attempt:
    """The two fields :func:`conclusion` reads of an attempt, from
    its per-case record."""

    def __init__(self, record: Mapping):
        self.em, self.parsed = bool(record["em"]), bool(record["parsed"])


def regenerated_conclusion(profile: str) -> str | None:
    """A committed run's conclusion regenerated from its results file and per-case records
    under this module's current rules (strata included), or None when it was not run: a
    conclusion stored by an older rule is not quoted as it stood."""
    record = profile_record(profile)
    if record is None or "comparisons" not in record["numbers"]:
        return None
    n, records = record["numbers"], read_cases(committed_cases(profile))
    train_set = record["params"].get("train_sets", ["py"])[0]
    trained = sft_system(train_set)
    systems: dict[str, list] = {}
    for r in records:
        systems.setdefault(r["system"], []).append(_Attempt(r))
    label = f"ours ({record['model']}, CPU, profile {profile})"
    strata = strata_markdown(
        records,
        held_out_docs(),
        trained=trained,
        untrained=FSM_UNTRAINED,
        label=f"profile {profile}",
    )
    return conclusion(
        systems,
        n["comparisons"],
        trained=trained,
        untrained=FSM_UNTRAINED,
        prompt_level=CRP,
        localized=localized_system(train_set),
        label=label,
        summaries=n["table6"],
        strata=strata,
    )


def full_profile_summary(profile: str) -> str:
    """In the cpu chapter: the largest committed evidence run's
    (:func:`cadlib.chapters.sft_pilot.run.evidence_profile`) generated conclusion and findings
    (or the command that runs it); in any other profile, a note that the conclusion at the end
    is this run's own. Its figure and rates are
    :func:`cadlib.chapters.sft_pilot.show.full_profile_figures`."""
    if profile != "cpu":
        return f"*This is the {profile} run; the conclusion below is its own.*"
    evidence = evidence_profile()
    record = profile_record(evidence)
    if record is None:
        return profile_summary(evidence)
    return (
        f"*Profile {evidence}, model {record['model']}, run {record['created'][:10]}; "
        f"regenerate with* `{REGENERATE[evidence]}`. *Its conclusion, regenerated from "
        f"its committed results and per-case records under this chapter's current "
        f"rules:*\n\n{regenerated_conclusion(evidence)}\n\n"
        + findings_section(
            read_cases(committed_cases(evidence)),
            record["params"].get("train_sets", ["py"]),
            held_out_docs(),
        )
    )
