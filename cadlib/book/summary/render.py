"""The summary page's rendering: the ratio plot, the list of what the book adds, and the
headline and setting tables as HTML that fits the book's article column."""

from __future__ import annotations

import html
import math

import pandas as pd

from cadlib.book.verdicts import (
    BEYOND,
    BY_CONSTRUCTION,
    CONTRADICTS,
    DERIVED,
    EXACT,
    NOT_COMPARABLE,
    NOT_RUN_HERE,
    NOT_YET_RUN,
    PAPER_DISAGREES,
    WITHIN_NOISE,
)
from cadlib.chapters import cards

from .headlines import beyond_the_paper
from .tables import setting_table

__all__ = [
    "plot_ratios",
    "ratio_rows",
    "beyond_markdown",
    "format_value",
    "headline_html",
    "setting_html",
    "fit_table_html",
]

_COLOURS = {
    EXACT: "#2ca02c",
    WITHIN_NOISE: "#8fd175",
    CONTRADICTS: "#d62728",
    BY_CONSTRUCTION: "#9467bd",
    DERIVED: "#8c564b",
    PAPER_DISAGREES: "#ff7f0e",
    NOT_COMPARABLE: "#7f7f7f",
    NOT_RUN_HERE: "#bcbd22",
    BEYOND: "#1f77b4",
    NOT_YET_RUN: "#bbbbbb",
}
#: Verdicts whose ratio compares like with like (the plot's upper panel); a not-comparable
#: row is drawn apart, hollow, so it is never read as a comparison.
_LIKE_WITH_LIKE = (EXACT, WITHIN_NOISE, CONTRADICTS, BY_CONSTRUCTION, DERIVED, PAPER_DISAGREES)


def ratio_rows(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows :func:`plot_ratios` draws: (like with like, not comparable), each holding every
    headline with both figures, a zero ratio included (drawn at the axis' floor)."""
    has = table[table["ratio"].notna()]
    return (has[has["status"].isin(_LIKE_WITH_LIKE)], has[has["status"] == NOT_COMPARABLE])


def plot_ratios(table: pd.DataFrame):
    """Ours / paper for every headline that has both, coloured by status (log scale): the
    comparable rows above, the not-comparable ones below a rule and hollow; a ratio of 0 is
    drawn as a left arrow at the axis' floor and labelled "0"."""
    import matplotlib.pyplot as plt  # heavy; only the summary page plots

    like, other = ratio_rows(table)
    shown = pd.concat([like, other])
    positive = shown["ratio"][shown["ratio"] > 0]
    floor = float(positive.min()) / 3 if len(positive) else 0.1
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(shown) + 1.2))
    ys = list(range(len(shown)))[::-1]  # first row at the top
    for y, r in zip(ys, shown.itertuples(index=False), strict=True):
        colour, zero = _COLOURS.get(r.status, "#bbbbbb"), r.ratio <= 0
        hollow = r.status == NOT_COMPARABLE
        ax.scatter(
            [floor if zero else r.ratio],
            [y],
            marker="<" if zero else "o",
            zorder=3,
            facecolors="none" if hollow else colour,
            edgecolors=colour,
        )
        if zero:
            ax.annotate(
                "0", (floor, y), xytext=(6, -3), textcoords="offset points", fontsize="small"
            )
    if len(like) and len(other):
        ax.axhline(len(other) - 0.5, color="grey", lw=0.8, ls="--")
        ax.text(
            0.99,
            len(other) - 0.5,
            "not comparable below: other model, hardware or corpus",
            transform=ax.get_yaxis_transform(),
            fontsize="x-small",
            va="top",
            ha="right",
            color="grey",
        )
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_yticks(ys, [f"{c}: {f}" for c, f in zip(shown.chapter, shown.figure, strict=True)])
    ax.set_xlabel("ours / paper (log scale; 1 = identical; ◀ = ours is 0)")
    for status, colour in _COLOURS.items():
        if status in set(shown["status"]):
            hollow = status == NOT_COMPARABLE
            ax.scatter(
                [], [], facecolors="none" if hollow else colour, edgecolors=colour, label=status
            )
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return fig


def beyond_markdown() -> str:
    """:func:`beyond_the_paper` as a MyST list with links to the chapters."""
    return "\n".join(
        f"- {{doc}}`/notebooks/{chapter}`: {text}" for chapter, text in beyond_the_paper()
    )


