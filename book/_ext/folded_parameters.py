"""Papermill's injected ``# Parameters`` cell folded on every chapter page (issue 33).

Papermill writes the parameters a run was given into a new code cell tagged
``injected-parameters`` (and re-creates it on every run, so a tag added to that cell by hand
would be lost). Those lines are provenance, not reading: the chapters say in prose when a page
shows an evidence run. This post-transform gives every such cell myst-nb's ``hide-input``
treatment (a collapsed "Show code cell source" toggle) before myst-nb's own ``HideInputCells``
wraps the hidden cells, so the parameters stay one click away.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

#: The tag papermill puts on the cell it injects, as myst-nb writes it into a class.
INJECTED_CLASS = "tag_injected-parameters"


class FoldInjectedParameters(SphinxPostTransform):
    """Mark papermill's injected-parameters cells ``hide_mode = "input"``."""

    default_priority = 198  # before myst_nb's HideInputCells (199), which does the folding
    formats = ("html",)

    def run(self, **kwargs) -> None:
        config = self.env.mystnb_config
        for node in self.document.findall(nodes.container):
            if (
                node.get("nb_element") == "cell_code"
                and INJECTED_CLASS in node["classes"]
                and not node.get("hide_mode")
            ):
                node["hide_mode"] = "input"
                node["prompt_show"] = config.code_prompt_show
                node["prompt_hide"] = config.code_prompt_hide


def setup(app: Sphinx) -> dict:
    app.setup_extension("myst_nb")
    app.add_post_transform(FoldInjectedParameters)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
