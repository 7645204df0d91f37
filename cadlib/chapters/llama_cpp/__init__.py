"""Chapter 6b: Copy-as-Decode on llama.cpp beside ``transformers`` (issue 18).

The same GGUF model (SmolLM2-135M-Instruct) on two engines (:mod:`cadlib.decoding.engines`),
llama.cpp with the file as shipped (Q4_1) and converted to F16 weights (:func:`load_engines`), the
same cases, the same gold outputs. Per engine:

* the kernel curve ``s(N) = T_AR(N) / T_PP(N)`` (:func:`kernel_curves`: chapter 2's timer,
  :mod:`cadlib.costs.kernel_timing`, which runs on any engine);
* three methods along each case's gold (as chapter 6, :mod:`cadlib.chapters.decoding.measure`,
  with the same code: :mod:`cadlib.decoding.methods` runs on any engine), timed interleaved by
  :func:`cadlib.costs.method_timing.time_methods`: autoregressive, prompt lookup with each
  engine's own n-gram drafter (on llama.cpp the binding's ``LlamaPromptLookupDecoding``,
  :meth:`cadlib.decoding.engines.Engine.lookup_drafter`) at the best of a small grid of
  settings (:func:`cadlib.costs.method_timing.best_lookup_setting`), and forced-oracle
  Copy-as-Decode (:class:`cadlib.decoding.decoder.CopyDecoder` on the engine);
* edit latency (seconds after the prompt prefill, and with it) and output tokens per second
  (:func:`speed_table`, :func:`seconds_by_kind`).

How often each llama.cpp engine's greedy next-id decisions agree with fp32 ``transformers``
along the gold is :func:`cadlib.decoding.engine_agreement.greedy_agreements`. This module holds
the chapter's profiles, engines, sample, tables, numbers and generated prose.
"""

from __future__ import annotations

import pandas as pd

from cadlib.corpora import load_corpus
from cadlib.costs.kernel_timing import engine_curve
from cadlib.decoding.engines import Engine, load_engine
from cadlib.decoding.methods import COPY_AS_DECODE, timed_sample
from cadlib.metrics import wilson_ci
from cadlib.models import QWEN2_SMOKE, SMOLLM2

__all__ = [
    "PROFILES",
    "answer",
    "MODEL_LABELS",
    "kernel_curves",
    "sample_inputs",
    "speed_table",
    "seconds_by_kind",
    "load_engines",
    "is_llama",
    "llama_numbers",
    "run_summary",
]

