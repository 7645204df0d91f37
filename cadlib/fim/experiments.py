"""The FIM chapter's two experiments: constrained ``<gen>`` bodies, and FIM completion (ch. 8).

The companion paper (Fulton et al., "Constrained Decoding for Fill-in-the-Middle Code Language
Models via Efficient Left and Right Quotienting of Context-Sensitive Grammars") evaluates its
recognizer on FIM completion of Python 3 with syntax constraints. Our copy of the paper stops in
§VI-A, before its evaluation, so the protocol below is designed from the chapter's issue, not
copied from the paper.

Experiment 1: constrained ``<gen>`` bodies in localized edits (:func:`localized_edit`)
    A Copy-as-Decode program ``copy … gen … copy`` for a Python document makes each ``<gen>``
    body a FIM problem: left = the resolved text before it, right = the resolved text after
    it. In localized-edit mode (:meth:`cadlib.decoder.CopyDecoder.decode` with
    ``free_gen=True``) the program's ops and copy spans are given (here by the oracle
    alignment, as a user's selection would give them) and the model writes the bodies;
    :class:`GenBodyMask` masks every body token with :class:`~cadlib.fim.FIMConstraint`
    (§III Problem 1) so that the resolved output always parses, and allows ``</gen>`` only
    when ``can_end()``. HumanEvalFix documents are function *bodies*, so the unit that must
    parse is ``meta["prompt"] + resolved body``: the prompt (signature and docstring) is part
    of the left context.
Experiment 2: FIM completion, the companion paper's setting (:func:`fim_completion`)
    HumanEval's ``prompt + canonical solution`` cut into ``left + middle + right`` inside the
    solution (:func:`fim_problems`: whole lines, or arbitrary characters, seeded); the model
    writes the middle with and without the constraint. SmolLM2-135M-Instruct has no FIM
    tokens, so :func:`fim_prompt_ids` is a chat instruction: by default (``"hole"``) the
    program with the middle marked :data:`FIM_HOLE` and the reply pre-filled with a code
    fence; ``"continue"`` pre-fills the reply with the left context instead (see
    :data:`FIM_USER`). A post-hoc trim of echoed context (:func:`trim_to_context`) is scored
    beside each arm.
Both count every outcome (:data:`ENDS`): a middle ends when the model emits its end (``</gen>``
or EOS / a closing code fence), which under the constraint is allowed only when ``can_end()``;
a budget (``max_new_tokens``) that runs out first is reported as such, closable or not.

The cost side reuses :func:`cadlib.fim.per_step_cost` (ours vs the quadratic "checked
unconstrained" ``ast.parse`` of everything at every step, §III-A) and records the time of the
allowed-token mask per generated token beside the model's forward.
"""

from __future__ import annotations

import random
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm
from transformers import LogitsProcessorList

from ..corpora import seeded_subset
from ..decoder import CopyDecoder
from ..execution import run_humaneval_tests
from ..fsm import token_table
from ..metrics import byte_equal, equal_up_to_one_newline
from ..models import SMOLLM2, load_model
from ..oracle import oracle_program
from ..paper_settings import CODE_MODEL
from ..params import check_choice
from ..prompts import chat_ids, edit_prompt_ids
from ..results import repo_root
from ..sft import load_split, split_cases
from .constraint import FIMConstraint
from .differential import python_accepts
from .mask import (
    FIMLogitsProcessor,
    TokenTrie,
    apply_mask,
    token_raw,
    token_texts_cached,
    utf8_prefix,
)

__all__ = [
    "PROFILES",
    "system_labels",
    "ENDS",
    "FIM_SYSTEM",
    "FIM_USER",
    "FIM_HOLE",
    "GenBodyMask",
    "body_mask_factory",
    "load_checkpoint",
    "single_gen_cases",
    "edit_cases",
    "localized_edit",
    "FIMProblem",
    "cut_middle",
    "fim_problems",
    "fim_prompt_ids",
    "fim_generate",
    "fim_completion",
    "ARMS",
    "suffix_anchor",
    "prefix_anchor",
    "trim_to_context",
    "validity_table",
    "step_costs",
    "cost_by_length",
    "parses",
]

