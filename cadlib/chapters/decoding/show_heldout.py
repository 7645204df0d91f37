"""What chapter 6 shows of its held-out speed run (:mod:`.run_heldout`): the headline dot plot
and the per-group table, read from the parts' reports (``results/decoding.heldout.<engine>.json``,
combined by :func:`.run_heldout_stats.combine`), and the cost model's error on test corpora
beside its error on development corpora. The per-group and goal tables are the costs wing's
(:mod:`cadlib.costs.heldout_report`), which chapter 6b reads its llama.cpp part with too."""

from __future__ import annotations

import pandas as pd

from cadlib.corpora import CORPUS_LABELS
from cadlib.costs import cost_model as CM
from cadlib.costs.heldout_report import goal_table, group_frame, heldout_table
from cadlib.decoding.method_names import DRAFTED, DRAFTED_SETTING, TIMED
from cadlib.record import style

from .run_heldout_stats import development_groups

__all__ = [
    "group_frame",
    "development_frame",
    "heldout_table",
    "plot_heldout",
    "cost_model_errors",
    "goal_table",
    "every_case_table",
]

#: The methods marked in the plot (autoregressive decoding is the reference line at 1).
MARKED = tuple(m for m in TIMED if m != "autoregressive")
_MARKERS = {"prompt lookup": "s", "Copy-as-Decode": "o", "Copy-as-Decode +drafts": "D"}


def development_frame(rows: pd.DataFrame | None) -> pd.DataFrame | None:
    """:func:`group_frame` of development timed rows (chapter 6's own sample,
    :func:`.run_heldout_stats.development_groups`), for the headline's development side."""
    if rows is None:
        return None
    return group_frame({"groups": development_groups(rows).to_dict("records")})


def cost_model_errors(development: pd.DataFrame, report: dict | None) -> pd.DataFrame:
    """The cost model's error against the clock (:func:`cost_model.validation_summary`) on the
    development corpora (``development``: chapter 6's validation rows) and, when the
    ``transformers`` part is recorded, on the test corpora (its report), one block each."""
    frames = [CM.validation_summary(development).assign(corpora="development")]
    if report is not None and "cost_model" in report:
        test = pd.DataFrame(report["cost_model"]["validation_summary"])
        frames.append(test.assign(corpora="test"))
    return pd.concat(frames, ignore_index=True).set_index(["corpora", "method"]).round(1)


def every_case_table(report: dict | None) -> pd.DataFrame | None:
    """Every case of every test corpus priced on the ``transformers`` part's grid (its
    ``every_case``; ``None`` when that part is not recorded): per corpus, the cases, each
    method's median-case predicted speedup over autoregressive decoding [95 % interval] in
    *decode* seconds (the prefill is not priced, so these run above the wall-clock headline),
    and on how many cases each Copy-as-Decode variant is predicted slower than autoregressive
    decoding. The pooled row is left out: a pooled figure does not stand alone here."""
    if report is None or "every_case" not in report:
        return None
    every = report["every_case"]
    predicted = pd.DataFrame(every["predicted"])
    predicted = predicted[predicted.corpus != "pooled"]
    predicted = predicted.assign(
        name=[_priced(m, s) for m, s in zip(predicted.method, predicted.setting, strict=True)],
        cell=[
            f"{s:.2f}× [{lo:.2f}, {hi:.2f}]"
            for s, lo, hi in zip(predicted.median_speedup, predicted.lo, predicted.hi, strict=True)
        ],
    )
    speed = predicted.pivot(index="corpus", columns="name", values="cell")
    slower = pd.DataFrame(every["slower"])
    slower = slower.assign(name=[f"{_priced('Copy-as-Decode', s)} slower" for s in slower.setting])
    counts = slower.pivot(index="corpus", columns="name", values="slower_than_ar")
    corpora = list(dict.fromkeys(predicted.corpus))
    columns = [*_PRICED, *(f"{m} slower" for m in _PRICED[1:])]
    table = pd.concat([speed, counts], axis=1)[columns].reindex(corpora)
    table.insert(0, "cases", [every["cases"][c] for c in corpora])
    table.index = [CORPUS_LABELS.get(c, c) for c in corpora]
    return table.rename_axis(index="corpus (predicted, decode s)", columns=None)


#: The priced methods in the order shown: the rival, then the two Copy-as-Decode variants.
_PRICED = ("prompt lookup", "Copy-as-Decode", DRAFTED)


def _priced(method: str, setting: str) -> str:
    """A priced row's method as shown: plain Copy-as-Decode is its ``m=0`` setting."""
    if method != "Copy-as-Decode":
        return method
    return {"m=0": "Copy-as-Decode", DRAFTED_SETTING: DRAFTED}[setting]


def plot_heldout(report: dict, development: pd.DataFrame | None = None):
    """The headline: one panel per engine, groups on the vertical axis (test corpora, the
    HumanEvalFix test family and all test cases; ``development`` groups, same columns, above a
    rule and labelled as such), median-case speedup over autoregressive decoding on a log axis,
    one mark per method with its bootstrap interval. Returns the figure."""
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib

    test = group_frame(report).assign(part="test")
    frames = [test] if development is None else [development.assign(part="development"), test]
    data = pd.concat(frames, ignore_index=True)
    engines = list(dict.fromkeys(test.engine))
    order = list(dict.fromkeys(zip(data.part, data.label, strict=True)))
    fig, axes = plt.subplots(
        1, len(engines), figsize=(4.6 * len(engines), 0.42 * len(order) + 1.4), sharey=True
    )
    axes = [axes] if len(engines) == 1 else list(axes)
    for ax, engine in zip(axes, engines, strict=True):
        _panel(ax, data[data.engine == engine], order)
        ax.set_title(engine, fontsize=10)
    axes[0].set_yticks(range(len(order)), [_tick(p, g) for p, g in order])
    axes[0].invert_yaxis()
    handles, names = axes[0].get_legend_handles_labels()
    for ax in axes:
        ax.set_xlabel("speedup over autoregressive, median case", fontsize=9)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8, frameon=False)
    return fig


def _tick(part: str, label: str) -> str:
    """A group's axis label; development groups say so unless their label already does."""
    if part == "development" and "development" not in label:
        return f"{label} (development)"
    return label


def _panel(ax, data: pd.DataFrame, order: list) -> None:
    """Marks with intervals for each method, offset a little per method; a line at 1."""
    style.setup()
    row = {key: i for i, key in enumerate(order)}
    for k, method in enumerate(MARKED):
        m = data[data.method == method]
        ys = [row[(p, g)] + (k - 1) * 0.22 for p, g in zip(m.part, m.label, strict=True)]
        ax.errorbar(
            m.speedup,
            ys,
            xerr=[m.speedup - m.lo, m.hi - m.speedup],
            fmt=_MARKERS[method],
            color=style.PALETTE[method],
            label=method,
            markersize=5,
            capsize=2,
            lw=1,
        )
    from matplotlib.ticker import FuncFormatter

    ax.axvline(1, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    split = sum(1 for p, _ in order if p == "development")
    if split:
        ax.axhline(split - 0.5, color="0.4", lw=0.8, ls="--")
