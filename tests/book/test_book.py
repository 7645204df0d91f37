"""The built book, checked in a real browser (headless Chromium driven by Playwright).

Builds the HTML with jupyter-book (execution off: the notebooks carry their outputs), then
opens every page of ``_toc.yml`` with the network blocked (the book must work offline) and
checks that it renders, that its tables and images are there (as many as the source notebook's
outputs hold, and every image decoded), that no internal link or anchor is broken, and that
its math is typeset by the vendored MathJax with no raw LaTeX left and no request leaving the
machine; every page at a 1280 px window scrolls nothing sideways. Saves a full-page screenshot
of every page under ``_build/pages/`` (to look at by eye) and the summary's under ``_build/``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import yaml

PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: Page errors that are known, harmless bugs of the toolchain rather than of the book:
#: jupyter-book 1.0.4 adds sphinx-thebe's inline config script twice to every page.
KNOWN_PAGE_ERRORS = ("Identifier 'THEBE_JS_URL' has already been declared",)

pytestmark = [
    pytest.mark.slow,  # builds the book (~15 s) and opens every page in Chromium
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian chromium is not installed (make installs it)"
    ),
]

#: Raw TeX delimiters that must not survive typesetting in the text a reader sees.
RAW_TEX = ("\\(", "\\)", "\\[", "\\]", "$$")


def toc_pages() -> list[str]:
    """Source paths (without suffix) of every page in ``_toc.yml``, root first."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return pages


def source_of(page: str) -> Path:
    for suffix in (".ipynb", ".md"):
        if (ROOT / (page + suffix)).exists():
            return ROOT / (page + suffix)
    raise FileNotFoundError(page)


def expected_outputs(page: str) -> tuple[int, int]:
    """Tables and images the page must show: counted from the notebook's outputs."""
    source = source_of(page)
    if source.suffix != ".ipynb":
        return 0, 0
    tables = images = 0
    for cell in json.loads(source.read_text())["cells"]:
        if "remove-output" in cell.get("metadata", {}).get("tags", []):
            continue
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            tables += "<table" in "".join(data.get("text/html", []))
            images += "image/png" in data or "image/svg+xml" in data
    return tables, images