#: ``checkpoint``: the chapter-7 SFT model, relative to the repository root (``checkpoints/`` is
#: git-ignored: absent on a fresh clone, then reported as not available; ``""`` skips it).
#: ``edit_cases`` / ``fim_cases`` / ``diff_cases``: seeded subsets (``None`` = all);
#: ``*_budget``: max new tokens per ``<gen>`` body / per middle; ``threads``: torch CPU threads
#: (one makes greedy decoding bitwise repeatable on a shared machine; ``None``: torch's default).
PROFILES = {
    "cpu": dict(
        model="smollm2-135m-instruct", checkpoint="checkpoints/sft-smollm2-135m-instruct-py-s0",
        edit_cases=10, edit_budget=48, fim_cases=12, fim_budget=48, fim_style="hole",
        fim_max_lines=2, fim_max_chars=40, diff_cases=12, diff_splits=3, diff_edits=4,
        cost_problems=4, cost_middle_chars=400, test_timeout=5.0, threads=1,
    ),
    # the companion paper's experiments are not in our copy: the SFT chapter's code model and
    # its paper-profile Py-only seed-0 checkpoint (cadlib.paper_settings)
    "paper": dict(
        model=CODE_MODEL, checkpoint="checkpoints/sft-Qwen_Qwen2.5-Coder-1.5B-Instruct-py-s0",
        edit_cases=None, edit_budget=128, fim_cases=None, fim_budget=128, fim_style="hole",
        fim_max_lines=3, fim_max_chars=120, diff_cases=None, diff_splits=5, diff_edits=5,
        cost_problems=12, cost_middle_chars=400, test_timeout=10.0, threads=None,
    ),
    # CI's check of the paper path (make test-smoke): the local stand-in for a hub model
    # and the checkpoint chapter 7's smoke run wrote (cadlib.sft.SMOKE_CHECKPOINTS).
    "smoke": dict(
        model="qwen2-smoke", checkpoint="_build/smoke/checkpoints/sft-qwen2-smoke-py-s0",
        edit_cases=2, edit_budget=8, fim_cases=2, fim_budget=8, fim_style="hole",
        fim_max_lines=3, fim_max_chars=120, diff_cases=2, diff_splits=2, diff_edits=2,
        cost_problems=1, cost_middle_chars=100, test_timeout=5.0, threads=1,
    ),
}  # fmt: skip

#: How a generated middle / body ended: the model's end token, the post-hoc context trim of
#: the FIM experiment, or the budget (the middle as it stands parses, or not).
ENDS = ("model ended", "context trimmed", "budget, closable", "budget, not closable")


def parses(source: str) -> bool:
    """``ast.parse`` accepts ``source`` (the chapter's syntax-validity test)."""
    return python_accepts(source)


# --------------------------------------------------------------------------------------------
# Experiment 1: the FIM constraint on <gen> bodies
# --------------------------------------------------------------------------------------------


