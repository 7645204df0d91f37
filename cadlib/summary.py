"""The book's summary page: the paper's headline figures beside ours, read from ``results/``.

Nothing here is typed by hand except the paper's published figures (each with its section)
and, for figures that differ, a one-line pointer to the chapter that explains why. Our value
is read from ``results/<chapter>.json`` by a dotted path; a missing file or key is shown as
"not yet run". A test checks that every paper figure here equals the one the chapter itself
recorded in its results file.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .results import results_dir

__all__ = [
    "Headline",
    "HEADLINES",
    "headline_table",
    "load_all",
    "lookup",
    "setting_table",
    "plot_ratios",
    "chapter_runtimes",
    "BEYOND_THE_PAPER",
    "beyond_markdown",
    "CHAPTER_PAGES",
    "format_value",
    "headline_html",
    "setting_html",
]

REPRODUCED, DIFFERS, UNEXPLAINED, NOT_RUN, BEYOND = (
    "reproduced", "differs (explained)", "differs (unexplained)", "not yet run",
    "beyond the paper",
)  # fmt: skip


@dataclass(frozen=True)
class Headline:
    """One figure: where the paper states it, where our value lives, and how to compare.

    ``ours`` is a dotted path into ``numbers`` of the chapter's results file, or a function of
    ``numbers`` (for a figure derived from two recorded ones); ``paper_key`` is a dotted path
    into its ``paper`` section, used only by the consistency test. ``scale`` multiplies our raw
    value (e.g. 100 for a fraction shown in percent). Within ``tol`` of the paper's value the
    figure is reproduced; otherwise ``why`` (if given) says where the difference is explained.
    """

    chapter: str
    label: str
    section: str
    paper: float | None
    ours: str | Callable[[dict], float]
    unit: str = ""
    tol: float = 0.0
    scale: float = 1.0
    why: str = ""
    paper_key: str | None = None


def _ratio(numerator: str, denominator: str) -> Callable[[dict], float]:
    """Our figure as the ratio of two recorded numbers (e.g. parsed / n)."""
    return lambda numbers: lookup(numbers, numerator) / lookup(numbers, denominator)


def _row(table: str, key: str, value: str, column: str) -> Callable[[dict], float]:
    """Our figure from a results table stored as a list of rows: ``column`` of the row whose
    ``key`` equals ``value``."""
    return lambda numbers: next(r[column] for r in numbers[table] if r[key] == value)


def _pct(chapter, label, section, paper, ours, tol=0.0, why="", paper_key=None, scale=100.0):
    return Headline(chapter, label, section, paper, ours, "%", tol, scale, why, paper_key)


_HARDWARE = "measured on other hardware (see the kernel chapter)"
_FSM = "table6.FSM-constrained (untrained)"
_SFT_SCALE = (
    "a scaled-down run in the cpu profile (SmolLM2-135M, a subset, one short epoch) "
    "against the paper's Qwen2.5-Coder-1.5B, 8 epochs, 3 seeds (SFT chapter)"
)

HEADLINES: tuple[Headline, ...] = (
    # --- losslessness (§4.3, Appendix I, Table 4)
    Headline("losslessness", "oracle round trip, byte-exact (pooled 3 corpora)", "§4.3", 482,
             "round_trip.pooled (paper's three).byte-exact", "cases"),
    Headline("losslessness", "escape fuzz round trips (of 10,000)", "App. I", 10000,
             "escape_fuzz.round_trip", "strings"),
    # --- ceiling (§4.2, Table 2, App. D)
    Headline("ceiling", "HEvalFix-Py gold tokens T", "Table 2", 8872, "line.heval-fix-py.T",
             paper_key="table2.heval-fix-py.T"),
    Headline("ceiling", "HEvalFix-Py copy tokens T_copy", "Table 2", 6577,
             "line.heval-fix-py.T_copy", paper_key="table2.heval-fix-py.T_copy"),
    Headline("ceiling", "HEvalFix-Py copy spans K", "Table 2", 295, "line.heval-fix-py.K",
             paper_key="table2.heval-fix-py.K"),
    _pct("ceiling", "HEvalFix-Py line copy fraction f_line", "Table 2", 74.1,
         "line.heval-fix-py.f_line", 0.05),
    Headline("ceiling", "HEvalFix-Py p50 copy span (tokens)", "Table 2", 19,
             "line.heval-fix-py.p50", why="no percentile definition reproduces the paper's "
             "p50/p95 although n, mean and every total match (ceiling chapter)",
             paper_key="table2.heval-fix-py.p50"),
    Headline("ceiling", "HEvalFix-JS gold tokens T", "Table 2", 14876, "line.heval-fix-js.T",
             paper_key="table2.heval-fix-js.T"),
    Headline("ceiling", "HEvalFix-JS copy tokens T_copy", "Table 2", 11725,
             "line.heval-fix-js.T_copy", paper_key="table2.heval-fix-js.T_copy"),
    Headline("ceiling", "HEvalFix-JS copy spans K", "Table 2", 311, "line.heval-fix-js.K",
             paper_key="table2.heval-fix-js.K"),
    _pct("ceiling", "HEvalFix-JS line copy fraction f_line", "Table 2", 78.8,
         "line.heval-fix-js.f_line", 0.05),
    _pct("ceiling", "ProbeEdit line copy fraction f_line", "Table 2", 97.8,
         "line.probeedit.f_line", 0.05,
         why="our ProbeEdit is a re-made corpus (the paper's is not public)"),
    _pct("ceiling", "HEvalFix-Py token-level copy fraction, m = 8", "§4.2 / App. D", 91.0,
         "token_level_f.heval-fix-py.8", 0.05),
    _pct("ceiling", "HEvalFix-JS token-level copy fraction, m = 8", "§4.2 / App. D", 93.3,
         "token_level_f.heval-fix-js.8", 0.05),
    Headline("ceiling", "HEvalFix-Py bnd_exact, paper's 7B curve", "Table 2", 3.45,
             "bounds_paper_reference_curve.line.heval-fix-py.bnd_exact", "×", 0.02,
             why="the paper's curve is reconstructed from the points it quotes "
             "(ceiling chapter)"),
    Headline("ceiling", "HEvalFix-JS bnd_exact, paper's 7B curve", "Table 2", 4.18,
             "bounds_paper_reference_curve.line.heval-fix-js.bnd_exact", "×", 0.02,
             why="the paper's curve is reconstructed from the points it quotes "
             "(ceiling chapter)"),
    Headline("ceiling", "HEvalFix-Py bnd_exact, our measured curve", "Table 2", 3.45,
             "bounds_measured_curve.line.heval-fix-py.bnd_exact", "×", 0.02, why=_HARDWARE),
    # --- formats (§4.4, Table 3)
    Headline("formats", "Copy-as-Decode round-trip EM (pooled)", "Table 3", 1.0,
             "table3.pooled.cad.rt_em", tol=0.0, paper_key="table3.pooled.cad.rt_em"),
    Headline("formats", "unified diff round-trip EM (pooled)", "Table 3", 1.0,
             "table3.pooled.unified-diff.rt_em", paper_key="table3.pooled.unified-diff.rt_em"),
    Headline("formats", "search/replace round-trip EM (pooled)", "Table 3", 0.89,
             "table3.pooled.search-replace.rt_em", tol=0.005,
             why="all cases instead of the paper's subsets, and an anchor rule the paper does "
             "not state (formats chapter)", paper_key="table3.pooled.search-replace.rt_em"),
    Headline("formats", "HEvalFix-Py Copy-as-Decode mean output tokens", "Table 3", 40.1,
             "table3.heval-fix-py.cad.mean", "tokens", 0.05,
             why="all 164 cases instead of the paper's subset of 33 (formats chapter)",
             paper_key="table3.heval-fix-py.cad.mean"),
    # --- perturbation (§5, Table 8)
    _pct("perturbation", "pooled trimmed EM at ε = 1", "Table 8", 15.48,
         "table8.pooled.1.em_trimmed", 2.0,
         why="pooled over our ProbeEdit, whose programs clamp less (perturbation chapter)"),
    _pct("perturbation", "HEvalFix-Py trimmed EM at ε = 1", "Table 8", 24.76,
         "table8.heval-fix-py.1.em_trimmed", 2.0),
    _pct("perturbation", "HEvalFix-JS trimmed EM at ε = 1", "Table 8", 12.68,
         "table8.heval-fix-js.1.em_trimmed", 2.0),
    # --- decoding end to end (§2.3-2.4, App. H; the paper never measured this)
    _pct("decoding", "free-run FSM decoding: parse rate (pooled)", "Table 6", 100.0,
         _row("free_run", "corpus", "pooled", "parse rate"), 0.0),
    _pct("decoding", "free-run FSM decoding: strict-resolve rate (pooled)", "§2.3", None,
         _row("free_run", "corpus", "pooled", "strict-resolve rate"), 0.0),
    Headline("decoding", "forced-oracle Copy-as-Decode: forwards saved vs AR (pooled)", "§2.4",
             None, "speed.pooled/Copy-as-Decode.forward_ratio", "×"),
    Headline("decoding", "forced-oracle Copy-as-Decode: wall-clock speedup (pooled)", "§4.6",
             None, "speed.pooled/Copy-as-Decode.speedup", "×"),
    Headline("decoding", "prompt lookup on the same outputs: wall-clock speedup (pooled)",
             "Table 9", None, "speed.pooled/prompt lookup.speedup", "×"),
    Headline("decoding", "c_mask: FSM work per masked step", "App. H", 0.02,
             _row("fixed_costs", "quantity", "c_mask: FSM work per masked step", "median"),
             "ms", 0.01, why=_HARDWARE),
    # --- SFT pilot (§5, Table 6)
    _pct("sft_pilot", "FSM-constrained untrained model: held-out EM", "Table 6", 0.0,
         f"{_FSM}.em_rate", 0.0),
    _pct("sft_pilot", "FSM-constrained untrained model: parse rate", "Table 6", 100.0,
         _ratio(f"{_FSM}.parsed", f"{_FSM}.n"), 0.0),
    _pct("sft_pilot", "SFT+FSM Py-only: held-out EM", "Table 6", 12.1,
         "table6.SFT+FSM, Py-only.em_rate", 0.05, why=_SFT_SCALE),
    _pct("sft_pilot", "SFT+FSM Py-only: parse rate", "Table 6", 100.0,
         _ratio("table6.SFT+FSM, Py-only.parsed", "table6.SFT+FSM, Py-only.n"), 0.0),
    Headline("sft_pilot", "SFT+FSM Py-only: span-start accuracy", "Table 6", 0.59,
             "table6.SFT+FSM, Py-only.start_acc", tol=0.03, why=_SFT_SCALE,
             paper_key="table6.SFT+FSM, Py-only.start_acc"),
    Headline("sft_pilot", "SFT+FSM Py-only: span-end accuracy", "Table 6", 0.35,
             "table6.SFT+FSM, Py-only.end_acc", tol=0.05, why=_SFT_SCALE,
             paper_key="table6.SFT+FSM, Py-only.end_acc"),
    # --- the companion system: quotient-grammar FIM constraint (beyond the paper)
    _pct("fim", "recognizer agrees with ast.parse on random edits", "companion §IV-VI", None,
         "differential.edit_agreement"),
    _pct("fim", "true middles: every prefix viable", "companion §IV-VI", None,
         "differential.true_middles_all_prefixes_viable"),
    _pct("fim", "localized edits, untrained model: parse rate unconstrained", "ch. 8", None,
         "localized_edit.SmolLM2 untrained / unconstrained.parse_rate"),
    _pct("fim", "localized edits, untrained model: parse rate FIM-constrained", "ch. 8", None,
         "localized_edit.SmolLM2 untrained / FIM-constrained.parse_rate"),
    _pct("fim", "FIM completion: parse rate unconstrained", "ch. 8", None,
         "fim.unconstrained.parse_rate"),
    _pct("fim", "FIM completion: parse rate FIM-constrained", "ch. 8", None,
         "fim.FIM-constrained.parse_rate"),
)  # fmt: skip


#: What this book adds beyond the paper, by chapter (shown on the summary page).
BEYOND_THE_PAPER: tuple[tuple[str, str], ...] = (
    ("01_losslessness", "a byte-exact round trip for every pair of strings (not up to a trailing "
     "newline), proved with property tests; an escape that is injective on all text"),
    ("01_losslessness", "the four other HumanEvalPack languages (Java, Go, C++, Rust)"),
    ("02_kernel", "the splice checked against step-by-step decoding (logits and positions), and "
     "the cache restored between trials, shown"),
    ("03_ceiling", "the paper's percentile definitions probed; Table 2 for four more languages"),
    ("04_formats", "every case instead of subsets; every failure classified; unified diffs "
     "applied by git apply; extra format variants (anchor disambiguation, diff context sizes)"),
    ("05_perturbation", "start-only / end-only noise, and strict rejections under noise"),
    ("06_decoding", "the decoder measured end to end on a real model against autoregressive "
     "decoding and prompt lookup on the same outputs; range-valid line masks; tokenization at "
     "splice boundaries measured and handled"),
    ("07_sft_pilot", "functional correctness of every resolved output (HumanEvalPack tests)"),
    ("08_fim_constraint", "the companion paper's quotient-grammar FIM constraint, built, checked "
     "against CPython, and applied to <gen> bodies"),
)  # fmt: skip


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


def load_all(folder: Path | None = None) -> dict[str, dict]:
    """Every ``results/*.json``, by chapter name."""
    folder = folder or results_dir()
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def _our_value(h: Headline, record: dict | None) -> float | None:
    """Our figure for ``h`` from its chapter's results record, or None when not recorded."""
    if record is None:
        return None
    try:
        numbers = record["numbers"]
        value = h.ours(numbers) if callable(h.ours) else lookup(numbers, h.ours)
        return float(value) * h.scale
    except (KeyError, TypeError, ZeroDivisionError, StopIteration):
        return None


def _status(h: Headline, ours) -> str:
    if ours is None:
        return NOT_RUN
    if h.paper is None:
        return BEYOND
    if math.isclose(ours, h.paper, abs_tol=h.tol + 1e-9):
        return REPRODUCED
    return DIFFERS if h.why else UNEXPLAINED


def headline_table(results: dict[str, dict] | None = None) -> pd.DataFrame:
    """One row per headline: paper, ours, ratio, status, why, and our setting's labels."""
    results = load_all() if results is None else results
    rows = []
    for h in HEADLINES:
        record = results.get(h.chapter)
        ours = _our_value(h, record)
        status = _status(h, ours)
        rows.append({
            "chapter": h.chapter, "figure": h.label, "where": h.section, "unit": h.unit,
            "paper": h.paper, "ours": ours,
            "ratio": ours / h.paper if ours is not None and h.paper else None,
            "status": status, "why": h.why if status == DIFFERS else "",
            "profile": record["profile"] if record else "",
        })  # fmt: skip
    return pd.DataFrame(rows)


def setting_table(results: dict[str, dict] | None = None) -> pd.DataFrame:
    """Per chapter: profile, model, tokenizer, hardware and when the figures were made."""
    results = load_all() if results is None else results
    rows = []
    for chapter, r in results.items():
        hw = r.get("hardware", {})
        hardware = f"{hw.get('cpu', '?')} ({hw.get('cores', '?')} cores)"
        if hw.get("gpu"):
            hardware += f", {hw['gpu']}"
        rows.append({
            "chapter": chapter, "profile": r.get("profile"), "model": r.get("model") or "none",
            "tokenizer": r.get("tokenizer") or "none", "hardware": hardware,
            "torch": hw.get("torch", ""), "created": r.get("created", ""),
        })  # fmt: skip
    return pd.DataFrame(rows).set_index("chapter")


_COLOURS = {REPRODUCED: "#2ca02c", DIFFERS: "#ff7f0e", UNEXPLAINED: "#d62728",
            NOT_RUN: "#bbbbbb", BEYOND: "#1f77b4"}  # fmt: skip


def plot_ratios(table: pd.DataFrame):
    """Ours / paper for every headline that has both, coloured by status (log scale)."""
    import matplotlib.pyplot as plt

    shown = table[table["ratio"].fillna(0) > 0].iloc[::-1]  # a log axis cannot show 0
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(shown) + 1))
    ax.scatter(shown["ratio"], range(len(shown)), c=[_COLOURS[s] for s in shown["status"]],
               zorder=3)  # fmt: skip
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_yticks(
        range(len(shown)), [f"{c}: {f}" for c, f in zip(shown.chapter, shown.figure, strict=True)]
    )
    ax.set_xlabel("ours / paper (log scale; 1 = identical)")
    for status, colour in _COLOURS.items():
        if status in set(shown["status"]):
            ax.scatter([], [], c=colour, label=status)
    ax.legend(loc="lower right", fontsize="small")
    return fig


def chapter_runtimes(folder: Path | None = None) -> pd.DataFrame:
    """Wall time of each chapter's last papermill run, read from the notebooks' metadata."""
    from .results import repo_root

    folder = folder or repo_root() / "notebooks"
    rows = []
    for path in sorted(folder.glob("[0-9]*.ipynb")):
        meta = json.loads(path.read_text()).get("metadata", {}).get("papermill", {})
        rows.append({
            "chapter": path.stem, "profile": meta.get("parameters", {}).get("profile", ""),
            "minutes": round(meta["duration"] / 60, 1) if meta.get("duration") else None,
            "run at": (meta.get("end_time") or "")[:16].replace("T", " "),
        })  # fmt: skip
    return pd.DataFrame(rows).set_index("chapter")


def beyond_markdown() -> str:
    """:data:`BEYOND_THE_PAPER` as a MyST list with links to the chapters."""
    return "\n".join(f"- {{doc}}`/notebooks/{chapter}`: {text}"
                     for chapter, text in BEYOND_THE_PAPER)  # fmt: skip


# --- the summary page's tables as HTML that fits the article column ---------------------------
#
# At a 1280-px window the book's article column is under 700 px wide. A plain DataFrame of the
# headlines (chapter, figure, where, paper, ours, ratio, status, why, profile) ran past it behind
# a scroll bar, and its ``why`` column wrapped one word per line. Here: rows grouped under a
# header per chapter (which also carries the profile), the paper's section under its figure,
# a short status badge, and each explanation once, as a numbered note under the table. The
# columns have fixed shares of the column's width and cells wrap, so the table fits whatever the
# labels (the statuses will change; a status without a colour here is shown in grey).

#: The notebook (``notebooks/<stem>.ipynb``) that writes each results file.
CHAPTER_PAGES: dict[str, str] = {
    "losslessness": "01_losslessness", "kernel": "02_kernel", "ceiling": "03_ceiling",
    "formats": "04_formats", "perturbation": "05_perturbation", "decoding": "06_decoding",
    "sft_pilot": "07_sft_pilot", "fim": "08_fim_constraint",
}  # fmt: skip

#: Badge text where the status itself is long; the full status is the badge's tooltip.
_BADGE_TEXT = {DIFFERS: "differs", NOT_RUN: "not run", BEYOND: "beyond paper"}

_UNITS_INLINE = ("%", "×")  # shown right after the number; other units in small type


def format_value(value, unit: str = "") -> str:
    """A figure as text: thousands separated, at most 4 significant digits, "—" when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    text = f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"
    return text + (f" {unit}" if unit in _UNITS_INLINE else "")


def _tint(colour: str, keep: float = 0.3) -> str:
    """``colour`` mixed with white (a pastel badge background that dark text reads on)."""
    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - (255 - c) * keep):02x}" for c in rgb)


_CSS = """
.cad-fit { width: 100%; max-width: 100%; table-layout: fixed; border-collapse: collapse;
  font-size: 0.875em; line-height: 1.35; margin: 0; }
.cad-fit th, .cad-fit td { padding: 0.3em 0.45em; vertical-align: top; overflow-wrap: break-word;
  white-space: normal; text-align: left; }
.cad-fit thead th { border-bottom: 2px solid var(--pst-color-border, #ccc); }
.cad-fit td { border-bottom: 1px solid var(--pst-color-border, #ddd); }
.cad-fit .num { text-align: right; font-variant-numeric: tabular-nums; }
.cad-fit .sub { display: block; font-size: 0.85em; opacity: 0.75; }
.cad-fit .unit { font-size: 0.85em; opacity: 0.75; }
.cad-fit tr.cad-group th { padding-top: 0.9em; font-weight: 600;
  border-bottom: 1px solid var(--pst-color-border, #ccc);
  background: var(--pst-color-surface, #f5f5f5); }
.cad-fit tr.cad-group .sub { display: inline; float: right; font-weight: normal; }
.cad-badge { display: inline-block; padding: 0.05em 0.45em; border-radius: 0.7em;
  color: #1a1a1a; font-size: 0.9em; line-height: 1.3; white-space: normal; }
.cad-notes { font-size: 0.875em; margin-top: 0.5em; }
"""


def _style(extra: str = "") -> str:
    badges = "".join(f".cad-badge.s{i} {{ background: {_tint(c)}; border: 1px solid {c}; }}\n"
                     for i, c in enumerate(_COLOURS.values()))  # fmt: skip
    return f"<style>{_CSS}{badges}{extra}</style>"


def _badge(status: str, note: int | None) -> str:
    known = list(_COLOURS)
    cls = f" s{known.index(status)}" if status in known else ""
    text = html.escape(_BADGE_TEXT.get(status, status))
    mark = f'<sup><a href="#summary-note-{note}">{note}</a></sup>' if note else ""
    return f'<span class="cad-badge{cls}" title="{html.escape(status)}">{text}</span>{mark}'


def _cols(widths: list[float]) -> str:
    return "<colgroup>" + "".join(f'<col style="width:{w}%">' for w in widths) + "</colgroup>"


def headline_html(table: pd.DataFrame, chapters_href: str = "../notebooks/") -> str:
    """:func:`headline_table` as an HTML table that fits the book's article column.

    Rows are grouped by chapter (a header row linking to ``chapters_href + <page>.html`` with
    the profile); each figure shows the paper's value with its section, ours, ours / paper and
    a status badge; every ``why`` is a numbered note under the table, once per distinct text.
    """
    notes: dict[str, int] = {}
    for why in table["why"]:
        if why and why not in notes:
            notes[why] = len(notes) + 1
    head = '<th>figure</th><th class="num">paper</th><th class="num">ours</th>'
    head += '<th class="num">ours / paper</th><th>status</th>'
    out = [_style(), '<table class="cad-fit cad-headlines">', _cols([42, 17, 15, 9, 17]),
           f"<thead><tr>{head}</tr></thead>", "<tbody>"]  # fmt: skip
    for chapter, rows in table.groupby("chapter", sort=False):
        page = CHAPTER_PAGES.get(chapter)
        title = html.escape(f"Chapter {int(page[:2])}: {chapter}" if page else chapter)
        if page:
            title = f'<a href="{chapters_href}{page}.html">{title}</a>'
        profiles = ", ".join(sorted({p for p in rows["profile"] if p}))
        profile = f'<span class="sub">{html.escape(profiles)} profile</span>' if profiles else ""
        out.append(f'<tr class="cad-group"><th colspan="5" scope="colgroup">'
                   f"{title}{profile}</th></tr>")  # fmt: skip
        for r in rows.itertuples(index=False):
            out.append(
                f"<tr><td>{html.escape(r.figure)}</td>"
                f'<td class="num">{_value_html(r.paper, r.unit)}'
                f'<span class="sub">{html.escape(r.where)}</span></td>'
                f'<td class="num">{_value_html(r.ours, r.unit)}</td>'
                f'<td class="num">{"—" if pd.isna(r.ratio) else f"{r.ratio:.3f}"}</td>'
                f"<td>{_badge(r.status, notes.get(r.why))}</td></tr>"
            )
    out.append("</tbody></table>")
    if notes:
        out.append('<ol class="cad-notes">' + "".join(
            f'<li id="summary-note-{n}">{html.escape(why)}</li>' for why, n in notes.items()
        ) + "</ol>")  # fmt: skip
    return "\n".join(out)


def _value_html(value, unit: str) -> str:
    value = None if value is None or pd.isna(value) else value
    text = html.escape(format_value(value, unit))
    if value is not None and unit and unit not in _UNITS_INLINE:
        text += f' <span class="unit">{html.escape(unit)}</span>'
    return text


def setting_html(results: dict[str, dict] | None = None) -> str:
    """:func:`setting_table` as HTML that fits the article column: a setting shared by every
    chapter (profile, hardware, torch) is said once above the table instead of in a column."""
    table = setting_table(results).reset_index()
    table["created"] = [str(c)[:16].replace("T", " ") for c in table["created"]]
    shared = [c for c in ("profile", "hardware", "torch") if table[c].nunique() == 1]
    lead = ""
    if shared:
        said = "; ".join(f"{c} {table[c].iloc[0]}" for c in shared)
        lead = f"<p>Every chapter: {html.escape(said)}.</p>"
    table = table.drop(columns=shared)
    widths = {"chapter": 16, "profile": 9, "model": 24, "tokenizer": 24, "hardware": 20,
              "torch": 12, "created": 19}  # fmt: skip
    cols = list(table.columns)
    share = [widths[c] for c in cols]
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>"
                   for r in table.itertuples(index=False))  # fmt: skip
    return (f'{_style()}{lead}<table class="cad-fit cad-setting">'
            f"{_cols([round(100 * w / sum(share), 1) for w in share])}"
            "<thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr></thead>"
            f"<tbody>{rows}</tbody></table>")  # fmt: skip
