"""The documentation site in a real browser: Debian's chromium, driven by Playwright.

The site is the one `scripts/test` has just built with `scripts/docs` (the strict build),
or, when pytest runs alone, built once for the module. It is served on 127.0.0.1 under its
published path (`/safe_queue/`, from `site_url`), the way GitHub Pages serves it, 404
page included. One tab loads every page, one after the other, and records each page's
console errors and warnings, failed requests and HTTP errors until its requests are done.
`scripts/setup --browser` installs chromium; Playwright downloads no browser.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

import pytest
import yaml
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, Response, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from safe_queue.engine import RULES

from .conftest import ROOT

CHROMIUM = Path("/usr/bin/chromium")
# Headless on a machine with no network but the package registries: no sandbox (root), and
# none of chromium's own background connections (they would be refused, many at a time).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The first group of search results (one page) has a section headed exactly `arg`.
FIRST_GROUP_HAS_HEADING = """id => [...document.querySelectorAll(
    '.md-search-result__item:first-child a.md-search-result__link h1,'
    + '.md-search-result__item:first-child a.md-search-result__link h2')]
    .some(h => h.textContent.trim() === id)"""
RULE_IDS = [rule.id for rule in RULES]  # only `.id` of each: the engine's own layout may change
PREFIX = urlsplit(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["site_url"]).path


@dataclass
class Visit:
    """What one tab saw while it loaded a page, until the network was idle."""

    url: str
    status: int | None = None
    console: list[str] = field(default_factory=list)  # errors and warnings
    failed: list[str] = field(default_factory=list)  # requests that failed or got >= 400
    requested: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # every a[href], resolved
    ids: set[str] = field(default_factory=set)
    text: str = ""
    pending: set[str] = field(default_factory=set)  # requests in flight


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site: the one scripts/test has just built strictly, else built here."""
    prebuilt = os.environ.get("SAFE_QUEUE_DOCS_SITE")
    if prebuilt:
        assert (Path(prebuilt) / "index.html").exists(), prebuilt
        return Path(prebuilt)
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [str(ROOT / "scripts" / "docs"), "--site-dir", str(out)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    return out


class _Handler(http.server.SimpleHTTPRequestHandler):
    """The site under PREFIX, and the site's 404 page for anything else (as GitHub Pages)."""

    def translate_path(self, path: str) -> str:
        if not path.startswith(PREFIX):
            return str(Path(self.directory) / "no such file")
        return super().translate_path("/" + path[len(PREFIX) :])

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.exists():
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}{PREFIX}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), "no /usr/bin/chromium: run scripts/setup --browser"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def _page_urls(site: Path, base_url: str) -> list[str]:
    """Every page of the built site: each index.html as its directory URL, and 404.html."""
    urls = []
    for html in sorted(site.rglob("*.html")):
        relative = html.relative_to(site).as_posix()
        urls.append(base_url + relative.removesuffix("index.html"))
    return urls


def _watch(page: Page, current: Callable[[], Visit]) -> None:
    """Record the page's console errors and requests in the visit ``current`` returns."""

    def on_console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            current().console.append(f"{message.type}: {message.text}")

    def on_request(request: Request) -> None:
        current().requested.append(request.url)
        current().pending.add(request.url)

    def on_finished(request: Request) -> None:
        current().pending.discard(request.url)

    def on_failed(request: Request) -> None:
        current().pending.discard(request.url)
        current().failed.append(f"{request.url}: {request.failure}")

    def on_response(response: Response) -> None:
        if response.status >= 400 and response.url != current().url:
            current().failed.append(f"{response.url}: HTTP {response.status}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: current().console.append(f"pageerror: {error}"))
    page.on("request", on_request)
    page.on("requestfinished", on_finished)
    page.on("requestfailed", on_failed)
    page.on("response", on_response)


def _read(page: Page, visit: Visit, text: bool) -> None:
    visit.links = page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)")
    visit.ids = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
    if text:  # the rendered text (a layout pass): only where a test reads it
        visit.text = page.inner_text("body")


def _settle(page: Page, visit: Visit, quiet_ms: int = 50, timeout_ms: int = 10_000) -> None:
    """Wait until none of the page's requests is in flight for ``quiet_ms`` (after its load).

    Playwright's "networkidle" waits 500 ms per page; what this waits for is the search
    index and worker that the theme fetches after the load (a new navigation would abort
    them, and they would never be seen to fail or succeed).
    """
    quiet = waited = 0
    while quiet < quiet_ms and waited < timeout_ms:
        page.wait_for_timeout(20)
        waited += 20
        quiet = 0 if visit.pending else quiet + 20
    assert waited < timeout_ms, f"{page.url}: requests still pending: {visit.pending}"


@pytest.fixture(scope="module")
def tab(browser: Browser) -> Iterator[tuple[Page, list[Visit]]]:
    """The one tab of the module, and the visit its requests and messages are recorded in.

    One tab for everything: a new tab costs a renderer process, several page loads here.
    """
    page = browser.new_page()
    current = [Visit("about:blank")]
    _watch(page, lambda: current[0])
    yield page, current
    page.close()


