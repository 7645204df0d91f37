"""What the book's pages read of chapter 5 (span perturbation): its summary rows (§5, Table 8),
the re-run tolerances of ``results/perturbation.json``, the ``paper`` profile's settings, its
coverage rows and what it adds beyond the paper."""

from __future__ import annotations

from cadlib import paper as P
from cadlib.book import rerun_check as R
from cadlib.book import verdicts as V
from cadlib.book.coverage import Item
from cadlib.book.paper_settings import Setting
from cadlib.book.summary.spec import Headline, in_percent, percent_headline

__all__ = ["BEYOND_THE_PAPER", "COVERAGE", "HEADLINES", "PAPER_SETTINGS", "TOLERANCES"]

_EPS = "5 seeded trials per case on both sides; our SE is clustered by case (perturbation chapter)"

#: The summary's rows (§5, Table 8).
HEADLINES: tuple[Headline, ...] = (
    percent_headline(
        "perturbation",
        "pooled trimmed EM at ε = 1",
        "Table 8",
        in_percent(P.TABLE8["pooled"][1]),
        "table8.pooled.1.em_trimmed",
        V.not_comparable(
            "pooled over our re-made ProbeEdit, whose programs clamp less (perturbation chapter)"
        ),
        n="table8.pooled.1.runs",
    ),
    percent_headline(
        "perturbation",
        "HEvalFix-Py trimmed EM at ε = 1",
        "Table 8",
        in_percent(P.TABLE8["heval-fix-py"][1]),
        "table8.heval-fix-py.1.em_trimmed",
        V.noise(5 * 164, _EPS),
        n="table8.heval-fix-py.1.runs",
        se="table8.heval-fix-py.1.em_trimmed_se",
    ),
    percent_headline(
        "perturbation",
        "HEvalFix-JS trimmed EM at ε = 1",
        "Table 8",
        in_percent(P.TABLE8["heval-fix-js"][1]),
        "table8.heval-fix-js.1.em_trimmed",
        V.noise(5 * 164, _EPS),
        n="table8.heval-fix-js.1.runs",
        se="table8.heval-fix-js.1.em_trimmed_se",
    ),
)

#: Re-run tolerances (:mod:`cadlib.book.rerun_check`): seeded noise, no model: every float is a
#: ratio of counts.
TOLERANCES: list[tuple[str, R.Tolerance]] = [("numbers.*", R.COUNT_RATIO)]

#: The ``paper`` profile's settings beside the paper's (:mod:`cadlib.book.paper_settings`).
PAPER_SETTINGS: dict[str, Setting] = {
    "eps_values": Setting((0, 1, 2, 3, 5), (0, 1, 2, 3, 5), "§3 Table 1, Table 8"),
    "trials": Setting(5, 5, "§3 Table 1 (5 trials / case)"),
}

_TRIMMED_EM = ("*trimmed EM at ε*",)

#: The coverage map's rows this chapter alone treats (:mod:`cadlib.book.coverage`).
COVERAGE: tuple[Item, ...] = (
    Item("Table 8", "EM under endpoint noise ε", ("05_perturbation",), _TRIMMED_EM),
    Item(
        "Table 14",
        "oracle programs under endpoint perturbation",
        ("05_perturbation",),
        _TRIMMED_EM,
    ),
    Item("Figure 6", "EM collapse under endpoint noise", ("05_perturbation",), _TRIMMED_EM),
)

#: What the chapter adds beyond the paper (the summary's list).
BEYOND_THE_PAPER: tuple[str, ...] = (
    "start-only / end-only noise, and strict rejections under noise",
)