@pytest.fixture(scope="module")
def built_book():
    # MathJax is vendored by make (pinned npm tarball, checked sha512); a no-op once there.
    subprocess.run(["make", "--no-print-directory", "--silent", "mathjax"], cwd=ROOT, check=True)
    build = subprocess.run(
        [
            str(Path(sys.executable).parent / "jupyter-book"),
            "build",
            str(ROOT),
            "--warningiserror",
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    if build.returncode:  # say which warning failed the build: a bare exit status says nothing
        pytest.fail(f"jupyter-book build failed:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}")
    return HTML


@pytest.fixture(scope="module")
def chromium():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


class Offline:
    """A browser context with the network cut: only ``file:`` and ``data:`` URLs load.

    Every other request is aborted and recorded in ``left``; local files that fail to load
    (a MathJax font or extension missing from the build) are recorded in ``failed``.
    """

    LOCAL = ("file:", "data:", "blob:", "about:")

    def __init__(self, chromium, **options):
        self.left: list[str] = []
        self.failed: list[str] = []
        self.context = chromium.new_context(offline=True, **options)
        self.context.route("**/*", self._route)
        self.context.on("request", self._request)
        self.context.on("requestfailed", self._failed)

    def _route(self, route):
        if route.request.url.startswith(self.LOCAL):
            route.continue_()
        else:
            route.abort("internetdisconnected")

    def _request(self, request):
        if not request.url.startswith(self.LOCAL):
            self.left.append(request.url)

    def _failed(self, request):
        if request.url.startswith(self.LOCAL):
            self.failed.append(f"{request.url}: {request.failure}")

    def new_page(self):
        return self.context.new_page()

    def close(self):
        self.context.close()


#: The window every page is opened in: a laptop's width, where nothing may scroll sideways.
VIEWPORT = {"width": 1280, "height": 800}
#: Where the every-page test leaves a full-page screenshot of each page (to look at by eye).
SCREENSHOTS = ROOT / "_build" / "pages"


@pytest.fixture(scope="module")
def browser(chromium):
    offline = Offline(chromium, viewport=VIEWPORT)
    yield offline
    offline.close()
    assert not offline.left, f"requests left the machine: {offline.left}"


def internal_links(page) -> list[tuple[Path, str]]:
    """(target file, fragment) of every link that stays inside the book."""
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    out = []
    for href in hrefs:
        url = urlparse(href)
        if url.scheme == "file":
            out.append((Path(unquote(url.path)), url.fragment))
    return out


def test_every_toc_page_renders_with_its_tables_images_and_links(built_book, browser):
    """Every page of the toc at 1280 px: not empty, its notebook's tables and images shown,
    no broken internal link or anchor, no script error, nothing scrolling the page sideways;
    a full-page screenshot of each left under ``_build/pages/``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    ids_cache: dict[Path, set[str]] = {}
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))
    for name in toc_pages():
        html_file = built_book / (name + ".html")
        assert html_file.exists(), f"{name}: not built"
        page.goto(html_file.as_uri())
        page.wait_for_load_state("load")
        text = page.inner_text("main")
        if len(text.strip()) < 200:
            problems.append(f"{name}: almost empty page")
        wide = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        if wide > 0:
            problems.append(f"{name}: the page scrolls sideways by {wide} px at 1280 px")
        page.screenshot(path=str(SCREENSHOTS / (name.replace("/", "_") + ".png")), full_page=True)
        want_tables, want_images = expected_outputs(name)
        tables = page.locator("main table").count()
        images = page.evaluate(
            "Array.from(document.querySelectorAll('main img')).map(i => i.naturalWidth)"
        )
        if tables < want_tables:
            problems.append(f"{name}: {tables} tables rendered, notebook has {want_tables}")
        if len(images) < want_images or not all(images):
            problems.append(f"{name}: images {images}, notebook has {want_images}")
        for target, fragment in internal_links(page):
            if not target.exists():
                problems.append(f"{name}: broken link to {target.relative_to(built_book)}")
            elif fragment and target.suffix == ".html":
                if target not in ids_cache:
                    ids_cache[target] = _ids_of(browser, target)
                if unquote(fragment) not in ids_cache[target]:
                    problems.append(f"{name}: broken anchor #{fragment} in {target.name}")
    errors = [e for e in errors if not any(known in e for known in KNOWN_PAGE_ERRORS)]
    assert not errors, errors
    assert not problems, "\n".join(problems)


def built_pages(html: Path) -> list[Path]:
    """Every HTML page of the build a reader can open (the toc's, the index, search)."""
    skip = {html / "index.html"}  # a redirect to the root page
    return sorted(
        p
        for p in html.rglob("*.html")
        if p not in skip and not p.relative_to(html).parts[0].startswith("_")
    )


def typeset(page) -> bool:
    """Wait (bounded) until MathJax has typeset the page; False if it never started."""
    try:
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=15_000
        )
    except PlaywrightTimeout:
        return False
    page.evaluate("() => MathJax.startup.promise.then(() => true)")
    return True


#: Text nodes outside code and outside typeset math, as the reader sees them.
_PROSE_TEXT = """() => {
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const out = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (el && !el.closest(skip) && el.checkVisibility()) out.push(n.textContent);
  }
  return out;
}"""


def math_problems(page, name: str) -> tuple[list[str], int]:
    """What is wrong with the math on an open page, and how many formulas it typeset."""
    problems = []
    mathjax = page.eval_on_selector_all("script[src*='mathjax']", "els => els.map(e => e.src)")
    if any(not src.startswith("file:") for src in mathjax):
        problems.append(f"{name}: MathJax from the network: {mathjax}")
    formulas = page.locator("span.math, div.math").count()
    typeset_ = page.locator("span.math mjx-container, div.math mjx-container").count()
    if formulas and not mathjax:
        problems.append(f"{name}: {formulas} formulas but no MathJax script")
    if typeset_ < formulas:
        problems.append(f"{name}: {typeset_} of {formulas} formulas typeset")
    errors = page.eval_on_selector_all("mjx-merror", "els => els.map(e => e.textContent)")
    if errors:
        problems.append(f"{name}: MathJax errors {errors}")
    for text in page.evaluate(_PROSE_TEXT):
        raw = [d for d in RAW_TEX if d in text]
        if raw:
            problems.append(f"{name}: raw TeX {raw} in {text.strip()[:120]!r}")
    return problems, typeset_


def test_math_is_typeset_offline_on_every_page(built_book, browser):
    """Every page: the vendored MathJax typesets every formula (the navigation's too), with no
    raw TeX left in the visible text, no MathJax error, no local file missing, and nothing
    fetched from the network."""
    problems, typeset_by_page = [], {}
    page = browser.new_page()
    for html_file in built_pages(built_book):
        name = str(html_file.relative_to(built_book))
        page.goto(html_file.as_uri())
        if not typeset(page):
            problems.append(f"{name}: MathJax did not start")
        found, typeset_by_page[name] = math_problems(page, name)
        problems += found
    page.close()
    assert not browser.failed, browser.failed
    assert not browser.left, f"requests left the machine: {browser.left}"
    assert not problems, "\n".join(problems)
    # the pages known to hold math in their body typeset more than the navigation's formula
    for name in ("notebooks/02_kernel.html", "notebooks/06_decoding.html"):
        assert typeset_by_page[name] > 1, (name, typeset_by_page[name])


def _ids_of(browser, target: Path) -> set[str]:
    page = browser.new_page()
    page.goto(target.as_uri())
    ids = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
    page.close()
    return ids


#: Per table in the article: its right edge, the article's, and every container between them
#: (the table included) that scrolls sideways.
_TABLE_FIT = """() => {
  const article = document.querySelector('article');
  const right = article.getBoundingClientRect().right;
  return Array.from(article.querySelectorAll('table')).map((table, i) => {
    const scrolling = [];
    for (let el = table; el && el !== article; el = el.parentElement) {
      if (el.scrollWidth > el.clientWidth + 1) scrolling.push(
        `${el.tagName.toLowerCase()}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}`);
    }
    return {i, right: table.getBoundingClientRect().right, article: right, scrolling};
  });
}"""


def test_summary_fits_the_article_column_at_1280px(built_book, chromium):
    """The summary at a 1280x800 window: every table inside the article column, nothing to
    scroll sideways, every headline figure and every explanation on the page. Saves a viewport
    screenshot at the headline table and a full-page one under ``_build/``."""
    from cadlib.book import summary

    pages = [p for p in toc_pages() if p.endswith("summary")]
    if not pages:
        pytest.skip("the book has no summary page yet")
    offline = Offline(chromium, viewport={"width": 1280, "height": 800})
    page = offline.new_page()
    page.goto((built_book / (pages[0] + ".html")).as_uri())
    typeset(page)
    tables = page.evaluate(_TABLE_FIT)
    wide = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    page.locator("article table").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ROOT / "_build" / "summary-1280x800.png"))
    page.screenshot(path=str(ROOT / "_build" / "summary.png"), full_page=True)
    text = page.inner_text("article")
    marks = page.eval_on_selector_all(
        "article sup a[href^='#summary-note-']",
        "els => els.map(e => e.getAttribute('href').slice(1))",
    )
    notes = dict(
        page.eval_on_selector_all(
            "article li[id^='summary-note-']", "els => els.map(e => [e.id, e.innerText.trim()])"
        )
    )
    offline.close()
    assert not offline.left, offline.left
    assert len(tables) >= 2, tables
    for t in tables:
        assert t["right"] <= t["article"] + 0.5, f"table {t['i']} runs past the article: {t}"
        assert not t["scrolling"], f"table {t['i']} scrolls sideways: {t['scrolling']}"
    assert wide <= 0, f"the page scrolls sideways by {wide} px"
    # every figure is there, and every explanation its status points to
    assert not [h.label for h in summary.all_headlines() if h.label not in text]
    assert set(marks) == set(notes), (marks, notes)
    assert set(notes.values()) <= {h.why for h in summary.all_headlines() if h.why}, notes


