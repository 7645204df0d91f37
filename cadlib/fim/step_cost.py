"""Cost of the FIM constraint per generated step, against the paper's baselines (§III-A).

:func:`per_step_cost` feeds a true middle one step at a time (a character, or a token of a
tokenizer) and times, at every step,

``incremental``
    our constraint: ``feed(step)``, ``viable()`` and ``can_end()`` — constant work per step;
``checked_unconstrained``
    the paper's "checked unconstrained generation": ``ast.parse(left + middle + right)`` at
    every step (membership only, no early rejection) — linear per step, quadratic in total;
``from_scratch``
    our recognizer re-run on ``left + middle`` from a fresh root chart at every step (the right
    context's quotient reused) — the same quadratic shape with our own parser.

:func:`mask_cost` times the allowed-token mask per step with the vocabulary trie
(:class:`cadlib.fim.mask.TokenTrie`) against forking and feeding tokens one by one, after
checking on a sample that both give the same mask and that the true next token is allowed.
:func:`mask_stages` splits one mask's time into its stages (the parser's operations through
:class:`_ParserClock`, the lexical tables' rest, the numpy cover, f-string fields, byte tokens,
``can_end``). The problems are :func:`fim_problems` (stretches of HumanEvalPack solutions);
:mod:`cadlib.fim.benchmark` times the whole mask beside its previous implementation on them.

All return tidy ``pandas.DataFrame`` rows for the FIM chapter to plot; nothing here asserts a
speed. Timings are wall-clock ``time.perf_counter`` on whatever machine runs them: label them
with the hardware; on a shared 2-core machine they are noisy, so compare medians.

Reference run (2 shared AMD EPYC cores, CPython 3.11.7, ``heval-fix-py``, seed 0, 6 problems,
400-character middles): per character, ``incremental`` 3.0 µs median at every middle length
(3.0 / 2.9 / 3.1 / 3.3 µs for 0-99 / 100-199 / 200-299 / 300+ characters; the mean, 45 µs, is
dominated by first-time LR(0) state construction), ``checked_unconstrained`` 26 → 48-58 µs and
``from_scratch`` 1.6 → 9.3 ms, growing with the middle. Per SmolLM2 token, ``incremental`` 16 µs
median. Masks over SmolLM2's 49,152 tokens (4 problems, 138 steps): trie 8.7 ms median
(90th percentile 31 ms; the first step in a process pays ~0.4 s of table building), one fork
per token 299 ms median; identical on every sampled token, true next token always allowed.
With the lexical tables (:mod:`cadlib.fim.tokenlex`), re-measured on the same kind of cores
while another job loaded them (one fork per token then 564-705 ms median, two runs each,
alternating): trie 5.9-7.7 ms median, 90th percentile 18-21 ms, where the trie walk before
them took 19 ms and 45-53 ms in the same runs; :func:`mask_stages` (4 problems, 164 steps,
200-character middles): whole mask 4.1-5.7 ms median and 13.6-15.7 ms p90 against 20.8-21.9
and 59.9-61.7 ms.
"""

from __future__ import annotations

import random
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd

from .constraint import FIMConstraint
from .differential import python_accepts
from .mask import TokenTrie, naive_allowed_mask, token_texts_cached

__all__ = ["fim_problems", "per_step_cost", "mask_cost", "mask_stages", "trie_mask", "time_call"]


class _ParserClock:
    """The lexer as the lexical tables see it (:meth:`cadlib.fim.tokenlex.LexTables.allowed`),
    adding up in ``seconds`` the time spent in the parser's operations they replay on a real
    chart (``sip_viable``, ``emit``, ``indentation``, the recognizer's ``scan``: Earley scans
    and completions), so :func:`mask_stages` can split a table evaluation into the parser's
    share and the lexical rest. Nested calls count once; the clock's own overhead (two
    ``perf_counter`` calls per operation) is counted on the parser's side."""

    def __init__(self, lexer):
        self._lexer, self.seconds, self._depth = lexer, 0.0, 0
        for name in ("sip_viable", "emit", "indentation"):
            setattr(self, name, self._timed(getattr(lexer, name)))
        self.rec = SimpleNamespace(scan=self._timed(lexer.rec.scan))

    def _timed(self, op):
        def timed(*args):
            if self._depth:
                return op(*args)
            self._depth += 1
            t = time.perf_counter()
            try:
                return op(*args)
            finally:
                self.seconds += time.perf_counter() - t
                self._depth -= 1

        return timed

    def __getattr__(self, name):
        return getattr(self._lexer, name)


