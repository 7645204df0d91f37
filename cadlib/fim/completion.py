"""FIM completion of HumanEval solutions, the companion paper's setting (chapter 8, part 3).

HumanEval's ``prompt + canonical solution`` cut into ``left + middle + right`` inside the
solution (:func:`fim_problems`: whole lines, or arbitrary characters, seeded); the model writes
the middle with and without the constraint. SmolLM2-135M-Instruct has no FIM tokens, so
:func:`fim_prompt_ids` is a chat instruction: by default (``"hole"``) the program with the
middle marked :data:`FIM_HOLE` and the reply pre-filled with a code fence; ``"continue"``
pre-fills the reply with the left context instead (see :data:`FIM_USER`). A post-hoc trim of
echoed context (:func:`trim_to_context`) is scored beside each arm (:data:`ARMS`). Every outcome
is counted (:data:`ENDS`): a middle ends when the model emits its end (EOS or a closing code
fence), which under the constraint is allowed only when ``can_end()``; a budget
(``max_new_tokens``) that runs out first is reported as such, closable or not.
"""

from __future__ import annotations

import random
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm
from transformers import LogitsProcessorList

from cadlib.corpora import seeded_subset
from cadlib.execution import run_humaneval_tests
from cadlib.prompts import chat_ids
from cadlib.record.params import check_choice

from .constraint import FIMConstraint
from .differential import python_accepts
from .logits import FIMLogitsProcessor
from .mask import token_raw, token_texts_cached
from .witness import witness

__all__ = [
    "ENDS",
    "CLOSED_BY_CONSTRAINT",
    "parses",
    "FIMProblem",
    "CUTS",
    "cut_middle",
    "fim_problems",
    "FIM_SYSTEM",
    "FIM_HOLE",
    "FIM_USER",
    "FIM_FENCE",
    "fim_prompt_ids",
    "suffix_anchor",
    "prefix_anchor",
    "trim_to_context",
    "fim_generate",
    "ARMS",
    "fim_completion",
]

#: How a generated middle / body ended: the model's end token, the post-hoc context trim of
#: the FIM experiment, or the budget (the middle as it stands parses, or not).
ENDS = ("model ended", "context trimmed", "budget, closable", "budget, not closable")

#: The end of a middle the budget cut and the opt-in budget close (``close_budget=True``)
#: finished with the constraint's witness (:func:`cadlib.fim.witness.witness`): kept out of
#: :data:`ENDS` so that it is never counted as ended by the model, nor as budget-closed.
CLOSED_BY_CONSTRAINT = "closed by the constraint"


def parses(source: str) -> bool:
    """``ast.parse`` accepts ``source`` (the chapter's syntax-validity test)."""
    return python_accepts(source)


@dataclass(frozen=True)
class FIMProblem:
    """``source = left + middle + right`` with the middle cut inside the solution body.

    ``cut`` is ``"line"`` (whole lines, ending with their newline) or ``"char"`` (arbitrary
    character offsets: mid-token, mid-string, mid-indentation); ``case`` is the HumanEvalPack
    case (its ``meta["prompt"]`` is a prefix of ``left``).
    """

    case: object
    cut: str
    left: str
    middle: str
    right: str

    @property
    def id(self) -> str:
        return f"{self.case.id}/{self.cut}"

    def program(self, middle: str) -> str:
        """The source with ``middle`` in place of the true one."""
        return self.left + middle + self.right


CUTS = ("line", "char")


def cut_middle(
    source: str, start: int, cut: str, rng: random.Random, max_lines: int = 2, max_chars: int = 60
) -> tuple[int, int]:
    """``(a, b)``: a middle ``source[a:b]`` inside ``source[start:]`` (the solution body).

    ``"line"``: ``a`` is the start of a non-blank line, the middle is 1..``max_lines`` whole
    lines (each with its newline). ``"char"``: ``a`` is any offset, the middle 1..``max_chars``
    characters (clipped to the source), re-drawn until it holds a non-space character.
    Raises ``ValueError`` when the body offers no such middle.
    """
    if cut == "line":
        starts = [
            start + k
            for k, ch in enumerate(source[start:], start=0)
            if k == 0 or source[start + k - 1] == "\n"
        ]
        ends = starts[1:] + [len(source)]
        lines = [(a, b) for a, b in zip(starts, ends, strict=True) if source[a:b].strip()]
        if not lines:
            raise ValueError("no non-blank line after the cut start")
        k = rng.randrange(len(lines))
        a = lines[k][0]
        n = rng.randint(1, max_lines)
        b = ends[min(len(starts) - 1, starts.index(a) + n - 1)]
        return a, b
    if cut == "char":
        if not source[start:].strip():
            raise ValueError("the body holds no code")
        while True:
            a = rng.randrange(start, len(source))
            b = min(len(source), a + rng.randint(1, max_chars))
            if source[a:b].strip():
                return a, b
    raise ValueError(f"unknown cut {cut!r}; valid: {', '.join(CUTS)}")