#: ``cases``: cases per corpus and ``max_ids``: the cap on a case's gold ids per corpus
#: (:func:`sample_inputs`, chapter 6's rule and caps); ``repeats``: timed repeats per (case, method,
#: engine), interleaved; ``pld_grid``: (num_pred_tokens, max_ngram_size) settings tried for
#: prompt lookup on llama.cpp (the best pooled one is used on both engines; the cpu profile
#: keeps (20, 3), the best of (10, 2) and (20, 3) on its cases when measured: 29.6 s against
#: 38.1 s pooled, 2 cores under a load of ~4); ``threads``: per engine (cpu: 2, the whole
#: machine, as a CPU user runs llama.cpp; the engines run one at a time, so neither shares
#: cores. Measured: 221 s under papermill against 273 s with one thread per engine, on the
#: earlier 1015-id ProbeEdit case; 195 s with the cap and the drafted decoder); ``gguf_types``:
#: the llama.cpp engines, one per weight type (``None``: the GGUF file as shipped, Q4_1 for
#: SmolLM2; ``"f16"``: that file converted by llama.cpp,
#: :func:`cadlib.decoding.engines.converted_gguf`). On CPU llama.cpp multiplies a batch (a splice)
#: several times faster with F16 weights than with Q4_1 ones, and a one-id step somewhat slower:
#: which wins depends on the method.
PROFILES = {
    # ~3 minutes on 2 quiet cores with one llama.cpp engine; with the F16 one too, 439 s on
    # the slower cores of 2026-12 (a transformers step ~110 ms). A ProbeEdit prompt
    # (~900-1300 ids) costs seconds to prefill, and transformers decodes its gold
    # autoregressively at ~60 ms an id there (two threads do not speed up its single-id
    # steps): ProbeEdit golds are 761-1047 ids, so the cap keeps its case among the shortest
    # quarter, as chapter 6 does.
    "cpu": dict(
        model=SMOLLM2,
        cases={"probeedit": 1, "heval-fix-py": 2},
        max_ids={"probeedit": 800, "heval-fix-py": 300},
        repeats=1,
        warmup=1,
        threads=2,
        pld_grid=((20, 3),),
        kernel_P=256,
        kernel_N=(1, 2, 4, 8, 16, 32, 64),
        kernel_trials=2,
        agreement_cases=None,
        gguf_types=(None, "f16"),
    ),
    # A CPU-engine chapter: the paper has no llama.cpp setting (serving-engine integration is
    # its future work); ``paper`` runs every case of the two corpora and the full N grid.
    "paper": dict(
        model=SMOLLM2,
        cases={"probeedit": None, "heval-fix-py": None},
        max_ids=None,
        repeats=3,
        warmup=1,
        threads=1,
        pld_grid=((4, 2), (10, 2), (10, 3), (20, 3)),
        kernel_P=1024,
        kernel_N=tuple(2**k for k in range(10)),
        kernel_trials=5,
        agreement_cases=None,
        gguf_types=(None, "f16"),
    ),
}
#: CI's check of the ``paper`` path (make test-smoke), in seconds: the tiny random Qwen2
#: stand-in on both engines (fp32 GGUF exported by :mod:`cadlib.decoding.engines.gguf_export`), one
#: case per corpus, the paper's prompt-lookup grid and repeats, a short kernel grid.
PROFILES["smoke"] = {
    **PROFILES["paper"],
    "model": QWEN2_SMOKE,
    "cases": {"probeedit": 1, "heval-fix-py": 1},
    "kernel_P": 64,
    "kernel_N": (1, 2, 4, 8),
    "kernel_trials": 1,
}
#: What each profile's model is, for the chapter's labels.
MODEL_LABELS = {
    SMOLLM2: "SmolLM2-135M-Instruct (one GGUF, Q4_1: transformers dequantizes it to fp32, "
    "llama.cpp runs it as shipped and converted to F16)",
    QWEN2_SMOKE: "qwen2-smoke (a tiny random-weight Qwen2, fp32 on both engines, F16 too on "
    "llama.cpp: the smoke check of the code path, its times mean nothing)",
}


def load_engines(params: dict, device: str = "cpu") -> list[Engine]:
    """The chapter's engines: ``transformers``, then one llama.cpp engine per GGUF weight type
    of ``params["gguf_types"]`` (the same model file; ``None``: as shipped)."""
    hf = load_engine(params["model"], "transformers", device=device, threads=params["threads"])
    return [
        hf,
        *(
            load_engine(
                params["model"], "llama.cpp", device=device, threads=params["threads"], gguf_type=t
            )
            for t in params.get("gguf_types", (None,))
        ),
    ]


def is_llama(engine_name: str) -> bool:
    """Whether an engine name (a row's ``engine``) is one of the llama.cpp engines."""
    return engine_name.startswith("llama.cpp")


# --------------------------------------------------------------------------------------------
# The kernel curve and the methods on both engines, on the same cases
# --------------------------------------------------------------------------------------------


def kernel_curves(engines: list, params: dict, progress: bool = True) -> dict:
    """``s(N)`` of each engine at the profile's ``kernel_P``, ``kernel_N`` and
    ``kernel_trials`` (:func:`cadlib.costs.kernel_timing.engine_curve`, by engine name):
    chapter 2's protocol with one shared AR run per trial and the last position's logits only
    on the PP path, all a splice needs."""
    return {
        e.name: engine_curve(
            e,
            f"SmolLM2-135M-Instruct on {e.name}",
            progress,
            P=params["kernel_P"],
            N_grid=params["kernel_N"],
            trials=params["kernel_trials"],
            shared_ar_run=True,
            logits_to_keep=1,
        )
        for e in engines
    }


