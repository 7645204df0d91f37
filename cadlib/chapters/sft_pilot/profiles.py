"""Chapter 7's profiles: the paper's recipe (App. "Training details") as ``paper``, the
scaled-down CI run ``cpu``, the evidence profiles ``full`` and ``seeds`` with the reason for
every setting in which they differ from the paper's, and CI's ``smoke`` check of the paper
path; :func:`choose` normalizes a notebook's overrides (one number of epochs for every set, a
single train set or seed). The training sets and the overlong policies a profile may name are
here too, so choosing needs no torch.
"""

from __future__ import annotations

from cadlib.book.paper_settings import CODE_MODEL
from cadlib.corpora import SPLIT_CORPORA
from cadlib.models import QWEN2_SMOKE, SMOLLM2
from cadlib.record import params
from cadlib.record.params import check_choice

__all__ = [
    "DEVIATIONS",
    "FULL_DEVIATIONS",
    "OVERLONG",
    "PROFILES",
    "RUN_RECORDS",
    "SEEDS_DEVIATIONS",
    "SMOKE_CHECKPOINTS",
    "TRAIN_SETS",
    "TRAIN_SET_LABELS",
    "choose",
]


#: The paper's recipe (App. "Training details") and the scaled-down CPU run of this book.
PROFILES = {
    "paper": {
        "model": CODE_MODEL,  # Qwen/Qwen2.5-Coder-1.5B-Instruct, bf16 on a GPU (dtype auto)
        "train_sets": ("py", "combined"),
        "seeds": (0, 1, 2),
        "epochs": {"py": 8, "combined": 6},
        "n_train": None,  # None = every training case of the set
        "lr": 2e-5,
        "betas": (0.9, 0.95),
        "weight_decay": 0.0,
        "warmup": 0.03,
        "grad_accum": 8,
        "micro_batch": 1,
        # the paper's 1536 holds its examples, not ours: our ProbeEdit documents are longer and
        # the target carries the spliced copy text, so 1536 would drop 61 and truncate 62 of
        # the 123 ProbeEdit training cases (SmolLM2 tokenizer); 3072 holds all 385 whole.
        # Pass max_length=1536 for the literal recipe (overlong cases are then reported).
        "max_length": 3072,
        "gradient_checkpointing": True,
        "n_eval": None,  # None = all 33 held-out cases
        "n_eval_baselines": None,
        "max_new_tokens": 512,
        "baseline_max_new_tokens": None,  # None = max_new_tokens (untrained CRP and FSM)
        "localized": True,  # localized-edit EM: oracle spans given, the model writes bodies
        "cross_corpus": True,  # Table 22: the Combined seed-0 checkpoint on JS and ProbeEdit
        "test_timeout": 10.0,
        "overlong": "truncate",
        "threads": None,  # None = torch's default
        "checkpoints": "checkpoints",  # folder (under the repository) of the trained models
    },
}
PROFILES["cpu"] = {
    **PROFILES["paper"],
    "model": SMOLLM2,
    "train_sets": ("py",),
    "seeds": (0,),
    "epochs": {"py": 1, "combined": 1},
    "n_train": 32,
    "lr": 1e-4,
    "grad_accum": 2,
    "max_length": 512,
    "gradient_checkpointing": False,
    # evaluation (free to change: chapter 8 loads the checkpoint the training above makes):
    # every system on the same first 12 held-out cases in split order (paired tests), for
    # the 6-minute CI budget; the full profile scores every system on all 33.
    "n_eval": 12,
    "n_eval_baselines": None,  # None: the trained model's cases (paired)
    "max_new_tokens": 64,  # holds 32 of the 33 held-out oracle programs' decisions
    "baseline_max_new_tokens": 32,  # untrained CRP and FSM: tight, for the 6-minute budget
    "cross_corpus": False,
    "test_timeout": 5.0,
    "threads": 1,
}
#: The paper's recipe on all 131 Py-only cases, on CPU (issue 20): every setting that differs
#: from the ``paper`` profile is a key of :data:`FULL_DEVIATIONS`, with its reason. About an
#: hour on 2 cores alone (see the chapter); results to ``results/sft_pilot.full.json``.
PROFILES["full"] = {
    **PROFILES["paper"],
    "model": SMOLLM2,
    "train_sets": ("py",),
    "seeds": (0,),
    "gradient_checkpointing": False,
    "max_new_tokens": 128,
    "cross_corpus": False,
    "threads": 2,
    "checkpoints": "checkpoints/full",
}
#: Why the ``full`` profile differs from the paper's recipe (``PROFILES["paper"]``): only
#: where CPU forces it. Everything else (all 131 cases, 8 epochs, lr 2e-5, betas, cosine with
#: 3 % warm-up, effective batch 8 = 8 x 1, max length 3072, all 33 held-out cases for every
#: system) is the paper profile's.
FULL_DEVIATIONS = {
    "model": "SmolLM2-135M-Instruct (the packaged GGUF) instead of Qwen2.5-Coder-1.5B: no hub "
    "download here, and the 1.5B model is ~11x the compute per step on a CPU",
    "train_sets": "Py-only only: Combined (385 cases, ProbeEdit examples up to 3072 ids, 6 "
    "epochs) trains on several times the Py-only run's ids (its hours: python -m "
    "cadlib.chapters.sft_pilot.commands estimate); the seeds profile runs it, resumably",
    "seeds": "one seed (0) instead of three: each seed is another full training run",
    "gradient_checkpointing": "off: it saves memory a CPU run does not lack and costs ~30 % "
    "more time; the gradients are the same",
    "max_new_tokens": "128 decisions instead of 512: CPU decoding time; 128 holds every held-out "
    "oracle program's decisions (the chapter counts budget hits)",
    "cross_corpus": "no Table 22: it evaluates the Combined model, which is not trained here",
    "threads": "two torch threads (a two-core machine, run alone) instead of torch's default",
    "checkpoints": "checkpoints/full, apart from the cpu profile's model that chapter 8 loads",
    "dtype": "fp32 on CPU (bf16 is the paper's GPU dtype; this CPU has no fast bf16 training)",
}
#: The paper's whole pilot on CPU (issue 35): both training sets, seeds 0-2, Table 22, with the
#: ``full`` profile's CPU deviations. Many hours on a CPU (six trainings; a Combined one trains
#: on several times a Py-only one's ids: ``python -m cadlib.chapters.sft_pilot.commands
#: estimate`` gives the hours from the recorded runs), so each (train set, seed) run is recorded
#: as it ends and the run resumes
#: (``make record CHAPTER=07_sft_pilot PROFILE=seeds RESUME=1``); results to
#: ``results/sft_pilot.seeds.json``. A run it shares with ``full`` (Py-only seed 0) is made once.
PROFILES["seeds"] = {
    **PROFILES["full"],
    "train_sets": ("py", "combined"),
    "seeds": (0, 1, 2),
    "cross_corpus": True,
    "checkpoints": "checkpoints/seeds",
}
SEEDS_DEVIATIONS = {
    k: v for k, v in FULL_DEVIATIONS.items() if k not in ("train_sets", "seeds", "cross_corpus")
} | {"checkpoints": "checkpoints/seeds, apart from the cpu profile's model that chapter 8 loads"}
#: Each evidence profile's declared deviations from the paper's recipe, with their reasons.
DEVIATIONS = {"full": FULL_DEVIATIONS, "seeds": SEEDS_DEVIATIONS}
#: The profiles whose (train set, seed) runs are recorded one by one in a store they share
#: (``results/records/sft_pilot.runs/``,
#: :func:`cadlib.chapters.sft_pilot.run_pilot.run_record_name`).
RUN_RECORDS = tuple(DEVIATIONS)
#: CI's check of the paper path (make test-smoke): both training sets, two seeds (so later
#: runs reload the model by name), gradient checkpointing and the cross-corpus evaluation, on
#: the local stand-in for a hub model (cadlib.models.QWEN2_SMOKE) with a handful of cases.
PROFILES["smoke"] = {
    **PROFILES["paper"],
    "model": QWEN2_SMOKE,
    "seeds": (0, 1),
    "epochs": {"py": 1, "combined": 1},
    "n_train": 4,
    "grad_accum": 2,
    "max_length": 1024,
    "n_eval": 2,
    "n_eval_baselines": None,  # the same cases as the trained model (paired)
    "max_new_tokens": 16,
    "test_timeout": 5.0,
    "threads": 1,
    "checkpoints": "_build/smoke/checkpoints",  # = SMOKE_CHECKPOINTS
}
#: Where the smoke run of chapter 7 writes its checkpoints (chapter 8's smoke profile loads
#: one), under the git-ignored _build/, apart from the cpu profile's checkpoints/.
SMOKE_CHECKPOINTS = "_build/smoke/checkpoints"


#: Training sets of the pilot: Py-only (131 cases) and Combined (385 cases).
TRAIN_SETS = {"py": ("heval-fix-py",), "combined": SPLIT_CORPORA}


#: Display names of the training sets.
TRAIN_SET_LABELS = {"py": "Py-only", "combined": "Combined"}


#: What :func:`cadlib.chapters.sft_pilot.run_examples.build_examples` does with an example
#: longer than ``max_length`` (a profile's ``overlong``).
OVERLONG = ("truncate", "drop")


def choose(profile: str, **overrides) -> dict:
    """:func:`cadlib.record.params.choose` on :data:`PROFILES`; an ``epochs`` override given as a
    number applies to every training set, ``train_sets``/``seeds`` may be a single value."""
    if isinstance(overrides.get("epochs"), (int, float)):
        overrides["epochs"] = dict.fromkeys(TRAIN_SETS, overrides["epochs"])
    for key in ("train_sets", "seeds"):
        if isinstance(overrides.get(key), (str, int)):
            overrides[key] = (overrides[key],)
    P = params.choose(PROFILES, profile, **overrides)
    for ts in P["train_sets"]:
        check_choice("train set", ts, TRAIN_SETS)
    check_choice("overlong policy", P["overlong"], OVERLONG)
    return P
