"""One pilot run end to end: the split, the untrained baselines on the held-out cases, then
training and evaluation of each (train set, seed), recorded whole (the CI profiles) or run by
run (the evidence profiles, so a stopped pilot resumes)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from cadlib.cases import EditCase
from cadlib.corpora import SPLIT_FILE, load_split, make_split, split_cases
from cadlib.paths import repo_root
from cadlib.record.provenance import LoadMonitor, provenance
from cadlib.record.replay import Recorder

from .profiles import RUN_RECORDS, TRAIN_SET_LABELS
from .run_evaluation import evaluate_baseline, evaluate_fsm, evaluate_localized
from .run_scoring import CaseResult
from .run_training import fine_tune

__all__ = [
    "CRP",
    "FSM_UNTRAINED",
    "REGEN",
    "Pilot",
    "PilotRun",
    "baseline_budget",
    "eval_cases",
    "evaluate_untrained",
    "localized_system",
    "recorded_pilot",
    "run_pilot",
    "run_record_name",
    "run_recorder",
    "sft_system",
    "split_for",
    "spread",
]


def spread(cases: Sequence[EditCase], n: int | None) -> list[EditCase]:
    """``n`` cases evenly spaced through ``cases`` (all when ``n`` is None)."""
    if n is None or n >= len(cases):
        return list(cases)
    return [cases[(k * len(cases)) // n] for k in range(n)]


@dataclass
class Pilot:
    """Everything one pilot produced: training runs, held-out results per (train set,
    seed), the cross-corpus results of Table 22 (Combined, first seed) and the systems'
    labels."""

    runs: list = field(default_factory=list)
    results: dict = field(default_factory=dict)  # (train_set, seed) -> list[CaseResult]
    cross: dict = field(default_factory=dict)  # corpus -> list[CaseResult]
    localized: dict = field(default_factory=dict)  # (train_set, seed) -> list[CaseResult]

    def system(self, train_set: str) -> list[CaseResult]:
        """All attempts of one training set, pooled over seeds (the paper's 99)."""
        return [r for (ts, _), rs in self.results.items() if ts == train_set for r in rs]

    def localized_system(self, train_set: str) -> list[CaseResult]:
        """The localized-edit attempts of one training set, pooled over seeds."""
        return [r for (ts, _), rs in self.localized.items() if ts == train_set for r in rs]

    def systems(self, seed: int | None = None) -> dict[str, list[CaseResult]]:
        """Every trained system by name: SFT+FSM and (where run) localized edit, per set;
        pooled over seeds, or only ``seed``'s run (one attempt per case, as paired tests need)."""
        out = {}
        for ts in dict.fromkeys(ts for ts, _ in self.results):
            if seed is None:
                out[sft_system(ts)] = self.system(ts)
            else:
                out[sft_system(ts)] = self.results[(ts, seed)]
            if any(t == ts for t, _ in self.localized):
                out[localized_system(ts)] = (
                    self.localized_system(ts) if seed is None else self.localized[(ts, seed)]
                )
        return out


#: The untrained systems of paper App. "Baselines on the same split" (R003, R004, R005).
REGEN = "Full regeneration (untrained)"
CRP = "Prompt-level CRP (untrained)"
FSM_UNTRAINED = "FSM-constrained (untrained)"


def sft_system(train_set: str) -> str:
    """The name of the fine-tuned model's FSM-decoded system, e.g. ``"SFT+FSM, Py-only"``."""
    return f"SFT+FSM, {TRAIN_SET_LABELS[train_set]}"


def localized_system(train_set: str) -> str:
    """The name of the fine-tuned model in localized-edit mode (oracle spans given)."""
    return f"SFT, localized edit, {TRAIN_SET_LABELS[train_set]}"


def eval_cases(split: dict, corpora: Mapping[str, Sequence[EditCase]], P: Mapping) -> list:
    """The HEvalFix-Py held-out cases every system is scored on (the first ``P["n_eval"]``;
    all 33 by default), in split order."""
    held = split_cases(split, "heval-fix-py", corpora["heval-fix-py"], "held_out")
    return held[: P["n_eval"]] if P["n_eval"] else held


def baseline_budget(P: Mapping) -> int:
    """Decisions allowed to the untrained CRP and FSM systems (``baseline_max_new_tokens``,
    else ``max_new_tokens``)."""
    return P.get("baseline_max_new_tokens") or P["max_new_tokens"]


def evaluate_untrained(
    model, tokenizer, cases: Sequence[EditCase], P: Mapping, *, progress: bool = True
) -> dict[str, list[CaseResult]]:
    """The three untrained systems on ``cases`` (the first ``P["n_eval_baselines"]`` if set,
    else all, so that they pair with the trained systems): full regeneration (its budget is
    the document's, 1.25 x + 32), prompt-level CRP and FSM-constrained decoding with
    :func:`baseline_budget` decisions."""
    cases = cases[: P["n_eval_baselines"]] if P["n_eval_baselines"] else list(cases)
    kw = dict(max_new_tokens=baseline_budget(P), test_timeout=P["test_timeout"], progress=progress)
    return {
        REGEN: evaluate_baseline(model, tokenizer, cases, "regen", **kw),
        CRP: evaluate_baseline(model, tokenizer, cases, "crp", **kw),
        FSM_UNTRAINED: evaluate_fsm(model, tokenizer, cases, system=FSM_UNTRAINED, **kw),
    }


def split_for(seed: int, corpora: Mapping[str, Sequence[EditCase]]) -> tuple[dict, str]:
    """The saved split if it was made with ``seed`` (checked against the seeded function),
    else a fresh in-memory split with that seed; and a label that says which."""
    saved = load_split()
    if saved["seed"] == seed:
        fresh = make_split({n: corpora[n] for n in saved["corpora"]}, seed, saved["fraction"])
        if fresh != saved:
            raise ValueError("data/sft_split.json differs from make_split(seed): corpus changed?")
        return saved, f"saved split {SPLIT_FILE} (seed {seed})"
    return make_split(corpora, seed), f"in-memory split with seed {seed} (not the saved one)"


#: The parameters one (training set, seed) run's outcome depends on: two profiles that agree on
#: these share the run's record (:func:`run_record_name`), so a run is made once.
RUN_KEYS = (
    "model",
    "n_train",
    "lr",
    "betas",
    "weight_decay",
    "warmup",
    "grad_accum",
    "micro_batch",
    "max_length",
    "overlong",
    "n_eval",
    "max_new_tokens",
    "localized",
    "test_timeout",
    "threads",
)


def run_record_name(P: Mapping, split: Mapping, train_set: str, seed: int) -> str:
    """``run-<train set>-s<seed>-<digest>``: the record name of one run, the digest over
    :data:`RUN_KEYS`, the set's epochs, the split's ids and (for the Combined first seed of a
    cross-corpus profile) Table 22's corpora."""
    cross = bool(P["cross_corpus"]) and train_set == "combined" and seed == P["seeds"][0]
    key = {k: P.get(k) for k in RUN_KEYS} | {
        "epochs": P["epochs"][train_set],
        "cross": cross,
        "split": split["corpora"],
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=list).encode()).hexdigest()
    return f"run-{train_set}-s{seed}-{digest[:10]}"


