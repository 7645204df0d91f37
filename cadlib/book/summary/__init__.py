"""The book's summary page: the paper's headline figures beside ours, read from ``results/``.

Nothing here is typed by hand except where each figure lives (a dotted path into a chapter's
results file) and, for each, the comparison it declares in code (with the results known): a
:class:`cadlib.book.verdicts.Tolerance` with its reason. The paper's figures come from
:mod:`cadlib.paper`; the verdict of each row is computed by :func:`cadlib.book.verdicts.judge`
from ours, the paper's and n. A missing results file or key is shown as "not yet run". A test
checks that every paper figure here equals the one the chapter itself recorded.

The package, one seam a module (the names below are also importable as ``cadlib.book.summary.X``,
its public API; the verdict names live in :mod:`cadlib.book.verdicts`):

``spec``       :class:`Headline` (one figure and its declared tolerance) and :func:`lookup`
               (where its value lives in a results record)
``headlines``  the declared comparisons, chapter by chapter: :data:`HEADLINES`, and
               :data:`BEYOND_THE_PAPER`
``appendix``   the rows of Appendices K, L and M (``appendix_rows``) that
               :data:`HEADLINES` includes
``tables``     the results files read and every headline judged: :func:`headline_table`,
               :func:`setting_table`, :func:`chapter_runtimes`
``render``     the page: :func:`plot_ratios`, :func:`headline_html`, :func:`setting_html`,
               :func:`beyond_markdown`
"""

from .headlines import BEYOND_THE_PAPER, HEADLINES
from .render import (  # noqa: F401 (ratio_rows: public, not in __all__)
    beyond_markdown,
    format_value,
    headline_html,
    plot_ratios,
    ratio_rows,
    setting_html,
)
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
    "HEADLINES",
    "headline_table",
    "load_all",
    "lookup",
    "setting_table",
    "plot_ratios",
    "chapter_runtimes",
    "BEYOND_THE_PAPER",
    "beyond_markdown",
    "format_value",
    "headline_html",
    "setting_html",
    "count_markdown",
]
