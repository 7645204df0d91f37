"""Notebook setup: one plot style for the book, and quiet, reproducible output.

Call :func:`setup` in a chapter's first code cell after the parameters.
"""

from __future__ import annotations

import warnings

__all__ = ["setup", "PALETTE"]

#: Colours of the four edit formats / methods, used across chapters.
PALETTE = {
    "full regeneration": "#7f7f7f",
    "search/replace": "#d62728",
    "unified diff": "#ff7f0e",
    "Copy-as-Decode": "#2ca02c",
    "autoregressive": "#7f7f7f",
    "prompt lookup": "#1f77b4",
}


def setup() -> None:
    """Seaborn's whitegrid style at a readable size; silence tqdm's missing-ipywidgets warning
    (progress bars print as text, which the book hides and nbval sanitizes)."""
    import matplotlib
    import seaborn as sns
    from tqdm import TqdmExperimentalWarning, TqdmWarning

    sns.set_theme(style="whitegrid", context="notebook")
    matplotlib.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight"})
    warnings.filterwarnings("ignore", category=TqdmWarning)
    warnings.filterwarnings("ignore", category=TqdmExperimentalWarning)
