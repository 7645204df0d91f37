"""The whole FIM mask beside its previous implementation, timed (issue 34 §5).

:func:`compare_masks` (chapter 8's ``python -m cadlib.chapters.fim_constraint.commands
maskspeed --out results/fim.maskspeed.json``) times the whole mask beside its previous
implementation (:data:`MASK_ARMS`: lean Earley charts or full ones), alternating on identical
states, checks that the two masks are equal at every step, and records the garbage collector's
time inside each mask under default, frozen and disabled gc and with a larger heap (the
chapter's masks run in a notebook holding a model and earlier cells' data; its stage timings,
:func:`cadlib.fim.step_cost.mask_stages`, also go through a per-operation clock that adds to
the whole). :func:`mask_speed_summary` reduces the steps to medians, p90s, the collector's
share and the paired ratio to the first arm; chapter 8 reads the committed run against its
goals.

The per-step costs of the constraint and of the mask (the problems, the paper's baselines, the
mask's stages) are :mod:`cadlib.fim.step_cost`'s. Nothing here asserts a speed: timings are
wall-clock ``time.perf_counter`` on whatever machine runs them, so run it on a quiet machine
and compare medians.
"""

from __future__ import annotations

import gc
import time
from types import SimpleNamespace

import pandas as pd
from tqdm import tqdm

from cadlib.fim import earley

from .constraint import FIMConstraint
from .mask import TokenTrie, token_texts_cached
from .step_cost import fim_problems, time_call, trie_mask

__all__ = ["compare_masks", "mask_speed_summary", "MASK_ARMS"]


# ----- the mask beside its previous implementation (issue 34 §5) -----------------------------

#: The arms of :func:`compare_masks`: the mask as built now, and the previous implementation
#: (charts keep their finished entries and every chart of a push chain is scanned the long
#: way, :data:`cadlib.fim.earley.LEAN_CHARTS` off); both run the same lexical tables' code on
#: their own trie, so the difference is the parser's.
MASK_ARMS = {"lean charts": True, "previous (full charts)": False}


class _GcClock:
    """Seconds spent in the garbage collector (``gc.callbacks``) while installed."""

    def __init__(self):
        self.seconds, self.collections, self._t = 0.0, 0, None

    def __call__(self, phase, info):
        if phase == "start":
            self._t = time.perf_counter()
        elif self._t is not None:
            self.seconds += time.perf_counter() - self._t
            self.collections += 1
            self._t = None


def _arm(texts, lean: bool) -> SimpleNamespace:
    """One arm: its own trie (own lexical tables) and whether its recognizers make lean
    charts."""
    return SimpleNamespace(trie=TokenTrie(texts), lean=lean)


def _constraint(left: str, right: str, lean: bool) -> FIMConstraint:
    """A fresh constraint (own recognizer and charts) whose recognizer makes lean charts or
    not (the switch is read when a recognizer is made)."""
    before, earley.LEAN_CHARTS = earley.LEAN_CHARTS, lean
    try:
        return FIMConstraint(left, right)
    finally:
        earley.LEAN_CHARTS = before