def fim_problems(
    cases, n: int | None, seed: int = 0, max_lines: int = 2, max_chars: int = 60
) -> list[FIMProblem]:
    """Seeded FIM problems from HumanEval solutions (``meta["prompt"] + gold``).

    A seeded subset of ``n`` cases (:func:`cadlib.corpora.seeded_subset`; all when
    ``None``), cut kinds alternating ``line`` / ``char`` in that order (with all cases,
    each case gives one problem of each kind). Each cut draws from
    ``random.Random(f"{seed}:{case id}:{cut}")``, so a problem does not depend on which other
    cases are drawn.
    """
    chosen = seeded_subset([c for c in cases if c.gold.strip()], n, seed)
    jobs = (
        [(c, cut) for c in chosen for cut in CUTS]
        if n is None
        else [(c, CUTS[k % 2]) for k, c in enumerate(chosen)]
    )
    out = []
    for case, cut in jobs:
        prompt = case.meta["prompt"]
        source = prompt + case.gold
        rng = random.Random(f"{seed}:{case.id}:{cut}")
        a, b = cut_middle(source, len(prompt), cut, rng, max_lines, max_chars)
        out.append(FIMProblem(case, cut, source[:a], source[a:b], source[b:]))
    return out


#: The FIM prompts (SmolLM2-Instruct has no FIM tokens). ``"hole"``: the program with the middle
#: replaced by :data:`FIM_HOLE`, the reply pre-filled with a code fence; the model writes the
#: missing code and closes the fence. ``"continue"``: the right context shown in the user turn,
#: the reply pre-filled with a fence and the left context, so the model continues the code
#: where the left context stops.
FIM_SYSTEM = "You are a Python code completion engine."
FIM_HOLE = "<FILL_ME>"
FIM_USER = {
    "hole": """\
Fill in the missing code marked {hole} in this Python program:
```python
{left}{hole}{right}```
Reply with only the code that replaces {hole}, exactly as it appears in the program (with \
its indentation), in a ```python code block.""",
    "continue": """\
Complete the missing middle of a Python program. The code that follows the missing part is:
```python
{right}```
Continue the code exactly where it stops, write only the missing part, and close the code \
block with ``` where your code meets the code above.""",
}
FIM_FENCE = "```"


def fim_prompt_ids(problem: FIMProblem, tokenizer, style: str = "hole") -> list[int]:
    """Ids of the FIM prompt of ``style`` (:data:`FIM_USER`): chat turns, then the start of
    the assistant's reply, ``"```python\n"`` (``"continue"``: followed by the left context,
    encoded as plain text, so a left context cut mid-token ends in whatever tokens its text
    encodes to)."""
    check_choice("FIM prompt style", style, FIM_USER)
    user = FIM_USER[style].format(left=problem.left, right=problem.right, hole=FIM_HOLE)
    messages = [{"role": "system", "content": FIM_SYSTEM}, {"role": "user", "content": user}]
    reply = f"{FIM_FENCE}python\n" + (problem.left if style == "continue" else "")
    return chat_ids(messages, tokenizer) + list(tokenizer.encode(reply, add_special_tokens=False))


def _fence_ids(tokenizer) -> list[int]:
    """Ids that end an unconstrained middle: EOS and every token holding a code fence."""
    texts = token_texts_cached(tokenizer)
    fences = [i for i, t in enumerate(texts) if isinstance(t, str) and FIM_FENCE in t]
    return [int(tokenizer.eos_token_id), *fences]


def _end_ids(tokenizer) -> list[int]:
    """The end tokens under the constraint: EOS and the bare fence token(s) (a token with
    code around its fence would hide that code from the constraint)."""
    texts = token_texts_cached(tokenizer)
    return [
        int(tokenizer.eos_token_id),
        *(i for i, t in enumerate(texts) if isinstance(t, str) and t.strip() == FIM_FENCE),
    ]


class _Clock:
    """First logits processor of a ``generate`` call: the time of each step's call."""

    def __init__(self):
        self.calls: list[float] = []

    def __call__(self, input_ids, scores):
        self.calls.append(time.perf_counter())
        return scores