def fim_problems(cases, n_problems: int, seed: int = 0, middle_chars: int = 200) -> list:
    """``(case_id, left, middle, right)``: FIM problems whose middle is a stretch of a
    solution's body (HumanEvalPack ``meta["prompt"] + gold``), ``middle_chars`` long at most."""
    rng = random.Random(seed)
    out = []
    pool = [c for c in cases if len(c.gold) > 20]
    for case in rng.sample(pool, min(n_problems, len(pool))):
        src = case.meta.get("prompt", "") + case.gold
        start = len(src) - len(case.gold)
        a = rng.randrange(start, max(start + 1, len(src) - middle_chars // 2))
        b = min(len(src), a + middle_chars)
        out.append((case.id, src[:a], src[a:b], src[b:]))
    return out


def _steps(middle: str, tokenizer) -> list[str]:
    """The middle as characters, or as the text of each of its tokens (a token holding part of
    a multi-byte character waits for the rest)."""
    if tokenizer is None:
        return list(middle)
    texts = token_texts_cached(tokenizer)
    out, pending = [], b""
    for tid in tokenizer.encode(middle, add_special_tokens=False):
        text = texts[tid]
        raw = pending + (text if isinstance(text, bytes) else text.encode("utf-8"))
        try:
            out.append(raw.decode("utf-8"))
            pending = b""
        except UnicodeDecodeError:
            pending = raw
    return [s for s in out if s]


def time_call(fn) -> tuple:
    """``(seconds, value)`` of one call of ``fn`` (wall clock, ``time.perf_counter``)."""
    t = time.perf_counter()
    value = fn()
    return time.perf_counter() - t, value


def per_step_cost(
    cases,
    n_problems: int = 3,
    seed: int = 0,
    middle_chars: int = 200,
    tokenizer=None,
    methods=("incremental", "checked_unconstrained", "from_scratch"),
):
    """Per-step time of each method along true middles (see the module docstring).

    Parameters
    ----------
    cases
        Corpus cases (HumanEvalPack) to draw FIM problems from (:func:`fim_problems`).
    n_problems, seed, middle_chars
        How many problems, their seed and the middle length (characters).
    tokenizer
        Steps are this tokenizer's tokens of the middle; ``None`` = characters.
    methods
        Which of the three methods to time.

    Returns
    -------
    pandas.DataFrame
        ``problem, method, step, middle_chars, seconds, viable, can_end, lexer_branches``
        (``viable``/``can_end`` as that method reports them; ``checked_unconstrained`` has no
        viability, ``None``; ``lexer_branches``: live branches of Fig. 5's lexer after the
        step, for ``incremental``).
    """
    problems = fim_problems(cases, n_problems + 1, seed, middle_chars)
    _run(problems[0], _steps(problems[0][2], tokenizer), methods)  # warm-up (not recorded)
    rows = []
    for pid, left, middle, right in problems[1:]:
        for method, k, length, seconds, viable, can_end, branches in _run(
            (pid, left, middle, right), _steps(middle, tokenizer), methods
        ):
            rows.append(
                dict(
                    problem=pid,
                    method=method,
                    step=k,
                    middle_chars=length,
                    seconds=seconds,
                    viable=viable,
                    can_end=can_end,
                    lexer_branches=branches,
                )
            )
    return pd.DataFrame(rows)


def _run(problem: tuple, steps: list[str], methods) -> list:
    _, left, _, right = problem
    out = []
    if "incremental" in methods:
        c = FIMConstraint(left, right)
        length = 0
        for k, piece in enumerate(steps):
            seconds, (viable, can_end) = time_call(lambda p=piece: (c.feed(p), c.can_end()))
            length += len(piece)
            out.append(("incremental", k, length, seconds, viable, can_end, len(c.branches)))
    if "checked_unconstrained" in methods:
        middle = ""
        for k, piece in enumerate(steps):
            middle += piece
            seconds, ok = time_call(lambda m=middle: python_accepts(left + m + right))
            out.append(("checked_unconstrained", k, len(middle), seconds, None, ok, None))
    if "from_scratch" in methods:
        problem_state = FIMConstraint(left, right)._problem
        middle = ""
        for k, piece in enumerate(steps):
            middle += piece
            seconds, (viable, can_end) = time_call(
                lambda m=middle: _from_scratch(problem_state, left, right, m)
            )
            out.append(("from_scratch", k, len(middle), seconds, viable, can_end, None))
    return out


def _from_scratch(problem, left: str, right: str, middle: str) -> tuple:
    """Re-run lexer and parser over ``left + middle`` from a fresh root chart (the right
    context's quotient grammar is reused, so only the quadratic re-parsing is timed)."""
    fresh = problem.fresh()
    branches = fresh.lexer.feed(fresh.lexer.initial(), left + middle)
    c = FIMConstraint(left, right, _problem=fresh, _branches=branches)
    return c.viable(), c.can_end()


def mask_cost(
    cases,
    tokenizer,
    n_problems: int = 2,
    seed: int = 0,
    middle_chars: int = 120,
    naive_sample: int = 2000,
    end_token_ids=None,
):
    """Per-step mask time: trie walk vs one fork per token (on a sample, extrapolated); both
    include the end-token decision (``can_end``).

    Returns
    -------
    pandas.DataFrame
        ``problem, step, middle_chars, method`` (``"trie"``, ``"naive"``), ``seconds`` (naive:
        extrapolated to the whole vocabulary), ``n_allowed`` (trie), ``next_allowed`` (the true
        next token is in the mask), ``sample_agrees`` (trie and naive masks agree on the
        sample).
    """
    rng = random.Random(seed)
    texts = token_texts_cached(tokenizer)
    trie = TokenTrie.for_tokenizer(tokenizer)
    end_ids = [tokenizer.eos_token_id] if end_token_ids is None else list(end_token_ids)
    rows = []
    problems = fim_problems(cases, n_problems, seed, middle_chars)
    for pid, left, middle, right in problems:
        ids = tokenizer.encode(middle, add_special_tokens=False)
        c = FIMConstraint(left, right)
        twin = FIMConstraint(left, right)  # own charts: no memo shared between the methods
        length = 0
        for k, tid in enumerate(ids):
            sample = rng.sample(range(len(texts)), naive_sample)
            naive_seconds, naive = time_call(
                lambda s=sample, t=twin: naive_allowed_mask(t, tokenizer, end_token_ids, s)
            )
            trie_seconds, mask = time_call(lambda cur=c: trie_mask(trie, cur, end_ids))
            rows.append(
                dict(
                    problem=pid,
                    step=k,
                    middle_chars=length,
                    method="trie",
                    seconds=trie_seconds,
                    n_allowed=int(mask.sum()),
                    next_allowed=bool(mask[tid]),
                    sample_agrees=bool((mask[sample] == naive[sample]).all()),
                )
            )
            rows.append(
                dict(
                    problem=pid,
                    step=k,
                    middle_chars=length,
                    method="naive",
                    seconds=naive_seconds * len(texts) / naive_sample,
                    n_allowed=None,
                    next_allowed=None,
                    sample_agrees=None,
                )
            )
            text = texts[tid]
            if not isinstance(text, str):
                break  # a piece of a multi-byte character: stop this problem here
            c.feed(text)
            twin.feed(text)
            length += len(text)
    return pd.DataFrame(rows)


def trie_mask(trie: TokenTrie, constraint: FIMConstraint, end_ids: list):
    """The full mask of :func:`cadlib.fim.mask.allowed_mask`: trie walk plus end tokens."""
    mask = trie.allowed(constraint)
    mask[end_ids] = constraint.can_end()
    return mask


def mask_stages(
    cases, tokenizer, n_problems: int = 4, seed: int = 0, middle_chars: int = 200
) -> pd.DataFrame:
    """Where a mask's time goes, stage by stage, along true middles (token by token): the
    lexical tables (the parser operations of each branch's table, and the trie walks that grow
    the tables: :meth:`cadlib.fim.tokenlex.LexTables.allowed`) split into the parser's
    operations they replay on the branch's real chart (Earley scans and completions) and the
    lexical rest (walks, filing, evaluation bookkeeping), the numpy cover of their token ids,
    the f-string fields (tokens that may end a field, re-checked with the expression's text),
    the byte tokens, and ``can_end`` for the end tokens.

    Returns
    -------
    pandas.DataFrame
        ``problem, step, middle_chars, stage, seconds`` (one row per stage and step).
    """
    texts = token_texts_cached(tokenizer)
    trie = TokenTrie.for_tokenizer(tokenizer)
    rows = []
    for pid, left, middle, right in fim_problems(cases, n_problems, seed, middle_chars):
        c = FIMConstraint(left, right)
        parser = _ParserClock(c._problem.lexer)
        length = 0
        for k, tid in enumerate(tokenizer.encode(middle, add_special_tokens=False)):
            mask = np.zeros(trie.size, dtype=bool)
            parser.seconds = 0.0
            walk_s, found = time_call(lambda cur=c, p=parser: trie.tables.allowed(p, cur.branches))
            cover_s, _ = time_call(lambda m=mask, f=found: trie._cover(m, f))
            field_s, _ = time_call(lambda m=mask, cur=c: trie._fstring_fields(m, cur))
            byte_s, _ = time_call(lambda m=mask, cur=c: trie._byte_tokens(m, cur))
            end_s, _ = time_call(c.can_end)
            for stage, seconds in (
                ("parser operations (Earley)", parser.seconds),
                ("lexical tables (walks, filing)", walk_s - parser.seconds),
                ("numpy cover", cover_s),
                ("f-string fields", field_s),
                ("byte tokens", byte_s),
                ("can_end", end_s),
            ):
                rows.append(
                    dict(problem=pid, step=k, middle_chars=length, stage=stage, seconds=seconds)
                )
            text = texts[tid]
            if not isinstance(text, str):
                break
            c.feed(text)
            length += len(text)
    return pd.DataFrame(rows)
