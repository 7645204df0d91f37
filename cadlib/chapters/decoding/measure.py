"""Chapter 6: the decoder measured end to end, against baselines on the same outputs.

Three methods (:mod:`cadlib.decoding.methods`) produce the same gold output of each case and are
timed in one process: forced-oracle Copy-as-Decode (:class:`cadlib.decoding.decoder.CopyDecoder`
driven along the oracle program: the mechanism under perfect span selection), autoregressive
decoding of the gold (:func:`~cadlib.decoding.methods.ar_along`) and prompt-lookup decoding
along the gold (:func:`~cadlib.decoding.methods.prompt_lookup_along`, drafts from
``transformers``' ``PromptLookupCandidateGenerator``).
Also here: free-run decoding of an untrained model, the fixed costs of Appendix H and the FSM's
mask cost. Tokenization at splice boundaries lives in :mod:`cadlib.decoding.token_boundaries`;
the chapter's run and its results numbers in :mod:`cadlib.chapters.decoding.chapter`, what the
notebook shows of them in :mod:`cadlib.chapters.decoding.report`.
"""

from __future__ import annotations

import json
import statistics
import time

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from cadlib import paper as _paper
from cadlib.decoding.decoder import CopyDecoder, Trace
from cadlib.decoding.fsm import CopyGenFSM, token_table, walk_ids
from cadlib.decoding.methods import (
    DRAFTED,
    DRAFTED_SETTING,
    TIMED,
    TIMED_PLD,
    CaseInputs,
    make_methods,
)
from cadlib.grammar import parse_program
from cadlib.metrics import equal_stripped
from cadlib.record.results import results_dir
from cadlib.resolver import ResolveError, resolve

__all__ = [
    "PROFILES",
    "UNRECORDED",
    "case_records",
    "write_case_records",
    "time_on_gold",
    "speed_table",
    "run_summary",
    "free_run",
    "fixed_costs",
    "mask_costs",
]


# --------------------------------------------------------------------------------------------
# Chapter 6: the decoder measured end to end
# --------------------------------------------------------------------------------------------

#: ``timing_cases`` / ``free_run_cases``: cases per corpus (a seeded subset; ``None`` = all);
#: the timed cases are stratified by output length among those of at most ``timing_max_ids``
#: gold ids per corpus (:func:`cadlib.decoding.methods.timed_sample`; ``None``: any length).
#: ProbeEdit has no short outputs (its shortest gold is ~760 SmolLM2 ids), so its cap is higher.
#: ``grid_contexts`` / ``grid_trials``: the forward-cost grid of the cost model
#: (:func:`cadlib.costs.forward_grid.measure_forward_costs`).
#: ``threads``: torch CPU threads (``None``: torch's default). The cpu profile uses one: on a
#: 2-core machine shared with other jobs, two contended threads made a decode step ~10x slower.
#: Corpora whose every case the forward accounting covers (no model: seconds, so every profile).
ACCOUNTED = (
    "heval-fix-py",
    "heval-fix-js",
    "heval-fix-java",
    "heval-fix-go",
    "heval-fix-cpp",
    "heval-fix-rust",
    "probeedit",
    "realedits-flask",
)

_TIMED_PLD_PARAMS = dict(pld_num_tokens=TIMED_PLD[0], pld_max_ngram=TIMED_PLD[1])

_CPU = dict(
    model="smollm2-135m-instruct",
    dtype="float32",
    attn_implementation="sdpa",
    threads=1,
    timing_cases={"heval-fix-py": 2, "heval-fix-js": 2, "probeedit": 1},
    timing_max_ids={"heval-fix-py": 300, "heval-fix-js": 300, "probeedit": 800},
    free_run_cases={"heval-fix-py": 2, "heval-fix-js": 2, "probeedit": 1},
    repeats=2,
    warmup=1,
    max_new_tokens=48,
    min_span=0,
    **_TIMED_PLD_PARAMS,
    effect_cases=3,
    mask_reps=3000,
    accounting_corpora=ACCOUNTED,
    grid_contexts=(128, 512, 1024, 2048, 3072),
    grid_trials=2,
)