class _Timed:
    """Wrap a logits processor and record the seconds of each call."""

    def __init__(self, inner):
        self.inner, self.seconds = inner, []

    def __call__(self, input_ids, scores):
        t0 = time.perf_counter()
        out = self.inner(input_ids, scores)
        self.seconds.append(time.perf_counter() - t0)
        return out


def _decode_text(ids, texts) -> str:
    raw = b"".join(token_raw(t) for t in (texts[i] for i in ids) if t is not None)
    return raw.decode("utf-8", errors="replace")


def suffix_anchor(right: str, min_chars: int = 10) -> str:
    """The start of the right context up to the end of the first line that brings it to
    ``min_chars`` non-space characters (the whole right context when shorter)."""
    seen = 0
    for k, ch in enumerate(right):
        seen += not ch.isspace()
        if ch == "\n" and seen >= min_chars:
            return right[: k + 1]
    return right


def prefix_anchor(left: str, min_chars: int = 10) -> str:
    """The end of the left context from the start of the last line that brings it to
    ``min_chars`` non-space characters (the whole left context when shorter)."""
    seen = 0
    for k in range(len(left) - 1, -1, -1):
        seen += not left[k].isspace()
        if seen >= min_chars and (k == 0 or left[k - 1] == "\n"):
            return left[k:]
    return left


def _occurrences(text: str, sub: str) -> list[int]:
    out, k = [], text.find(sub) if sub.strip() else -1
    while k >= 0:
        out.append(k)
        k = text.find(sub, k + 1)
    return out


def trim_to_context(
    middle: str, left: str, right: str, accept=None, min_chars: int = 10
) -> str | None:
    """Post-hoc extraction of a middle from a reply that echoes its contexts.

    A chat model asked for a middle often rewrites the code around it. The reply is cut
    after an echo of the left context's last line(s) (:func:`prefix_anchor`) and before an
    echo of the right context's first line(s) (:func:`suffix_anchor`). Without ``accept``
    the first echo of each is used (an unchecked heuristic); with ``accept(candidate) ->
    bool`` (e.g. the FIM constraint's ``can_end``) the candidates are tried, cuts at echoes
    first and earliest first, and the first accepted one is returned. ``None``: no echo (or
    no accepted candidate).
    """
    lead = prefix_anchor(left, min_chars)
    starts = [k + len(lead) for k in _occurrences(middle, lead)]
    if accept is None:
        a = starts[0] if starts else 0
        ends = [k for k in _occurrences(middle[a:], suffix_anchor(right, min_chars))]
        if not starts and not ends:
            return None
        return middle[a : a + ends[0]] if ends else middle[a:]
    for a in [*starts, 0]:
        ends = _occurrences(middle[a:], suffix_anchor(right, min_chars))
        for e in [*ends, len(middle) - a] if a else ends:
            if accept(middle[a : a + e]):
                return middle[a : a + e]
    return None


