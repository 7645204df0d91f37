"""Math that renders on every page of the book, offline (issue 15).

Two things Sphinx does not do by itself:

- Chapter titles hold math (the kernel chapter's "one forward instead of :math:`N` decode
  steps"), and the navigation shows every title on every page; Sphinx loads MathJax only on
  pages whose body has equations, so elsewhere the sidebar showed raw ``\\(N\\)``. The
  assets policy "always" loads it on every page (what jupyter-book does for singlehtml).
- ``mathjax_path`` points at the copy of MathJax that ``make mathjax`` vendors; when that
  copy is missing, the build stops here with a message that says so, instead of producing a
  book whose formulas silently stay raw LaTeX.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError


def local_mathjax_file(app: Sphinx, config: Config) -> Path | None:
    """The source file that will be served at ``mathjax_path``, or None for a URL.

    Sphinx reads a relative ``mathjax_path`` relative to ``_static/`` of the built pages; the
    file comes either from ``html_static_path`` (under ``_static/``) or from
    ``html_extra_path`` (copied to the root of the build).
    """
    path = config.mathjax_path
    if "://" in path or path.startswith("/"):
        return None
    served = posixpath.normpath(posixpath.join("_static", path))
    if served.startswith("_static/"):
        roots, rel = config.html_static_path, served.removeprefix("_static/")
    else:
        roots, rel = config.html_extra_path, served
    for root in roots:
        candidate = Path(app.confdir, root, rel)
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"mathjax_path {path!r} is served as {served!r}, but no folder of html_static_path "
        f"{list(config.html_static_path)} or html_extra_path {list(config.html_extra_path)} "
        "holds it: run `make mathjax` (it vendors MathJax from npm)"
    )


def _check(app: Sphinx, config: Config) -> None:
    local_mathjax_file(app, config)


def setup(app: Sphinx) -> dict:
    app.set_html_assets_policy("always")
    app.connect("config-inited", _check)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