PROFILES = {
    "cpu": _CPU,
    # The first GPU evidence (make gpu-check, issue 30 §3): the forced-oracle timing of the four
    # methods with the paper's 7B shape (random init: forced decoding along a gold needs no
    # trained weights; the Qwen2.5 BPE built offline), bf16, eager, on a small stratified
    # sample; cadlib.cli.gpu_check runs only the timing and its cost grid.
    "gpu": dict(
        model="qwen2.5-7b-random",
        dtype="bfloat16",
        attn_implementation="eager",
        threads=None,
        timing_cases={"heval-fix-py": 3, "heval-fix-js": 3, "probeedit": 2},
        timing_max_ids={"heval-fix-py": 400, "heval-fix-js": 400, "probeedit": 1000},
        free_run_cases={"heval-fix-py": 0, "heval-fix-js": 0, "probeedit": 0},
        repeats=2,
        warmup=1,
        max_new_tokens=48,
        min_span=0,
        **_TIMED_PLD_PARAMS,
        effect_cases=0,
        mask_reps=0,
        accounting_corpora=(),
        grid_contexts=(128, 512, 1024, 2048, 4096),
        grid_trials=2,
    ),
    # The cpu profile's larger timed sample (run once, on a quiet machine; results in
    # results/decoding.full.json): ~3.4x the timed ids of the cpu profile; 45 minutes on the
    # 2 quiet (and slow: a decode step ~110 ms) cores that ran the committed file.
    "full": {
        **_CPU,
        "timing_cases": {"heval-fix-py": 8, "heval-fix-js": 8, "probeedit": 4},
        "timing_max_ids": {"heval-fix-py": 400, "heval-fix-js": 400, "probeedit": 1000},
        "free_run_cases": {"heval-fix-py": 5, "heval-fix-js": 5, "probeedit": 3},
        "effect_cases": 6,
        "grid_contexts": (128, 512, 1024, 2048, 3072, 4096),
        "grid_trials": 4,
    },
    "paper": dict(
        model="Qwen/Qwen2.5-7B-Instruct",
        dtype="bfloat16",
        attn_implementation="eager",
        threads=None,
        timing_cases={"heval-fix-py": None, "heval-fix-js": None, "probeedit": None},
        timing_max_ids=None,
        free_run_cases={"heval-fix-py": None, "heval-fix-js": None, "probeedit": None},
        repeats=5,
        warmup=2,
        max_new_tokens=256,
        min_span=0,
        **_TIMED_PLD_PARAMS,
        effect_cases=30,
        mask_reps=20000,
        accounting_corpora=ACCOUNTED,
        grid_contexts=(128, 512, 1024, 2048, 4096, 8192),
        grid_trials=5,
    ),
    # CI's check of the paper path (make test-smoke): a hub-style model loaded by
    # from_pretrained from a local stand-in (cadlib.models.QWEN2_SMOKE: 2-layer Qwen2), bf16,
    # eager, one case per corpus, short budgets; seconds on CPU, numbers meaningless.
    "smoke": dict(
        model="qwen2-smoke",
        dtype="bfloat16",
        attn_implementation="eager",
        threads=1,
        timing_cases={"heval-fix-py": 1, "heval-fix-js": 1, "probeedit": 1},
        timing_max_ids={"heval-fix-py": 60, "heval-fix-js": 60, "probeedit": 800},
        free_run_cases={"heval-fix-py": 1, "heval-fix-js": 1, "probeedit": 1},
        repeats=1,
        warmup=1,
        max_new_tokens=16,
        min_span=0,
        **_TIMED_PLD_PARAMS,
        effect_cases=1,
        mask_reps=100,
        accounting_corpora=("heval-fix-py",),
        grid_contexts=(64, 256),
        grid_trials=1,
    ),
}


