"""No run-dependent number is typed in prose: every number in the markdown of the chapters,
the README and the introduction is a paper figure (checked against :mod:`cadlib.paper`), a
structural label (section, table, figure, appendix, chapter, step), part of a name (Qwen2.5,
fp32, 135M) or generated (code, glue, or a code cell rendering Markdown from the chapter's
results, as chapters 3-4 do with ``cadlib.chapters.ceiling`` / ``cadlib.chapters.formats``
functions). Blocking for every chapter, the README and the introduction.
"""

import json
import re

import pytest

from cadlib import paper
from cadlib.paths import repo_root

ROOT = repo_root()
PAPER = sorted(set(paper.figures()))

_DROP = [
    r"```.*?```",  # fenced code
    r"\{glue[^}]*\}`[^`]*`",  # glued numbers are generated
    r"\{(doc|ref|numref|eq)\}`[^`]*`",  # cross references
    r"`[^`]*`",  # inline code: names, commands, keys
    r"\]\([^)]*\)",  # link targets
    r"https?://\S+",
    r"<[^>]+>",  # html tags
    r"^#+ *\d+(\.\d+)*\.?",  # numbered headings
    r"^ *\d+\. ",  # enumerations
]
#: a number preceded by one of these is a label, not a figure
_LABEL = re.compile(
    r"(Tables?|Figures?|Fig\.|§|Appendix|Appendices|App\.|[Cc]hapters?|ch\.|[Ss]ections?|"
    r"Eq\.|[Ss]teps?|[Cc]ells?|[Pp]art|[Ll]ines?|Python|MathJax|torch==|[Nn]otes?)\s*[\d.–-]*$"
)
_NUMBER = re.compile(r"(?<![\w.])[-+−]?\d+(?:,\d{3})*(?:\.\d+)?(?![\w.]*\.\d)")


def _prose(text: str) -> str:
    for pattern in _DROP:
        text = re.sub(pattern, " ", text, flags=re.S | re.M)
    return text


def numbers_in(text: str) -> list[str]:
    """The typed numbers of a markdown text that are neither labels nor parts of names."""
    text, found = _prose(text), []
    for m in _NUMBER.finditer(text):
        token, after = m.group(), text[m.end() : m.end() + 2]
        if (
            re.match(r"-?[A-Za-z_]", after)
            or re.match(r"\d{4}$", token.lstrip("+-−"))
            and (re.search(r"(et al\.|,|\(|©)\s*$", text[: m.start()]))
        ):
            continue  # part of a name (7B, 3-token, fp32) or a citation year
        before = text[max(0, m.start() - 14) : m.start()]
        if _LABEL.search(before) or re.search(r"\b[A-Z]{2,}\s$", before):  # RTX 3090
            continue
        if re.search(r"(?:(?<![\w\\])[A-Za-z]|\\[a-z]+)\s*=\s*$", before):  # a setting: P = 256
            continue
        found.append(token)
    return found


def is_paper_figure(token: str) -> bool:
    value = float(token.replace(",", "").replace("−", "-").lstrip("+-"))
    places = len(token.split(".")[1]) if "." in token else 0
    return any(abs(value - f) <= 0.5 * 10**-places + 1e-9 for f in PAPER)


def unexplained(text: str) -> list[str]:
    return [t for t in numbers_in(text) if not is_paper_figure(t)]


def markdown_of(path) -> str:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return path.read_text()


BLOCKING = [
    "README.md",
    "book/intro.md",
    *(f"notebooks/0{i}_" for i in range(1, 9)),
    "notebooks/06b_",
    "notebooks/06c_",
]


def _path(prefix: str):
    if prefix.endswith("_"):
        return next((ROOT / "notebooks").glob(f"{prefix.split('/')[1]}*.ipynb"))
    return ROOT / prefix


def test_the_extractor_tells_figures_from_labels_and_names():
    text = "Table 17 and §4.2 of ch. 3: Qwen2.5-1.5B in fp32 (Liu, 2026) gives 74.1 %, ours 91.3 %"
    assert numbers_in(text) == ["74.1", "91.3"]
    assert unexplained(text) == ["91.3"]
    assert unexplained("`x = 12.5` {glue:text}`speed` and [link](a/3.7)") == []


@pytest.mark.parametrize("prefix", BLOCKING)
def test_prose_types_no_run_dependent_number(prefix):
    assert unexplained(markdown_of(_path(prefix))) == []