@pytest.fixture(scope="module")
def visits(tab: tuple[Page, list[Visit]], site: Path, base_url: str) -> dict[str, Visit]:
    """Load every page, one after the other; read each when its requests are done."""
    page, current = tab
    results: dict[str, Visit] = {}
    missing = base_url + "no-such-page/"
    for url in [*_page_urls(site, base_url), missing]:
        current[0] = results[url] = Visit(url)
        response = page.goto(url, wait_until="load")
        _settle(page, current[0])
        current[0].status = response.status if response is not None else None
        _read(page, current[0], text=url in (base_url + "rules/", missing))
    return results


def test_every_page_of_the_site_loads(visits: dict[str, Visit], base_url: str):
    pages = {url: visit.status for url, visit in visits.items() if "no-such-page" not in url}
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    # one page per nav entry, the 404 page, nothing broken
    assert len(pages) == len(nav) + 1
    assert base_url + "rules/" in pages
    assert {url: status for url, status in pages.items() if status != 200} == {}


def test_no_console_error_and_no_failed_request_on_any_page(visits: dict[str, Visit]):
    # Offline, Google Fonts and the GitHub API widget used to fail here (4 requests per
    # visit); mkdocs.yml turns both off.
    console = {url: visit.console for url, visit in visits.items() if visit.console}
    missing = console.pop(next(url for url in visits if url.endswith("/no-such-page/")), [])
    assert console == {}
    # the missing page's own 404 is the one error there (its own test checks the status)
    assert missing == [
        "error: Failed to load resource: the server responded with a status of 404 (Not Found)"
    ]
    assert {url: visit.failed for url, visit in visits.items() if visit.failed} == {}


def test_no_page_requests_anything_but_the_site(visits: dict[str, Visit], base_url: str):
    # Online the same requests would succeed, and send every reader to Google and GitHub.
    origin = base_url.removesuffix(PREFIX)
    outside = {
        url: [r for r in visit.requested if not r.startswith((origin, "data:"))]
        for url, visit in visits.items()
    }
    assert {url: requests for url, requests in outside.items() if requests} == {}
    # the header still links the repository
    assert "https://github.com/safe-queue/safe_queue" in visits[base_url].links


def test_every_internal_link_resolves(visits: dict[str, Visit], base_url: str):
    pages = {url: visit for url, visit in visits.items() if visit.status == 200}
    broken = []
    other: set[str] = set()
    for visit in pages.values():
        for link in visit.links:
            target, fragment = urldefrag(link)
            if not target.startswith(base_url):
                continue  # another site (GitHub, AWS docs): not fetched offline
            if target in pages:
                if fragment and fragment not in pages[target].ids:
                    broken.append(f"{visit.url} -> {link}: no such anchor")
            else:
                other.add(target)
    for target in sorted(other):  # files the site serves that are not pages
        try:
            with urllib.request.urlopen(target, timeout=10) as response:
                assert response.status == 200
        except urllib.error.HTTPError as error:
            broken.append(f"{target}: HTTP {error.code}")
    assert broken == []
    links = sum(len(visit.links) for visit in pages.values())
    assert links > 100  # the collection itself works (nav, tables of contents, cross links)


def test_a_missing_page_gets_the_sites_own_404_page(visits: dict[str, Visit], base_url: str):
    visit = visits[base_url + "no-such-page/"]
    assert visit.status == 404
    assert "404 - Not found" in visit.text
    assert base_url + "rules/" in visit.links  # with the site's navigation


def test_rules_page_lists_every_rule_id(visits: dict[str, Visit], base_url: str):
    text = visits[base_url + "rules/"].text
    assert RULE_IDS  # the registry is not empty
    assert [rule_id for rule_id in RULE_IDS if rule_id not in text] == []


@pytest.fixture(scope="module")
def search_page(tab: tuple[Page, list[Visit]], base_url: str) -> tuple[Page, Visit]:
    page, current = tab
    current[0] = Visit(base_url)
    page.goto(base_url, wait_until="load")
    _settle(page, current[0])
    return page, current[0]


# The first, a middle and the last rule: every rule's section is made the same way (the
# rules reference), and each search costs a round of the search worker and the browser.
@pytest.mark.parametrize(
    "rule_id", sorted({RULE_IDS[0], RULE_IDS[len(RULE_IDS) // 2], RULE_IDS[-1]})
)
def test_search_box_finds_a_rule_by_its_id(
    search_page: tuple[Page, Visit], base_url: str, rule_id: str
):
    # GIVEN the home page WHEN a rule id, as `safe-queue check` prints it, is typed into the
    # search box
    page, visit = search_page
    box = page.locator("input.md-search__input")
    box.fill(rule_id)
    box.press("End")  # the theme searches on keyup
    # THEN the first group of results is the rules reference, with that rule's section
    with contextlib.suppress(PlaywrightTimeoutError):  # the assertions say what was found
        page.wait_for_function(FIRST_GROUP_HAS_HEADING, arg=rule_id, timeout=10_000)
    found = (
        page.locator(".md-search-result__item")
        .first.locator("a.md-search-result__link")
        .evaluate_all(
            "links => links.map(a => [a.href, a.querySelector('h1, h2, h3').textContent.trim()])"
        )
    )
    assert [href for href, heading in found if heading == rule_id and "#" in href], found
    assert all(href.startswith(base_url + "rules/") for href, _ in found), found
    # a query with "safe-queue:" used to find nothing and log a parse error (lunr read it as
    # a field name); docs/javascripts/search-rule-ids.js makes the colon a space
    assert visit.console == []