def time_on_gold(model, tokenizer, inputs: list, params: dict, progress: bool = True):
    """Time the methods of :data:`cadlib.decoding.methods.TIMED` on the same outputs:
    forced-oracle Copy-as-Decode (perfect span selection), without and with its drafts,
    autoregressive and prompt lookup along the gold.

    ``params``: ``repeats``, ``warmup``, ``min_span``, ``pld_num_tokens``, ``pld_max_ngram``.
    Runs are interleaved (for each repeat, each case, the methods in rotating order) so a
    noisy neighbour hurts all methods alike. Returns ``(rows, results)``: a DataFrame with
    one row per (case, method, repeat) and the last Copy-as-Decode :class:`DecodeResult` of
    each case (for the fixed-cost analysis).
    """
    decoder = CopyDecoder(model, tokenizer, min_span=params["min_span"])
    methods = make_methods(
        model, decoder, (params["pld_num_tokens"], params["pld_max_ngram"]), TIMED
    )
    for _ in range(params["warmup"]):  # the first calls are several times slower
        for method in methods:
            method.run(inputs[0])
    rows, results = [], {}
    jobs = [(r, k) for r in range(params["repeats"]) for k in range(len(inputs))]
    for r, k in tqdm(jobs, desc="timing", disable=not progress):
        x = inputs[k]
        for m in range(len(methods)):
            method = methods[(m + r + k) % len(methods)]
            run = method.run(x)
            if not run.reproduced:
                raise RuntimeError(f"{method.name} did not reproduce the gold of {x.case.id}")
            if method.name == "Copy-as-Decode":
                results[x.case.id] = run.result
            rows.append(_row(x, method.name, r, run.trace, run.result))
    return pd.DataFrame(rows), results


def _row(x: CaseInputs, method: str, repeat: int, trace: Trace, res) -> dict:
    return dict(
        corpus=x.corpus,
        case=x.case.id,
        method=method,
        repeat=repeat,
        T=len(x.target) - 1,
        wall_s=trace.wall_s,
        prefill_s=trace.prefill_s,
        decode_s=trace.decode_s,
        forwards=trace.n_forwards - 1,
        forward_s=sum(f.seconds for f in trace.forwards if f.kind != "prefill"),
        spliced=res.n_spliced if res else 0,
        **trace.info,
    )


