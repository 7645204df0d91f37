"""Training examples: prompt + decoder transcript of the oracle program, loss on chosen ids
only; and the cases each training set (Py-only, Combined) trains on, drawn from the train side
of the saved split (:func:`cadlib.corpora.make_split`, ``data/sft_split.json``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch

from cadlib.cases import EditCase
from cadlib.corpora import split_cases, split_key
from cadlib.decoding.fsm import KINDS, transcript
from cadlib.grammar import Program
from cadlib.oracle import oracle_program
from cadlib.prompts import edit_prompt_ids

from .profiles import OVERLONG, TRAIN_SETS

__all__ = [
    "IGNORE",
    "LOSS_KINDS",
    "Example",
    "ExampleDataset",
    "build_example",
    "build_examples",
    "collate",
    "prompt_ids",
    "target_program",
    "training_cases",
]


#: Transcript kinds (:data:`cadlib.decoding.fsm.KINDS`) that carry loss: the ids the model chooses.
LOSS_KINDS = ("choice", "gen")


IGNORE = -100


@dataclass(frozen=True)
class Example:
    """One training example: ``input_ids = prompt + transcript``, ``labels`` = -100 on the
    prompt and on every id the decoder forces (literal tails, spliced copy text)."""

    id: str
    input_ids: tuple
    labels: tuple
    n_prompt: int
    kinds: tuple = ()  # "prompt" or the transcript kind of every id (cadlib.decoding.fsm.KINDS)

    @property
    def n_loss(self) -> int:
        """Number of ids that carry loss."""
        return sum(label != IGNORE for label in self.labels)

    def __len__(self) -> int:
        return len(self.input_ids)


def target_program(case: EditCase) -> Program:
    """The training target: the case's line-level oracle program (paper §5, App. "Training
    details"); its gen bodies are escaped when the transcript renders them (§2.2)."""
    return oracle_program(case.doc, case.gold)


def build_example(
    case: EditCase, tokenizer, prompt_ids: Sequence[int], loss_kinds: Sequence[str] = LOSS_KINDS
) -> Example:
    """The example of ``case``: prompt ids followed by the oracle program's transcript.

    The transcript (:func:`cadlib.decoding.fsm.transcript`) is the exact id sequence the decoder
    produces at inference, so training and decoding see the same tokens. Labels:

    * prompt ids: -100 (the paper masks the system + user prompt);
    * ``forced`` ids (a literal tail, the ``<program>`` opener, the newline after a tag, or a
      range token when only one is admissible) and ``splice`` ids (the copied lines): -100.
      At inference the decoder appends them without consulting the model, so a loss on them
      would only teach the model to predict text it is never asked to predict (and the copied
      text would dominate the loss: ~2/3 of a HEvalFix-Py transcript);
    * ``choice`` ids (``<`` vs ``</``, ``copy`` vs ``gen``, each range digit and terminator)
      and ``gen`` ids (body text and the closing ``</gen>`` ids): their own id.

    The paper masks the prompt only and does not say how it treats forced ids; it also had
    no splice in its targets' text unless its decoder fed copies (it does, §2.4). Pass
    ``loss_kinds=("choice", "gen", "forced", "splice")`` to train on every transcript id.
    """
    unknown = set(loss_kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown transcript kinds {sorted(unknown)}; valid: {KINDS}")
    tr = transcript(target_program(case), case.doc, tokenizer)
    prompt_ids = tuple(int(i) for i in prompt_ids)
    labels = (IGNORE,) * len(prompt_ids) + tuple(
        i if kind in loss_kinds else IGNORE for i, kind in zip(tr.ids, tr.kinds, strict=True)
    )
    kinds = ("prompt",) * len(prompt_ids) + tuple(tr.kinds)
    return Example(case.id, prompt_ids + tuple(tr.ids), labels, len(prompt_ids), kinds)


def prompt_ids(case: EditCase, tokenizer) -> list[int]:
    """The chat-formatted edit prompt of ``case`` (:mod:`cadlib.prompts`), as ids."""
    return list(edit_prompt_ids(tokenizer, case.instruction, case.doc))


def build_examples(
    cases: Sequence[EditCase], tokenizer, max_length: int | None = None, overlong: str = "truncate"
) -> tuple[list[Example], dict]:
    """Examples of ``cases``, and a report of those longer than ``max_length``.

    ``overlong="truncate"`` cuts an example to its first ``max_length`` ids (right
    truncation, what SFT scripts do with a maximum sequence length; the paper's is 1536),
    so the model learns the first ops of a long program; ``"drop"`` leaves it out. An
    example whose prompt alone fills ``max_length`` has no loss left and is always dropped.
    Nothing is cut silently: the report lists the truncated and dropped ids and the loss
    tokens lost.
    """
    if overlong not in OVERLONG:
        raise ValueError(f"unknown overlong policy {overlong!r}; valid: {', '.join(OVERLONG)}")
    examples: list[Example] = []
    report = {"truncated": [], "dropped": [], "loss_tokens_lost": 0, "max_length": max_length}
    for case in cases:
        ex = build_example(case, tokenizer, prompt_ids(case, tokenizer))
        if not max_length or len(ex) <= max_length:
            examples.append(ex)
            continue
        cut = Example(
            ex.id,
            ex.input_ids[:max_length],
            ex.labels[:max_length],
            min(ex.n_prompt, max_length),
            ex.kinds[:max_length],
        )
        report["loss_tokens_lost"] += ex.n_loss - (cut.n_loss if overlong == "truncate" else 0)
        if overlong == "truncate" and cut.n_loss > 0:
            report["truncated"].append(case.id)
            examples.append(cut)
        else:
            report["dropped"].append(case.id)
    return examples, report


class ExampleDataset:
    """A ``torch.utils.data.Dataset`` of :class:`Example` rows for the ``Trainer``."""

    def __init__(self, examples: Sequence[Example]):
        self.examples = list(examples)

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, k: int) -> dict:
        ex = self.examples[k]
        return {"input_ids": list(ex.input_ids), "labels": list(ex.labels)}


def collate(rows: Sequence[dict], pad_id: int = 0) -> dict:
    """Right-pad a micro-batch: ``input_ids`` with ``pad_id``, ``labels`` with -100."""
    n = max(len(r["input_ids"]) for r in rows)
    ids = torch.full((len(rows), n), pad_id, dtype=torch.long)
    labels = torch.full((len(rows), n), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(rows), n), dtype=torch.long)
    for k, r in enumerate(rows):
        m = len(r["input_ids"])
        ids[k, :m] = torch.tensor(r["input_ids"])
        labels[k, :m] = torch.tensor(r["labels"])
        mask[k, :m] = 1
    return {"input_ids": ids, "labels": labels, "attention_mask": mask}


def training_cases(
    split: dict, train_set: str, corpora: Mapping[str, Sequence[EditCase]]
) -> list[EditCase]:
    """The training cases of ``train_set`` (``"py"`` or ``"combined"``), corpus by corpus,
    after checking that none of them is a held-out case of any corpus."""
    if train_set not in TRAIN_SETS:
        raise ValueError(f"unknown train set {train_set!r}; valid: {', '.join(TRAIN_SETS)}")
    cases = [
        case
        for name in TRAIN_SETS[train_set]
        for case in split_cases(split, name, corpora[name], "train")
    ]
    held_keys = {split_key(i) for e in split["corpora"].values() for i in e["held_out"]}
    leaked = [c.id for c in cases if split_key(c.id) in held_keys]
    if leaked:
        raise AssertionError(f"held-out cases in the training set: {leaked[:5]}")
    return cases
