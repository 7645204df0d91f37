"""The book's summary page: the paper's headline figures beside ours, read from ``results/``.

Nothing here is typed by hand except where each figure lives (a dotted path into a chapter's
results file) and, for each, the comparison it declares in code (with the results known): a
:class:`cadlib.book.verdicts.Tolerance` with its reason. The paper's figures come from
:mod:`cadlib.paper`; the verdict of each row is computed by :func:`cadlib.book.verdicts.judge`
from ours, the paper's and n. A missing results file or key is shown as "not yet run". A test
checks that every paper figure here equals the one the chapter itself recorded.

The package, one seam a module (the names below are also importable as ``cadlib.book.summary.X``,
its public API; the verdict names live in :mod:`cadlib.book.verdicts`):

``spec``       :class:`Headline` (one figure and its declared tolerance), :func:`lookup`
               (where its value lives in a results record), and the getters and shared
               reasons the chapters declare their rows with
``headlines``  the declared comparisons, collected from every chapter's ``headlines``
               module in book order: :func:`all_headlines`, :func:`beyond_the_paper`
``tables``     the results files read and every headline judged: :func:`headline_table`,
               :func:`setting_table`, :func:`chapter_runtimes`
``render``     the page: :func:`plot_ratios`, :func:`headline_html`, :func:`setting_html`,
               :func:`beyond_markdown`
``forward_costs``
               one SmolLM2 forward timed by several chapters, side by side
``screen``
               what a reader sees first: the verdict counts and the findings that hold, do
               not, and where the mechanism loses (:func:`first_screen`, :func:`chapter_answers`)
"""

from .headlines import all_headlines, beyond_the_paper
from .render import (  # noqa: F401 (ratio_rows: public, not in __all__)
    beyond_markdown,
    format_value,
    headline_html,
    plot_ratios,
    ratio_rows,
    setting_html,
)
from .screen import chapter_answers, first_screen
from .spec import Headline, lookup
from .tables import (  # noqa: F401 (judge_headline: public, not in __all__)
    chapter_runtimes,
    count_markdown,
    headline_table,
    judge_headline,
    load_all,
    setting_table,
)

__all__ = [
    "Headline",
    "all_headlines",
    "headline_table",
    "load_all",
    "lookup",
    "setting_table",
    "plot_ratios",
    "chapter_runtimes",
    "beyond_the_paper",
    "beyond_markdown",
    "format_value",
    "headline_html",
    "setting_html",
    "count_markdown",
    "chapter_answers",
    "first_screen",
]