class GenBodyMask:
    """The FIM constraint on one ``<gen>`` body, in the decoder's body layout (§III Problem 1).

    A body's text is the resolved text with at most one leading and one trailing newline
    stripped (Copy-as-Decode §2.2), so a leading ``"\\n"`` is not fed to the constraint, and
    the end is allowed when the middle *without* a final newline can end. The first id of
    ``</gen>`` (SmolLM2: ``</``) is the end token: allowed exactly when ``can_end()`` (never
    as body text), after which the rest of ``</gen>`` is forced. The constraint sees the body
    as written, i.e. escaped (:mod:`cadlib.escape`); the entities are non-ASCII characters,
    possible in Python only inside strings and comments, where the resolver's unescaping keeps
    the program valid.

    Parameters
    ----------
    left, right
        The FIM contexts (for HumanEvalFix: ``prompt + resolved text before the body`` and the
        resolved text after it).
    tokenizer
        The model's Hugging Face tokenizer.

    Attributes
    ----------
    mask_s, middle_chars
        Seconds of each mask computation and the middle's length (characters) at that step.
    setup_s
        Seconds to build the constraint (the right context's quotient grammar, §IV-B, V-B).
    end
        After :meth:`finish`: one of :data:`ENDS`.
    """

    def __init__(self, left: str, right: str, tokenizer):
        t0 = time.perf_counter()
        self.constraint = FIMConstraint(left, right)
        self.setup_s = time.perf_counter() - t0
        self.close_ids = tuple(token_table(tokenizer).gen_close)
        self.trie = TokenTrie.for_tokenizer(tokenizer)
        self.texts = token_texts_cached(tokenizer)
        self.newline_ids = _newline_ids(self.texts)
        self.before_newline: FIMConstraint | None = None
        self.raw = ""  # the body text so far (leading newline included)
        self.pending = b""
        self.seen = 0
        self.closing = 0  # ids of </gen> seen after the model chose to end
        self.mask_s: list[float] = []
        self.middle_chars: list[int] = []
        self.end: str | None = None

    # -- state ---------------------------------------------------------------------------------

    def can_end(self) -> bool:
        """The body may end here: ``left + body (stripped) + right`` is a program."""
        if self.pending:
            return False
        c = self.before_newline if self.before_newline is not None else self.constraint
        return c.can_end()

    @property
    def middle(self) -> str:
        """The body text as the resolver emits it (one leading/trailing newline stripped)."""
        text = self.raw[1:] if self.raw.startswith("\n") else self.raw
        return text[:-1] if text.endswith("\n") else text

    def _feed(self, text: str) -> None:
        if not self.raw and text.startswith("\n"):  # the stripped leading newline
            self.raw, text = "\n", text[1:]
        if not text:
            return
        self.raw += text
        if text.endswith("\n"):
            self.constraint.feed(text[:-1])
            self.before_newline = self.constraint.fork()
            self.constraint.feed("\n")
        else:
            self.constraint.feed(text)
            self.before_newline = None

    def _advance(self, body_ids) -> None:
        for tid in body_ids[self.seen :]:
            tid = int(tid)
            if self.closing or tid == self.close_ids[0]:
                self.closing += 1
                continue
            text = self.texts[tid] if tid < len(self.texts) else None
            if text is None:
                continue
            # invalid UTF-8 stays pending (no end, no byte token fits after it), where
            # FIMLogitsProcessor empties the constraint instead
            chars, self.pending, _ = utf8_prefix(self.pending + token_raw(text))
            self._feed(chars)
        self.seen = len(body_ids)

    # -- the mask ------------------------------------------------------------------------------

    def allowed(self) -> np.ndarray:
        """Boolean mask over the tokenizer's ids for the next body token."""
        if self.closing:
            mask = np.zeros(len(self.texts), dtype=bool)
            if self.closing < len(self.close_ids):
                mask[self.close_ids[self.closing]] = True
            return mask
        mask = self.trie.allowed(self.constraint, self.pending)
        if not self.raw and not self.pending:  # a leading newline is stripped, not fed
            for tid, text in self.newline_ids:
                mask[tid] = self.constraint.fork().feed(text[1:]) if text[1:] else True
        mask[self.close_ids[0]] = self.can_end()
        return mask

    def __call__(self, body_ids, scores):
        """``(body ids so far, scores (V,)) -> masked scores`` (the decoder's body hook)."""
        t0 = time.perf_counter()
        self._advance(list(body_ids))
        out = apply_mask(scores, self.allowed())
        if not self.closing:
            self.mask_s.append(time.perf_counter() - t0)
            self.middle_chars.append(len(self.middle))
        return out

    def finish(self, body_ids) -> str:
        """Account for the whole body (its ids without ``</gen>``); returns :attr:`end`."""
        self._advance(list(body_ids))
        if self.closing:
            self.end = ENDS[0]
        else:
            self.end = ENDS[2] if self.can_end() else ENDS[3]
        return self.end


def _newline_ids(texts) -> list[tuple[int, str]]:
    return [(i, t) for i, t in enumerate(texts) if isinstance(t, str) and t.startswith("\n")]


def body_mask_factory(prompt: str, tokenizer):
    """``gen_processor`` for :meth:`CopyDecoder.decode`: a :class:`GenBodyMask` per body, with
    ``prompt`` (the function header and docstring) in front of the left context."""

    def factory(left: str, right: str) -> GenBodyMask:
        return GenBodyMask(prompt + left, right, tokenizer)

    return factory


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


def single_gen_cases(cases) -> list:
    """Cases whose oracle program has exactly one ``<gen>`` op: its right context is fixed
    (copies only), so the constraint's guarantee covers the whole resolved output."""
    return [c for c in cases if len(oracle_program(c.doc, c.gold).gens) == 1]


def edit_cases(corpus, n: int | None, seed: int = 0, split: dict | None = None) -> list:
    """The localized-edit cases: held-out cases of the chapter-7 split (so the SFT model is
    scored on cases it was not trained on), single-``<gen>`` programs only, and a seeded
    subset of ``n`` (:func:`cadlib.corpora.seeded_subset`; all when ``None``)."""
    split = split if split is not None else load_split()
    held = split_cases(split, corpus.name, corpus, "held_out")
    return seeded_subset(single_gen_cases(held), n, seed)


