"""Chapter 7's run beside its topics: the setup every cell reads (device, corpora, split,
tokenizer, label), the examples each training set builds before training, the strata of the
held-out documents, the per-case records, the committed evidence runs, and :func:`numbers`,
the one function that builds the results file's numbers.

Per-case records (issue 16, "Per-case outputs"): one JSON line per (system, case) attempt,
committed next to the results file (``results/sft_pilot.cases.jsonl`` for the cpu profile),
so that a claim such as "11 of 33 outputs are the identity program" and every paired test can
be checked from the repository alone. Wall times are left out (they name the machine's speed,
not the attempt).

The strata: a held-out document of a single code line leaves a program no span to choose
(besides the identity program, the only program that edits it rewrites that line and copies
the rest), so the per-case records are split by the document's number of code lines
(:func:`stratum`); the tables and the reading of the strata are
:mod:`cadlib.chapters.sft_pilot.show`'s and :mod:`cadlib.chapters.sft_pilot.text`'s.

The measurement itself is split by topic: :mod:`.run_examples` (training examples and sets),
:mod:`.run_training` (the Trainer loop, one fine-tuning, the training-time estimate),
:mod:`.run_evaluation` (decoding held-out cases), :mod:`.run_scoring` (scores, span metrics,
Tables 6 and 7's aggregates), :mod:`.run_pilot` (the pilot end to end, recorded) and
:mod:`.run_paired` (paired tests and the three findings).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from cadlib import paper as _paper
from cadlib.corpora import SPLIT_CORPORA, load_corpus, seeded_subset
from cadlib.execution import sandbox_report
from cadlib.metrics import ALPHA, mcnemar_exact
from cadlib.models import load_tokenizer, resolve_device, set_threads
from cadlib.record.replay import replaying
from cadlib.record.results import (
    cases_name,
    committed_path,
    hardware_info,
    load_committed,
    repo_root,
)
from cadlib.record.session import Chapter
from cadlib.resolver import doc_lines

from .run_examples import build_examples, training_cases
from .run_paired import program_systems, rates_table
from .run_pilot import REGEN, Pilot, split_for
from .run_scoring import TAXONOMY, CaseResult, summarize, summary_record, taxonomy

__all__ = [
    "BND_EXACT_PY",
    "CASE_FIELDS",
    "EVIDENCE_PROFILES",
    "ONE_LINE",
    "PAPER_TABLE7",
    "SEVERAL_LINES",
    "ChapterSetup",
    "case_record",
    "code_lines",
    "committed_cases",
    "evidence_profile",
    "expected_speedup",
    "held_out_docs",
    "numbers",
    "paper_numbers",
    "preview_examples",
    "profile_record",
    "read_cases",
    "results_params",
    "run_hardware",
    "setup_chapter",
    "strata_frame",
    "stratum",
    "stratum_counts",
    "case_records",
]


@dataclass
class ChapterSetup:
    """What chapter 7's cells read beside its :class:`cadlib.record.session.Chapter`: the
    device, checkpoint folder, the corpora and their split, the model's tokenizer and the
    label every table carries."""

    device: str
    checkpoints: Path | None
    corpora: dict
    split: dict
    split_label: str
    tokenizer: object
    label: str


def setup_chapter(ch: Chapter) -> ChapterSetup:
    """Set torch's threads (``ch.P``), resolve ``ch.device``, load the corpora, the split for
    ``ch.seed`` and the model's tokenizer."""
    P = ch.P
    set_threads(P["threads"])
    dev = str(resolve_device(ch.device))
    corpora = {name: load_corpus(name) for name in SPLIT_CORPORA}
    split, split_label = split_for(ch.seed, corpora)
    kind = "GPU" if dev.startswith("cuda") else "CPU"
    return ChapterSetup(
        device=dev,
        checkpoints=repo_root() / P["checkpoints"] if P["checkpoints"] else None,
        corpora=corpora,
        split=split,
        split_label=split_label,
        tokenizer=load_tokenizer(P["model"]),
        label=f"ours ({P['model']}, {kind}, profile {ch.profile})",
    )


def run_hardware(profile: str, device) -> dict:
    """The machine this chapter's measurements (wall times, training time) were made on: this
    one (:func:`cadlib.record.results.hardware_info`) when it measures; under replay the
    recorded run's, from the committed results file of ``profile`` (what was timed there is
    what the replayed tables show)."""
    record = load_committed("sft_pilot", profile) if replaying() else None
    return record["hardware"] if record else hardware_info(device)


