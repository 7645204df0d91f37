"""The built book, checked in a real browser (headless Chromium driven by Playwright).

Builds the HTML with jupyter-book (execution off: the notebooks carry their outputs), then
opens every page of ``_toc.yml`` and checks that it renders, that its tables and images are
there (as many as the source notebook's outputs hold, and every image decoded), and that no
internal link or anchor is broken. Saves a screenshot of the summary page under ``_build/``.
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

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip

#: Page errors that are known, harmless bugs of the toolchain rather than of the book:
#: jupyter-book 1.0.4 adds sphinx-thebe's inline config script twice to every page.
KNOWN_PAGE_ERRORS = ("Identifier 'THEBE_JS_URL' has already been declared",)

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian chromium is not installed (make installs it)"
)


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
    subprocess.run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(ROOT),
         "--warningiserror", "--quiet"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return HTML


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


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


def _ids_of(browser, target: Path) -> set[str]:
    page = browser.new_page()
    page.goto(target.as_uri())
    ids = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
    page.close()
    return ids


def test_summary_page_screenshot(built_book, browser):
    pages = [p for p in toc_pages() if p.endswith("summary")]
    if not pages:
        pytest.skip("the book has no summary page yet")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto((built_book / (pages[0] + ".html")).as_uri())
    shot = ROOT / "_build" / "summary.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
