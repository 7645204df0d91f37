"""Chapter 7's displayed objects, so that the notebook only calls: the setting line, the split,
the transcript statistics and a loss-marked example, the recipe's differences from the paper,
the training runs and loss curves, the paired tests, the tests and wall-time tables, the strata
and two example attempts; Tables 6, 7 and 22 are :mod:`.show_tables`'. No sentences: what
depends on the outcome is said by :mod:`cadlib.chapters.sft_pilot.text`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import pandas as pd

from cadlib.corpora import split_cases
from cadlib.decoding.fsm import KINDS, token_table
from cadlib.execution import sandbox_summary
from cadlib.metrics import ALPHA, format_p
from cadlib.record.results import setting_label

from .profiles import DEVIATIONS, PROFILES, TRAIN_SET_LABELS
from .run import case_record, evidence_profile, held_out_docs, profile_record, strata_frame
from .run_examples import IGNORE, Example, target_program, training_cases
from .run_paired import BINARY_METRICS
from .run_pilot import CRP, FSM_UNTRAINED, Pilot
from .run_scoring import CaseResult, summarize

__all__ = [
    "comparison_table",
    "crp_vs_fsm_example",
    "example_attempt",
    "full_profile_figures",
    "plot_losses",
    "recipe_differences",
    "render_loss",
    "run_strata_table",
    "setting_markdown",
    "split_overview",
    "strata_table",
    "tests_table",
    "training_table",
    "transcript_stats",
    "transcript_table",
    "wall_table",
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


def transcript_stats(examples: Sequence[Example]) -> pd.DataFrame:
    """Ids per example by role (``prompt`` and the transcript kinds of :mod:`cadlib.decoding.fsm`:
    ``forced``, ``splice``, ``choice``, ``gen``) and how many carry loss."""
    rows = []
    for ex in examples:
        row = {"id": ex.id, "prompt": ex.n_prompt}
        row.update({kind: ex.kinds.count(kind) for kind in KINDS})
        row["loss"] = ex.n_loss
        rows.append(row)
    return pd.DataFrame(rows).set_index("id")


def render_loss(example: Example, tokenizer, mark: tuple[str, str] = ("⟦", "⟧")) -> str:
    """The target part of an example as text, each run of loss-carrying ids wrapped in
    ``mark`` (everything outside the marks is prompt-free transcript with label -100)."""
    tb = token_table(tokenizer).token_bytes
    out, inside = [], False
    for i, label in zip(
        example.input_ids[example.n_prompt :], example.labels[example.n_prompt :], strict=True
    ):
        on = label != IGNORE
        if on != inside:
            out.append(mark[0] if on else mark[1])
            inside = on
        out.append(tb[i].decode("utf-8", errors="replace"))
    return "".join(out) + (mark[1] if inside else "")


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


def comparison_table(comparisons: Sequence[dict]) -> pd.DataFrame:
    """The paired tests as a table: each side's value, the discordant pairs (or the bootstrap
    interval of the difference), p, Holm-adjusted p and the verdict at :data:`ALPHA`."""
    rows = []
    for c in comparisons:
        name = BINARY_METRICS.get(c["metric"], "mean span IoU")
        if c["test"] == "McNemar exact":
            values = f"{c['a']}/{c['n']} vs {c['b']}/{c['n']}"
            detail = f"{c['a_only']} only A, {c['b_only']} only B"
        else:
            values = f"{c['a']:.2f} vs {c['b']:.2f}"
            detail = f"diff {c['diff']:+.2f} [{c['ci'][0]:+.2f}, {c['ci'][1]:+.2f}]"
        rows.append(
            {
                "A": c["system_a"],
                "B": c["system_b"],
                "metric": name,
                "A vs B": values,
                "discordant / 95% CI": detail,
                "test": c["test"],
                "p": format_p(c["p"], c["test"]),
                "p (Holm)": format_p(c["p_holm"], c["test"]),
                f"significant at {ALPHA}": "yes" if c["significant"] else "no",
            }
        )
    return pd.DataFrame(rows)


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


def strata_table(records: Sequence[Mapping], docs: Mapping[str, str]) -> pd.DataFrame:
    """Per program system and stratum: cases, span-only EM, identity outputs, span-only EM
    without them (of the non-identity attempts), mean span IoU, and runs the budget closed."""
    frame = strata_frame(records, docs)
    out = []
    for (system, part), g in frame.groupby(["system", "stratum"], sort=False):
        kept = g[~g.identity.astype(bool)]
        out.append(
            {
                "system": system,
                "stratum": part,
                "cases": len(g),
                "span-only EM": f"{int(g.span_em.sum())}/{len(g)}",
                "identity outputs": int(g.identity.sum()),
                "span-only EM, non-identity": f"{int(kept.span_em.sum())}/{len(kept)}",
                "mean span IoU": round(float(g.span_iou.astype(float).mean()), 3),
                "budget closed": int(g.budget_closed.fillna(False).astype(bool).sum()),
            }
        )
    return pd.DataFrame(out)


def run_strata_table(ours: Mapping[str, Sequence[CaseResult]]) -> pd.DataFrame:
    """:func:`strata_table` of this run's attempts on the held-out documents."""
    return strata_table([case_record(r) for rs in ours.values() for r in rs], held_out_docs())


def full_profile_figures(profile: str) -> tuple[object, pd.DataFrame | None]:
    """``(figure, rates)``. In the cpu chapter: the largest committed evidence run's
    (:func:`cadlib.chapters.sft_pilot.run.evidence_profile`) loss curves and rates (``None``
    while it has not been run); in any other profile, ``(None, None)``. Its conclusion is
    :func:`cadlib.chapters.sft_pilot.text.full_profile_summary`."""
    if profile != "cpu":
        return None, None
    evidence = evidence_profile()
    record = profile_record(evidence)
    if record is None:
        return None, None
    ax = plot_losses(
        {f"{r['train_set']}, seed {r['seed']}": r["losses"] for r in record["numbers"]["training"]},
        title=f"{record['model']}, profile {evidence}",
        ylabel="training loss",
    )
    plt.close(ax.figure)
    return ax.figure, pd.DataFrame(record["numbers"]["rates"]).T