def preview_examples(P: Mapping, split: Mapping, corpora: Mapping, tokenizer) -> dict:
    """``{train set: (examples, report)}``: the training examples each set of ``P`` builds
    (the first seed's subset), before any training."""
    previews = {}
    for ts in P["train_sets"]:
        cases = seeded_subset(training_cases(split, ts, corpora), P["n_train"], min(P["seeds"]))
        previews[ts] = build_examples(cases, tokenizer, P["max_length"], P["overlong"])
    return previews


def held_out_docs() -> dict[str, str]:
    """The documents of the held-out corpus (HEvalFix-Py), by case id, for the strata."""
    return {c.id: c.doc for c in load_corpus("heval-fix-py")}


ONE_LINE, SEVERAL_LINES = "one code line", "several code lines"


def code_lines(doc: str) -> int:
    """Non-blank lines of ``doc`` (:func:`cadlib.resolver.doc_lines`)."""
    return sum(1 for line in doc_lines(doc) if line.strip())


def stratum(doc: str) -> str:
    """:data:`ONE_LINE` for a document of a single code line, else :data:`SEVERAL_LINES`."""
    return ONE_LINE if code_lines(doc) == 1 else SEVERAL_LINES


def strata_frame(records: Sequence[Mapping], docs: Mapping[str, str]) -> pd.DataFrame:
    """The program records (free-form replies have no spans) with their document's stratum."""
    rows = [r for r in records if not r.get("free_form") and r.get("span_em") is not None]
    missing = sorted({r["id"] for r in rows} - set(docs))
    if missing:
        raise ValueError(f"no document for case ids {missing[:3]}: pass the corpus' documents")
    frame = pd.DataFrame(rows)
    return frame.assign(stratum=[stratum(docs[i]) for i in frame["id"]])


def stratum_counts(
    records: Sequence[Mapping], docs: Mapping[str, str], trained: str, untrained: str
) -> dict:
    """Span-only EM of ``trained`` and ``untrained`` per stratum, paired on the same cases:
    ``one`` and ``multi`` each hold ``n``, hits ``a`` (trained) and ``b`` (untrained), the
    trained hits that are identity outputs and the trained hits without identity outputs
    (``kept`` of ``n_kept``); ``multi`` adds McNemar's exact ``p`` (unadjusted) and
    ``evidence``: span selection on multi-line documents, ``p <= ALPHA`` and ``a > b``."""
    frame = strata_frame(records, docs)
    a, b = (frame[frame.system == s].set_index("id") for s in (trained, untrained))
    if a.empty or b.empty:
        raise ValueError(f"the records lack {trained!r} or {untrained!r}")
    b = b.reindex(a.index)
    out = {}
    for key, part in (("one", ONE_LINE), ("multi", SEVERAL_LINES)):
        on = a.stratum == part
        hit, ident = a[on].span_em.astype(bool), a[on].identity.astype(bool)
        out[key] = {
            "n": int(on.sum()),
            "a": int(hit.sum()),
            "b": int(b[on].span_em.astype(bool).sum()),
            "identity": int(ident.sum()),
            "identity_hits": int((hit & ident).sum()),
            "kept": int((hit & ~ident).sum()),
            "n_kept": int((~ident).sum()),
        }
    on = a.stratum == SEVERAL_LINES
    p = mcnemar_exact(list(a[on].span_em.astype(bool)), list(b[on].span_em.astype(bool)))["p"]
    multi = out["multi"]
    multi.update(p=p, evidence=bool(multi["n"]) and p <= ALPHA and multi["a"] > multi["b"])
    out["closed"] = tuple(int(x.budget_closed.fillna(False).astype(bool).sum()) for x in (a, b))
    out["n"] = len(a)
    return out


#: The fields of one per-case record, in file order.
CASE_FIELDS = (
    "system",
    "id",
    "text",
    "output",
    "parsed",
    "em",
    "trimmed_em",
    "program_em",
    "span_em",
    "span_iou",
    "identity",
    "start_hits",
    "end_hits",
    "n_oracle_copies",
    "n_pred_copies",
    "out_of_range",
    "category",
    "passed",
    "test_detail",
    "new_tokens",
    "forwards",
    "budget_closed",
    "seed",
    "free_form",
    "localized",
)


def case_record(r: CaseResult) -> dict:
    """One attempt as a flat dict of :data:`CASE_FIELDS` (``nan`` becomes ``None``)."""
    rec = {}
    for key in CASE_FIELDS:
        value = getattr(r, key) if hasattr(r, key) else r.extra.get(key)
        if isinstance(value, float) and math.isnan(value):
            value = None
        rec[key] = value
    return rec


