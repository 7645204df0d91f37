"""Selector learnability pilot (paper §5 "Selector learnability pilot", Tables 6, 7, 22, 23).

Fine-tune a causal LM to emit the oracle program of an edit, then decode held-out cases with
the FSM-constrained decoder (greedy, with the copy splice) and score what comes out.

The split (:func:`make_split`, saved as ``data/sft_split.json``)
    The paper trains on 131 HEvalFix-Py cases and evaluates on 33 held-out ones; its
    Combined set has 385 = 131 Py + 131 JS + 123 ProbeEdit cases, and Table 22 evaluates
    the Combined checkpoint on held-out splits of 33 JS and 31 ProbeEdit cases. So each
    corpus is split 80/20 (``round(0.2 n)`` held out: 33 of 164, 31 of 154). The held-out
    cases are the ``n_held`` ids that come first when the ids are ordered by
    ``sha256(f"{seed}:{key}")``: a rule that needs no RNG, so it gives the same list with
    every Python and on every machine. HEvalFix-JS is the same 164 problems with the same
    bugs translated to JavaScript, so the JS key is the *task number*: JS/k is held out
    exactly when Python/k is, and Combined training never sees a translation of a held-out
    Python case (otherwise the Py held-out EM of Combined would be contaminated).
Training examples (:func:`build_example`)
    Prompt = the chat-formatted edit prompt of :mod:`cadlib.prompts` (instruction plus the
    document with line numbers); target = the *transcript* of the escaped oracle program,
    i.e. exactly the token sequence the decoder produces at inference (program tags
    interleaved with the spliced copy text). Loss (paper App. "Training details": prompt
    masked with -100) is on the tokens the model chooses at inference only: prompt tokens,
    forced-template tokens and spliced copy tokens get label -100 (see :func:`build_example`).
Training (:func:`train`)
    ``transformers.Trainer`` with the paper's recipe (AdamW lr 2e-5, betas (0.9, 0.95),
    cosine schedule with 3 % warm-up, effective batch 8 = grad-accum 8 x micro-batch 1, max
    length 1536, gradient checkpointing; Py-only 8 epochs, Combined 6; seeds 0, 1, 2) as the
    ``paper`` profile, and an honest scaled-down ``cpu`` profile.
Evaluation (:func:`score_program`, :func:`summarize`, :func:`taxonomy`)
    Final-output EM, program EM, parse rate, op-level span-start / span-end accuracy, the
    failure taxonomy of Table 7, Wilson 95 % CIs, wall time per case, and (beyond the paper)
    functional correctness against the HumanEvalPack unit tests (:mod:`cadlib.execution`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .corpora import EditCase
from .grammar import Program, ProgramSyntaxError, parse_program
from .oracle import oracle_program
from .resolver import RangeClippedWarning, ResolveError, doc_lines, resolve

__all__ = [
    "SPLIT_CORPORA",
    "TRAIN_SETS",
    "HELD_OUT_FRACTION",
    "split_key",
    "held_out_ids",
    "make_split",
    "split_path",
    "save_split",
    "load_split",
    "split_cases",
    "training_cases",
    "wilson_ci",
    "outputs_equal",
    "endpoint_hits",
    "score_program",
    "CaseResult",
    "TAXONOMY",
    "categorize",
    "summarize",
    "taxonomy",
]

#: Corpora that are split into train / held-out (paper §5, Table 22).
SPLIT_CORPORA = ("heval-fix-py", "heval-fix-js", "probeedit")
#: Training sets of the pilot: Py-only (131 cases) and Combined (385 cases).
TRAIN_SETS = {"py": ("heval-fix-py",), "combined": SPLIT_CORPORA}
#: Share of each corpus held out: round(0.2 * 164) = 33, round(0.2 * 154) = 31 (Table 22).
HELD_OUT_FRACTION = 0.2
SPLIT_FILE = "data/sft_split.json"


# --------------------------------------------------------------------------------------------
# The split
# --------------------------------------------------------------------------------------------


def split_key(case_id: str) -> str:
    """The key a case is split by: the task number for HumanEvalPack (``"Python/7"`` and
    ``"JavaScript/7"`` -> ``"humanevalpack/7"``, so translations stay on the same side), the
    id itself otherwise."""
    m = re.fullmatch(r"(?:Python|JavaScript|Java|Go|CPP|Rust)/(\d+)", case_id)
    return f"humanevalpack/{m.group(1)}" if m else case_id


def _rank(seed: int, case_id: str) -> str:
    return hashlib.sha256(f"{seed}:{split_key(case_id)}".encode()).hexdigest()


def held_out_ids(
    ids: Sequence[str], seed: int = 0, fraction: float = HELD_OUT_FRACTION
) -> list[str]:
    """The ``round(fraction * len(ids))`` ids held out: first in ``sha256(seed:key)`` order.

    Returned in the corpus order of ``ids``. Duplicated ids fail loudly.
    """
    if len(set(ids)) != len(ids):
        raise ValueError("case ids must be unique to split a corpus")
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction!r}")
    n_held = round(fraction * len(ids))
    chosen = set(sorted(ids, key=lambda i: _rank(seed, i))[:n_held])
    return [i for i in ids if i in chosen]


def make_split(
    corpora: Mapping[str, Sequence[EditCase]], seed: int = 0, fraction: float = HELD_OUT_FRACTION
) -> dict:
    """The train / held-out split of every corpus, with the rule and seed that made it.

    Parameters
    ----------
    corpora : mapping
        Corpus name -> its cases (``load_corpus(name)``), e.g. for :data:`SPLIT_CORPORA`.
    seed : int
        Split seed (0 for the saved split).
    fraction : float
        Held-out share of each corpus; the paper's 33/164 and 31/154 are ``round(0.2 n)``.
    """
    out = {
        "seed": seed,
        "fraction": fraction,
        "method": (
            "per corpus, hold out the round(fraction * n) case ids that come first when ordered by "
            "sha256(f'{seed}:{key}') (hex); key = 'humanevalpack/<task number>' for HumanEvalPack "
            "cases (so Python/k and JavaScript/k are always on the same side) and the case id "
            "otherwise; made by cadlib.sft.make_split"
        ),
        "paper": "§5 and App. 'Training details', Table 22: 131/33 Py, 131/33 JS, 123/31 ProbeEdit",
        "corpora": {},
    }
    for name, cases in corpora.items():
        ids = [c.id for c in cases]
        held = held_out_ids(ids, seed, fraction)
        held_set = set(held)
        out["corpora"][name] = {
            "n": len(ids),
            "n_train": len(ids) - len(held),
            "n_held_out": len(held),
            "held_out": held,
            "train": [i for i in ids if i not in held_set],
        }
    return out


def split_path() -> Path:
    """``<repo>/data/sft_split.json``."""
    from .results import repo_root

    return repo_root() / SPLIT_FILE


def save_split(split: dict, path: str | Path | None = None) -> Path:
    path = Path(path) if path else split_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(split, indent=1) + "\n")
    return path


def load_split(path: str | Path | None = None) -> dict:
    """Read the saved split (``data/sft_split.json``)."""
    path = Path(path) if path else split_path()
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist; create it with "
            "cadlib.sft.save_split(cadlib.sft.make_split(...))"
        )
    return json.loads(path.read_text())


def split_cases(split: dict, name: str, cases: Sequence[EditCase], part: str) -> list[EditCase]:
    """The cases of corpus ``name`` in ``part`` (``"train"`` or ``"held_out"``), split order.

    Fails loudly when the corpus does not hold every id the split names (a changed corpus).
    """
    if part not in ("train", "held_out"):
        raise ValueError(f"unknown part {part!r}; valid: 'train', 'held_out'")
    if name not in split["corpora"]:
        raise ValueError(f"the split has no corpus {name!r}; it has {', '.join(split['corpora'])}")
    by_id = {c.id: c for c in cases}
    entry = split["corpora"][name]
    missing = [i for i in entry[part] if i not in by_id]
    if missing or len(cases) != entry["n"]:
        raise ValueError(
            f"corpus {name} does not match the saved split ({len(cases)} cases vs {entry['n']}; "
            f"{len(missing)} ids missing, e.g. {missing[:3]}): regenerate data/sft_split.json"
        )
    return [by_id[i] for i in entry[part]]


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


# --------------------------------------------------------------------------------------------
# Scoring one prediction
# --------------------------------------------------------------------------------------------


def wilson_ci(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of ``k`` successes in ``n`` trials (paper Table 6's CIs).

    ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``; ``(nan, nan)`` for n = 0.
    """
    if n == 0:
        return (math.nan, math.nan)
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


