"""Chapter 7's tables, figures and results record, so that the notebook only calls.

Each function here is one displayed object of ``notebooks/07_sft_pilot.ipynb`` (the setting
line, the split, the transcript statistics, the training runs and loss curves, the tests
table, the wall-time table, the results record); the algorithms live in the other modules of
:mod:`cadlib.chapters.sft_pilot`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from cadlib import paper as _paper
from cadlib.corpora import SPLIT_CORPORA, load_corpus, seeded_subset, split_cases
from cadlib.execution import sandbox_report, sandbox_summary
from cadlib.models import load_tokenizer, resolve_device, set_threads
from cadlib.record.replay import replaying
from cadlib.record.results import (
    committed_path,
    hardware_info,
    load_committed,
    repo_root,
    results_name,
    setting_label,
)
from cadlib.record.session import Chapter

from .examples import build_examples, target_program
from .findings import DECLARED, findings_markdown, pilot_findings
from .paired import compare, rates_table
from .pilot import (
    CRP,
    FSM_UNTRAINED,
    REGEN,
    Pilot,
    localized_system,
    sft_system,
    split_for,
)
from .report import (
    REGENERATE,
    case_record,
    conclusion,
    evidence_profile,
    profile_record,
    profile_summary,
    read_cases,
    write_cases,
)
from .scoring import CaseResult, summarize, summary_record, taxonomy
from .strata import strata_markdown, strata_table
from .tables import (
    PAPER_TABLE7,
    expected_speedup,
    table22,
    transcript_stats,
)
from .train_sets import TRAIN_SET_LABELS, training_cases
from .training import DEVIATIONS, PROFILES

__all__ = [
    "ChapterSetup",
    "setup_chapter",
    "run_hardware",
    "crp_vs_fsm_example",
    "example_attempt",
    "table22_outputs",
    "write_chapter_results",
    "full_profile_outputs",
    "findings_section",
    "run_findings",
    "setting_markdown",
    "split_overview",
    "preview_examples",
    "transcript_table",
    "recipe_differences",
    "training_table",
    "plot_losses",
    "chapter_pairs",
    "paired_comparisons",
    "program_systems",
    "tests_table",
    "wall_table",
    "chapter_numbers",
    "paper_numbers",
    "held_out_docs",
    "strata_outputs",
    "regenerated_conclusion",
]


def setting_markdown(
    P: Mapping, device: str, hw: Mapping, split_label: str, corpora: Mapping
) -> str:
    """The chapter's :func:`cadlib.record.results.setting_label` in italics: model, device, split,
    corpora sources and the guards model outputs run under, the profile, then the machine
    with the torch threads and the torch / transformers versions."""
    sources = ", ".join(f"{n} from {c.source}" for n, c in corpora.items())
    versions = {k: hw[k] for k in ("torch", "transformers") if k in hw}
    label = setting_label(
        f"model {P['model']} (its own tokenizer)",
        f"device {device}",
        split_label,
        f"corpora: {sources}",
        f"model outputs run under {sandbox_summary()}",
        profile=P["profile"],
        hw=dict(hw),
        threads=hw.get("threads"),
        **versions,
    )
    return f"*Setting: {label}.*"


def split_overview(split: Mapping, corpora: Mapping) -> tuple[pd.DataFrame, str]:
    """The split's sizes per corpus, and a text with the training-set sizes and the
    HEvalFix-Py held-out task numbers."""
    sizes = pd.DataFrame(
        {
            name: {k: e[k] for k in ("n", "n_train", "n_held_out")}
            for name, e in split["corpora"].items()
        }
    ).T
    held = split_cases(split, "heval-fix-py", corpora["heval-fix-py"], "held_out")
    text = (
        f"Py-only trains on {len(training_cases(split, 'py', corpora))} cases; Combined on "
        f"{len(training_cases(split, 'combined', corpora))}\n"
        f"HEvalFix-Py held-out: {', '.join(c.id.split('/')[1] for c in held)}"
    )
    return sizes, text


def preview_examples(P: Mapping, split: Mapping, corpora: Mapping, tokenizer) -> dict:
    """``{train set: (examples, report)}``: the training examples each set of ``P`` builds
    (the first seed's subset), before any training."""
    previews = {}
    for ts in P["train_sets"]:
        cases = seeded_subset(training_cases(split, ts, corpora), P["n_train"], min(P["seeds"]))
        previews[ts] = build_examples(cases, tokenizer, P["max_length"], P["overlong"])
    return previews


def transcript_table(previews: Mapping) -> pd.DataFrame:
    """Per training set: examples, truncated / dropped, the mean ids per example by role
    and the share of the target that carries loss."""
    rows = {}
    for ts, (exs, rep) in previews.items():
        stats = transcript_stats(exs)
        target = stats[["forced", "splice", "choice", "gen"]].sum().sum()
        rows[TRAIN_SET_LABELS[ts]] = {
            "examples": len(exs),
            "truncated": len(rep["truncated"]),
            "dropped": len(rep["dropped"]),
            "max length": rep["max_length"],
            **stats.mean().round(1).to_dict(),
            "loss share of target (%)": round(100 * stats["loss"].sum() / target, 1),
        }
    return pd.DataFrame(rows).T


def recipe_differences(P: Mapping) -> pd.DataFrame:
    """Every setting in which this run differs from the paper profile, with the reason (an
    evidence profile's declared deviations, :data:`DEVIATIONS`; "CI time budget" for the
    others)."""
    paper, declared = PROFILES["paper"], DEVIATIONS.get(P["profile"])
    return pd.DataFrame(
        [
            {
                "setting": k,
                "this run": P[k],
                "paper profile": paper[k],
                "why": declared.get(k, "") if declared else "CI time budget",
            }
            for k in paper
            if P[k] != paper[k]
        ]
    ).set_index("setting")


def training_table(runs: Sequence) -> pd.DataFrame:
    """One row per training run: examples, loss ids, steps, left-out cases, first and last
    loss, training seconds."""
    return pd.DataFrame(
        [
            {
                "train set": TRAIN_SET_LABELS[r.train_set],
                "seed": r.seed,
                "examples": r.n_examples,
                "loss ids": r.n_loss_tokens,
                "epochs": r.epochs,
                "optimizer steps": r.optimizer_steps,
                "truncated": len(r.left_out["truncated"]),
                "dropped": len(r.left_out["dropped"]),
                "first loss": round(r.losses[0], 3),
                "last loss": round(r.losses[-1], 3),
                "train time (s)": round(r.train_seconds),
            }
            for r in runs
        ]
    )


def plot_losses(
    curves: Mapping[str, Sequence[float]],
    title: str,
    ylabel: str = "training loss (choice + gen ids)",
):
    """The training loss per optimizer step, one line per ``{label: losses}``."""
    fig, ax = plt.subplots(figsize=(6, 3))
    for name, losses in curves.items():
        ax.plot(range(1, len(losses) + 1), losses, marker="o", label=name)
    ax.set(xlabel="optimizer step", ylabel=ylabel, title=title)
    ax.legend()
    return ax


def chapter_pairs(P: Mapping) -> list[tuple[str, str]]:
    """The chapter's paired comparisons: trained vs each untrained system (the question
    first), then grammar enforcement alone (untrained FSM vs prompt-level CRP)."""
    trained = sft_system(P["train_sets"][0])
    return [(trained, FSM_UNTRAINED), (trained, CRP), (trained, REGEN), (FSM_UNTRAINED, CRP)]


def paired_comparisons(baselines: Mapping, pilot: Pilot, P: Mapping) -> list[dict]:
    """The paired tests of :func:`chapter_pairs`, with one attempt per case: the first
    seed's run where several seeds were trained."""
    paired = {**baselines, **pilot.systems(seed=P["seeds"][0])}
    return compare(paired, chapter_pairs(P))


def program_systems(ours: Mapping[str, Sequence[CaseResult]]) -> dict:
    """The systems that emit programs (Table 7's rows): no localized edit, no free-form."""
    return {
        k: v
        for k, v in ours.items()
        if "localized" not in k and not all(r.extra.get("free_form") for r in v)
    }


def tests_table(ours: Mapping[str, Sequence[CaseResult]]) -> pd.DataFrame:
    """Per system: EM and unit tests passed (with the Wilson 95% CI), and where the two
    disagree."""
    rows = []
    for system, results in ours.items():
        s = summarize(results)
        lo, hi = s["tests_ci"]
        em_pass = sum(r.em and r.passed for r in results)
        rows.append(
            {
                "system": system,
                "n": s["n"],
                "EM": s["em"],
                "tests passed": s["tests_passed"],
                "95% CI (%)": f"[{100 * lo:.1f}, {100 * hi:.1f}]",
                "passed without EM": s["tests_passed"] - em_pass,
                "EM but failed": s["em"] - em_pass,
            }
        )
    return pd.DataFrame(rows).set_index("system")


def wall_table(ours: Mapping[str, Sequence[CaseResult]]) -> pd.DataFrame:
    """Per system: median wall time per case, median decisions and decision-budget hits."""
    return pd.DataFrame(
        [
            {
                "system": k,
                "median wall (ms)": round(summarize(v)["wall_ms_median"]),
                "median decisions": int(pd.Series([r.new_tokens for r in v]).median()),
                "budget hit": sum(bool(r.extra.get("budget_closed")) for r in v),
            }
            for k, v in ours.items()
        ]
    ).set_index("system")


def chapter_numbers(
    P: Mapping, split: Mapping, ours: Mapping, pilot: Pilot, comparisons: Sequence[dict], label: str
) -> dict:
    """``results/sft_pilot[.<profile>].json``'s numbers: split sizes, Tables 6/7/22, rates,
    paired tests, training runs, expected speedups and the generated conclusion."""
    trained = sft_system(P["train_sets"][0])
    summaries = {k: summarize(v) for k, v in ours.items()}
    records = [case_record(r) for results in ours.values() for r in results]
    strata = strata_markdown(
        records, held_out_docs(), trained=trained, untrained=FSM_UNTRAINED, label=label
    )
    return {
        "split": {
            n: {k: e[k] for k in ("n_train", "n_held_out")} for n, e in split["corpora"].items()
        },
        "table6": {k: summary_record(v) for k, v in ours.items()},
        "table7": {k: taxonomy(v) for k, v in program_systems(ours).items()},
        "table22": {k: summary_record(v) for k, v in pilot.cross.items()},
        "rates": rates_table(ours).to_dict(orient="index"),
        "comparisons": list(comparisons),
        "training": [
            {
                "train_set": r.train_set,
                "seed": r.seed,
                "examples": r.n_examples,
                "loss_tokens": r.n_loss_tokens,
                "epochs": r.epochs,
                "steps": r.optimizer_steps,
                "truncated": r.left_out["truncated"],
                "dropped": r.left_out["dropped"],
                "losses": r.losses,
                "train_seconds": r.train_seconds,
            }
            for r in pilot.runs
        ],
        "expected_speedup": {
            k: expected_speedup(summaries[k]["em_rate"]) for k in ours if k.startswith("SFT+FSM")
        },
        "conclusion": conclusion(
            ours,
            comparisons,
            trained=trained,
            untrained=FSM_UNTRAINED,
            prompt_level=CRP,
            localized=localized_system(P["train_sets"][0]),
            label=label,
            summaries=summaries,
            strata=strata,
        ),
    }


def held_out_docs() -> dict[str, str]:
    """The documents of the held-out corpus (HEvalFix-Py), by case id, for the strata."""
    return {c.id: c.doc for c in load_corpus("heval-fix-py")}


def strata_outputs(
    ours: Mapping[str, Sequence[CaseResult]], trained: str, label: str
) -> tuple[pd.DataFrame, str]:
    """This run's :func:`cadlib.chapters.sft_pilot.strata.strata_table` and its reading."""
    records = [case_record(r) for results in ours.values() for r in results]
    docs = held_out_docs()
    return (
        strata_table(records, docs),
        strata_markdown(records, docs, trained=trained, untrained=FSM_UNTRAINED, label=label),
    )


class _Attempt:
    """The two fields :func:`cadlib.chapters.sft_pilot.report.conclusion` reads of an attempt, from
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
    n, records = record["numbers"], read_cases(_cases_file(profile))
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


def _cases_file(profile: str) -> Path:
    """The committed per-case records of ``profile``'s run."""
    return committed_path(results_name("sft_pilot", profile).replace(".json", ".cases.jsonl"))


def paper_numbers() -> dict:
    """The paper's figures the chapter compares with (Tables 6, 7, 22, 23; App. O's 1.42x)."""
    return {
        "table6": _paper.TABLE6 | {REGEN: _paper.REGEN},
        "table7": PAPER_TABLE7,
        "table22": _paper.TABLE22,
        "table23": _paper.TABLE23,
        "expected_speedup": {"SFT+FSM, Combined": 1.42},
    }


@dataclass
class ChapterSetup:
    """What chapter 7's cells read beside its :class:`cadlib.record.session.Chapter`: the
    device, checkpoint folder, the corpora and their split, the model's tokenizer and the
    label every table carries."""

    device: str
    checkpoints: Path | None
    corpora: dict
    split: dict
    split_label: str
    tokenizer: object
    label: str


def run_hardware(profile: str, device) -> dict:
    """The machine this chapter's measurements (wall times, training time) were made on: this
    one (:func:`cadlib.record.results.hardware_info`) when it measures; under replay the
    recorded run's, from the committed results file of ``profile`` (what was timed there is
    what the replayed tables show)."""
    record = load_committed("sft_pilot", profile) if replaying() else None
    return record["hardware"] if record else hardware_info(device)


def setup_chapter(ch: Chapter) -> ChapterSetup:
    """Set torch's threads (``ch.P``), resolve ``ch.device``, load the corpora, the split for
    ``ch.seed`` and the model's tokenizer."""
    P = ch.P
    set_threads(P["threads"])
    dev = str(resolve_device(ch.device))
    corpora = {name: load_corpus(name) for name in SPLIT_CORPORA}
    split, split_label = split_for(ch.seed, corpora)
    kind = "GPU" if dev.startswith("cuda") else "CPU"
    return ChapterSetup(
        device=dev,
        checkpoints=repo_root() / P["checkpoints"] if P["checkpoints"] else None,
        corpora=corpora,
        split=split,
        split_label=split_label,
        tokenizer=load_tokenizer(P["model"]),
        label=f"ours ({P['model']}, {kind}, profile {ch.profile})",
    )


def crp_vs_fsm_example(case, baselines: Mapping) -> str:
    """The same case's unconstrained CRP reply beside the FSM-constrained program."""
    crp = next(r for r in baselines[CRP] if r.id == case.id)
    fsm = next(r for r in baselines[FSM_UNTRAINED] if r.id == case.id)
    return (
        f"{case.id}: {case.instruction}\n--- CRP reply (unconstrained) ---\n"
        f"{crp.extra['reply'][:600]}\n--- FSM-constrained program ---\n"
        f"{fsm.text[:600]}"
    )


def example_attempt(pilot: Pilot, held: Sequence, P: Mapping) -> str:
    """One trained attempt beside its oracle program: the first whose spans are all right,
    else the first attempt."""
    attempts = pilot.system(P["train_sets"][0])
    pick = next((r for r in attempts if r.category.startswith("Spans all correct")), attempts[0])
    case = next(c for c in held if c.id == pick.id)
    return (
        f"{case.id} ({pick.category}): {case.instruction}\n--- oracle ---\n"
        f"{target_program(case).render()}\n--- decoded ---\n{pick.text}"
    )


def table22_outputs(cross: Mapping, label: str, profile: str) -> tuple[str | None, pd.DataFrame]:
    """Table 22 (the Combined model on other corpora) with no note; or, where this profile
    trains no Combined model, a Markdown note and the paper's figures alone."""
    if cross:
        return None, table22(cross, label)
    note = f"*Not run in profile {profile} (no Combined model); the paper's figures:*"
    return note, table22({}, label)


def write_chapter_results(
    ch: Chapter,
    setup: ChapterSetup,
    ours: Mapping,
    pilot: Pilot,
    comparisons: Sequence[dict],
    model_info: Mapping,
) -> tuple[dict, Path, Path]:
    """Write ``results/sft_pilot[.<profile>].json`` (:func:`chapter_numbers` beside
    :func:`paper_numbers`, :meth:`cadlib.record.session.Chapter.write`) and the per-case records;
    returns the numbers and both paths."""
    P = ch.P
    numbers = chapter_numbers(P, setup.split, ours, pilot, comparisons, setup.label)
    extra = {
        "split": setup.split_label,
        "model_info": dict(model_info),
        "sandbox": sandbox_report(),
    }
    path = ch.write(
        numbers,
        paper_numbers(),
        model=P["model"],
        tokenizer=f"{P['model']} (own)",
        device=setup.device,
        extra_params=extra,
    )
    return numbers, path, write_cases(ours, profile=ch.profile)


def findings_section(records: Sequence[Mapping], train_sets: Sequence[str]) -> str:
    """Markdown: the three findings' declared tests (:data:`cadlib.chapters.sft_pilot.findings.
    DECLARED`) and their answers on ``records`` (per-attempt case records)."""
    declared = "\n".join(f"- *{k}*: {v}" for k, v in DECLARED.items())
    answers = findings_markdown(pilot_findings(records, train_sets))
    return (
        f"**The paper's three findings, as declared before the multi-seed runs** (unit: "
        f"the held-out case, averaged over seeds; sign-flip test, Holm over those tested):"
        f"\n\n{declared}\n\n**Answers on this run:**\n\n{answers}"
    )


def run_findings(ours: Mapping[str, Sequence[CaseResult]], P: Mapping) -> str:
    """:func:`findings_section` of this run's attempts."""
    return findings_section([case_record(r) for rs in ours.values() for r in rs], P["train_sets"])


def full_profile_outputs(profile: str) -> tuple[str, object, pd.DataFrame | None]:
    """``(markdown, figure, rates)``. In the cpu chapter: the largest committed evidence run's
    (:func:`evidence_profile`) generated conclusion (or the command that runs it), its loss
    curves and its rates (``None`` while it has not been run); in any other profile, a note
    that the conclusion at the end is this run's own, and no figure or table."""
    if profile != "cpu":
        return f"*This is the {profile} run; the conclusion below is its own.*", None, None
    evidence = evidence_profile()
    record = profile_record(evidence)
    if record is None:
        return profile_summary(evidence), None, None
    summary = (
        f"*Profile {evidence}, model {record['model']}, run {record['created'][:10]}; "
        f"regenerate with* `{REGENERATE[evidence]}`. *Its conclusion, regenerated from "
        f"its committed results and per-case records under this chapter's current "
        f"rules:*\n\n{regenerated_conclusion(evidence)}\n\n"
        + findings_section(
            read_cases(_cases_file(evidence)), record["params"].get("train_sets", ["py"])
        )
    )
    ax = plot_losses(
        {f"{r['train_set']}, seed {r['seed']}": r["losses"] for r in record["numbers"]["training"]},
        title=f"{record['model']}, profile {evidence}",
        ylabel="training loss",
    )
    plt.close(ax.figure)
    return summary, ax.figure, pd.DataFrame(record["numbers"]["rates"]).T