def _body_ids(result, close_ids) -> list[int]:
    """The ids of the (single) ``<gen>`` body of a decode, without its ``</gen>``."""
    ids = [i for i, k in zip(result.transcript.ids, result.transcript.kinds, strict=True)
           if k == "gen"]  # fmt: skip
    return ids[: len(ids) - len(close_ids)]


def localized_edit(
    model,
    tokenizer,
    cases,
    *,
    constrained: bool,
    budget: int,
    system: str,
    test_timeout: float | None = 10.0,
    progress: bool = True,
):
    """Localized-edit decoding of ``cases`` (oracle copy spans, model-written bodies).

    Parameters
    ----------
    model, tokenizer
        The LM and its tokenizer.
    cases
        HumanEvalFix cases (``meta["prompt"]``, ``meta["test"]``) with single-gen oracle
        programs (:func:`single_gen_cases`).
    constrained
        Mask the body with :class:`GenBodyMask` (else only the grammar's own body mask).
    budget
        ``max_new_tokens`` of each body.
    system
        A label for the rows (e.g. ``"SmolLM2 untrained"``).
    test_timeout
        Seconds per HumanEvalPack test run; ``None`` skips the tests.

    Returns
    -------
    pandas.DataFrame
        One row per case: ``system, constrained, case, parses`` (``ast.parse(prompt +
        resolved)``), ``em`` (byte-exact), ``em_trimmed`` (up to one trailing newline,
        :func:`cadlib.metrics.equal_up_to_one_newline`; not the ``.strip()`` of chapter 5),
        ``passed``, ``test_detail``, ``end`` (:data:`ENDS`; unconstrained bodies that hit the
        budget are ``"budget, closable"`` when their output parses), ``body_tokens``,
        ``output``, and per body step ``mask_s``, ``forward_s``, ``middle_chars`` (lists) and
        ``setup_s`` (constraint construction).
    """
    decoder = CopyDecoder(model, tokenizer, max_new_tokens=budget)
    close_ids = token_table(tokenizer).gen_close
    rows = []
    for case in tqdm(cases, desc=f"{system}, {'FIM' if constrained else 'free'}",
                     disable=not progress):  # fmt: skip
        program = oracle_program(case.doc, case.gold)
        factory = body_mask_factory(case.meta["prompt"], tokenizer) if constrained else None
        res = decoder.decode(case.doc, prompt_ids=edit_prompt_ids(tokenizer, case.instruction,
                                                                  case.doc),
                             program=program, free_gen=True, gen_processor=factory)  # fmt: skip
        out = res.text
        ok = out is not None and parses(case.meta["prompt"] + out)
        body = _body_ids(res, close_ids)
        if constrained:
            mask = res.bodies[0]
            end = mask.finish(body)
            mask_s, chars, setup = mask.mask_s, mask.middle_chars, mask.setup_s
        else:
            end = ENDS[0] if not res.budget_closed else ENDS[2] if ok else ENDS[3]
            mask_s, chars, setup = [], [], None
        forwards = [f.seconds for f in res.trace.forwards if f.kind == "gen"]
        passed, detail = (None, "not run")
        if test_timeout is not None:
            passed, detail = (run_humaneval_tests(case, out, timeout=test_timeout)
                              if out is not None else (False, "no output"))  # fmt: skip
        rows.append(dict(
            system=system, constrained=constrained, case=case.id, parses=ok,
            em=byte_equal(out, case.gold),
            em_trimmed=out is not None and equal_up_to_one_newline(out, case.gold),
            passed=passed, test_detail=detail, end=end, body_tokens=len(body), output=out,
            mask_s=mask_s, forward_s=forwards, middle_chars=chars, setup_s=setup,
        ))  # fmt: skip
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Experiment 2: FIM completion of HumanEval solutions
# --------------------------------------------------------------------------------------------


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
        starts = [start + k for k, ch in enumerate(source[start:], start=0)
                  if k == 0 or source[start + k - 1] == "\n"]  # fmt: skip
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
    jobs = ([(c, cut) for c in chosen for cut in CUTS] if n is None else
            [(c, CUTS[k % 2]) for k, c in enumerate(chosen)])  # fmt: skip
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
    model, tokenizer, problem: FIMProblem, *, constrained: bool, budget: int, style: str = "hole"
) -> dict:
    """Greedy middle for ``problem`` (``model.generate``), with or without the constraint.

    Unconstrained: generation stops at EOS or any token holding a code fence, and the middle
    is the text before the fence. Constrained: a :class:`~cadlib.fim.FIMLogitsProcessor`
    masks every token, and EOS / a bare fence (the end) are allowed only when ``can_end()``.

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
        out = model.generate(input_ids=x, attention_mask=torch.ones_like(x),
                             max_new_tokens=budget, do_sample=False, eos_token_id=stop,
                             pad_token_id=tokenizer.eos_token_id,
                             logits_processor=LogitsProcessorList(processors))  # fmt: skip
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
):
    """Two generations per problem (without / with the constraint), four arms (:data:`ARMS`):
    each raw, and each with the echoes of its contexts trimmed (:func:`trim_to_context`; in
    the constrained arm only a closable candidate is taken).

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
            c: fim_generate(model, tokenizer, problem, constrained=c, budget=budget, style=style)
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
            rows.append(dict(system=system, style=style, arm=arm, problem=problem.id,
                             cut=problem.cut,
                             parses=parses(source), em=r["middle"] == problem.middle,
                             passed=passed, test_detail=detail,
                             true_chars=len(problem.middle), **r))  # fmt: skip
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Tables and costs
# --------------------------------------------------------------------------------------------


