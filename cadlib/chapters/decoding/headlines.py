"""What the book's pages read of chapter 6 (decoding end to end): its summary rows (the held-out
test run's first; §2.3-2.4, App. H; the paper never measured this), the re-run tolerances of
``results/decoding*.json``, the ``paper`` profile's settings, its coverage rows, what it adds
beyond the paper, and its one-id forward for the summary's comparison across chapters."""

from __future__ import annotations

from cadlib import paper as P
from cadlib.book import rerun_check as R
from cadlib.book import verdicts as V
from cadlib.book.coverage import NOT_RUN_HERE, TEXT, Item
from cadlib.book.paper_settings import UNPUBLISHED, Setting
from cadlib.book.summary.spec import (
    CPU,
    FSM_PARSES,
    Headline,
    in_percent,
    lookup,
    percent_headline,
    row_value,
)
from cadlib.corpora import CORPUS_LABELS, REALEDITS_TEST

__all__ = [
    "BEYOND_THE_PAPER",
    "CARRIER",
    "COVERAGE",
    "HEADLINES",
    "HELDOUT_PARTS",
    "HELDOUT_GROUPS",
    "HELDOUT_ALL",
    "HELDOUT_METHODS",
    "RANKED",
    "REVERSES",
    "PAPER_HARDWARE",
    "PAPER_SETTINGS",
    "TOLERANCES",
    "carrier_share",
    "one_id_forward",
    "pooled_label_problems",
]

_FSM_ROW = "FSM-constrained (untrained)"
_FSM_PARSE_RATE = in_percent(P.TABLE6[_FSM_ROW]["parsed"] / P.TABLE6[_FSM_ROW]["n"])
_DRAFTED = "m=0 +cursor +headers"  # the drafted decoder chapter 6 times (CopyDecoder drafts)
_PREDICTED = "cost_model.predicted_speedups"
#: The corpus that carries chapter 6's pooled ratios of sums over every case (the largest share
#: of the predicted autoregressive time; :func:`pooled_label_problems` checks it).
CARRIER = "realedits-flask"
#: What a pooled row's label says when it ranks two methods otherwise than the median case.
REVERSES = "reverses the median case's ranking against"


def _timed_cases(numbers: dict) -> int:
    """The cases of chapter 6's timed sample."""
    return len(numbers["timed_cases"])


def _every_case(numbers: dict) -> int:
    """The accounted cases of chapter 6 (every case of every corpus)."""
    return sum(r["cases"] for r in numbers["accounting"]["strata"])


def _predicted(column: str, method: str, setting: str):
    """``column`` (``median_speedup`` or ``pooled_speedup``) of chapter 6's predicted speedups
    over every case of every corpus (``cost_model.predicted_speedups``' pooled row) for one
    method and setting."""

    def get(numbers):
        return next(
            r[column]
            for r in lookup(numbers, _PREDICTED)
            if r["corpus"] == "pooled" and r["method"] == method and r["setting"] == setting
        )

    return get


def _corpora_won(setting: str):
    """On how many corpora Copy-as-Decode at ``setting`` has a higher median-case predicted
    speedup than prompt lookup's."""

    def get(numbers):
        rows = [r for r in lookup(numbers, _PREDICTED) if r["corpus"] != "pooled"]
        median = {(r["corpus"], r["method"], r["setting"]): r["median_speedup"] for r in rows}
        corpora = dict.fromkeys(r["corpus"] for r in rows)
        return sum(
            median[(c, "Copy-as-Decode", setting)] > median[(c, "prompt lookup", "best")]
            for c in corpora
        )

    return get


def _corpora(numbers: dict) -> int:
    """The accounted corpora of chapter 6."""
    return len(numbers["accounting"]["strata"])


def _humanevalfix(column: str):
    """``column`` of chapter 6's strata summed over the HumanEvalFix languages."""

    def get(numbers):
        rows = numbers["accounting"]["strata"]
        return sum(r[column] for r in rows if r["corpus"].startswith("heval-fix-"))

    return get


def carrier_share(numbers: dict) -> float:
    """:data:`CARRIER`'s share of the predicted autoregressive time over every case."""
    rows = numbers["accounting"]["strata"]
    total = sum(r["ar_predicted_s"] for r in rows)
    return next(r["ar_predicted_s"] for r in rows if r["corpus"] == CARRIER) / total