def sample_inputs(params: dict, tokenizer, seed: int = 0) -> list:
    """The chapter's cases, by chapter 6's rule (:func:`cadlib.decoding.methods.timed_sample`):
    per corpus of ``params["cases"]``, ``n`` length strata of the cases whose gold has at most
    ``params["max_ids"][corpus]`` ids (``None``: no cap), one seeded case from each."""
    caps = params.get("max_ids") or {}
    return [
        x
        for name, n in params["cases"].items()
        for x in timed_sample(name, load_corpus(name), n, tokenizer, caps.get(name), seed)
    ]


def speed_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per engine, corpus (and pooled) and method: output tokens ``T``, forwards, edit latency
    (decode seconds after the prompt prefill, and wall seconds with it; median over repeats of
    the corpus total), output tokens per second (``T`` / decode seconds) and the speedup over
    the same engine's autoregressive decoding."""
    rows = pd.concat([rows, rows.assign(corpus="pooled")])
    per = (
        rows.groupby(["engine", "corpus", "method", "repeat"])
        .agg(
            cases=("case", "nunique"),
            T=("T", "sum"),
            forwards=("forwards", "sum"),
            decode_s=("decode_s", "sum"),
            wall_s=("wall_s", "sum"),
        )
        .reset_index()
    )
    out = (
        per.groupby(["engine", "corpus", "method"])
        .agg(
            cases=("cases", "first"),
            T=("T", "first"),
            forwards=("forwards", "first"),
            decode_s=("decode_s", "median"),
            decode_s_min=("decode_s", "min"),
            decode_s_max=("decode_s", "max"),
            wall_s=("wall_s", "median"),
        )
        .reset_index()
    )
    out["latency_per_case_s"] = out["decode_s"] / out["cases"]
    out["tokens_per_s"] = out["T"] / out["decode_s"]
    ar = out[out["method"] == "autoregressive"].set_index(["engine", "corpus"])["decode_s"]
    keys = zip(out["engine"], out["corpus"], out["decode_s"], strict=True)
    out["speedup_vs_ar"] = [ar[(e, c)] / d for e, c, d in keys]
    return out


def seconds_by_kind(rows: pd.DataFrame) -> pd.DataFrame:
    """Where Copy-as-Decode's time goes, per engine (median over repeats of the pooled total):
    seconds per forward kind (prefill, choice, gen, forced, splice, ...), mask, sync, FSM."""
    cad = rows[rows["method"] == "Copy-as-Decode"]
    cols = [c for c in cad.columns if c.startswith("s_")]
    per = cad.groupby(["engine", "repeat"])[cols].sum().groupby("engine").median()
    per.columns = [c.removeprefix("s_") for c in cols]
    return per.fillna(0.0)


# --------------------------------------------------------------------------------------------
# Numbers and the run summary
# --------------------------------------------------------------------------------------------


def llama_numbers(
    speed: pd.DataFrame, curves: dict, agreements: dict, kinds: pd.DataFrame | None = None
) -> dict:
    """The chapter's headline numbers (results/llama_cpp.json); ``agreements``:
    :func:`cadlib.decoding.engine_agreement.greedy_agreements`; ``kinds`` is
    :func:`seconds_by_kind` (where Copy-as-Decode's time goes, per engine)."""
    head = {}
    for _, r in speed.iterrows():
        head.setdefault(r["engine"], {}).setdefault(r["corpus"], {})[r["method"]] = dict(
            cases=int(r["cases"]),
            T=int(r["T"]),
            forwards=int(r["forwards"]),
            decode_s=round(float(r["decode_s"]), 4),
            wall_s=round(float(r["wall_s"]), 4),
            tokens_per_s=round(float(r["tokens_per_s"]), 1),
            speedup_vs_ar=round(float(r["speedup_vs_ar"]), 3),
        )
    spent = (
        {}
        if kinds is None
        else {e: {k: round(float(v), 4) for k, v in row.items()} for e, row in kinds.iterrows()}
    )
    agree = {}
    for name, (rate, n) in agreements.items():
        lo, hi = wilson_ci(round(rate * n), n)
        agree[name] = dict(rate=round(rate, 4), n=n, ci95=[round(lo, 4), round(hi, 4)])
    return dict(methods=head, curves=curves, seconds_by_kind=spent, agreement=agree)


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
