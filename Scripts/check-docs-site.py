#!/usr/bin/env python3
"""Opens DelegateKit's static documentation site as a reader does, in headless Chromium, and fails when a
page does not render or a link inside the site is broken.

Usage: python3 Scripts/check-docs-site.py [--jobs N]   (after Scripts/build-docs.sh; needs Debian's chromium)

DocC's site is a single-page app: every page's HTML is the same empty shell, and its JavaScript fetches the
page's data JSON and renders it. So a page can be in the archive and docc can warn of nothing, and still show
a reader nothing: only a browser tells. The site is served on loopback under the base path build-docs.sh
gives it, as a package index hosts it, and Chromium dumps the DOM of each page after its scripts ran.

Rendered: the landing page and every article (every .md file of the catalog, so a new one is checked without
being named here), and every page the landing page's Topics list (the main types among them). Each must show
its title and as many code listings as its source has (the article's ``` fences; a symbol's, from its data
JSON), a symbol page its declaration, and no error view.

Links: every link on the rendered pages must lead to a page or file of the site (and to an anchor the page
has, when the page was rendered), and so must every link of every page's data JSON and of the sidebar's
index: these are the links of the pages not rendered here, which is most of them (a render takes a second or
two; the data files are read in a moment). Every request the pages made to the server must have been found.
"""
import argparse
import concurrent.futures
import functools
import html.parser
import http.server
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "Sources/DelegateKit/DelegateKit.docc"
SITE = ROOT / ".build/DelegateKit-site"
MODULE = "DelegateKit"
LANDING = "documentation/" + MODULE.lower()
# Asked for by DocC's renderer on every page, and optional: a site without a theme has none.
OPTIONAL_FILES = {"theme-settings.json"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="browsers at once (default 2: the machine has 2 cores)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    started = time.monotonic()
    if not (SITE / LANDING / "index.html").is_file():
        sys.exit(f"error: no site at {SITE.relative_to(ROOT)}: run Scripts/build-docs.sh first")
    base = base_path()

    pages = expected_pages()
    server, misses = serve(base)
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            doms = dict(zip(pages, pool.map(functools.partial(render, args.chromium, origin + base), pages)))
    finally:
        server.shutdown()

    failures = []
    for path, page in pages.items():
        failures += [f"{path}: {problem}" for problem in page_problems(page, doms[path])]
    links = {}  # target path → the pages that link to it
    for path, dom in doms.items():
        for href in dom.hrefs:
            # The server redirects a page's path to the folder's, as hosts do: relative links resolve from there.
            url = urllib.parse.urlsplit(urllib.parse.urljoin(f"{origin}{base}{path}/", href))
            if url.netloc != urllib.parse.urlsplit(origin).netloc:
                continue  # another site: not checked offline
            target = url.path.rstrip("/") + ("#" + url.fragment if url.fragment else "")
            links.setdefault(target, set()).add(path)
    for target, sources in json_links(base).items():
        links.setdefault(target, set()).update(sources)
    for target, sources in sorted(links.items()):
        problem = link_problem(target, base, doms)
        if problem:
            failures.append(f"broken link to {target} ({problem}), on {some(sources)}")
    asked = {}
    for path, referer in misses:
        if path.rsplit("/", 1)[-1] not in OPTIONAL_FILES:
            asked.setdefault(path, set()).add(referer.removeprefix(base).strip("/") or "a page")
    failures += [f"the site has no {path}, asked for by {some(askers)}" for path, askers in sorted(asked.items())]

    print(f"docs site: {len(doms)} pages rendered in Chromium, {len(links)} links checked, "
          f"{time.monotonic() - started:.0f} s", flush=True)
    if failures:
        print("\n".join(f"error: {failure}" for failure in failures), file=sys.stderr)
        sys.exit(f"error: the docs site has {len(failures)} problem(s), listed above")


def some(pages):
    pages = sorted(pages)
    return ", ".join(pages[:5]) + (f" and {len(pages) - 5} more" if len(pages) > 5 else "")


class Page:
    def __init__(self, title, listings, source, exact=True, symbol=False):
        self.title, self.listings, self.source, self.exact, self.symbol = title, listings, source, exact, symbol


def base_path():
    """The base path build-docs.sh gave the site, as its pages' shell names it."""
    shell = (SITE / LANDING / "index.html").read_text()
    match = re.search(r'var baseUrl = "([^"]*)"', shell)
    if not match:
        sys.exit(f"error: {SITE.relative_to(ROOT)}/{LANDING}/index.html names no baseUrl: has DocC's renderer changed?")
    return match.group(1)  # "/DelegateKit/"


def expected_pages():
    """Site path → what its page must show: the catalog's .md files, then the pages the landing page's Topics
    list that no .md file made."""
    pages = {}
    for md in sorted(CATALOG.glob("*.md")):
        text = md.read_text()
        heading = re.search(r"^# (.+)$", text, re.M)
        if not heading:
            sys.exit(f"error: {md.relative_to(ROOT)} has no '# Title' line")
        title = heading.group(1).strip()
        fences = len(re.findall(r"^\s*```", text, re.M)) // 2
        symbol = re.fullmatch(r"``(.+)``", title)
        if symbol:
            # A symbol's extension file: its page adds the symbol's doc comment, which may have code too.
            name = symbol.group(1)
            path = LANDING if name == MODULE else f"{LANDING}/{name.lower()}"
            pages[path] = Page(name, fences, md.relative_to(ROOT), exact=False, symbol=name != MODULE)
        else:
            pages[f"{LANDING}/{md.stem.lower()}"] = Page(title.replace("`", ""), fences, md.relative_to(ROOT))
    landing = data(LANDING)
    for section in landing.get("topicSections", []):
        for identifier in section["identifiers"]:
            reference = landing["references"][identifier]
            path = reference["url"].strip("/")
            if path not in pages:
                # A page without its data JSON is still rendered: the reader would see DocC's error view there.
                page_data = data(path) if (SITE / "data" / f"{path}.json").is_file() else {}
                pages[path] = Page(reference["title"], count_listings(page_data.get("primaryContentSections", [])),
                                   f"data/{path}.json", symbol=reference.get("kind") == "symbol")
    return pages


def data(path):
    return json.loads((SITE / "data" / f"{path}.json").read_text())


def count_listings(node):
    if isinstance(node, dict):
        return (node.get("type") == "codeListing") + sum(count_listings(value) for value in node.values())
    if isinstance(node, list):
        return sum(count_listings(value) for value in node)
    return 0


def serve(base):
    """Serves the site on a free loopback port under `base`, in a thread; returns the server and the list
    (filled as requests come) of the paths it could not find, with the page that asked."""
    misses = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path):
            path = urllib.parse.urlsplit(path).path
            # Outside the base path nothing is served, as on a host where the site is one of many.
            return super().translate_path("/" + path[len(base):] if path.startswith(base) else "/\0outside")

        def send_error(self, code, message=None, explain=None):
            if code == 404:
                misses.append((self.path, urllib.parse.urlsplit(self.headers.get("Referer", "")).path))
            super().send_error(code, message, explain)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(SITE)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, misses