def speed_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per corpus (and pooled) and method: gold tokens ``T``, decode forwards per gold token,
    decode seconds (median over repeats of the corpus total, with min-max), speedup over
    autoregressive decoding in wall-clock (median [min-max] over repeats) and in forwards, and
    the share of output ids that came without a decode step of their own (spliced copy ids
    for Copy-as-Decode, plus accepted body drafts with drafts on; accepted draft ids for
    prompt lookup)."""
    rows = pd.concat([rows, rows.assign(corpus="pooled")])
    free = rows["spliced"].astype(float)
    for col in ("accepted", "draft_accepted_gen"):  # accepted draft ids of output (body) text
        if col in rows:
            free = free + rows[col].fillna(0)
    rows = rows.assign(free=free)
    per = rows.groupby(["corpus", "method", "repeat"]).agg(
        cases=("case", "nunique"),
        T=("T", "sum"),
        forwards=("forwards", "sum"),
        decode_s=("decode_s", "sum"),
        free=("free", "sum"),
    )
    ar = per.xs("autoregressive", level="method")
    speed = per["decode_s"].rdiv(ar["decode_s"].reindex(per.index.droplevel("method")).values)
    per = per.assign(speedup=speed.values)
    out = per.groupby(["corpus", "method"]).agg(
        cases=("cases", "first"),
        T=("T", "first"),
        forwards=("forwards", "first"),
        free=("free", "first"),
        decode_s=("decode_s", "median"),
        decode_s_min=("decode_s", "min"),
        decode_s_max=("decode_s", "max"),
        speedup=("speedup", "median"),
        speedup_min=("speedup", "min"),
        speedup_max=("speedup", "max"),
    )
    out["forwards_per_token"] = out["forwards"] / out["T"]
    ar_fw = out.xs("autoregressive", level="method")["forwards"]
    corpora = out.index.get_level_values("corpus")
    out["forward_ratio"] = ar_fw.reindex(corpora).values / out["forwards"]
    out["free_share"] = out.pop("free") / out["T"]
    return out.reset_index()


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

    lines = []
    corpora = [c for c in dict.fromkeys(speed.corpus) if c != "pooled"]
    for corpus in [*corpora, "pooled"] if "pooled" in set(speed.corpus) else corpora:
        cad, pld = (by.loc[(corpus, m)] for m in ("Copy-as-Decode", "prompt lookup"))
        drafted = by.loc[(corpus, DRAFTED)] if (corpus, DRAFTED) in by.index else None
        fw_d = f", {drafted.forward_ratio:.2f}× with its drafts" if drafted is not None else ""
        wall_d = f" ({wall(drafted)} with drafts)" if drafted is not None else ""
        bnd = ""
        if bounds is not None and corpus in bounds.index:
            b = bounds.loc[corpus]
            bnd = (
                f"; bnd_exact {b['bnd_exact_grid']:.2f}×, bnd_fsm {b['bnd_fsm_grid']:.2f}× "
                f"(same grid), realized / bnd_exact {b['realized_over_bnd_exact']:.2f}"
            )
        lines.append(
            f"* **{corpus}** (T = {int(cad['T'])} ids): forward ratio (autoregressive forwards "
            f"/ its forwards) {cad.forward_ratio:.2f}× for Copy-as-Decode{fw_d}, "
            f"{pld.forward_ratio:.2f}× for prompt lookup; wall-clock speedup {wall(cad)}"
            f"{wall_d} vs {wall(pld)}{bnd}"
        )
    text = f"*This run ({label}), forced-oracle decoding:*\n\n" + "\n".join(lines)
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


def free_run(model, tokenizer, inputs: list, max_new_tokens: int, progress: bool = True):
    """Free-run FSM decoding (greedy, masked) of every case: one row per case with parse and
    strict-resolve success, byte-exact and trimmed EM, realized copy fraction, ops, forwards."""
    decoder, rows = CopyDecoder(model, tokenizer, max_new_tokens=max_new_tokens), []
    for x in tqdm(inputs, desc="free run", disable=not progress):
        res = decoder.decode(x.case.doc, prompt_ids=x.edit_prompt)
        parsed = strict = False
        text = None
        try:
            program = parse_program(res.program_text)
            parsed = True
            text = resolve(program, x.case.doc, mode="strict")
            strict = True
        except (ValueError, ResolveError):
            program = None
        rows.append(
            dict(
                corpus=x.corpus,
                case=x.case.id,
                parsed=parsed,
                strict_resolved=strict,
                em=text == x.case.gold,
                em_trimmed=text is not None and equal_stripped(text, x.case.gold),
                copy_fraction=res.copy_fraction,
                ops=len(program or ()),
                copies=len(program.copies) if program else 0,
                decisions=res.n_chosen,
                budget_closed=res.budget_closed,
                forwards=res.trace.n_forwards,
                wall_s=res.trace.wall_s,
                program=res.program_text,
            )
        )
    return pd.DataFrame(rows)


def fixed_costs(results: dict) -> pd.DataFrame:
    """Per-op fixed costs observed in forced-oracle runs, beside Appendix H (Table 1).

    ``tau``: a one-id decode forward (decisions and body ids); ``c_mask``: FSM work per
    masked step (lookup, gather, banned-id check); ``c_sync``: argmax and transfer to Python;
    ``c_forced``: a forward of a decision plus its literal tail (2-5 ids); plus the decision
    forwards each op needs, which the paper's cost model does not charge.
    """
    traces = [r.trace for r in results.values()]
    fw = [f for t in traces for f in t.forwards]
    step = [f.seconds for f in fw if f.n_tokens == 1 and f.kind != "prefill"]
    forced = [f.seconds for f in fw if f.kind == "forced"]
    splice = [f for f in fw if f.kind == "splice"]
    mask = [x for t in traces for x in t.mask_s]
    sync = [x for t in traces for x in t.sync_s]
    ops = [op for r in results.values() for op in r.ops if op["kind"] in ("copy", "gen")]
    q = lambda xs, scale: _quantiles([x * scale for x in xs])  # noqa: E731
    paper = {k: v[0] for k, v in _paper.FIXED_COSTS.items()}
    per_op = lambda kind: _quantiles(  # noqa: E731
        [op["forwards"] - op.get("gen", 0) for op in ops if op["kind"] == kind]
    )
    rows = [
        ("tau: one-id decode forward", "ms", q(step, 1e3), paper["tau_ms"]),
        ("c_mask: FSM work per masked step", "ms", q(mask, 1e3), paper["c_mask_ms"]),
        ("c_sync: argmax -> Python per step", "ms", q(sync, 1e3), paper["c_sync_ms"]),
        ("c_forced: decision + literal tail forward", "ms", q(forced, 1e3), paper["c_forced_ms"]),
        ("c_forced / tau (medians)", "ratio", (_ratio(forced, step),) * 3, 1.0),
        ("splice forward", "ms", q([f.seconds for f in splice], 1e3), None),
        ("ids per splice forward", "ids", q([f.n_tokens for f in splice], 1), None),
        ("forwards per copy op (incl. its splice)", "forwards", per_op("copy"), None),
        ("forwards per gen op, body ids excluded", "forwards", per_op("gen"), None),
    ]
    return pd.DataFrame(
        [dict(quantity=n, unit=u, median=m[0], p10=m[1], p90=m[2], paper=p) for n, u, m, p in rows]
    )


def _ratio(a, b) -> float:
    return float(np.median(a) / np.median(b)) if a and b else float("nan")


def _quantiles(xs) -> tuple[float, float, float]:
    if not xs:
        return (float("nan"),) * 3
    return tuple(float(v) for v in np.percentile(xs, [50, 10, 90]))


def _median_ns(fn, reps: int, batch: int = 50) -> float:
    """Median over batches of the per-call nanoseconds of ``fn()``."""
    out = []
    for _ in range(max(1, reps // batch)):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        out.append((time.perf_counter_ns() - t0) / batch)
    return statistics.median(out)


def mask_costs(tokenizer, vocab_size: int | None = None, reps: int = 3000) -> pd.DataFrame:
    """Per-step cost of the FSM's mask at typical states, in microseconds.

    ``fill``: the allowed set of a state (a cached lookup, the analogue of a grammar engine's
    token-bitmask fill); ``advance``: the state transition for one id; ``decoder check``:
    what the decoder adds to greedy argmax (gather over the few allowed ids, or one
    banned-id lookup in a body); ``processor apply``: the LogitsProcessor's full-vocabulary
    ``masked_fill``; ``first visit``: building the mask of a state not seen before.
    """
    table = token_table(tokenizer)
    doc = "\n".join(f"line {k}" for k in range(1, 41))
    fsm = CopyGenFSM(table, doc, vocab_size=vocab_size)
    logits = torch.randn(fsm.vocab_size, generator=torch.Generator().manual_seed(0))
    after_op = walk_ids(fsm, fsm.initial(), table.program_open)
    after_op = walk_ids(
        fsm,
        after_op,
        [
            *table.op_literals["gen"],
            *table.encode("x = 1"),
            *table.gen_close,
            *table.after_gen_close,
        ],
    )
    states = {
        "AWAIT_OP": after_op,
        "AFTER_LT": walk_ids(fsm, after_op, table.lt),
        "COPY_LINES": walk_ids(fsm, after_op, [*table.op_literals["copy"], *table.encode("1")]),
        "GEN_BODY": walk_ids(fsm, after_op, [*table.op_literals["gen"], *table.encode("a")]),
        "GEN_BODY after </gen": walk_ids(
            fsm, after_op, [*table.op_literals["gen"], *table.gen_close[:-1]]
        ),
    }
    rows = []
    for name, st in states.items():
        allowed = fsm.allowed(st)
        tok = allowed.argmax(logits)
        if allowed.ids is not None:
            check = lambda a=allowed: int(a.ids[int(logits[a.ids].argmax())])  # noqa: E731
        else:
            check = lambda a=allowed, t=tok: t in a  # noqa: E731
        mask = allowed.full_mask()
        rows.append(
            dict(
                state=name,
                allowed=len(allowed),
                fill_us=_median_ns(lambda s=st: fsm.allowed(s), reps) / 1e3,
                advance_us=_median_ns(lambda s=st, t=tok: fsm.advance(s, t), reps) / 1e3,
                decoder_check_us=_median_ns(check, reps) / 1e3,
                processor_apply_us=_median_ns(
                    lambda m=mask: logits.masked_fill(~m, -1e9), reps // 10
                )
                / 1e3,
                first_visit_us=_first_visit_us(table, doc, fsm.vocab_size, st),
            )
        )
    return pd.DataFrame(rows)


def _first_visit_us(table, doc, vocab_size, state, reps: int = 5) -> float:
    """Microseconds to build the mask of ``state`` in a fresh FSM (body tails cached per
    tokenizer are recomputed too)."""
    out = []
    for _ in range(reps):
        fresh = CopyGenFSM(table, doc, vocab_size=vocab_size)
        table.dangerous.cache_clear()
        t0 = time.perf_counter_ns()
        fresh.allowed(state)
        out.append((time.perf_counter_ns() - t0) / 1e3)
    return sorted(out)[len(out) // 2]


def paper_numbers() -> dict:
    """The paper's figures this chapter sets beside its own (from :mod:`cadlib.paper`)."""
    fixed = _paper.FIXED_COSTS
    return {
        "bnd_exact": {name: row["bnd_exact"] for name, row in _paper.TABLE2.items()},
        "fixed_costs_ms": {
            "c_mask": fixed["c_mask_ms"][0],
            "c_sync": fixed["c_sync_ms"][0],
            "c_forced": fixed["c_forced_ms"][0],
            "tau_7b": fixed["tau_ms"][0],
        },
        "free_run_untrained": "0/33 EM, 33/33 parse (Table 6, FSM-constrained untrained, "
        "Qwen2.5-Coder-1.5B)",
    }