def outputs_equal(a: str, b: str) -> bool:
    """Final-output EM: byte-equal up to at most one trailing newline (paper §3, the resolver
    convention ``r``)."""
    return a.removesuffix("\n") == b.removesuffix("\n")


def endpoint_hits(pred: Program, oracle: Program) -> tuple[int, int, int]:
    """``(starts right, ends right, oracle copies)``: op-level endpoint accuracy.

    The k-th copy op of the prediction is compared with the k-th copy op of the oracle
    program (copies in order; gen ops ignored): its start is right when it equals the
    oracle's start, its end likewise. An oracle copy with no k-th predicted copy counts as
    wrong at both ends; extra predicted copies do not lower the accuracy (they show up as
    "spans right, text wrong" in :func:`categorize`, the paper's "op-count mismatch").
    The paper does not spell out its alignment; this index alignment is the simplest one
    consistent with Table 7's caption.
    """
    p, o = pred.copies, oracle.copies
    starts = sum(1 for a, b in zip(p, o, strict=False) if a.start == b.start)
    ends = sum(1 for a, b in zip(p, o, strict=False) if a.end == b.end)
    return starts, ends, len(o)


@dataclass
class CaseResult:
    """The score of one decoded program against its case (one row of the evaluation)."""

    id: str
    system: str
    text: str  # the raw program text (or the raw output of a free-form baseline)
    parsed: bool
    output: str | None  # the resolved (clipped) output; None on a parse failure
    em: bool
    trimmed_em: bool
    program_em: bool
    start_hits: int
    end_hits: int
    n_oracle_copies: int
    n_pred_copies: int
    out_of_range: bool  # some copy range fell outside the document (clipped, App. "anomaly")
    error: str = ""
    wall_s: float = math.nan
    new_tokens: int = 0
    passed: bool | None = None  # unit tests (cadlib.execution); None = not run
    test_detail: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def start_acc(self) -> float:
        """Per-case span-start accuracy (1.0 when neither side copies anything)."""
        return _acc(self.start_hits, self.n_oracle_copies, self.n_pred_copies)

    @property
    def end_acc(self) -> float:
        return _acc(self.end_hits, self.n_oracle_copies, self.n_pred_copies)

    @property
    def category(self) -> str:
        return categorize(self)


