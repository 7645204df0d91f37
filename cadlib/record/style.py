"""One plot style for the book, and quiet, reproducible output.

Call :func:`setup` in a chapter's first code cell after the parameters; chapters colour
methods from :data:`PALETTE` and finish one-panel plots with :func:`finish_axes`.
"""

from __future__ import annotations

import warnings

from tqdm import TqdmExperimentalWarning, TqdmWarning

__all__ = ["setup", "PALETTE", "finish_axes"]

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