#: Compositions the per-case records leave out (:func:`case_records`; the file stays under the
#: project's 2 MB limit): the counterfactual without jump-forward and each body rule without
#: the headers. The chapter's tables count them on every case; the accounting recomputes them
#: in seconds.
UNRECORDED = ("m=0 no-JF", "m=0 +PLD", "m=0 +cursor")


def case_records(
    acc: pd.DataFrame,
    best: pd.Series,
    measured: pd.DataFrame | None = None,
    free: pd.DataFrame | None = None,
    timed_setting: str = f"K={TIMED_PLD[0]} n={TIMED_PLD[1]}",
) -> list[dict]:
    """Compact per-case records (issue 16 "Per-case outputs"): one per accounted case and
    headline method (autoregressive, prompt lookup at the corpus's best setting, every
    Copy-as-Decode variant but those of :data:`UNRECORDED`): forwards, ids fed, predicted
    decode seconds; for a timed case also the measured decode seconds (median of repeats) on
    the rows of the timed runs (autoregressive, Copy-as-Decode m=0 and with its drafts,
    prompt lookup at ``timed_setting``, added if it is not the best); then one record per
    free run with its program, verdict fields and whether the budget closed it."""
    timed = {}
    if measured is not None and len(measured):
        med = measured.groupby(["case", "method"]).decode_s.median()
        timed = {k: round(float(v), 4) for k, v in med.items()}
    cases = {c for c, _ in timed}
    pld = acc.method == "prompt lookup"
    keep = (
        ~pld
        | (acc.setting == acc.corpus.map(best))
        | ((acc.setting == timed_setting) & acc.case.isin(cases))
    )
    out = []
    keep &= (acc.method != "bnd_exact charge") & ~acc.setting.isin(UNRECORDED)
    for r in acc[keep].itertuples():
        rec = dict(
            case=r.case,
            corpus=r.corpus,
            method=r.method,
            setting=r.setting or None,
            T=int(r.T),
            forwards=int(r.forwards),
            ids_fed=int(r.ids_fed),
        )
        if hasattr(r, "predicted_s"):
            rec["predicted_s"] = round(float(r.predicted_s), 4)
        if (r.case, r.method) in timed and r.setting in ("", "m=0", timed_setting):
            rec["measured_s"] = timed[(r.case, r.method)]
        elif r.setting == DRAFTED_SETTING and (r.case, DRAFTED) in timed:
            rec["measured_s"] = timed[(r.case, DRAFTED)]
        out.append(rec)
    for r in free.itertuples() if free is not None else ():
        out.append(
            dict(
                case=r.case,
                corpus=r.corpus,
                method="free run (FSM, greedy)",
                parsed=bool(r.parsed),
                strict_resolved=bool(r.strict_resolved),
                em=bool(r.em),
                em_trimmed=bool(r.em_trimmed),
                ops=int(r.ops),
                decisions=int(r.decisions),
                forwards=int(r.forwards),
                budget_closed=bool(r.budget_closed),
                program=r.program,
            )
        )
    return out


def write_case_records(records: list[dict], profile: str = "cpu"):
    """Write ``records`` (:func:`case_records`) one JSON object per line, compact, to
    ``results/decoding.cases.jsonl`` (``decoding.<profile>.cases.jsonl`` for another profile,
    in :func:`cadlib.record.results.results_dir`); return the path."""
    name = "decoding.cases.jsonl" if profile == "cpu" else f"decoding.{profile}.cases.jsonl"
    path = results_dir() / name
    with path.open("w") as f:
        for rec in records:
            f.write(json.dumps(rec, separators=(",", ":"), ensure_ascii=False) + "\n")
    return path
