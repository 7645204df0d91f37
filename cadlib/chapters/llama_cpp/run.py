"""Chapter 6b's measurement: the engines, the sample, each engine's kernel curve, the methods'
speed per engine, corpus and method, where Copy-as-Decode's time goes, and :func:`numbers`, the
results dict (``results/llama_cpp.json``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import pandas as pd

from cadlib.corpora import load_corpus
from cadlib.costs.kernel_timing import engine_curve
from cadlib.decoding.engines import Engine, load_engine
from cadlib.decoding.methods import timed_sample
from cadlib.metrics import wilson_ci

__all__ = [
    "kernel_curves",
    "sample_inputs",
    "speed_table",
    "seconds_by_kind",
    "load_engines",
    "is_llama",
    "numbers",
]


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
# The results numbers
# --------------------------------------------------------------------------------------------


def numbers(
    speed: pd.DataFrame,
    curves: dict,
    agreements: dict,
    kinds: pd.DataFrame | None,
    best: tuple,
    grid: pd.DataFrame,
    mismatches: Mapping[str, Collection],
    runtime_s: float,
) -> dict:
    """The chapter's results numbers (``results/llama_cpp.json``): ``speed``
    (:func:`speed_table`) per engine, corpus and method; the kernel ``curves``
    (:func:`kernel_curves`); ``kinds``, where Copy-as-Decode's time goes per engine
    (:func:`seconds_by_kind`; ``None``: not measured); ``agreements``
    (:func:`cadlib.decoding.engine_agreement.greedy_agreements`) with their Wilson intervals;
    the prompt-lookup setting used (``best``) and the ``grid`` it was chosen from
    (:func:`cadlib.costs.method_timing.best_lookup_setting`); how many vocabulary ids differ
    between each llama.cpp engine's GGUF and the HF tokenizer (``mismatches``,
    :func:`cadlib.decoding.engines.vocab_mismatches` by engine); and the run's ``runtime_s``."""
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
    return dict(
        methods=head,
        curves=curves,
        seconds_by_kind=spent,
        agreement=agree,
        lookup_best=list(best),
        lookup_grid=grid.to_dict("records"),
        vocab_mismatches=sum(map(len, mismatches.values())),
        runtime_s=round(runtime_s, 1),
    )