def _timed_median(method: str):
    """The median timed case's measured speedup of ``method`` over autoregressive decoding
    (``cost_model.validation``: per case, the median over repeats)."""

    def get(numbers):
        by = {}
        for r in numbers["cost_model"]["validation"]:
            by.setdefault(r["case"], {})[r["method"]] = r["measured_s"]
        ratios = sorted(t["autoregressive"] / t[method] for t in by.values() if method in t)
        mid = len(ratios) // 2
        return ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2

    return get


#: The methods the summary ranks: their label name, method and setting.
_RANKED = (
    ("Copy-as-Decode", "Copy-as-Decode", "m=0"),
    ("Copy-as-Decode with drafts", "Copy-as-Decode", _DRAFTED),
    ("prompt lookup", "prompt lookup", "best"),
)
#: Declared reversals: the pooled row of each method names the methods it ranks otherwise
#: than the median case does (checked on the committed run by :func:`pooled_label_problems`).
_REVERSED = {"Copy-as-Decode": ("prompt lookup",), "prompt lookup": ("Copy-as-Decode",)}
_POOLED = ("Copy-as-Decode", "prompt lookup")  # the pair the summary shows pooled


def _name(name: str) -> str:
    """A method as a label names it (Copy-as-Decode is forced-oracle; prompt lookup leads
    its labels, which the coverage map matches)."""
    return "prompt lookup (fastest setting)" if name == "prompt lookup" else f"forced-oracle {name}"


def _median_row(name: str, method: str, setting: str) -> Headline:
    return Headline(
        "decoding",
        f"{_name(name)}: predicted speedup over AR, median case of every case",
        "Table 9" if method == "prompt lookup" else "§4.6",
        None,
        _predicted("median_speedup", method, setting),
        "×",
        V.beyond(),
        n=_every_case,
    )


def _pooled_row(name: str, method: str, setting: str) -> Headline:
    reversed_ = "".join(f"; {REVERSES} {other}" for other in _REVERSED.get(name, ()))
    return Headline(
        "decoding",
        f"{_name(name)}: predicted speedup over AR, every case pooled (ratio of sums carried "
        f"by {CORPUS_LABELS[CARRIER]}{reversed_})",
        "Table 9" if method == "prompt lookup" else "§4.6",
        None,
        _predicted("pooled_speedup", method, setting),
        "×",
        V.beyond(),
        n=_every_case,
    )


#: Each ranked method's (median-case row, pooled row or None): what
#: :func:`pooled_label_problems` compares.
RANKED: dict[str, tuple[Headline, Headline | None]] = {
    name: (_median_row(name, m, s), _pooled_row(name, m, s) if name in _POOLED else None)
    for name, m, s in _RANKED
}


def pooled_label_problems(
    numbers: dict, ranked: dict[str, tuple[Headline, Headline | None]] = RANKED
) -> list[str]:
    """What is wrong with the pooled rows' labels on ``numbers``: a pooled row that ranks two
    methods otherwise than their median-case rows without its label saying so (``REVERSES
    <other>``), or says so where it does not, and a label that does not name the corpus with
    the largest share of the predicted autoregressive time as its carrier."""
    problems = []
    pooled = {k: (m, p) for k, (m, p) in ranked.items() if p is not None}
    for a, (ma, pa) in pooled.items():
        for b, (mb, pb) in pooled.items():
            if a == b:
                continue
            flips = (pa.ours(numbers) > pb.ours(numbers)) != (ma.ours(numbers) > mb.ours(numbers))
            says = f"{REVERSES} {b}" in pa.label
            if flips != says:
                problems.append(f"{pa.label}: {'says' if says else 'hides'} a reversal vs {b}")
    rows = numbers["accounting"]["strata"]
    heaviest = max(rows, key=lambda r: r["ar_predicted_s"])["corpus"]
    for _, p in pooled.values():
        if f"carried by {CORPUS_LABELS.get(heaviest, heaviest)}" not in p.label:
            problems.append(f"{p.label}: not carried by {heaviest}")
    return problems


#: The held-out run's parts, groups and methods as its protocol names them
#: (:mod:`.profiles_heldout`, which pages do not import; tests check that the two agree).
HELDOUT_PARTS = {
    "transformers": "decoding.heldout.transformers.json",
    "llama.cpp": "decoding.heldout.llama-cpp.json",
}
HELDOUT_GROUPS = (*REALEDITS_TEST, "HumanEvalFix test family")
HELDOUT_ALL = "all test cases"
HELDOUT_METHODS = ("Copy-as-Decode", "Copy-as-Decode +drafts")