def _acc(hits: int, n_oracle: int, n_pred: int) -> float:
    if n_oracle == 0:
        return 1.0 if n_pred == 0 else 0.0
    return hits / n_oracle


def score_program(case: EditCase, text: str, system: str = "", **extra) -> CaseResult:
    """Score a program text against ``case``: parse, resolve (clipped), compare.

    Copy ranges outside the document are clipped, as the paper's resolver does before
    splicing (App. "Implementation anomaly"), and flagged in ``out_of_range``.
    """
    oracle = oracle_program(case.doc, case.gold)
    try:
        program = parse_program(text)
    except ProgramSyntaxError as err:
        return CaseResult(
            case.id, system, text, False, None, False, False, False, 0, 0,
            len(oracle.copies), 0, False, error=str(err), **extra,
        )  # fmt: skip
    n_lines = len(doc_lines(case.doc))
    out_of_range = any(not 1 <= c.start <= c.end <= n_lines for c in program.copies)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RangeClippedWarning)
        try:
            output = resolve(program, case.doc, mode="clipped")
        except ResolveError as err:  # not raised in clipped mode; kept for safety
            output, extra["error"] = None, str(err)
    starts, ends, n = endpoint_hits(program, oracle)
    return CaseResult(
        id=case.id,
        system=system,
        text=text,
        parsed=True,
        output=output,
        em=output is not None and outputs_equal(output, case.gold),
        trimmed_em=output is not None and output.strip() == case.gold.strip(),
        program_em=program == oracle,
        start_hits=starts,
        end_hits=ends,
        n_oracle_copies=n,
        n_pred_copies=len(program.copies),
        out_of_range=out_of_range,
        **extra,
    )


