"""Chapter 8's first experiment: constrained ``<gen>`` bodies in localized edits.

A Copy-as-Decode program ``copy … gen … copy`` for a Python document makes each ``<gen>`` body a
FIM problem: left = the resolved text before it, right = the resolved text after it. In
localized-edit mode (:meth:`cadlib.decoding.decoder.CopyDecoder.decode` with ``free_gen=True``)
the program's ops and copy spans are given (here by the oracle alignment, as a user's selection
would give them) and the model writes the bodies; :class:`GenBodyMask` masks every body token
with :class:`~cadlib.fim.FIMConstraint` (§III Problem 1) so that the resolved output always
parses, and allows ``</gen>`` only when ``can_end()``. HumanEvalFix documents are function
*bodies*, so the unit that must parse is ``meta["prompt"] + resolved body``: the prompt
(signature and docstring) is part of the left context (:func:`localized_edit`).

The cost side records the time of the allowed-token mask per generated token beside the model's
forward (:mod:`.run_costs` reduces them).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from tqdm import tqdm

from cadlib.corpora import load_split, seeded_subset, split_cases
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.fsm import token_table
from cadlib.execution import run_humaneval_tests
from cadlib.fim.completion import ENDS, parses
from cadlib.fim.constraint import FIMConstraint
from cadlib.fim.logits import IncrementalMask
from cadlib.metrics import byte_equal, equal_up_to_one_newline
from cadlib.oracle import oracle_program
from cadlib.prompts import edit_prompt_ids

__all__ = [
    "GenBodyMask",
    "body_mask_factory",
    "single_gen_cases",
    "edit_cases",
    "localized_edit",
    "localized_edits",
]


class GenBodyMask(IncrementalMask):
    """The FIM constraint on one ``<gen>`` body, in the decoder's body layout (§III Problem 1).

    A body's text is the resolved text with at most one leading and one trailing newline
    stripped (Copy-as-Decode §2.2), so a leading ``"\\n"`` is not fed to the constraint, and
    the end is allowed when the middle *without* a final newline can end. The first id of
    ``</gen>`` (SmolLM2: ``</``) is the end token: allowed exactly when ``can_end()`` (never
    as body text), after which the rest of ``</gen>`` is forced. The constraint sees the body
    as written, i.e. escaped (:mod:`cadlib.escape`); the entities are non-ASCII characters,
    possible in Python only inside strings and comments, where the resolver's unescaping keeps
    the program valid.

    A :class:`~cadlib.decoding.processors.MaskProcessor` (through
    :class:`~cadlib.fim.logits.IncrementalMask`) whose ids are the body's ids so far (no
    prompt): the decoder's body hook calls it on one row, ``(body ids, scores (V,))``.

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
        constraint = FIMConstraint(left, right)
        self.setup_s = time.perf_counter() - t0
        super().__init__(constraint, tokenizer)
        self.close_ids = tuple(token_table(tokenizer).gen_close)
        self.newline_ids = _newline_ids(self.texts)
        self.before_newline: FIMConstraint | None = None
        self.raw = ""  # the body text so far (leading newline included)
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

    def _take(self, tid: int) -> None:
        if self.closing or tid == self.close_ids[0]:
            self.closing += 1
            return
        super()._take(tid)

    def _dead(self) -> None:
        super()._dead()
        self.before_newline = None

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

    allowed_ids = allowed

    def __call__(self, body_ids, scores):
        """``(body ids so far, scores (V,)) -> masked scores`` (the decoder's body hook), or
        the base's ``(ids (1, seq), scores (1, V))``; each call's time is recorded."""
        t0 = time.perf_counter()
        out = super().__call__(body_ids, scores)
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
    ids = [
        i for i, k in zip(result.transcript.ids, result.transcript.kinds, strict=True) if k == "gen"
    ]
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
    for case in tqdm(
        cases, desc=f"{system}, {'FIM' if constrained else 'free'}", disable=not progress
    ):
        program = oracle_program(case.doc, case.gold)
        factory = body_mask_factory(case.meta["prompt"], tokenizer) if constrained else None
        res = decoder.decode(
            case.doc,
            prompt_ids=edit_prompt_ids(tokenizer, case.instruction, case.doc),
            program=program,
            free_gen=True,
            gen_processor=factory,
        )
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
            passed, detail = (
                run_humaneval_tests(case, out, timeout=test_timeout)
                if out is not None
                else (False, "no output")
            )
        rows.append(
            dict(
                system=system,
                constrained=constrained,
                case=case.id,
                parses=ok,
                em=byte_equal(out, case.gold),
                em_trimmed=out is not None and equal_up_to_one_newline(out, case.gold),
                passed=passed,
                test_detail=detail,
                end=end,
                body_tokens=len(body),
                output=out,
                mask_s=mask_s,
                forward_s=forwards,
                middle_chars=chars,
                setup_s=setup,
            )
        )
    return pd.DataFrame(rows)


def localized_edits(
    models: dict, tokenizer, cases, budget: int, test_timeout: float | None, progress: bool = False
) -> pd.DataFrame:
    """:func:`localized_edit` of each system of ``models`` (``{label: model}``), unconstrained
    then constrained, as one frame with an ``arm`` column (``"unconstrained"`` /
    ``"FIM-constrained"``)."""
    rows = pd.concat(
        [
            localized_edit(
                m,
                tokenizer,
                cases,
                constrained=c,
                budget=budget,
                system=name,
                test_timeout=test_timeout,
                progress=progress,
            )
            for name, m in models.items()
            for c in (False, True)
        ],
        ignore_index=True,
    )
    rows["arm"] = rows.constrained.map({False: "unconstrained", True: "FIM-constrained"})
    return rows