def _heldout(engine: str, group: str, method: str, column: str):
    """``column`` of one group and method of the held-out run's ``engine`` part
    (``results/decoding.heldout.<engine>.json``), or None while that part is not recorded."""

    def get(_numbers):
        from cadlib.record.results import read_results_file

        part = read_results_file(HELDOUT_PARTS[engine])
        rows = part["groups"] if part else ()
        return next(
            (r[column] for r in rows if r["group"] == group and r["method"] == method), None
        )

    return get


def _heldout_rows(engine: str) -> tuple[Headline, ...]:
    """The held-out run's rows for one engine (the test corpora, nobody tuned on them): each
    Copy-as-Decode variant's median-case speed over the best rival's on each real-edit test
    corpus and the HumanEvalFix test family, and the test cases where it is slower than AR."""
    where = f"held-out test, {engine}"

    def row(label: str, group: str, method: str, column: str, unit: str) -> Headline:
        value = _heldout(engine, group, method, column)
        cases = _heldout(engine, group, method, "cases")
        return Headline(
            "decoding", f"{where}: {label}", "§4.6", None, value, unit, V.beyond(), n=cases
        )

    rows = []
    for method in HELDOUT_METHODS:
        name = _name(method)
        for group in HELDOUT_GROUPS:
            label = CORPUS_LABELS.get(group, group)
            speed = f"{name}, wall-clock speed over the best rival, median case, {label}"
            rows.append(row(speed, group, method, "vs_rival", "×"))
        slower = f"test cases where {name} is slower than AR (wall-clock)"
        rows.append(row(slower, HELDOUT_ALL, method, "slower_than_ar", "cases"))
    return tuple(rows)


def _rows() -> tuple[Headline, ...]:
    """Chapter 6's speed rows: the median case first (predicted on every case, then on the
    clock), the corpora each decoder wins and where it loses, then the pooled ratios of sums
    labelled with what carries them."""
    medians = tuple(m for m, _ in RANKED.values())
    wins = tuple(
        Headline(
            "decoding",
            f"corpora where the median case of {_name(name)} is predicted faster than prompt "
            "lookup's",
            "Table 9",
            None,
            _corpora_won(setting),
            "corpora",
            V.beyond(),
            n=_corpora,
        )
        for name, _, setting in _RANKED[:2]
    )
    slower = Headline(
        "decoding",
        "HumanEvalFix cases (6 languages, the same tasks) where forced-oracle Copy-as-Decode is "
        "predicted slower than AR",
        "§4.6",
        None,
        _humanevalfix("slower_than_ar"),
        "cases",
        V.beyond(),
        n=_humanevalfix("cases"),
    )
    timed = tuple(
        Headline(
            "decoding",
            f"{_name(name).replace('fastest', 'timed')}: wall-clock speedup over AR, median "
            "timed case",
            "Table 9" if method == "prompt lookup" else "§4.6",
            None,
            _timed_median(
                {"m=0": "Copy-as-Decode", _DRAFTED: "Copy-as-Decode +drafts"}.get(setting, method)
            ),
            "×",
            V.beyond(),
            n=_timed_cases,
        )
        for name, method, setting in _RANKED
    )
    pooled = tuple(p for _, p in RANKED.values() if p is not None)
    share = percent_headline(
        "decoding",
        f"{CORPUS_LABELS[CARRIER]}'s share of the pooled predicted AR time (every case)",
        "§4.6",
        None,
        carrier_share,
        V.beyond(),
        n=_every_case,
    )
    heldout = tuple(h for engine in HELDOUT_PARTS for h in _heldout_rows(engine))
    return (*heldout, *medians, *wins, slower, *timed, *pooled, share)


#: The summary's rows (§2.3-2.4, §4.6, App. H, App. M, Table 9).
HEADLINES: tuple[Headline, ...] = (
    percent_headline(
        "decoding",
        "free-run FSM decoding: parse rate (pooled)",
        "Table 6",
        _FSM_PARSE_RATE,
        row_value("free_run", "corpus", "pooled", "parse rate"),
        FSM_PARSES,
        n=row_value("free_run", "corpus", "pooled", "cases"),
    ),
    percent_headline(
        "decoding",
        "free-run FSM decoding: strict-resolve rate (pooled)",
        "§2.3",
        None,
        row_value("free_run", "corpus", "pooled", "strict-resolve rate"),
        V.beyond(),
        n=row_value("free_run", "corpus", "pooled", "cases"),
    ),
    *_rows(),
    Headline(
        "decoding",
        "c_mask (decoder): FSM work per masked step",
        "App. H",
        P.FIXED_COSTS["c_mask_ms"][0],
        row_value("fixed_costs", "quantity", "c_mask: FSM work per masked step", "median"),
        "ms",
        CPU,
    ),
)

