"""Chapter 7's per-case records and its generated conclusion.

Per-case records (issue 16, "Per-case outputs"): one JSON line per (system, case) attempt,
committed next to the results file (``results/sft_pilot.cases.jsonl`` for the cpu profile),
so that a claim such as "11 of 33 outputs are the identity program" and every paired test can
be checked from the repository alone. Wall times are left out (they name the machine's speed,
not the attempt).

The conclusion (:func:`conclusion`) is Markdown generated from the paired tests of
:mod:`cadlib.chapters.sft_pilot.paired`: it says whether span selection was learned only when the
Holm-adjusted paired test says so, and labels every number with the run's setting.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from cadlib.metrics import ALPHA, format_p
from cadlib.record.results import load_committed, results_dir, results_name

from .scoring import CaseResult

__all__ = [
    "answer",
    "CASE_FIELDS",
    "case_record",
    "cases_path",
    "write_cases",
    "read_cases",
    "conclusion",
    "REGENERATE",
    "profile_record",
    "EVIDENCE_PROFILES",
    "evidence_profile",
    "profile_summary",
]

#: The command that regenerates each profile's results (from the repository root). Each
#: writes its executed copy under ``_build/`` and its results files
#: (``results/sft_pilot[.<profile>].json`` and ``.cases.jsonl``); the committed chapter is the
#: evidence run, rendered by ``make replay CHAPTER=07_sft_pilot PROFILE=<profile>``.
REGENERATE = {
    "cpu": "papermill --cwd notebooks notebooks/07_sft_pilot.ipynb _build/07_sft_pilot.cpu.ipynb "
    "-p profile cpu",
    "full": "make record CHAPTER=07_sft_pilot PROFILE=full  # about an hour on 2 cores",
    "seeds": "make record CHAPTER=07_sft_pilot PROFILE=seeds RESUME=1  # resumable; its hours "
    "first: python -m cadlib.chapters.sft_pilot.estimate seeds",
    "paper": "papermill --cwd notebooks notebooks/07_sft_pilot.ipynb "
    "_build/07_sft_pilot.paper.ipynb -p profile paper -p device cuda  # a GPU and the hub",
}

#: The fields of one per-case record, in file order.
CASE_FIELDS = (
    "system",
    "id",
    "text",
    "output",
    "parsed",
    "em",
    "trimmed_em",
    "program_em",
    "span_em",
    "span_iou",
    "identity",
    "start_hits",
    "end_hits",
    "n_oracle_copies",
    "n_pred_copies",
    "out_of_range",
    "category",
    "passed",
    "test_detail",
    "new_tokens",
    "forwards",
    "budget_closed",
    "seed",
    "free_form",
    "localized",
)


def case_record(r: CaseResult) -> dict:
    """One attempt as a flat dict of :data:`CASE_FIELDS` (``nan`` becomes ``None``)."""
    rec = {}
    for key in CASE_FIELDS:
        value = getattr(r, key) if hasattr(r, key) else r.extra.get(key)
        if isinstance(value, float) and math.isnan(value):
            value = None
        rec[key] = value
    return rec


def cases_path(chapter: str = "sft_pilot", profile: str | None = "cpu") -> Path:
    """``<results dir>/<chapter>[.<profile>].cases.jsonl`` beside the results file."""
    return results_dir() / results_name(chapter, profile).replace(".json", ".cases.jsonl")


def write_cases(
    systems: Mapping[str, Sequence[CaseResult]],
    chapter: str = "sft_pilot",
    profile: str | None = "cpu",
) -> Path:
    """Write every attempt of every system to :func:`cases_path`; returns the path."""
    path = cases_path(chapter, profile)
    with path.open("w", encoding="utf-8") as f:
        for results in systems.values():
            for r in results:
                f.write(json.dumps(case_record(r), ensure_ascii=False, sort_keys=False) + "\n")
    return path


def read_cases(path: str | Path) -> list[dict]:
    """The records of a per-case file."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


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


def _strata_pointer(learned: bool, has_strata: bool) -> str:
    """The sentence leading from the pooled answer to the strata: a pooled **Yes** may be
    carried by one stratum; a **No** is read stratum by stratum too."""
    if not has_strata:
        return ""
    if learned:
        return " That is pooled over all documents; the strata say where it comes from."
    return " The strata below show the same comparison on one-line and multi-line documents."


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
    records of :func:`cadlib.chapters.sft_pilot.compare`) and ``systems``.

    ``trained`` and ``untrained`` name the SFT and untrained FSM systems (same decoder);
    ``prompt_level`` the untrained prompt-level CRP system, ``localized`` the SFT model in
    localized-edit mode. The first sentence answers "did the model learn to select spans?":
    yes only when span-only EM of ``trained`` beats ``untrained`` significantly (Holm).
    ``strata`` (:func:`cadlib.chapters.sft_pilot.strata.strata_markdown`) follows that answer: what
    the one-line and multi-line documents show apart, which the pooled test does not.
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
    learned = span["significant"] and span["a"] > span["b"]
    out = [f"*{label}.*" if label else ""]
    answer = "**Yes**" if learned else "**No**"
    out.append(
        f"{answer}, by the test declared for it: span-only EM (every op and copy range equal to "
        f"the oracle's, whatever the `<gen>` text) is {_count(span, 'a')} for {trained} against "
        f"{_count(span, 'b')} for {untrained} on the same held-out cases ({_pv(span)})."
        + _strata_pointer(learned, bool(strata))
    )
    out.append(strata)
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


#: The chapter's evidence profiles, largest first: the cpu chapter shows the largest committed.
EVIDENCE_PROFILES = ("seeds", "full")


def evidence_profile() -> str:
    """The largest evidence profile with a committed run (:data:`EVIDENCE_PROFILES`); the
    smallest when none is committed yet (the one to record first)."""
    return next(
        (p for p in EVIDENCE_PROFILES if profile_record(p) is not None), EVIDENCE_PROFILES[-1]
    )


def profile_record(profile: str) -> dict | None:
    """The committed results record of a profile of this chapter
    (:func:`cadlib.record.results.load_committed`), or ``None`` if not run yet."""
    return load_committed("sft_pilot", profile)


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


def answer(
    numbers: Mapping, trained: str | None = None, untrained: str = "FSM-constrained (untrained)"
) -> str:
    """The chapter's question answered with its own numbers (the opening's **Answer.**): the
    declared test (span-only EM of the trained model against the untrained one under the same
    FSM decoder, McNemar exact, Holm), exact match and identity outputs beside it. ``trained``
    defaults to the first SFT+FSM system of Table 6 (``numbers`` of the results file)."""
    t6, comparisons = numbers["table6"], numbers["comparisons"]
    trained = trained or next(s for s in t6 if s.startswith("SFT+FSM"))
    span = _find(comparisons, trained, untrained, "span_em")
    if span is None:
        raise ValueError(f"no span_em comparison of {trained!r} with {untrained!r}")
    learned = span["significant"] and span["a"] > span["b"]
    a, b = t6[trained], t6[untrained]
    return (
        f"**{'Yes' if learned else 'No'}**, by the test declared for it: span-only EM is "
        f"{_count(span, 'a')} for {trained} against {_count(span, 'b')} untrained on the "
        f"same held-out cases ({_pv(span)}). Exact match is {a['em']}/{a['n']} against "
        f"{b['em']}/{b['n']}, and {a['identity']}/{a['n']} trained outputs return the input "
        f"unchanged ({b['identity']}/{b['n']} untrained): the conclusion below reads the "
        "rest of the paired tests."
    )
