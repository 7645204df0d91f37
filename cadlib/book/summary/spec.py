"""One headline figure of the summary: :class:`Headline`, where its value lives, and the
vocabulary the chapters declare their rows in.

A figure's value (ours, its n, its standard error) is found in a chapter's results record by a
dotted path (:func:`lookup`; keys may hold spaces, dashes and dots) or by a small function of
the record's ``numbers`` (the getters below, e.g. one row of a table stored as a list of rows).
Each chapter declares its figures in ``cadlib.chapters.<package>.headlines.HEADLINES`` with
these names; the summary collects them (:func:`cadlib.book.summary.headlines.all_headlines`).
The reasons more than one chapter gives (:data:`CPU`, :data:`REMADE`, ...) are named once here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cadlib.book import verdicts as V
from cadlib.book.verdicts import Tolerance

__all__ = [
    "CPU",
    "FSM_PARSES",
    "Headline",
    "PAPERMILL",
    "REMADE",
    "ROUND_TRIP",
    "absent",
    "in_percent",
    "lookup",
    "percent_headline",
    "ratio",
    "record_value",
    "row_value",
]

# --- reasons and commands more than one chapter's rows name -----------------------------------

REMADE = V.not_comparable("our ProbeEdit is a re-made corpus (the paper's is not public)")
#: A chapter re-run at the paper's profile on a GPU (``.format(notebook, notebook)``).
PAPERMILL = "papermill --cwd notebooks notebooks/{} runs/{} -p profile paper -p device cuda"
CPU = V.not_comparable(
    "measured on 2 CPU cores with small models; the paper's figure is "
    "Qwen2.5-1.5B/7B on an A100 (kernel chapter)"
)
FSM_PARSES = V.by_construction(
    "the FSM only admits programs of the grammar, so every output parses; shown, not counted"
)
ROUND_TRIP = V.by_construction(
    "the resolver reproduces the gold byte for byte from its oracle program for every input, "
    "by construction of the resolver and the oracle (chapter 1 says so and checks it with "
    "property tests), so the count cannot fall short; shown, not counted"
)

Path_ = str | Callable[[dict], float]
_EXACT = V.exact()  # a plain deterministic recount


@dataclass(frozen=True)
class Headline:
    """One figure: where the paper states it, where our value lives, how it is compared.

    ``ours`` is a dotted path into ``numbers`` of the chapter's results file, or a function of
    ``numbers``; ``n`` (our sample size) and ``se`` (our standard error, in the figure's unit)
    likewise, or ``n`` a plain int. ``paper_key`` is a dotted path into the results file's
    ``paper`` section, used only by the consistency test. ``scale`` multiplies our raw value
    (100 for a fraction shown in percent). ``tolerance`` is declared in code, in the chapter's
    ``headlines`` module.
    """

    chapter: str
    label: str
    section: str
    paper: float | None
    ours: Path_
    unit: str = ""
    tolerance: Tolerance = _EXACT
    scale: float = 1.0
    paper_key: str | None = None
    n: Path_ | int | None = None
    se: str | None = None

    @property
    def why(self) -> str:
        """The declared reason, and the command that runs a figure not run here (shown as a
        numbered note under the table)."""
        tol = self.tolerance
        return f"{tol.reason}; run: {tol.command}" if tol.command else tol.reason


def ratio(numerator: str, denominator: str) -> Callable[[dict], float]:
    """Our figure as the ratio of two recorded numbers (e.g. parsed / n)."""
    return lambda numbers: lookup(numbers, numerator) / lookup(numbers, denominator)


def row_value(table: str, key: str, value: str, column: str) -> Callable[[dict], float]:
    """Our figure from a results table stored as a list of rows: ``column`` of the row whose
    ``key`` equals ``value``."""
    return lambda numbers: next(r[column] for r in numbers[table] if r[key] == value)


def record_value(table: str, column: str, **match) -> Callable[[dict], float]:
    """Our figure from a results table stored as a list of rows: ``column`` of the row whose
    fields equal ``match`` (e.g. ``corpus="pooled", curve="measured"``)."""
    return lambda numbers: next(
        r[column] for r in numbers[table] if all(r[k] == v for k, v in match.items())
    )


def percent_headline(
    chapter, label, section, paper, ours, tolerance=_EXACT, n=None, paper_key=None, se=None
) -> Headline:
    """A :class:`Headline` of a fraction shown in percent (unit ``%``, ``scale`` 100)."""
    return Headline(chapter, label, section, paper, ours, "%", tolerance, 100.0, paper_key, n, se)


def in_percent(fraction: float) -> float:
    """A paper fraction in percent (rounded off float noise: 0.741 -> 74.1)."""
    return round(100 * fraction, 6)


def absent(numbers: dict) -> None:
    """Our value of a figure this book has not run (see its "not run here" reason)."""
    return None


def lookup(tree, dotted: str):
    """Follow a dotted path (keys may contain spaces or dashes) through nested dicts."""
    node = tree
    for key in _split(dotted, tree):
        node = node[key]
    return node


def _split(dotted: str, tree) -> list[str]:
    """Split ``dotted`` greedily on dots that separate existing keys (keys may hold dots)."""
    parts, node, rest = [], tree, dotted
    while rest:
        for cut in [i for i, ch in enumerate(rest) if ch == "."] + [len(rest)]:
            key = rest[:cut]
            if isinstance(node, dict) and key in node:
                parts.append(key)
                node, rest = node[key], rest[cut + 1 :]
                break
        else:
            raise KeyError(dotted)
    return parts


def _get(spec, numbers, scale: float = 1.0) -> float | None:
    """A recorded number: ``spec`` a dotted path, a function of ``numbers``, or a plain int."""
    if spec is None:
        return None
    if isinstance(spec, int):
        return float(spec)
    try:
        value = spec(numbers) if callable(spec) else lookup(numbers, spec)
        return None if value is None else float(value) * scale
    except (KeyError, TypeError, ZeroDivisionError, StopIteration, ValueError, IndexError):
        return None
