"""Chapter 6's fixed costs: what each op costs beyond its forwards, read from the forced-oracle
runs beside Appendix H (Table 1), and the per-step cost of the FSM's mask at typical states."""

from __future__ import annotations

import statistics
import time

import numpy as np
import pandas as pd
import torch

from cadlib import paper as _paper
from cadlib.decoding.fsm import CopyGenFSM, token_table, walk_ids
from cadlib.models import model_vocab_size

__all__ = ["fixed_costs", "mask_costs", "mask_costs_at"]


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


def mask_costs(model, tokenizer, params: dict) -> pd.DataFrame:
    """:func:`mask_costs_at` the model's logit width, ``mask_reps`` reps (``params``)."""
    return mask_costs_at(tokenizer, model_vocab_size(model), reps=params["mask_reps"])


def mask_costs_at(tokenizer, vocab_size: int | None = None, reps: int = 3000) -> pd.DataFrame:
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