def case_records(systems: Mapping[str, Sequence[CaseResult]]) -> list[dict]:
    """Every attempt of every system as a per-case record (:func:`case_record`), in order, for
    :meth:`cadlib.record.session.Chapter.write_cases`."""
    return [case_record(r) for results in systems.values() for r in results]


def read_cases(path: str | Path) -> list[dict]:
    """The records of a per-case file."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def committed_cases(profile: str) -> Path:
    """The committed per-case records of ``profile``'s run."""
    return committed_path(cases_name("sft_pilot", profile))


#: The chapter's evidence profiles, largest first: the cpu chapter shows the largest committed.
EVIDENCE_PROFILES = ("seeds", "full")


def evidence_profile() -> str:
    """The largest evidence profile with a committed run (:data:`EVIDENCE_PROFILES`); the
    smallest when none is committed yet (the one to record first)."""
    return next(
        (p for p in EVIDENCE_PROFILES if profile_record(p) is not None), EVIDENCE_PROFILES[-1]
    )


def profile_record(profile: str) -> dict | None:
    """The committed results record of a profile of this chapter
    (:func:`cadlib.record.results.load_committed`), or ``None`` if not run yet."""
    return load_committed("sft_pilot", profile)


PAPER_TABLE7 = {k: dict(zip(TAXONOMY, v, strict=True)) for k, v in _paper.TABLE7.items()}


#: HEvalFix-Py's exact wall-clock bound bnd_exact (paper Table 2, §4.6).
BND_EXACT_PY = 3.45


def expected_speedup(em_rate: float, bound: float = BND_EXACT_PY) -> float:
    """Paper §5 "What 12-17% EM means": a selector right on a share ``em_rate`` of cases gets
    the full bound there and falls back to regeneration elsewhere: ``1 + em_rate (bnd - 1)``
    (the paper: 1 + 0.172 x 2.45 = 1.42x)."""
    return 1 + em_rate * (bound - 1)


def numbers(
    P: Mapping,
    split: Mapping,
    ours: Mapping,
    pilot: Pilot,
    comparisons: Sequence[dict],
    conclusion: str,
) -> dict:
    """``results/sft_pilot[.<profile>].json``'s numbers: split sizes, Tables 6/7/22, rates,
    paired tests, training runs, expected speedups and the generated ``conclusion``
    (:func:`cadlib.chapters.sft_pilot.text.run_conclusion` of the same run: the run's roles
    import no prose, so the notebook passes it in)."""
    summaries = {k: summarize(v) for k, v in ours.items()}
    return {
        "split": {
            n: {k: e[k] for k in ("n_train", "n_held_out")} for n, e in split["corpora"].items()
        },
        "table6": {k: summary_record(v) for k, v in ours.items()},
        "table7": {k: taxonomy(v) for k, v in program_systems(ours).items()},
        "table22": {k: summary_record(v) for k, v in pilot.cross.items()},
        "rates": rates_table(ours).to_dict(orient="index"),
        "comparisons": list(comparisons),
        "training": [
            {
                "train_set": r.train_set,
                "seed": r.seed,
                "examples": r.n_examples,
                "loss_tokens": r.n_loss_tokens,
                "epochs": r.epochs,
                "steps": r.optimizer_steps,
                "truncated": r.left_out["truncated"],
                "dropped": r.left_out["dropped"],
                "losses": r.losses,
                "train_seconds": r.train_seconds,
            }
            for r in pilot.runs
        ],
        "expected_speedup": {
            k: expected_speedup(summaries[k]["em_rate"]) for k in ours if k.startswith("SFT+FSM")
        },
        "conclusion": conclusion,
    }


def paper_numbers() -> dict:
    """The paper's figures the chapter compares with (Tables 6, 7, 22, 23; App. O's 1.42x)."""
    return {
        "table6": _paper.TABLE6 | {REGEN: _paper.REGEN},
        "table7": PAPER_TABLE7,
        "table22": _paper.TABLE22,
        "table23": _paper.TABLE23,
        "expected_speedup": {"SFT+FSM, Combined": 1.42},
    }


def results_params(split_label: str, model_info: Mapping) -> dict:
    """What the results file's ``params`` hold beside the profile's (``extra_params`` of
    :meth:`cadlib.record.session.Chapter.write`): the split's label, the loaded model's
    :func:`cadlib.models.model_info` and the guards model outputs ran under."""
    return {
        "split": split_label,
        "model_info": dict(model_info),
        "sandbox": sandbox_report(),
    }