# --- the summary page's tables as HTML that fits the article column ---------------------------
#
# At a 1280-px window the book's article column is under 700 px wide. A plain DataFrame of the
# headlines (chapter, figure, where, paper, ours, ratio, status, why, profile) ran past it behind
# a scroll bar, and its ``why`` column wrapped one word per line. Here: rows grouped under a
# header per chapter (which also carries the profile), the paper's section under its figure,
# a short status badge, and each explanation once, as a numbered note under the table. The
# columns have fixed shares of the column's width and cells wrap, so the table fits whatever the
# labels (the statuses will change; a status without a colour here is shown in grey).

#: Badge text where the status itself is long; the full status is the badge's tooltip.
_BADGE_TEXT = {
    CONTRADICTS: "contradicts",
    DERIVED: "from paper",
    BEYOND: "beyond paper",
    PAPER_DISAGREES: "paper inconsistent",
}

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
    badges = "".join(
        f".cad-badge.s{i} {{ background: {_tint(c)}; border: 1px solid {c}; }}\n"
        for i, c in enumerate(_COLOURS.values())
    )
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
    the profile); each figure shows its n, the paper's value with its section, ours,
    ours / paper and a verdict badge, with the z test's arithmetic under a noise verdict or a
    contradiction; every ``why`` is a numbered note under the table, once per distinct text.
    """
    notes: dict[str, int] = {}
    for why in table["why"]:
        if why and why not in notes:
            notes[why] = len(notes) + 1
    head = '<th>figure</th><th class="num">paper</th><th class="num">ours</th>'
    head += '<th class="num">ours / paper</th><th>verdict</th>'
    out = [
        _style(),
        '<table class="cad-fit cad-headlines">',
        _cols([42, 17, 15, 9, 17]),
        f"<thead><tr>{head}</tr></thead>",
        "<tbody>",
    ]
    for chapter, rows in table.groupby("chapter", sort=False):
        card = {c.name: c for c in cards()}.get(chapter)
        page = card.notebook if card else None
        title = html.escape(f"Chapter {int(page[:2])}: {chapter}" if page else chapter)
        if page:
            title = f'<a href="{chapters_href}{page}.html">{title}</a>'
        profiles = ", ".join(sorted({p for p in rows["profile"] if p}))
        profile = f'<span class="sub">{html.escape(profiles)} profile</span>' if profiles else ""
        out.append(
            f'<tr class="cad-group"><th colspan="5" scope="colgroup">{title}{profile}</th></tr>'
        )
        for r in rows.itertuples(index=False):
            out.append(
                f"<tr><td>{html.escape(r.figure)}{_n_html(getattr(r, 'n', None))}</td>"
                f'<td class="num">{_value_html(r.paper, r.unit)}'
                f'<span class="sub">{html.escape(r.where)}</span></td>'
                f'<td class="num">{_value_html(r.ours, r.unit)}</td>'
                f'<td class="num">{"—" if pd.isna(r.ratio) else f"{r.ratio:.3f}"}</td>'
                f"<td>{_badge(r.status, notes.get(r.why))}"
                f"{_detail_html(r.status, getattr(r, 'detail', ''))}</td></tr>"
            )
    out.append("</tbody></table>")
    if notes:
        out.append(
            '<ol class="cad-notes">'
            + "".join(
                f'<li id="summary-note-{n}">{html.escape(why)}</li>' for why, n in notes.items()
            )
            + "</ol>"
        )
    return "\n".join(out)


def _n_html(n) -> str:
    return "" if n is None or pd.isna(n) else f'<span class="sub">n = {int(n):,}</span>'


def _detail_html(status: str, detail: str) -> str:
    """The test's arithmetic, shown where it decided something (noise, contradiction, a
    consistency check of the paper's own numbers)."""
    if status not in (WITHIN_NOISE, CONTRADICTS, DERIVED, PAPER_DISAGREES) or not detail:
        return ""
    return f'<span class="sub">{html.escape(detail)}</span>'


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
    widths = {
        "chapter": 16,
        "profile": 9,
        "model": 24,
        "tokenizer": 24,
        "hardware": 20,
        "torch": 12,
        "created": 19,
    }
    return lead + fit_table_html(table, widths)


def fit_table_html(table: pd.DataFrame, widths: dict[str, float]) -> str:
    """``table`` (every column named in ``widths``, its relative width) as an HTML table that
    wraps its cells inside the article column instead of scrolling sideways."""
    cols = list(table.columns)
    share = [widths[c] for c in cols]
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>"
        for r in table.itertuples(index=False)
    )
    return (
        f'{_style()}<table class="cad-fit cad-setting">'
        f"{_cols([round(100 * w / sum(share), 1) for w in share])}"
        "<thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )
