"""Notebook setup: one plot style for the book, and quiet, reproducible output.

Call :func:`setup` in a chapter's first code cell after the parameters.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from tqdm import TqdmExperimentalWarning, TqdmWarning

from cadlib.grammar import Copy
from cadlib.oracle import oracle_program
from cadlib.resolver import doc_lines, op_text

__all__ = [
    "setup", "PALETTE", "finish_axes", "mechanism_figure", "save_book_figures", "EXAMPLE_DOC",
    "EXAMPLE_GOLD",
]

#: Colours of the four edit formats / methods, used across chapters.
PALETTE = {
    "full regeneration": "#7f7f7f",
    "search/replace": "#d62728",
    "unified diff": "#ff7f0e",
    "Copy-as-Decode": "#2ca02c",
    "Copy-as-Decode +drafts": "#98df8a",
    "autoregressive": "#7f7f7f",
    "prompt lookup": "#1f77b4",
}


def setup() -> None:
    """Seaborn's whitegrid style at a readable size; silence tqdm's missing-ipywidgets warning
    (progress bars print as text, which the book hides and nbval sanitizes)."""
    import matplotlib  # lazy: matplotlib and seaborn take ~1 s; only figures need them
    import seaborn as sns
    sns.set_theme(style="whitegrid", context="notebook")
    matplotlib.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight"})
    warnings.filterwarnings("ignore", category=TqdmWarning)
    warnings.filterwarnings("ignore", category=TqdmExperimentalWarning)


def finish_axes(fig, ax, xlabel: str, ylabel: str, title: str):
    """Label ``ax``, title it (11 pt) and add a small two-column legend, then tighten ``fig``;
    return ``fig``. The one finish of the book's one-panel plots of many corpora's curves."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    return fig


#: The worked example of the introduction (book/intro.md) and of chapter 01.
EXAMPLE_DOC = (
    "def mean(xs):\n    total = 0\n    for x in xs:\n        total += x\n"
    "    return total / len(x)\n"
)
EXAMPLE_GOLD = EXAMPLE_DOC.replace("len(x)", "len(xs)")


def mechanism_figure(doc: str = EXAMPLE_DOC, gold: str = EXAMPLE_GOLD):
    """Document, oracle program and resolved output side by side (the paper's Figure 2).

    Each output line is coloured by its origin: green when a copy op spliced it from the
    document in one parallel forward, pink when a gen op decoded it token by token.
    """
    import matplotlib.pyplot as plt  # lazy: only figures need matplotlib (~1 s to import)

    program = oracle_program(doc, gold)
    lines = doc_lines(doc)
    out = []  # (text, op index, is_copy)
    for k, op in enumerate(program.ops):
        texts = op_text(op, lines).split("\n")
        out += [(t, k, isinstance(op, Copy)) for t in texts]
    colours = {True: "#2ca02c", False: "#e377c2"}
    height = max(len(lines), len(out), len(program.ops)) * 0.32 + 1.0
    fig, axes = plt.subplots(1, 3, figsize=(13, height), gridspec_kw={"width_ratios": [4, 3.2, 4]})
    titles = ("document D (input lines)", "program P (model output)", "resolved D′ (output)")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_axis_off()
        ax.set_title(title, loc="left", fontsize=11)
        ax.set_xlim(0, 1)
        ax.set_ylim(height - 0.8, -0.3)
    mono = {"family": "monospace", "fontsize": 9, "va": "center"}
    for i, line in enumerate(lines, 1):
        axes[0].text(0.0, (i - 1) * 0.32, f"{i:>2} │ {line}", **mono)
    axes[1].text(0.0, 0.0, "<program>", **mono)
    for k, op in enumerate(program.ops, 1):
        text = op.render().replace("\n", "⏎")
        axes[1].text(0.03, k * 0.45, text if len(text) < 44 else text[:41] + "…",
                     color=colours[isinstance(op, Copy)], **mono)  # fmt: skip
    axes[1].text(0.0, (len(program.ops) + 1) * 0.45, "</program>", **mono)
    for y, (line, _, is_copy) in enumerate(out):
        axes[2].add_patch(plt.Rectangle((0, y * 0.32 - 0.13), 0.015, 0.26,
                                        color=colours[is_copy]))  # fmt: skip
        axes[2].text(0.03, y * 0.32, line, **mono)
    axes[2].text(0.0, len(out) * 0.32 + 0.3, "■ spliced by a copy op (one forward)",
                 color=colours[True], fontsize=9)  # fmt: skip
    axes[2].text(0.0, len(out) * 0.32 + 0.62, "■ decoded by a gen op (one forward per token)",
                 color=colours[False], fontsize=9)  # fmt: skip
    fig.tight_layout()
    return fig


def save_book_figures(folder: str = "book/figures") -> list[str]:
    """Regenerate the book's static figures (``make book`` calls this)."""
    setup()
    path = Path(folder) / "mechanism.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    mechanism_figure().savefig(path, dpi=110)
    return [str(path)]
