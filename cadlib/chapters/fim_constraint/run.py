"""Chapter 8's measurement: the session, the models, the validity counts and ``numbers``.

The companion paper (Melcer et al., "Constrained Decoding for Fill-in-the-Middle Code Language
Models via Efficient Left and Right Quotienting of Context-Sensitive Grammars") evaluates its
recognizer on FIM completion of Python 3 with syntax constraints. Our copy of the paper stops in
§VI-A, before its evaluation, so the chapter's protocol is designed from its issue, not copied
from the paper. Two experiments:

Experiment 1: constrained ``<gen>`` bodies in localized edits
    :mod:`.run_edits` (:class:`~.run_edits.GenBodyMask` on each body, so the resolved output
    always parses).
Experiment 2: FIM completion, the companion paper's setting
    :mod:`cadlib.fim.completion`.

Both count every outcome (:data:`cadlib.fim.completion.ENDS`): a middle ends when the model
emits its end (``</gen>`` or EOS / a closing code fence), which under the constraint is allowed
only when ``can_end()``; a budget (``max_new_tokens``) that runs out first is reported as such,
closable or not. Every rate has its ``n`` and a 95% Wilson interval
(:func:`cadlib.metrics.wilson_ci`). The chapter's **primary metric** is :data:`PRIMARY`, "the
model ended it and it parses" (a finished, valid output); "parses" counts budget-closed outputs
too and is reported beside it, with the budget-closed attempts counted apart (issue 34).

This module holds the session (:func:`prepare`, :func:`load_models`, :func:`setting`), the
validity counts (:func:`validity_table`), the differential's table (:func:`differential_by_cut`)
and the chapter's one results dict, :func:`numbers`, written with its per-case records by
:func:`write_chapter` (through :meth:`cadlib.record.session.Chapter.write_cases`:
``fim.cases.jsonl``). The costs per token are :mod:`.run_costs`', the committed evidence runs
read back (the large run's paired tests, the standard-library and mask-speed runs)
:mod:`.run_evidence`'. ``params`` below
is the chapter's parameter dict (a :data:`.profiles.PROFILES` entry after the notebook's
overrides).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from cadlib.fim.completion import ARMS, CLOSED_BY_CONSTRAINT, ENDS, FIM_USER
from cadlib.fim.differential import summarize
from cadlib.metrics import wilson_ci
from cadlib.models import (
    SMOLLM2,
    load_model,
    load_tokenizer,
    model_info,
    resolve_device,
    set_threads,
)
from cadlib.paths import repo_root
from cadlib.record import style
from cadlib.record.replay import replaying
from cadlib.record.results import hardware_info, load_committed, setting_label
from cadlib.record.session import Chapter

from .run_costs import edit_cost_table, generation_cost, per_step_table, stage_table

__all__ = [
    "PRIMARY",
    "prepare",
    "load_models",
    "load_checkpoint",
    "chapter_systems",
    "system_labels",
    "run_label",
    "setting",
    "validity_table",
    "differential_by_cut",
    "clean",
    "records",
    "case_records",
    "numbers",
    "write_chapter",
]


#: The primary outcome: the model ended the body or middle itself and the result parses.
PRIMARY = "ended_and_parses"


def prepare(threads: int | None, device: str = "auto") -> str:
    """The chapter's session: torch CPU threads (:func:`cadlib.models.set_threads`), the book's
    plot style (:func:`cadlib.record.style.setup`) and pandas' display (3 decimals, columns of 90
    characters); returns the name of the resolved ``device``."""
    set_threads(threads)
    dev = str(resolve_device(device))
    style.setup()
    pd.set_option("display.precision", 3)
    pd.set_option("display.max_colwidth", 90)
    return dev


def load_models(params: dict, device: str) -> tuple:
    """``(tokenizer, model, sft, sft_note)``: the profile's model with its own tokenizer, and
    its chapter-7 fine-tune (:func:`load_checkpoint`: ``None`` and why when not here)."""
    tokenizer = load_tokenizer(params["model"])
    model = load_model(params["model"], device=device)
    return (tokenizer, model, *load_checkpoint(params["checkpoint"], device=device))


def load_checkpoint(checkpoint: str | None, device: str = "auto"):
    """``(model, note)``: the SFT checkpoint folder (relative to the repository root), or
    ``(None, why)`` when none is configured or it is not on this machine."""
    if not checkpoint:
        return None, "no checkpoint configured"
    path = Path(checkpoint)
    path = path if path.is_absolute() else repo_root() / path
    if not (path / "config.json").exists():
        return None, f"not available: {checkpoint} does not exist (train it in chapter 7)"
    return load_model(str(path), device=device), f"{checkpoint} (chapter 7)"


def chapter_systems(model_name: str, model, sft, sft_note: str) -> dict:
    """``{label: model}`` of the systems run (:func:`system_labels`): the untrained model and,
    when its checkpoint is here, the fine-tune (else this prints that it is not run)."""
    untrained, tuned = system_labels(model_name)
    if sft is None:
        print(f"SFT checkpoint {sft_note}: only the untrained model is run")
        return {untrained: model}
    return {untrained: model, tuned: sft}


def system_labels(model: str) -> tuple[str, str]:
    """Row labels of the untrained model and of its chapter-7 fine-tune, named after the model
    (``"SmolLM2 untrained"``, ``"SmolLM2 + SFT (ch. 7)"`` on the cpu profile; the hub name's
    last part on the paper profile), so no table of another profile is mislabelled."""
    short = "SmolLM2" if model == SMOLLM2 else model.rstrip("/").split("/")[-1]
    return f"{short} untrained", f"{short} + SFT (ch. 7)"


def run_label(params: dict, info: dict, hw: dict, n_ids: int, seed: int) -> str:
    """The chapter's :func:`cadlib.record.results.setting_label`: model with size, dtype,
    attention and device, tokenizer size, seed, profile (``params["profile"]``), then the
    machine with the torch threads (``params["threads"]``, else ``hw``'s); ``info``:
    :func:`cadlib.models.model_info`, ``hw``: :func:`cadlib.record.results.hardware_info`."""
    return setting_label(
        f"model {params['model']} ({info['parameters'] / 1e6:.0f}M, {info['dtype']}, "
        f"{info['attn_implementation']}, {info['device']})",
        f"its own tokenizer ({n_ids:,} ids)",
        f"seed {seed}",
        profile=params["profile"],
        hw=hw,
        threads=params.get("threads") or hw.get("threads"),
    )


def setting(model, tokenizer, device: str, params: dict, seed: int) -> tuple:
    """``(model_info, hardware_info, label)`` of the loaded model on ``device``
    (:func:`run_label` at ``params["profile"]``). Under replay the machine is the recorded
    run's (its committed results file), the one that timed what the replayed tables show."""
    record = load_committed("fim", params["profile"]) if replaying() else None
    info, hw = model_info(model), record["hardware"] if record else hardware_info(device)
    return info, hw, run_label(params, info, hw, len(tokenizer), seed)


def validity_table(frame, by: list[str]):
    """Counts and rates per group: ``n``, ``parses``, ``em``, ``passed``,
    ``ended_and_parses`` (:data:`PRIMARY`: the model ended it and it parses), ``budget_closed``
    (attempts the token budget closed, whether or not they parse) and each end of :data:`ENDS`
    (counts), and, only where the opt-in budget close ran, :data:`CLOSED_BY_CONSTRAINT` apart
    (neither ended by the model nor budget-closed), with the rates ``parse_rate``,
    ``em_rate``, ``pass_rate``, ``ended_rate`` (of :data:`PRIMARY`) and their 95% Wilson
    intervals ``*_ci95`` (``[lo, hi]``)."""
    frame = frame.assign(
        ended_and_parses=(frame.end == ENDS[0]) & frame.parses.astype(bool),
        budget_closed=frame.end.isin(ENDS[2:]),
    )
    g = frame.groupby(by, sort=False)
    out = g.agg(
        n=("parses", "size"),
        parses=("parses", "sum"),
        em=("em", "sum"),
        passed=("passed", lambda s: int(s.fillna(False).astype(bool).sum())),
        ended_and_parses=("ended_and_parses", "sum"),
        budget_closed=("budget_closed", "sum"),
    )
    closed = [CLOSED_BY_CONSTRAINT] if (frame.end == CLOSED_BY_CONSTRAINT).any() else []
    ends = pd.crosstab([frame[k] for k in by], frame["end"]).reindex(
        columns=[*ENDS, *closed], fill_value=0
    )
    out = out.join(ends).fillna(0)
    for k in ("parses", "em", "passed", "ended_and_parses", "budget_closed", *ENDS, *closed):
        out[k] = out[k].astype(int)
    for k, name in (
        ("parses", "parse"),
        ("em", "em"),
        ("passed", "pass"),
        ("ended_and_parses", "ended"),
    ):
        out[f"{name}_rate"] = out[k] / out["n"]
        out[f"{name}_ci95"] = [list(wilson_ci(a, n)) for a, n in zip(out[k], out["n"], strict=True)]
    return out.reset_index()


def differential_by_cut(diff: pd.DataFrame) -> pd.DataFrame:
    """Checks of a :func:`cadlib.fim.differential_check` frame per cut kind: true middles by
    left and by right cut; edits, edits that parse and agreeing verdicts by right cut."""
    true_mid, edits = diff[diff.check == "true_middle"], diff[diff.check == "edit"]
    return (
        pd.concat(
            {
                "left cut": true_mid.groupby("left_cut").size(),
                "right cut": true_mid.groupby("right_cut").size(),
                "edits": edits.groupby("right_cut").size(),
                "edits parsing": edits.groupby("right_cut").truth.sum(),
                "agreeing": edits.groupby("right_cut").agree.sum(),
            },
            axis=1,
        )
        .fillna(0)
        .astype(int)
    )


def clean(value):
    """Strict JSON: NaN -> ``None``, floats rounded to 6 digits, numpy scalars unwrapped."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else round(float(value), 6)
    return value.item() if isinstance(value, np.generic) else value


def records(table: pd.DataFrame, keys: list[str]) -> dict:
    """``{"k1 / k2": {column: value}}`` of a table (strict JSON via :func:`clean`)."""
    return {
        " / ".join(str(r[k]) for k in keys): {
            c: clean(r[c]) for c in table.columns if c not in keys
        }
        for r in table.to_dict(orient="records")
    }


def _closed_by(end: str) -> str:
    return {ENDS[0]: "model", ENDS[1]: "trim"}.get(end, "budget")


def case_records(edit_rows: pd.DataFrame, fim_rows: pd.DataFrame) -> list[dict]:
    """One compact record per generated output (issue "per-case outputs"): ``part``
    (``"edit"`` or ``"fim"``), ``system, arm, id, cut, output, parses, em, passed, end,
    closed_by`` (model / trim / budget) and ``forwards`` (generated tokens)."""
    out = []
    for r in edit_rows.itertuples():
        out.append(
            dict(
                part="edit",
                system=r.system,
                arm=r.arm,
                id=r.case,
                cut=None,
                output=r.output,
                parses=bool(r.parses),
                em=bool(r.em),
                passed=None if r.passed is None else bool(r.passed),
                end=r.end,
                closed_by=_closed_by(r.end),
                forwards=int(r.body_tokens),
            )
        )
    for r in fim_rows.itertuples():
        out.append(
            dict(
                part="fim",
                system=r.system,
                arm=r.arm,
                id=r.problem,
                cut=r.cut,
                output=r.middle,
                parses=bool(r.parses),
                em=bool(r.em),
                passed=None if r.passed is None else bool(r.passed),
                end=r.end,
                closed_by=_closed_by(r.end),
                forwards=int(r.new_tokens),
            )
        )
    return out


def numbers(
    params: dict,
    seed: int,
    corpus: str,
    checkpoint: str,
    info: dict,
    diff: pd.DataFrame,
    stdlib: dict,
    edit_rows: pd.DataFrame,
    fim_rows: pd.DataFrame,
    steps: pd.DataFrame,
    stages: pd.DataFrame,
) -> dict:
    """The chapter's results dict (strict JSON), the one its results file holds, from its
    frames: setting (``checkpoint``: what :func:`load_checkpoint` said), design, the
    differential checks (``diff``: :func:`cadlib.fim.differential_check`; ``stdlib``:
    :func:`cadlib.fim.stdlib.stdlib_summary`), validity (``edit_rows``:
    :func:`.run_edits.localized_edits`; ``fim_rows``: :func:`cadlib.fim.completion.fim_completion`)
    and costs (``steps``: :func:`cadlib.fim.per_step_cost`; ``stages``:
    :func:`cadlib.fim.step_cost.mask_stages`; :mod:`.run_costs`)."""
    return {
        "setting": {
            "model": params["model"],
            "checkpoint": checkpoint,
            "model_info": info,
            "threads": params["threads"],
            "corpus": corpus,
            "seed": seed,
        },
        "design": {
            "edit": "held-out single-<gen> HEvalFix-Py cases, oracle copy spans, "
            "model-written bodies (localized-edit mode), GenBodyMask on "
            "prompt + left / right",
            "fim_cuts": f"line (1-{params['fim_max_lines']} lines) and char "
            f"(1-{params['fim_max_chars']} chars) cuts inside the canonical "
            f"solution",
            "fim_prompt": FIM_USER[params["fim_style"]],
            "fim_style": params["fim_style"],
            "ends": list(ENDS),
            "arms": list(ARMS),
        },
        "differential": clean(
            {**summarize(diff), "by_right_cut": differential_by_cut(diff).to_dict(orient="index")}
        ),
        "stdlib_differential": clean(stdlib),
        "localized_edit": records(validity_table(edit_rows, ["system", "arm"]), ["system", "arm"]),
        "localized_edit_cost_ms": records(
            edit_cost_table(edit_rows).reset_index(), ["system", "arm"]
        ),
        "fim": records(validity_table(fim_rows, ["arm"]), ["arm"]),
        "fim_by_cut": records(validity_table(fim_rows, ["cut", "arm"]), ["cut", "arm"]),
        "per_step_cost_us": records(per_step_table(steps), ["method", "length"]),
        "generation_cost_ms": records(generation_cost(edit_rows, fim_rows), ["method", "length"]),
        "mask_stages_ms": records(stage_table(stages).reset_index(), ["stage"]),
    }


def write_chapter(
    ch: Chapter, numbers: dict, edit_rows: pd.DataFrame, fim_rows: pd.DataFrame, device: str
) -> tuple:
    """Write the chapter's results (:meth:`cadlib.record.session.Chapter.write`, the seed among
    the params; no paper figures: our copy of the companion paper stops in §VI-A, before its
    evaluation) and its per-case records (:meth:`~cadlib.record.session.Chapter.write_cases`);
    returns both paths."""
    path = ch.write(
        numbers,
        {},
        model=ch.P["model"],
        tokenizer=ch.P["model"],
        device=device,
        extra_params={"seed": ch.seed},
    )
    return path, ch.write_cases(case_records(edit_rows, fim_rows))