#: Re-run tolerances (:mod:`cadlib.book.rerun_check`), first match wins: timings and all they
#: price are ignored, KL divergences are model floats, counts of forwards and of greedy
#: decisions exact.
TOLERANCES: list[tuple[str, R.Tolerance]] = [
    ("numbers.speed.*.decode_s*", R.TIMING),
    ("numbers.speed.*.speedup*", R.TIMING),
    ("numbers.bounds.*", R.TIMING),
    ("numbers.fixed_costs.*", R.TIMING),
    ("numbers.mask_costs.*_us", R.TIMING),
    ("numbers.runtime_s", R.TIMING),
    ("numbers.kernel_curve", R.TIMING),
    ("numbers.cost_model.*", R.TIMING),  # the forward-cost grid and all it prices
    ("numbers.goals.*", R.TIMING),  # mixes forward counts with predicted/measured speed
    ("numbers.boundary_effect.*kl*", R.MODEL_FLOAT),  # KL divergences between two forwards
    ("numbers.speed.*.forward*", R.COUNT_RATIO),
    ("numbers.accounting.strata.*ar_predicted_s", R.TIMING),  # priced on the grid
    ("numbers.accounting.strata.*slower*", R.TIMING),  # predicted seconds compared
    ("numbers.accounting.*", R.COUNT_RATIO),
    ("numbers.free_run.*", R.DECISION_RATIO),
    ("numbers.teacher_forced_agreement.*", R.DECISION_RATIO),
]

_ALL = {"heval-fix-py": None, "heval-fix-js": None, "probeedit": None}

#: The ``paper`` profile's settings beside the paper's (:mod:`cadlib.book.paper_settings`).
PAPER_SETTINGS: dict[str, Setting] = {
    "model": Setting(
        "Qwen/Qwen2.5-7B-Instruct",
        "Qwen/Qwen2.5-7B-Instruct",
        "§3 'end-to-end smoke test' (App. P: the untrained 7B base)",
    ),
    "dtype": Setting("bfloat16", "bfloat16", "§3 Table 1 (bf16 runtime)"),
    "attn_implementation": Setting("eager", "eager", "§3 Table 1 (eager HF Transformers)"),
    "timing_cases": Setting(
        _ALL,
        UNPUBLISHED,
        "App. P ('a controlled subset')",
        deviation="App. P is not in our copy of the paper: every case of the three corpora",
    ),
}

#: Where the paper ran this chapter's measurement.
PAPER_HARDWARE = "A100 80GB (§3 Table 1)"

#: The coverage map's rows this chapter alone treats (:mod:`cadlib.book.coverage`).
COVERAGE: tuple[Item, ...] = (
    Item(
        "Table 9",
        "Copy-as-Decode vs prompt-lookup decoding (architecture)",
        ("06_decoding",),
        ("prompt lookup*",),
        TEXT,
    ),
    Item("Figure 7", "the FSM", ("06_decoding",), ("free-run FSM*",)),
    Item(
        "App. P",
        "end-to-end smoke test on an untrained 7B",
        ("06_decoding",),
        (),
        NOT_RUN_HERE,
        "the 7B base needs a GPU and the hub; chapter 6 runs the same decoder on SmolLM2",
    ),
)

#: What the chapter adds beyond the paper (the summary's list).
BEYOND_THE_PAPER: tuple[str, ...] = (
    "the decoder measured end to end on a real model against autoregressive "
    "decoding and prompt lookup on the same outputs; range-valid line masks; tokenization at "
    "splice boundaries measured and handled",
)


def one_id_forward(record: dict, context: int) -> dict | None:
    """SmolLM2's one-id forward in this chapter's cpu run: its recorded forward-cost grid read
    at n = 1 and ``context`` (the kernel chapter's, so the two compare at the same length), or
    None when the grid is not recorded (:mod:`cadlib.book.summary.forward_costs`)."""
    import json

    from cadlib.book.summary.forward_costs import forward_row
    from cadlib.costs.cost_model import CostGrid
    from cadlib.record.replay import decode, record_path

    path = record_path("decoding", record["profile"], "timing", replay=True)
    if not path.exists():
        return None
    grid = CostGrid(decode(json.loads(path.read_text()))["grid"])
    p = record["params"]
    ms = float(grid.seconds([1], [context])[0]) * 1e3
    return forward_row(
        "6 (decoding)",
        "forward-cost grid at n = 1",
        record,
        context,
        ms,
        p["attn_implementation"],
        p["threads"],
    )
