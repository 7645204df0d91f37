"""The fine-tuning loop (``transformers.Trainer`` with the recipe of a profile, paper App.
"Training details"), one pilot model trained end to end (:func:`fine_tune`), and how long a
run takes, estimated before it is started (issue 35).

The estimate: a run's training time is close to proportional to the ids it trains on
(``transformers``' ``Trainer``, micro-batch 1: every optimizer step is a forward and a backward
over a few whole examples). So the ids of a training set, times its epochs, divided by the
throughput of the runs already recorded (training ids per second, their median), estimates one
run of any set on the machine class those runs were made on. It is a lower bound for sets of
longer examples: the attention part of a step grows with the square of an example's length,
which the linear rate does not charge (:func:`run_estimates` reports the sum of squared
lengths beside the ids).
"""

from __future__ import annotations

import dataclasses
import re
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from cadlib.cases import EditCase
from cadlib.corpora import seeded_subset
from cadlib.models import load_model, load_tokenizer, resolve_device

from .run_examples import Example, ExampleDataset, build_examples, collate, training_cases

__all__ = [
    "TrainRun",
    "checkpoint_dir",
    "fine_tune",
    "make_trainable",
    "recorded_train_runs",
    "run_estimates",
    "train",
    "training_arguments",
    "training_ids",
]


@dataclass
class TrainRun:
    """What :func:`train` did: the loss per logged optimizer step and where the model is."""

    train_set: str
    seed: int
    n_examples: int
    n_loss_tokens: int
    epochs: float
    optimizer_steps: int
    losses: list
    train_seconds: float
    output_dir: str | None
    left_out: list = field(default_factory=list)


def make_trainable(model):
    """Make a GGUF-loaded model trainable: drop its GGUF "quantizer" marker.

    ``load_model("smollm2-135m-instruct")`` reads a GGUF file, which ``transformers``
    de-quantizes to ordinary float tensors but still tags with a ``GgufHfQuantizer``, so
    ``Trainer`` refuses full-parameter training ("purely quantized model"). The weights are
    plain fp32/bf16 parameters; only the tag is removed (and the ``quantization_config``, so
    a saved checkpoint is a normal one). Models with a real quantizer fail loudly.
    """
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        method = str(getattr(quantizer.quantization_config, "quant_method", ""))
        if "gguf" not in method.lower():
            raise ValueError(f"cannot fine-tune all parameters of a {method} quantized model")
        quantizer.remove_quantization_config(model)  # transformers' own way to untag
        for module in model.modules():
            if hasattr(getattr(module, "config", None), "_is_quantized"):
                module.config._is_quantized = False
    for p in model.parameters():
        if not p.dtype.is_floating_point:
            raise ValueError(f"parameter of dtype {p.dtype}: not a float model")
        p.requires_grad_(True)
    return model


def training_arguments(
    output_dir: str,
    *,
    seed: int,
    epochs: float,
    lr: float,
    betas,
    weight_decay: float,
    warmup: float,
    grad_accum: int,
    micro_batch: int,
    gradient_checkpointing: bool,
    device: str = "cpu",
    **_ignored,
):
    """``transformers.TrainingArguments`` of the paper's recipe (App. "Training details").

    AdamW (``adamw_torch``) with ``betas``, a cosine schedule with ``warmup`` as a fraction
    of the optimizer steps, micro-batch x grad-accum = the effective batch, bf16 on a GPU
    (fp32 on CPU), deterministic data order and kernels for a fixed ``seed``; no periodic
    checkpoints (the final model is saved by :func:`train`).
    """
    from transformers import TrainingArguments  # lazy: the Trainer stack adds ~2 s to import

    on_gpu = str(device).startswith("cuda")
    names = {f.name for f in dataclasses.fields(TrainingArguments)}
    checkpointing = (  # transformers 5 renamed it; the old name warns
        "activation_checkpointing"
        if "activation_checkpointing" in names
        else "gradient_checkpointing"
    )
    return TrainingArguments(
        output_dir=output_dir,
        num_train_epochs=epochs,
        learning_rate=lr,
        adam_beta1=betas[0],
        adam_beta2=betas[1],
        weight_decay=weight_decay,
        optim="adamw_torch",
        lr_scheduler_type="cosine",
        warmup_steps=warmup,  # a float in [0, 1) is a ratio of the total steps
        per_device_train_batch_size=micro_batch,
        gradient_accumulation_steps=grad_accum,
        **{checkpointing: gradient_checkpointing},
        bf16=on_gpu,
        use_cpu=not on_gpu,
        seed=seed,
        data_seed=seed,
        full_determinism=not on_gpu,
        logging_strategy="steps",
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        remove_unused_columns=False,
        dataloader_num_workers=0,
        disable_tqdm=False,
    )