#: The opening's answer paragraph and whether papermill's parameters cell is folded, per page.
_OPENING = """() => {
  const answer = Array.from(document.querySelectorAll('main p'))
    .find(p => p.innerText.trim().startsWith('Answer.'));
  const injected = document.querySelector('main .tag_injected-parameters');
  const folded = injected && injected.querySelector('details.hide');
  return {
    answer: answer ? answer.innerText.trim() : null,
    injected: !!injected,
    folded: !!folded && !folded.open && !injected.querySelector('pre').checkVisibility(),
  };
}"""


def test_chapters_open_with_a_generated_answer_and_fold_the_parameters(built_book, browser):
    """Every chapter page (issue 33): the first paragraphs hold the question and an answer glued
    from the chapter's run (not an empty role), and papermill's injected ``# Parameters`` cell
    is folded behind myst-nb's toggle (``book/_ext/folded_parameters.py``)."""
    problems = []
    page = browser.new_page()
    for name in (p for p in toc_pages() if p.startswith("notebooks/")):
        page.goto((built_book / (name + ".html")).as_uri())
        found = page.evaluate(_OPENING)
        if not found["answer"] or len(found["answer"]) < len("Answer.") + 60:
            problems.append(f"{name}: no generated answer ({found['answer']!r})")
        if found["injected"] and not found["folded"]:
            problems.append(f"{name}: the injected parameters cell is not folded")
    page.close()
    assert not problems, "\n".join(problems)
