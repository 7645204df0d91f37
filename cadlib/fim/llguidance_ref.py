"""A reference point for the FIM mask's speed: llguidance on the same tokenizer and states
(issue 52 §4), labelled as not the same work.

llguidance (the ``llguidance`` package, the Rust engine behind MaskBench's fastest figures)
masks a vocabulary by a context-free grammar over the *prefix* only. It cannot express what our
constraint checks: Python's indentation, and a right context that must still follow the middle.
So it is given :data:`PYTHON_LIKE`, a Lark grammar it can express that every true middle of
our benchmark satisfies: Python's lexemes (names, numbers, strings with their prefixes and
triple quotes, operators, whitespace with comments and line continuations) in balanced
brackets. Along the same true middles as :func:`cadlib.fim.benchmark.compare_masks` (the same
problems, the left context consumed first, untimed), :func:`time_llguidance` times its
mask at every token of the middle and records the time to build the matcher (MaskBench's
"time to first mask"). A token the grammar rejects ends that problem's middle (counted).

``llguidance`` is imported when the reference is timed, not with :mod:`cadlib.fim`.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from .step_cost import fim_problems

__all__ = ["PYTHON_LIKE", "time_llguidance", "llguidance_summary"]

_Q3 = r'"""([^"\\]|\\(.|\n)|"[^"]|""[^"])*"""'
_A3 = r"'''([^'\\]|\\(.|\n)|'[^']|''[^'])*'''"
_STRING = (
    r"/[rRbBuUfF]{0,2}("
    + "|".join([r'"([^"\\\n]|\\(.|\n))*"', r"'([^'\\\n]|\\(.|\n))*'", _Q3, _A3])
    + r")/"
)
#: A prefix-only, Python-like grammar in llguidance's Lark dialect: lexemes in balanced
#: brackets. It accepts far more than Python (no statements, no indentation, no right
#: context): less work than ours, never the same.
PYTHON_LIKE = "\n".join(
    [
        "start: item*",
        'item: NAME | NUMBER | STRING | OP | SPACE | "(" item* ")" | "[" item* "]" | "{" item* "}"',
        r"NAME: /[A-Za-z_\u0080-\uffff][A-Za-z_0-9\u0080-\uffff]*/",
        r"NUMBER: /[0-9][0-9_]*(\.[0-9_]*)?([eE][+-]?[0-9_]+)?[jJ]?"
        r"|\.[0-9][0-9_]*([eE][+-]?[0-9_]+)?[jJ]?|0[xXoObB][0-9a-fA-F_]+/",
        "STRING: " + _STRING,
        r"OP: /[-+*\/%@&|^~<>=!:;,.]+/",
        r"SPACE: /([ \t\f\r\n]|\\\r?\n|#[^\n]*)+/",
    ]
)


def _matcher(llg, tokenizer, grammar: str):
    matcher = llg.LLMatcher(tokenizer, grammar, log_level=0)
    if matcher.is_error():
        raise ValueError(f"llguidance rejects the grammar: {matcher.get_error()}")
    return matcher


def time_llguidance(
    cases,
    tokenizer,
    n_problems: int = 12,
    seed: int = 0,
    middle_chars: int = 400,
    repeats: int = 3,
    grammar: str = PYTHON_LIKE,
) -> pd.DataFrame:
    """llguidance's mask along the true middles of :func:`cadlib.fim.step_cost.fim_problems`
    (``n_problems`` after one warm-up problem, as :func:`cadlib.fim.benchmark.compare_masks`
    draws them), ``repeats`` passes, one thread.

    Returns
    -------
    pandas.DataFrame
        ``repeat, problem, step, seconds, n_allowed, build_seconds`` per mask (``step`` -1:
        the matcher's build, ``seconds`` then the build and the left context's consumption);
        a problem whose middle the grammar rejects stops there (``rejected`` on its last row).
    """
    import llguidance as llg
    import llguidance.hf
    import llguidance.numpy as llg_np

    ll_tok = llguidance.hf.from_tokenizer(tokenizer)
    serialized = llg.LLMatcher.grammar_from_lark(grammar)
    problems = fim_problems(cases, n_problems + 1, seed, middle_chars)
    mask = llg_np.allocate_token_bitmask(1, ll_tok.vocab_size)
    rows: list[dict] = []

    def one_pass(indices, repeat: int | None):
        for p in indices:
            pid, left, middle, _ = problems[p]
            t = time.perf_counter()
            matcher = _matcher(llg, ll_tok, serialized)
            build = time.perf_counter() - t
            ok = matcher.consume_tokens(tokenizer.encode(left, add_special_tokens=False))
            if repeat is not None:
                rows.append(dict(repeat=repeat, problem=pid, step=-1, seconds=build))
            if not ok:  # the left context already falls outside the grammar
                if repeat is not None:
                    rows[-1]["rejected"] = True
                continue
            for k, tid in enumerate(tokenizer.encode(middle, add_special_tokens=False)):
                t = time.perf_counter()
                llg_np.fill_next_token_bitmask(matcher, mask, 0)
                seconds = time.perf_counter() - t
                if repeat is not None:
                    allowed = int(np.unpackbits(mask.view(np.uint8)).sum())
                    rows.append(
                        dict(repeat=repeat, problem=pid, step=k, seconds=seconds, n_allowed=allowed)
                    )
                if not matcher.consume_token(tid):
                    if repeat is not None:
                        rows[-1]["rejected"] = True
                    break

    one_pass([0], None)  # warm-up
    for r in range(repeats):
        one_pass(range(1, len(problems)), r)
    frame = pd.DataFrame(rows)
    if "rejected" not in frame:
        frame["rejected"] = False
    return frame.fillna({"rejected": False})


def llguidance_summary(frame: pd.DataFrame) -> dict:
    """MaskBench's form: masks timed, mean / p50 / p99 microseconds per mask, the matcher's
    build (median, microseconds), and the problems whose middle the grammar rejected."""
    masks = frame[frame.step >= 0].seconds * 1e6
    builds = frame[frame.step < 0].seconds * 1e6
    rejected = frame[frame.rejected.astype(bool)].drop_duplicates(["problem"])
    return dict(
        masks=int(len(masks)),
        mean_us=round(float(masks.mean()), 2),
        p50_us=round(float(masks.median()), 2),
        p99_us=round(float(masks.quantile(0.99)), 2),
        build_median_us=round(float(builds.median()), 2),
        problems=int(frame.problem.nunique()),
        rejected_problems=sorted(str(p) for p in rejected.problem),
    )