def fim_generate(
    model,
    tokenizer,
    problem: FIMProblem,
    *,
    constrained: bool,
    budget: int,
    style: str = "hole",
    close_budget: bool = False,
) -> dict:
    """Greedy middle for ``problem`` (``model.generate``), with or without the constraint.

    Unconstrained: generation stops at EOS or any token holding a code fence, and the middle
    is the text before the fence. Constrained: a :class:`~cadlib.fim.FIMLogitsProcessor`
    masks every token, and EOS / a bare fence (the end) are allowed only when ``can_end()``.
    ``close_budget`` (constrained only, opt-in): a middle the budget cuts before it can end is
    finished with the constraint's witness, and its end is :data:`CLOSED_BY_CONSTRAINT`
    (``witness`` holds the appended text).

    Returns
    -------
    dict
        ``middle``, ``end`` (:data:`ENDS`), ``trimmed`` (:func:`trim_to_context` of the
        middle, candidates checked by the constraint in the constrained arm; ``None`` if no
        cut),
        ``new_tokens``, per step ``mask_s``, ``step_s`` (time between logits-processor calls
        minus the mask: the forward plus ``generate``'s own work) and ``middle_chars``, and
        ``setup_s`` (constraint construction).
    """
    texts = token_texts_cached(tokenizer)
    ids = fim_prompt_ids(problem, tokenizer, style)
    clock, timed, setup, start = _Clock(), None, None, None
    stop = _end_ids(tokenizer) if constrained else _fence_ids(tokenizer)
    processors = [clock]
    if constrained:
        t0 = time.perf_counter()
        constraint = FIMConstraint(problem.left, problem.right)
        setup = time.perf_counter() - t0
        start = constraint.fork()
        inner = FIMLogitsProcessor(constraint, tokenizer, len(ids), end_token_ids=stop)
        timed = _Timed(inner)
        processors.append(timed)
    x = torch.tensor([ids], dtype=torch.long, device=model.device)
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = model.generate(
            input_ids=x,
            attention_mask=torch.ones_like(x),
            max_new_tokens=budget,
            do_sample=False,
            eos_token_id=stop,
            pad_token_id=tokenizer.eos_token_id,
            logits_processor=LogitsProcessorList(processors),
        )
    new = out[0, len(ids) :].tolist()
    ended = bool(new) and new[-1] in stop
    body = new[:-1] if ended else new
    middle = _decode_text(body, texts)
    mask_s = timed.seconds if timed else []
    steps = np.diff(clock.calls).tolist()
    step_s = [s - m for s, m in zip(steps, mask_s, strict=False)] if mask_s else steps
    chars = [len(_decode_text(body[:k], texts)) for k in range(len(clock.calls))]
    if constrained:
        inner._advance(out[0].tolist())
        closable = inner.constraint.can_end() and not inner.pending
    else:
        middle = middle.split(FIM_FENCE)[0]
        closable = parses(problem.program(middle))
    end = ENDS[0] if ended else ENDS[2] if closable else ENDS[3]
    closing = None
    if constrained and close_budget and end == ENDS[3] and not inner.pending:
        closing = witness(inner.constraint)
        if closing is not None:
            middle, end = middle + closing, CLOSED_BY_CONSTRAINT
    accept = None if start is None else (lambda m: (c := start.fork()).feed(m) and c.can_end())
    trimmed = trim_to_context(middle, problem.left, problem.right, accept)
    return dict(
        middle=middle,
        end=end,
        trimmed=trimmed,
        new_tokens=len(new),
        mask_s=mask_s,
        step_s=step_s,
        middle_chars=chars,
        setup_s=setup,
        **({"witness": closing} if close_budget else {}),
    )


#: The four arms of the FIM experiment: constraint x post-hoc context trim.
ARMS = (
    "unconstrained",
    "unconstrained + context trim",
    "FIM-constrained",
    "FIM-constrained + context trim",
)


def fim_completion(
    model,
    tokenizer,
    problems,
    *,
    budget: int,
    system: str,
    style: str = "hole",
    test_timeout: float | None = 10.0,
    progress: bool = True,
    close_budget: bool = False,
):
    """Two generations per problem (without / with the constraint), four arms (:data:`ARMS`):
    each raw, and each with the echoes of its contexts trimmed (:func:`trim_to_context`; in
    the constrained arm only a closable candidate is taken). ``close_budget``: the opt-in
    budget close of :func:`fim_generate` in the constrained arms.

    Returns
    -------
    pandas.DataFrame
        One row per (problem, arm): ``system, arm, problem, cut, parses``
        (``ast.parse(left + middle + right)``), ``em`` (middle == true middle), ``passed``
        (HumanEvalPack tests of the completed solution), ``test_detail``, ``end``
        (:data:`ENDS`), ``new_tokens``, ``true_chars``, ``middle``, and the per-step lists
        of :func:`fim_generate` (on the raw arms).
    """
    rows = []
    for problem in tqdm(problems, desc=f"FIM, {system}", disable=not progress):
        runs = {
            c: fim_generate(
                model,
                tokenizer,
                problem,
                constrained=c,
                budget=budget,
                style=style,
                close_budget=close_budget,
            )
            for c in (False, True)
        }
        for arm in ARMS:
            r = dict(runs[arm.startswith("FIM")])
            trimmed = r.pop("trimmed")
            if arm.endswith("trim"):
                r.update(mask_s=[], step_s=[], middle_chars=[])
                if trimmed is not None:
                    r.update(middle=trimmed, end=ENDS[1])
            source = problem.program(r["middle"])
            passed, detail = None, "not run"
            if test_timeout is not None:
                body = source[len(problem.case.meta["prompt"]) :]
                passed, detail = run_humaneval_tests(problem.case, body, timeout=test_timeout)
            rows.append(
                dict(
                    system=system,
                    style=style,
                    arm=arm,
                    problem=problem.id,
                    cut=problem.cut,
                    parses=parses(source),
                    em=r["middle"] == problem.middle,
                    passed=passed,
                    test_detail=detail,
                    true_chars=len(problem.middle),
                    **r,
                )
            )
    return pd.DataFrame(rows)