def validity_table(frame, by: list[str]):
    """Counts and rates per group: ``n``, ``parses``, ``em``, ``passed`` and each end of
    :data:`ENDS` (counts), with the rates ``parse_rate``, ``em_rate``, ``pass_rate``."""
    g = frame.groupby(by, sort=False)
    out = g.agg(
        n=("parses", "size"),
        parses=("parses", "sum"),
        em=("em", "sum"),
        passed=("passed", lambda s: int(s.fillna(False).astype(bool).sum())),
    )
    ends = pd.crosstab([frame[k] for k in by], frame["end"]).reindex(
        columns=list(ENDS), fill_value=0
    )
    out = out.join(ends).fillna(0)
    for k in ("parses", "em", "passed", *ENDS):
        out[k] = out[k].astype(int)
    out["parse_rate"] = out["parses"] / out["n"]
    out["em_rate"] = out["em"] / out["n"]
    out["pass_rate"] = out["passed"] / out["n"]
    return out.reset_index()


def step_costs(frame, step_col: str):
    """Long table of per-step costs from :func:`localized_edit` / :func:`fim_completion`
    rows: ``middle_chars``, ``mask_s`` and the model step ``step_col`` (``forward_s`` or
    ``step_s``), one row per generated token of a constrained run."""
    rows = []
    for r in frame.itertuples():
        masks, steps, chars = r.mask_s, getattr(r, step_col), r.middle_chars
        for k, (m, c) in enumerate(zip(masks, chars, strict=False)):
            rows.append(
                dict(
                    system=r.system,
                    step=k,
                    middle_chars=c,
                    mask_s=m,
                    model_s=steps[k] if k < len(steps) else float("nan"),
                )
            )
    return pd.DataFrame(rows)


def cost_by_length(frame, bins=(0, 25, 50, 100, 200, 400, 800, 1600), value="seconds", by="method"):
    """Median (and 90th percentile) of ``value`` per ``by`` and middle-length bin."""
    labels = [f"{a}-{b - 1}" for a, b in zip(bins[:-1], bins[1:], strict=True)]
    cut = pd.cut(frame["middle_chars"], bins=list(bins), labels=labels, right=False)
    g = frame.assign(length=cut).groupby([by, "length"], observed=True)[value]
    return g.agg(
        steps="size", median="median", p90=lambda s: float(np.quantile(s, 0.9))
    ).reset_index()


def system_labels(model: str) -> tuple[str, str]:
    """Row labels of the untrained model and of its chapter-7 fine-tune, named after the model
    (``"SmolLM2 untrained"``, ``"SmolLM2 + SFT (ch. 7)"`` on the cpu profile; the hub name's
    last part on the paper profile), so no table of another profile is mislabelled."""
    short = "SmolLM2" if model == SMOLLM2 else model.rstrip("/").split("/")[-1]
    return f"{short} untrained", f"{short} + SFT (ch. 7)"