# --------------------------------------------------------------------------------------------
# Aggregation: Table 6 and Table 7
# --------------------------------------------------------------------------------------------

#: Table 7's failure modes, in the order they are tested (each attempt lands in exactly one).
TAXONOMY = (
    "EM (fully correct)",
    "Spans all correct, <gen>-text wrong",
    "Start correct, end off",
    "End correct, start off",
    "Both endpoints off",
    "Parse failure",
)
_SPAN_OK = 0.99  # Table 7 caption: "both per-case span accuracies >= 0.99"


def categorize(r: CaseResult) -> str:
    """Table 7's failure mode of one attempt.

    Parse failure first, then EM; otherwise by the per-case span accuracies: both >= 0.99
    means "spans all correct, <gen>-text wrong" (wrong gen text or op count); else which
    endpoint family is fully right.
    """
    if not r.parsed:
        return TAXONOMY[5]
    if r.em:
        return TAXONOMY[0]
    start_ok, end_ok = r.start_acc >= _SPAN_OK, r.end_acc >= _SPAN_OK
    if start_ok and end_ok:
        return TAXONOMY[1]
    if start_ok:
        return TAXONOMY[2]
    if end_ok:
        return TAXONOMY[3]
    return TAXONOMY[4]


def summarize(results: Sequence[CaseResult], by: str | None = "seed") -> dict:
    """Table 6's numbers for a list of attempts (pooled over seeds, like the paper's 99).

    Returns EM ``k/n`` with its Wilson CI, trimmed EM, program EM, parse rate, op-level
    span-start / span-end accuracy (hits over all oracle copies of all attempts), their
    mean and standard deviation across ``extra[by]`` groups (the paper's ``0.59 ± 0.03``
    over seeds), functional pass rate where tests ran, and the median wall time per case.
    """
    import numpy as np

    n = len(results)
    em = sum(r.em for r in results)
    lo, hi = wilson_ci(em, n)
    n_copies = sum(r.n_oracle_copies for r in results)
    out = {
        "n": n,
        "em": em,
        "em_rate": em / n if n else math.nan,
        "em_ci": [lo, hi],
        "trimmed_em": sum(r.trimmed_em for r in results),
        "program_em": sum(r.program_em for r in results),
        "parsed": sum(r.parsed for r in results),
        "start_acc": sum(r.start_hits for r in results) / n_copies if n_copies else math.nan,
        "end_acc": sum(r.end_hits for r in results) / n_copies if n_copies else math.nan,
        "out_of_range": sum(r.out_of_range for r in results),
        "wall_ms_median": _median_ms([r.wall_s for r in results]),
    }
    groups: dict = {}
    for r in results:
        groups.setdefault(r.extra.get(by) if by else None, []).append(r)
    if by and len(groups) > 1:
        for key in ("start", "end"):
            accs = [
                sum(getattr(r, f"{key}_hits") for r in g)
                / max(1, sum(r.n_oracle_copies for r in g))
                for g in groups.values()
            ]
            out[f"{key}_acc_sd"] = float(np.std(accs, ddof=1))
    tested = [r for r in results if r.passed is not None]
    if tested:
        k = sum(r.passed for r in tested)
        out["tests_passed"] = k
        out["tests_run"] = len(tested)
        out["tests_ci"] = list(wilson_ci(k, len(tested)))
    return out


def taxonomy(results: Iterable[CaseResult]) -> dict[str, int]:
    """Counts of Table 7's failure modes (every mode listed, zeros included)."""
    counts = dict.fromkeys(TAXONOMY, 0)
    for r in results:
        counts[categorize(r)] += 1
    return counts


def _median_ms(seconds: Sequence[float]) -> float:
    import numpy as np

    known = [s for s in seconds if not math.isnan(s)]
    return float(np.median(known) * 1e3) if known else math.nan