def run_recorder(profile: str, resume: bool = False):
    """The store of one-by-one run records for an evidence profile (:data:`RUN_RECORDS`), a
    :class:`cadlib.record.replay.Recorder` over ``results/records/sft_pilot.runs/``, or ``None``
    (the cpu and smoke profiles record their pilot whole)."""
    return Recorder("sft_pilot", "runs", resume=resume) if profile in RUN_RECORDS else None


@dataclass
class PilotRun:
    """One (training set, seed) run: its training, its held-out attempts (FSM and, where run,
    localized edit), for the Combined first seed Table 22's other corpora, and its own
    provenance (commit, date, the load while it trained and scored)."""

    train: object  # cadlib.chapters.sft_pilot.run_training.TrainRun
    held: list
    localized: list | None = None
    cross: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)


def run_pilot(
    model_name: str,
    P: Mapping,
    split: dict,
    corpora: Mapping[str, Sequence[EditCase]],
    *,
    device: str = "auto",
    checkpoints: str | Path | None = "checkpoints",
    base_model=None,
    tokenizer=None,
    progress: bool = True,
    record=None,
) -> Pilot:
    """Train and evaluate every (training set, seed) of ``P`` (paper §5, Tables 6, 7, 22).

    Each run starts from the pretrained model (``base_model`` is trained in place by the
    first run that trains, to save a load; later runs reload ``model_name``), is saved under
    ``checkpoints``, and is evaluated on the HEvalFix-Py held-out cases (the first
    ``P["n_eval"]`` of them, all 33 by default) with FSM-constrained greedy decoding and the
    unit tests. With ``P["cross_corpus"]`` the first seed's Combined model is also
    evaluated on the HEvalFix-JS and ProbeEdit held-out splits (Table 22; the first
    ``P["n_eval"]`` cases of each when set).

    ``record`` (a :class:`cadlib.record.replay.Recorder`, or ``None``): each run is recorded
    on its own as soon as it ends (:func:`run_record_name`), so a long pilot stopped part-way
    resumes with a ``resume`` recorder instead of starting over.
    """
    pilot = Pilot()
    held = eval_cases(split, corpora, P)
    for train_set in P["train_sets"]:
        for seed in P["seeds"]:

            def one_run(train_set=train_set, seed=seed):
                nonlocal base_model
                watch = LoadMonitor(root=repo_root())
                started = datetime.now(UTC).isoformat("T", "seconds")
                model, tok, run = fine_tune(
                    model_name,
                    train_set,
                    seed,
                    P,
                    split,
                    corpora,
                    device=device,
                    checkpoints=checkpoints,
                    model=base_model,
                    tokenizer=tokenizer,
                )
                base_model = None
                done = _evaluate_run(model, tok, run, P, split, corpora, held, progress)
                watch.stop()
                done.provenance = {"started": started, **provenance(repo_root(), watch)}
                return done

            name = run_record_name(P, split, train_set, seed)
            done = one_run() if record is None else record(name, one_run)
            pilot.runs.append(done.train)
            pilot.results[(train_set, seed)] = done.held
            if done.localized is not None:
                pilot.localized[(train_set, seed)] = done.localized
            if done.cross:
                pilot.cross = {"heval-fix-py": done.held, **done.cross}
    return pilot


