"""The FIM chapter's two experiments: constrained ``<gen>`` bodies, and FIM completion (ch. 8).

The companion paper (Melcer et al., "Constrained Decoding for Fill-in-the-Middle Code Language
Models via Efficient Left and Right Quotienting of Context-Sensitive Grammars") evaluates its
recognizer on FIM completion of Python 3 with syntax constraints. Our copy of the paper stops in
§VI-A, before its evaluation, so the protocol below is designed from the chapter's issue, not
copied from the paper.

Experiment 1: constrained ``<gen>`` bodies in localized edits (:func:`localized_edit`)
    A Copy-as-Decode program ``copy … gen … copy`` for a Python document makes each ``<gen>``
    body a FIM problem: left = the resolved text before it, right = the resolved text after
    it. In localized-edit mode (:meth:`cadlib.decoding.decoder.CopyDecoder.decode` with
    ``free_gen=True``) the program's ops and copy spans are given (here by the oracle
    alignment, as a user's selection would give them) and the model writes the bodies;
    :class:`GenBodyMask` masks every body token with :class:`~cadlib.fim.FIMConstraint`
    (§III Problem 1) so that the resolved output always parses, and allows ``</gen>`` only
    when ``can_end()``. HumanEvalFix documents are function *bodies*, so the unit that must
    parse is ``meta["prompt"] + resolved body``: the prompt (signature and docstring) is part
    of the left context.
Experiment 2: FIM completion, the companion paper's setting
    in :mod:`cadlib.fim.completion`; tables, costs, per-case records and
    the run summary in :mod:`cadlib.chapters.fim_constraint.report`.
Both count every outcome (:data:`ENDS`): a middle ends when the model emits its end (``</gen>``
or EOS / a closing code fence), which under the constraint is allowed only when ``can_end()``;
a budget (``max_new_tokens``) that runs out first is reported as such, closable or not.

The cost side reuses :func:`cadlib.fim.per_step_cost` (ours vs the quadratic "checked
unconstrained" ``ast.parse`` of everything at every step, §III-A) and records the time of the
allowed-token mask per generated token beside the model's forward.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from cadlib.book.paper_settings import CODE_MODEL
from cadlib.corpora import load_split, seeded_subset, split_cases
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.fsm import token_table
from cadlib.execution import run_humaneval_tests
from cadlib.fim.completion import (
    ENDS,
    parses,
)
from cadlib.fim.constraint import FIMConstraint
from cadlib.fim.mask import IncrementalMask
from cadlib.metrics import byte_equal, equal_up_to_one_newline
from cadlib.models import load_model, load_tokenizer, resolve_device, set_threads
from cadlib.oracle import oracle_program
from cadlib.paths import repo_root
from cadlib.prompts import edit_prompt_ids
from cadlib.record import style

from .report import system_labels

__all__ = [
    "PROFILES",
    "GenBodyMask",
    "body_mask_factory",
    "load_checkpoint",
    "single_gen_cases",
    "edit_cases",
    "localized_edit",
    "prepare",
    "load_models",
    "chapter_systems",
    "localized_edits",
]

#: The ``cpu`` profile, which ``large`` extends (:data:`PROFILES`).
_CPU = dict(
    model="smollm2-135m-instruct",
    checkpoint="checkpoints/sft-smollm2-135m-instruct-py-s0",
    edit_cases=4,
    edit_budget=48,
    fim_cases=4,
    fim_budget=48,
    fim_style="hole",
    fim_max_lines=2,
    fim_max_chars=40,
    diff_cases=12,
    diff_splits=3,
    diff_edits=4,
    cost_problems=4,
    cost_middle_chars=400,
    test_timeout=5.0,
    threads=1,
    stdlib_cuts=24,
    stdlib_edits=4,
    sweep_files=1,
)

#: ``checkpoint``: the chapter-7 SFT model, relative to the repository root (``checkpoints/`` is
#: git-ignored: absent on a fresh clone, then reported as not available; ``""`` skips it).
#: ``edit_cases`` / ``fim_cases`` / ``diff_cases``: seeded subsets (``None`` = all);
#: ``*_budget``: max new tokens per ``<gen>`` body / per middle; ``threads``: torch CPU threads
#: (one makes greedy decoding bitwise repeatable on a shared machine; ``None``: torch's default);
#: ``stdlib_cuts`` / ``stdlib_edits`` / ``sweep_files``: the standard-library differential's
#: sample in the chapter (:mod:`cadlib.fim.stdlib`; its 2,000-cut run is ``results/fim.full.json``).
PROFILES = {
    # a few cases per arm, so that chapter 8 stays within ~4 minutes on 2 slow cores (a
    # SmolLM2 decode step ~110 ms: 10 and 12 cases took 435 s, 4 and 4 take 226 s); the large
    # run is the evidence
    "cpu": _CPU,
    # the cpu profile with enough cases for intervals that can separate the arms (>= 100 FIM
    # problems per arm, every held-out single-<gen> edit case); about 25-30 minutes on 2 quiet
    # cores. Not named "full": results/fim.full.json is the standard-library differential's
    # full run (python -m cadlib.fim.stdlib), which a "full" chapter record would overwrite.
    "large": {**_CPU, "edit_cases": None, "fim_cases": 120, "stdlib_cuts": 200, "sweep_files": 3},
    # the companion paper's experiments are not in our copy: the SFT chapter's code model and
    # its paper-profile Py-only seed-0 checkpoint (cadlib.book.paper_settings)
    "paper": dict(
        model=CODE_MODEL,
        checkpoint="checkpoints/sft-Qwen_Qwen2.5-Coder-1.5B-Instruct-py-s0",
        edit_cases=None,
        edit_budget=128,
        fim_cases=None,
        fim_budget=128,
        fim_style="hole",
        fim_max_lines=3,
        fim_max_chars=120,
        diff_cases=None,
        diff_splits=5,
        diff_edits=5,
        cost_problems=12,
        cost_middle_chars=400,
        test_timeout=10.0,
        threads=None,
        stdlib_cuts=200,
        stdlib_edits=4,
        sweep_files=3,
    ),
    # CI's check of the paper path (make test-smoke): the local stand-in for a hub model
    # and the checkpoint chapter 7's smoke run wrote (cadlib.chapters.sft_pilot.SMOKE_CHECKPOINTS).
    "smoke": dict(
        model="qwen2-smoke",
        checkpoint="_build/smoke/checkpoints/sft-qwen2-smoke-py-s0",
        edit_cases=2,
        edit_budget=8,
        fim_cases=2,
        fim_budget=8,
        fim_style="hole",
        fim_max_lines=3,
        fim_max_chars=120,
        diff_cases=2,
        diff_splits=2,
        diff_edits=2,
        cost_problems=1,
        cost_middle_chars=100,
        test_timeout=5.0,
        threads=1,
        stdlib_cuts=3,
        stdlib_edits=1,
        sweep_files=1,
    ),
}

# --------------------------------------------------------------------------------------------
# Experiment 1: the FIM constraint on <gen> bodies
# --------------------------------------------------------------------------------------------


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
    :class:`~cadlib.fim.mask.IncrementalMask`) whose ids are the body's ids so far (no
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


def prepare(threads: int | None, device: str = "auto") -> str:
    """The chapter's session: torch CPU threads (:func:`cadlib.models.set_threads`), the book's
    plot style (:func:`cadlib.record.style.setup`) and pandas' display (3 decimals, columns of 90
    characters); returns the name of the resolved ``device``."""
    set_threads(threads)
    dev = str(resolve_device(device))
    style.setup()
    pd.set_option("display.precision", 3)
    pd.set_option("display.max_colwidth", 90)
    return dev


def load_models(params: dict, device: str) -> tuple:
    """``(tokenizer, model, sft, sft_note)``: the profile's model with its own tokenizer, and
    its chapter-7 fine-tune (:func:`load_checkpoint`: ``None`` and why when not here)."""
    tokenizer = load_tokenizer(params["model"])
    model = load_model(params["model"], device=device)
    return (tokenizer, model, *load_checkpoint(params["checkpoint"], device=device))


def chapter_systems(model_name: str, model, sft, sft_note: str) -> dict:
    """``{label: model}`` of the systems run (:func:`system_labels`): the untrained model and,
    when its checkpoint is here, the fine-tune (else this prints that it is not run)."""
    untrained, tuned = system_labels(model_name)
    if sft is None:
        print(f"SFT checkpoint {sft_note}: only the untrained model is run")
        return {untrained: model}
    return {untrained: model, tuned: sft}


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