class Dom(html.parser.HTMLParser):
    """What the checks read of a rendered page: its title heading, code listings, declarations, error view,
    links and anchors."""

    def __init__(self, text):
        super().__init__()
        self.titles, self.listings, self.declarations, self.error = [], 0, 0, False
        self.hrefs, self.ids = [], set()
        self._title_depth = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if "generic-error" in classes or "error-content" in classes:
            self.error = True
        if tag == "h1" and "title" in classes:
            self.titles.append("")
            self._title_depth = 1
        elif self._title_depth and tag not in ("br", "img", "wbr"):
            self._title_depth += 1
        if "code-listing" in classes:
            self.listings += 1
        if tag == "pre" and "source" in classes:
            self.declarations += 1
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
        if attrs.get("id"):
            self.ids.add(attrs["id"])

    def handle_endtag(self, tag):
        if self._title_depth:
            self._title_depth -= 1

    def handle_data(self, text):
        if self._title_depth:
            self.titles[-1] += text


def render(chromium, site_url, path):
    """The page's DOM once its scripts have run."""
    with tempfile.TemporaryDirectory() as profile:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start. The virtual-time budget
        # lets the app fetch its JSON and render before the dump (virtual time waits for the network, and
        # runs ahead when the page is idle, so a quick page takes no longer for it).
        result = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}",
             "--virtual-time-budget=15000", "--dump-dom", site_url + path],
            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"error: {chromium} failed on {path} (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return Dom(result.stdout)


def page_problems(page, dom):
    titles = [" ".join(title.split()) for title in dom.titles]
    if dom.error:
        yield f"DocC shows its error view: {' '.join(titles) or 'no text'}"
        return
    if page.title not in titles:
        yield f"title {page.title!r} (from {page.source}) not rendered; the page's h1 titles: {titles or 'none'}"
    if dom.listings < page.listings or (page.exact and dom.listings != page.listings):
        yield f"{dom.listings} code listing(s) rendered, {page.source} has {page.listings}"
    if page.symbol and dom.declarations == 0:
        yield "no declaration rendered"


def json_links(base):
    """Target path → the pages whose data JSON, or the sidebar's index, link to it."""
    links = {}
    for file in sorted((SITE / "data").rglob("*.json")):
        page = file.relative_to(SITE / "data").with_suffix("").as_posix()
        for reference in json.loads(file.read_text()).get("references", {}).values():
            url = reference.get("url", "")
            if not url or url.startswith("#") or urllib.parse.urlsplit(url).netloc:
                continue  # none, an anchor of the page itself, or another site (not checked offline)
            # The renderer puts the base path before a path from the site's root; a relative one the browser
            # resolves from the page's folder.
            target = base + url.lstrip("/") if url.startswith("/") else urllib.parse.urljoin(f"{base}{page}/", url)
            links.setdefault(target, set()).add(page)
    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("path"), str):
                links.setdefault(base + node["path"].lstrip("/"), set()).add("the sidebar (index/index.json)")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(json.loads((SITE / "index/index.json").read_text()))
    return links


def link_problem(target, base, doms):
    """Why the site cannot serve `target` (a path under the host, with maybe a #fragment), or None."""
    path, _, fragment = target.partition("#")
    path = urllib.parse.unquote(path)
    if not path.startswith(base):
        return f"outside the site's base path {base}"
    inside = path[len(base):].strip("/")
    if inside == "documentation" or inside.startswith("documentation/"):
        page = inside.lower()
        if not (SITE / "data" / f"{page}.json").is_file():
            return f"no page: the site has no data/{page}.json"
        if not (SITE / page / "index.html").is_file():
            return f"the site has data/{page}.json but no {page}/index.html to open it with"
        if fragment and page in doms and fragment not in doms[page].ids:
            return f"the rendered page has no anchor #{fragment}"
        return None
    if inside and not (SITE / inside).exists():
        return "the site has no such file"
    return None


if __name__ == "__main__":
    main()
