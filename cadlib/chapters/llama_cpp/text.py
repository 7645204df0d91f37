"""Chapter 6b's generated prose: the run's summary and its goal and moonshot verdicts, the
Answer, and the draft-cap run's verdict (the numbers: :mod:`.run`)."""

from __future__ import annotations

import pandas as pd

from cadlib.costs.draft_policy import case_ratios
from cadlib.decoding.methods import COPY_AS_DECODE
from cadlib.record.provenance import load_caption
from cadlib.record.results import machine_label

from .run import is_llama

__all__ = ["answer", "policy_markdown", "run_summary"]


def _where_time_goes(spent: dict | None, engine: str) -> list[str]:
    if not spent:
        return []
    total = sum(spent.values())
    top = sorted(spent.items(), key=lambda kv: -kv[1])[:4]
    parts = ", ".join(f"{k} {v:.2f} s ({v / total:.0%})" for k, v in top)
    return [
        f"Where Copy-as-Decode's time goes on {engine} (all cases, with the prompt "
        f"prefill): {parts}."
    ]


def run_summary(numbers: dict, where: str, goal_tps: float = 1000.0) -> str:
    """The conclusion's figures as Markdown: ProbeEdit edit latency and tokens/s per engine and
    method, the goal (Copy-as-Decode on llama.cpp fastest of all) and the moonshot."""
    m = numbers["methods"]
    pe = {(e, meth): v for e in m for meth, v in m[e].get("probeedit", {}).items()}
    ours = min(
        (k for k in pe if is_llama(k[0]) and k[1] in COPY_AS_DECODE),
        key=lambda k: pe[k]["decode_s"],
    )  # the fastest decoder as built, on any GGUF
    cad = pe[ours]
    rivals = {k: v for k, v in pe.items() if not is_llama(k[0]) or k[1] not in COPY_AS_DECODE}
    best_k = min(rivals, key=lambda k: rivals[k]["decode_s"])
    lines = [f"On ProbeEdit ({cad['cases']} cases, {cad['T']} output tokens; {where}):", ""]
    for (e, meth), v in sorted(pe.items()):
        lines.append(
            f"- {meth} on {e}: {v['decode_s']:.3f} s edit latency after the prompt "
            f"({v['wall_s']:.3f} s with it), {v['tokens_per_s']:.0f} output "
            "tokens/s"
        )
    beats = cad["decode_s"] < rivals[best_k]["decode_s"]
    ratio = rivals[best_k]["decode_s"] / cad["decode_s"]
    tps, agree = cad["tokens_per_s"], numbers["agreement"]
    lines += [
        "",
        "Goal (Copy-as-Decode on llama.cpp faster than every other method and engine): "
        f"**{'met' if beats else 'missed'}** by {ours[1]} on {ours[0]}; the fastest rival is "
        f"{best_k[1]} on {best_k[0]}, {ratio:.2f}x its latency.",
        f"Moonshot ({goal_tps:.0f} output tokens/s): "
        f"**{'met' if tps >= goal_tps else 'missed'}** at {tps:.0f} tokens/s "
        f"({tps / goal_tps:.0%} of it).",
        *_where_time_goes(numbers.get("seconds_by_kind", {}).get(ours[0]), ours[0]),
        *(
            f"Greedy decisions of {name} agree with transformers at {a['rate']:.1%} of "
            f"{a['n']} positions (95% CI {a['ci95'][0]:.1%}–{a['ci95'][1]:.1%})."
            for name, a in agree.items()
        ),
    ]
    return "\n".join(lines)


def answer(numbers: dict, where: str) -> str:
    """The chapter's question answered with its own numbers (the opening's **Answer.**): on
    ProbeEdit, the fastest Copy-as-Decode on a llama.cpp engine against autoregressive decoding
    on the same engine (does the splice pay there?) and against the fastest other method and
    engine, and how often llama.cpp's greedy decisions agree with transformers'."""
    m = numbers["methods"]
    pe = {(e, meth): v for e in m for meth, v in m[e].get("probeedit", {}).items()}
    ours = min(
        (k for k in pe if is_llama(k[0]) and k[1] in COPY_AS_DECODE),
        key=lambda k: pe[k]["decode_s"],
    )
    cad, ar = pe[ours], pe.get((ours[0], "autoregressive"))
    rivals = {k: v for k, v in pe.items() if not is_llama(k[0]) or k[1] not in COPY_AS_DECODE}
    best = min(rivals, key=lambda k: rivals[k]["decode_s"])
    pays = ar is None or cad["decode_s"] < ar["decode_s"]
    vs_ar = (
        ""
        if ar is None
        else f", {ar['decode_s'] / cad['decode_s']:.1f}× faster than "
        f"autoregressive decoding on the same engine ({ar['decode_s']:.2f} s)"
    )
    fastest = (
        "the fastest of every method and engine"
        if cad["decode_s"] < rivals[best]["decode_s"]
        else f"but not the fastest of all: {best[1]} on "
        f"{best[0]} takes {rivals[best]['decode_s']:.2f} s"
    )
    agree = "; ".join(
        f"{name} {a['rate']:.1%} of {a['n']}" for name, a in numbers["agreement"].items()
    )
    cases = f"{cad['cases']} case{'s' if cad['cases'] != 1 else ''}"
    return (
        f"{'Yes' if pays else 'No'}, on ProbeEdit ({cases}, {cad['T']} output tokens; "
        f"{where}): {ours[1]} on {ours[0]} edits in {cad['decode_s']:.2f} s after the prompt "
        f"({cad['tokens_per_s']:.0f} output tokens/s){vs_ar}, {fastest}. The same decoder, "
        "FSM and resolver run unchanged on llama.cpp, whose greedy decisions agree with "
        f"transformers' at {agree} positions."
    )


def policy_markdown(report: dict) -> str:
    """The chosen caps and the held-out verdicts, pooled per corpus and per case, with the
    setting that measured them, generated from the committed run."""
    chosen, p = report["chosen"], report["protocol"]
    caps = "; ".join(
        f"{e}: {'no cap' if c is None else f'at most {c} ids'}" for e, c in chosen.items()
    )
    v = pd.DataFrame(report["verdicts"])
    failed = v[~v.never_slower]
    verdict = (
        "On every checked corpus and engine the drafted decoder at its engine's cap "
        "took no more pooled decode time than the plain one"
        if failed.empty
        else "**The drafted decoder was slower than the plain one** on "
        + ", ".join(
            f"{r.corpus} ({r.engine}, {r.policy_over_plain:.2f}×)" for r in failed.itertuples()
        )
    )
    cases = case_ratios(report)
    slower = cases[cases.policy_over_plain > 1]
    per_case = (
        f"Case by case it was slower in {len(slower)} of {len(cases)} (engine, case) "
        "pairs"
        + (
            ""
            if slower.empty
            else ": "
            + ", ".join(
                f"{r.case} on {r.engine}, {r.policy_over_plain:.2f}×" for r in slower.itertuples()
            )
        )
        + "."
    )
    worst = v.policy_over_plain.max()
    return (
        f"Draft caps chosen on the development corpora: {caps}. {verdict} (pooled time "
        f"over the plain one's: at most {worst:.2f}× over {len(v)} engine × corpus cells, "
        f"{report['repeats']} repeats). {per_case} No paper figure: the paper has no "
        f"CPU-engine setting. {load_caption(report)} Setting: {p['model']}, "
        f"{p['threads']} threads per engine; {machine_label(report['hardware'])}."
    )