def recorded_pilot(
    rec: Recorder,
    model_name: str,
    P: Mapping,
    split: dict,
    corpora: Mapping[str, Sequence[EditCase]],
    **kw,
) -> Pilot:
    """:func:`run_pilot` under the chapter's recorder ``rec``: recorded whole at the CI
    profiles (one record, ``pilot``), run by run at the evidence profiles (:func:`run_recorder`,
    so a stopped pilot resumes when ``rec.resume``); replayed either way under replay."""
    runs = run_recorder(P["profile"], rec.resume)
    if runs is None:
        return rec("pilot", lambda: run_pilot(model_name, P, split, corpora, **kw))
    return run_pilot(model_name, P, split, corpora, record=runs, **kw)


def _evaluate_run(model, tokenizer, run, P: Mapping, split: dict, corpora, held, progress):
    """One trained model scored: held-out FSM attempts, localized edits, Table 22's corpora."""
    train_set, seed = run.train_set, run.seed
    kw = dict(
        max_new_tokens=P["max_new_tokens"],
        test_timeout=P["test_timeout"],
        progress=progress,
        seed=seed,
    )
    system = sft_system(train_set)
    out = PilotRun(train=run, held=evaluate_fsm(model, tokenizer, held, system=system, **kw))
    if P.get("localized"):
        out.localized = evaluate_localized(
            model, tokenizer, held, system=localized_system(train_set), **kw
        )
    if P["cross_corpus"] and train_set == "combined" and seed == P["seeds"][0]:
        for name in ("heval-fix-js", "probeedit"):
            cases = split_cases(split, name, corpora[name], "held_out")
            cases = cases[: P["n_eval"]] if P["n_eval"] else cases
            out.cross[name] = evaluate_fsm(
                model, tokenizer, cases, system=f"{system} on {name}", **kw
            )
    return out