def train(
    model,
    tokenizer,
    examples: Sequence[Example],
    output_dir: str | Path | None,
    *,
    train_set: str = "",
    save: bool = True,
    **recipe,
) -> TrainRun:
    """Fine-tune ``model`` in place on ``examples`` with ``transformers.Trainer``.

    Parameters
    ----------
    model : PreTrainedModel
        The model to train (full-parameter, paper §5).
    tokenizer : PreTrainedTokenizer
        Its tokenizer (padding id, saved next to the checkpoint).
    examples : sequence of Example
        From :func:`build_examples`.
    output_dir : str or Path or None
        Where the final model is written (``save=True``); default ``checkpoints/...``
        (git-ignored). ``None`` with ``save=False`` keeps the run in memory only.
    **recipe
        ``seed``, ``epochs``, ``lr``, ``betas``, ``weight_decay``, ``warmup``, ``grad_accum``,
        ``micro_batch``, ``gradient_checkpointing``, ``device`` (see
        :data:`cadlib.chapters.sft_pilot.profiles.PROFILES`).
    """
    from transformers import Trainer  # lazy: the Trainer stack adds ~2 s to import
    from transformers.trainer_callback import ProgressCallback
    from transformers.utils.notebook import NotebookProgressCallback

    class _QuietProgress(ProgressCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            pass

    if not examples:
        raise ValueError("no training examples")
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    with tempfile.TemporaryDirectory(prefix="cadlib-sft-") as scratch:
        args = training_arguments(str(output_dir or scratch), **recipe)
        make_trainable(model)
        if recipe.get("gradient_checkpointing"):
            model.config.use_cache = False
        model.train()
        trainer = Trainer(
            model=model,
            args=args,
            train_dataset=ExampleDataset(examples),
            data_collator=lambda rows: collate(rows, pad_id),
        )
        for callback in (ProgressCallback, NotebookProgressCallback):
            trainer.remove_callback(callback)  # a plain tqdm bar, no per-step log lines
        trainer.add_callback(_QuietProgress())
        start = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - start
        if save and output_dir is not None:
            trainer.save_model(str(output_dir))
            tokenizer.save_pretrained(str(output_dir))
    model.config.use_cache = True
    model.eval()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return TrainRun(
        train_set=train_set,
        seed=recipe["seed"],
        n_examples=len(examples),
        n_loss_tokens=sum(ex.n_loss for ex in examples),
        epochs=recipe["epochs"],
        optimizer_steps=trainer.state.global_step,
        losses=losses,
        train_seconds=seconds,
        output_dir=str(output_dir) if save and output_dir is not None else None,
    )


def checkpoint_dir(root: str | Path, model_name: str, train_set: str, seed: int) -> Path:
    """``<root>/<model>-<train set>-s<seed>`` (``checkpoints/`` is git-ignored)."""
    slug = re.sub(r"[^\w.-]+", "_", model_name)
    return Path(root) / f"sft-{slug}-{train_set}-s{seed}"


def fine_tune(
    model_name: str,
    train_set: str,
    seed: int,
    P: Mapping,
    split: dict,
    corpora: Mapping[str, Sequence[EditCase]],
    *,
    device: str = "auto",
    checkpoints: str | Path | None = "checkpoints",
    model=None,
    tokenizer=None,
):
    """Train one pilot model: returns ``(model, tokenizer, TrainRun)``.

    Loads ``model_name`` (unless a ``model`` is given, which is trained in place), builds
    the examples of ``train_set`` (a seeded subset of ``P["n_train"]`` cases in the cpu
    profile), and trains with the recipe in ``P`` for ``P["epochs"][train_set]`` epochs.
    The final model goes to :func:`checkpoint_dir` under ``checkpoints`` (``None``: not
    saved).
    """
    dev = str(resolve_device(device))
    tokenizer = tokenizer or load_tokenizer(model_name)
    model = model if model is not None else load_model(model_name, device=dev)
    cases = seeded_subset(training_cases(split, train_set, corpora), P["n_train"], seed)
    examples, report = build_examples(cases, tokenizer, P["max_length"], P["overlong"])
    recipe = {
        k: P[k]
        for k in (
            "lr",
            "betas",
            "weight_decay",
            "warmup",
            "grad_accum",
            "micro_batch",
            "gradient_checkpointing",
        )
    }
    out = checkpoint_dir(checkpoints, model_name, train_set, seed) if checkpoints else None
    run = train(
        model,
        tokenizer,
        examples,
        out,
        train_set=train_set,
        save=out is not None,
        seed=seed,
        epochs=P["epochs"][train_set],
        device=dev,
        **recipe,
    )
    run.left_out = report
    return model, tokenizer, run


def training_ids(
    P: Mapping,
    split: dict,
    corpora: Mapping[str, Sequence[EditCase]],
    tokenizer,
    train_set: str,
    seed: int = 0,
) -> tuple[int, int]:
    """``(ids, squared ids)`` that one epoch of ``train_set`` trains on under profile ``P``
    (its ``n_train`` subset, ``max_length`` and ``overlong`` rule, as :func:`fine_tune`
    builds them)."""
    cases = seeded_subset(training_cases(split, train_set, corpora), P["n_train"], seed)
    examples, _ = build_examples(cases, tokenizer, P["max_length"], P["overlong"])
    lengths = [len(e.input_ids) for e in examples]
    return sum(lengths), sum(n * n for n in lengths)


def run_estimates(
    P: Mapping, ids: Mapping[str, tuple[int, int]], recorded: Sequence
) -> pd.DataFrame:
    """One row per train set of ``P``: its training ids per epoch (``ids[set]``, from
    :func:`training_ids`), epochs, ids over a run and their ratio to the first set's; the
    recorded runs (:class:`TrainRun`, of any set of ``P``)
    give the throughput (median training ids per second); the estimated hours of one run is
    the run's ids over that throughput, and ``runs`` how many runs of the set ``P`` makes."""
    rates = [
        ids[r.train_set][0] * r.epochs / r.train_seconds
        for r in recorded
        if r.train_set in ids and r.train_seconds > 0
    ]
    if not rates:
        raise ValueError("no recorded training run of these sets to take a throughput from")
    rate = statistics.median(rates)
    first = P["train_sets"][0]
    rows = []
    for ts in P["train_sets"]:
        per_epoch, squares = ids[ts]
        total = per_epoch * P["epochs"][ts]
        rows.append(
            dict(
                train_set=ts,
                ids_per_epoch=per_epoch,
                epochs=P["epochs"][ts],
                run_ids=total,
                x_first=total / (ids[first][0] * P["epochs"][first]),
                squared_x_first=squares / ids[first][1],
                ids_per_s=rate,
                runs=len(P["seeds"]),
                hours=total / rate / 3600,
            )
        )
    return pd.DataFrame(rows)


def recorded_train_runs(folder=None) -> list:
    """The :class:`TrainRun` of every recorded (train set,
    seed) run (``results/records/sft_pilot.runs/run-*.json``, :func:`pilot.run_recorder`)."""
    import json

    from cadlib.record.replay import decode, record_path

    folder = folder or record_path("sft_pilot", "runs", "", replay=True).parent
    return [decode(json.loads(p.read_text())).train for p in sorted(folder.glob("run-*.json"))]