def compare_masks(
    cases,
    tokenizer,
    n_problems: int = 12,
    seed: int = 0,
    middle_chars: int = 400,
    repeats: int = 3,
    gc_modes=("default",),
    ballast_millions=(0,),
    progress: bool = True,
) -> pd.DataFrame:
    """Time the whole mask (:func:`cadlib.fim.mask.allowed_mask`'s trie mask and end-token
    decision) of each arm of :data:`MASK_ARMS` on identical states, alternating.

    Along the true middles of ``n_problems`` FIM problems (:func:`fim_problems`; one more is
    run first to build the tables and is not recorded), token by token, both arms' masks are
    computed at every step, in alternating order (ABBA…), each on its own fresh constraint,
    and compared (they must be equal); the true token is then fed to both. ``repeats`` passes
    each start from fresh constraints (new charts; the tables stay warm, as in decoding). Each
    pass runs under every ``gc`` mode (``"default"``, ``"frozen"``: ``gc.freeze()`` after
    setup, ``"disabled"``) and heap size (``ballast_millions`` million small live objects, to
    mimic a notebook's larger heap), and the time the collector took inside each mask is
    recorded beside it.

    Returns
    -------
    pandas.DataFrame
        ``ballast_millions, gc, repeat, problem, step, arm, seconds, gc_seconds,
        gc_collections, n_allowed, equal`` (``equal``: this step's masks of the two arms are
        identical).
    """
    texts = token_texts_cached(tokenizer)
    arms = {name: _arm(texts, lean) for name, lean in MASK_ARMS.items()}
    end_ids = [tokenizer.eos_token_id]
    problems = fim_problems(cases, n_problems + 1, seed, middle_chars)
    steps = [
        [tid for tid in tokenizer.encode(m, add_special_tokens=False)] for _, _, m, _ in problems
    ]
    clock = _GcClock()
    rows: list = []
    ballast: list = []

    def one_pass(problem_ids, record: dict | None):
        for p in problem_ids:
            pid, left, _, right = problems[p]
            live = {name: _constraint(left, right, arm.lean) for name, arm in arms.items()}
            for k, tid in enumerate(steps[p]):
                order = list(arms) if k % 2 == 0 else list(reversed(arms))
                masks = {}
                for name in order:
                    c, trie = live[name], arms[name].trie
                    g0, n0 = clock.seconds, clock.collections
                    seconds, masks[name] = time_call(lambda c=c, t=trie: trie_mask(t, c, end_ids))
                    if record is not None:
                        rows.append(
                            dict(
                                record,
                                problem=pid,
                                step=k,
                                arm=name,
                                seconds=seconds,
                                gc_seconds=clock.seconds - g0,
                                gc_collections=clock.collections - n0,
                                n_allowed=int(masks[name].sum()),
                            )
                        )
                first, *rest = masks.values()
                if record is not None:
                    for row in rows[-len(arms) :]:
                        row["equal"] = all((first == m).all() for m in rest)
                text = texts[tid]
                if not isinstance(text, str):
                    break
                for c in live.values():
                    c.feed(text)

    one_pass([0], None)  # warm-up: builds both arms' tables
    gc.callbacks.append(clock)
    total = len(ballast_millions) * len(gc_modes) * repeats
    try:
        with tqdm(total=total, desc="mask passes", disable=not progress) as bar:
            for millions in ballast_millions:
                ballast[:] = [{"i": i} for i in range(int(millions * 1_000_000))]
                for mode in gc_modes:
                    for r in range(repeats):
                        gc.collect()
                        if mode == "frozen":
                            gc.freeze()
                        elif mode == "disabled":
                            gc.disable()
                        try:
                            one_pass(
                                range(1, len(problems)),
                                dict(ballast_millions=millions, gc=mode, repeat=r),
                            )
                        finally:
                            gc.enable()
                            gc.unfreeze()
                        bar.update()
    finally:
        gc.callbacks.remove(clock)
        ballast.clear()
    return pd.DataFrame(rows)


def mask_speed_summary(frame: pd.DataFrame) -> list[dict]:
    """Per heap size, gc mode and arm: steps, median / p90 / p99 / mean milliseconds per mask, the
    share of the time spent in the garbage collector, the largest collector pause inside one
    mask, whether every step's masks were equal between the arms, and (arms after the first)
    the median over steps of this arm's time over the first arm's on the same state (paired,
    so slow drifts of the machine cancel)."""
    out = []
    keys = ["ballast_millions", "gc", "arm"]
    first = list(MASK_ARMS)[0]
    for (millions, mode, arm), g in frame.groupby(keys, sort=False):
        ms = g.seconds * 1e3
        row = dict(
            ballast_millions=millions,
            gc=mode,
            arm=arm,
            steps=len(g),
            median_ms=round(float(ms.median()), 4),
            p90_ms=round(float(ms.quantile(0.9)), 4),
            p99_ms=round(float(ms.quantile(0.99)), 4),
            mean_ms=round(float(ms.mean()), 4),
            gc_share=round(float(g.gc_seconds.sum() / g.seconds.sum()), 4),
            max_gc_pause_ms=round(float(g.gc_seconds.max() * 1e3), 4),
            all_equal=bool(g.equal.all()),
        )
        if arm != first:
            base = frame[
                (frame.ballast_millions == millions) & (frame.gc == mode) & (frame.arm == first)
            ]
            pair = ["repeat", "problem", "step"]
            both = g.merge(base, on=pair, suffixes=("", "_first"))
            row["median_ratio_to_first"] = round(
                float((both.seconds / both.seconds_first).median()), 4
            )
        out.append(row)
    return out
