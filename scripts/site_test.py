#!/usr/bin/python3
"""Tests the course site (build/site, from scripts/site.sh) in headless Chromium.

Serves the site on 127.0.0.1 and opens every page (of the API reference: its index and
the pages the course links to; --all-api: all), checking:
  - no console error, no failed request (network error or HTTP status >= 400) and no
    request to any other host (Chrome's performance log: CDP Network events);
  - every image loads with a non-zero natural size;
  - every link inside the site resolves: the file exists and, for a #fragment, the
    target page has that id;
  - every hint (<details>) is closed on load and open after a click on its summary;
  - the language switch (#lang-switch, and the handout's own first-line link) lands on
    the same page in the other language;
  - searching "im2col" in English finds lab 6, "拓扑排序" in Chinese finds lab 4, served
    and from file:// (where lab 6's figures must show too);
and saves screenshots of lab 6 at 1280 px wide in build/site/screens/.
Prints one line per failure and a summary; exits 1 when anything failed.
usage: site_test.py [--site DIR] [--no-install] [--all-api]
Installs chromium, chromium-driver, python3-selenium and a CJK font from Debian when missing.
"""

import argparse
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

# fonts-wqy-microhei: without a CJK font the Chinese screenshots show boxes.
PACKAGES = ["chromium", "chromium-driver", "python3-selenium", "fonts-wqy-microhei"]
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SEARCHES = [("en", "im2col", "course6_conv/index.html"), ("zh", "拓扑排序", "course4_topo/index.html")]
SCREEN_PAGE = "course6_conv/index.html"


def install_missing():
    missing = [p for p in PACKAGES if subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True
    ).stdout.find("ok installed") < 0]
    if not missing:
        return
    sudo = [] if os.getuid() == 0 else ["sudo"]
    print("Installing missing packages:", " ".join(missing), flush=True)
    subprocess.run(sudo + ["apt-get", "update", "-q"], check=True)
    subprocess.run(sudo + ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q",
                           "--no-install-recommends"] + missing, check=True)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(site):
    handler = functools.partial(QuietHandler, directory=site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_browser(profile):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--window-size=1280,1000"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


class Checker:
    def __init__(self, driver, base, site):
        self.driver, self.base, self.site = driver, base, site
        self.failures = []
        self.ids = {}        # page path -> set of ids
        self.links = []      # (from page, absolute url)
        self.counts = {"pages": 0, "images": 0, "links": 0, "hints": 0, "switches": 0}

    def fail(self, page, what):
        self.failures.append(f"{page}: {what}")
        print(f"FAIL {page}: {what}", flush=True)

    def drain_logs(self, page):
        """Console errors, failed requests and requests to other hosts since the last call."""
        for entry in self.driver.get_log("browser"):
            if entry.get("level") == "SEVERE" and self.base + "favicon.ico" not in entry.get("message", ""):
                self.fail(page, f"console error: {entry.get('message')}")
        requests = {}
        for entry in self.driver.get_log("performance"):
            msg = json.loads(entry["message"])["message"]
            method, params = msg.get("method", ""), msg.get("params", {})
            if method == "Network.requestWillBeSent":
                url = params["request"]["url"]
                requests[params["requestId"]] = url
                scheme = urllib.parse.urlsplit(url).scheme
                if scheme.startswith("chrome") or scheme == "devtools":
                    continue  # the browser's own pages, not the site's
                if url == self.base + "favicon.ico":
                    # Chromium asks every host for /favicon.ico; on GitHub Pages that is the
                    # owner's root, outside the site. The site's own pages name an icon.
                    continue
                if scheme in ("http", "https", "ws", "wss") and not url.startswith(self.base):
                    self.fail(page, f"request to another host: {url}")
                elif scheme not in ("http", "data", "blob", "about", "file"):
                    self.fail(page, f"unexpected request: {url}")
            elif method == "Network.loadingFailed":
                if not params.get("canceled"):
                    url = requests.get(params["requestId"], params["requestId"])
                    self.fail(page, f"request failed ({params.get('errorText')}): {url}")
            elif method == "Network.responseReceived":
                if params["response"]["status"] >= 400 and \
                        params["response"]["url"] != self.base + "favicon.ico":
                    self.fail(page, f"HTTP {params['response']['status']}: {params['response']['url']}")

    def visit_safely(self, path):
        try:
            self.visit(path)
        except Exception as e:  # a page the checks cannot walk is a failure, not a crash
            self.fail(path, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")

    def visit(self, path):
        d = self.driver
        d.get(self.base + path)
        d.execute_script("return document.readyState")
        self.counts["pages"] += 1
        # Images: wait for them (lazy or slow ones), then check their size.
        bad = d.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const imgs = Array.from(document.images);
            Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })))
              .then(() => done([imgs.length, imgs.filter(i => i.naturalWidth === 0 || i.naturalHeight === 0)
                                                .map(i => i.getAttribute('src'))]));""")
        self.counts["images"] += bad[0]
        for src in bad[1]:
            self.fail(path, f"image does not load: {src}")
        self.ids[path] = set(d.execute_script(
            "return Array.from(document.querySelectorAll('[id], a[name]')).map(e => e.id || e.name)"))
        for href in d.execute_script("return Array.from(document.links).map(a => a.href)"):
            if href.startswith(self.base):
                self.links.append((path, href))
        if path.startswith(("en/", "zh/")):
            self.check_hints(path)
        self.drain_logs(path)

    def check_hints(self, path):
        d = self.driver
        n = d.execute_script("return document.querySelectorAll('details').length")
        if n == 0 and path.split("/")[1].startswith("course"):
            # Every lab's handout has graded hints (section Hints): none means they were
            # rendered as text, not as <details>.
            self.fail(path, "a lab page without any hint (<details>)")
        for i in range(n):
            self.counts["hints"] += 1
            open_on_load, summary = d.execute_script("""
                const det = document.querySelectorAll('details')[arguments[0]];
                const open = det.open, s = det.querySelector(':scope > summary');
                det.open = false;  // so that the click below is tested even so
                if (s) s.scrollIntoView({block: 'center'});
                return [open, s];""", i)
            if open_on_load:
                self.fail(path, f"hint {i + 1} is open on load")
            if summary is None:
                self.fail(path, f"hint {i + 1} has no <summary> to click")
                continue
            summary.click()
            if not d.execute_script("return document.querySelectorAll('details')[arguments[0]].open", i):
                self.fail(path, f"hint {i + 1} does not open on click")

    def check_switch(self, path):
        """Follows the language switch (and the handout's first-line link) from path."""
        d = self.driver
        lang, rest = path.split("/", 1)
        want = self.base + ("zh/" if lang == "en" else "en/") + rest
        d.get(self.base + path)
        targets = d.execute_script(
            "return Array.from(document.querySelectorAll('a.lang-switch')).map(a => a.href)")
        if not targets:
            self.fail(path, "no language switch")
        for t in targets:
            if t.split("#")[0] != want:
                self.fail(path, f"language switch goes to {t}, not {want}")
        switch = d.find_element("id", "lang-switch") if targets else None
        if switch is not None:
            switch.click()
            time.sleep(0.05)
            if d.current_url.split("#")[0] != want:
                self.fail(path, f"clicking the language switch lands on {d.current_url}, not {want}")
            elif d.execute_script("return document.querySelector('div.body h1') === null"):
                self.fail(path, f"the other language's page {want} has no title")
        self.counts["switches"] += 1
        self.drain_logs(path)

    def check_links(self):
        cache = {}
        for page, href in self.links:
            self.counts["links"] += 1
            url, _, frag = href.partition("#")
            target = urllib.parse.unquote(url[len(self.base):].split("?")[0])
            if target == "" or target.endswith("/"):
                target += "index.html"
            if target not in cache:
                cache[target] = os.path.isfile(os.path.join(self.site, target))
            if not cache[target]:
                self.fail(page, f"link to a missing page: {href}")
            elif page.startswith("api/") and target.startswith("api/"):
                # Doxygen's own summary links: it links "Classes" (#nested-classes) even
                # when the only nested class is private and not shown.
                continue
            elif frag and target in self.ids and urllib.parse.unquote(frag) not in self.ids[target]:
                self.fail(page, f"link to a missing anchor: {href}")

    def check_search(self, base=None):
        from selenium.webdriver.support.ui import WebDriverWait
        d = self.driver
        base = base or self.base
        for lang, query, want in SEARCHES:
            page = f"{lang}/search.html"
            if base != self.base:
                page += " (file://)"
            d.get(f"{base}{lang}/search.html?q={urllib.parse.quote(query)}")
            try:
                WebDriverWait(d, 20).until(lambda drv: drv.execute_script(
                    "const s = document.querySelector('#search-results p.search-summary');"
                    "return s !== null && s.textContent.trim() !== '';"))
            except Exception:
                self.fail(page, f"search for {query} did not finish")
                continue
            hits = d.execute_script(
                "return Array.from(document.querySelectorAll('#search-results ul.search li a'))"
                ".map(a => a.href)")
            if not any(h.split("?")[0].split("#")[0].endswith(f"{lang}/{want}") for h in hits):
                self.fail(page, f"searching {query} does not find {lang}/{want} (found {hits})")
            self.drain_logs(page)

    def check_file_url(self):
        """The site opened from disk: a lab's figures show and the search works."""
        d = self.driver
        base = "file://" + urllib.parse.quote(self.site) + "/"
        d.get(base + "en/" + SCREEN_PAGE)
        bad = d.execute_script("return Array.from(document.images)"
                               ".filter(i => i.naturalWidth === 0).map(i => i.getAttribute('src'))")
        for src in bad:
            self.fail("en/" + SCREEN_PAGE + " (file://)", f"image does not load: {src}")
        self.drain_logs("en/" + SCREEN_PAGE + " (file://)")
        self.check_search(base)

    def screenshots(self):
        d = self.driver
        out = os.path.join(self.site, "screens")
        os.makedirs(out, exist_ok=True)
        saved = []
        for lang in ("en", "zh"):
            d.get(f"{self.base}{lang}/{SCREEN_PAGE}")
            width = d.execute_script("return window.innerWidth")
            if width != 1280:  # the window's frame: make the page itself 1280 px wide
                d.set_window_size(1280 + 1280 - width, 1000)
            name = os.path.join(out, f"course6_conv_{lang}.png")
            d.save_screenshot(name)
            saved.append(os.path.relpath(name, ROOT))
            # The first hint, opened, with the figure above it.
            d.execute_script("const s = document.querySelector('details summary');"
                             "if (s) { s.click(); s.scrollIntoView({block: 'center'}); }")
            name = os.path.join(out, f"course6_conv_{lang}_hint.png")
            d.save_screenshot(name)
            saved.append(os.path.relpath(name, ROOT))
            self.drain_logs(f"{lang}/{SCREEN_PAGE}")
        return saved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", default=os.path.join(ROOT, "build/site"))
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--all-api", action="store_true", help="visit every page of the API reference")
    args = ap.parse_args()
    site = os.path.abspath(args.site)
    if not os.path.isfile(os.path.join(site, "en/index.html")):
        print(f"site_test: no site in {site}: run scripts/site.sh first", file=sys.stderr)
        return 2
    if not args.no_install:
        install_missing()
    start = time.time()
    every = sorted(os.path.relpath(os.path.join(dp, f), site)
                   for dp, _, files in os.walk(site) for f in files if f.endswith(".html"))
    # Every course page, and of the Doxygen reference its index and the pages the course
    # links to (--all-api: all of its pages, a few minutes more).
    pages = [p for p in every if not p.startswith("api/")] + ["api/index.html"]
    server = serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    profile = tempfile.mkdtemp(prefix="site-test-chromium-")
    driver = start_browser(profile)
    try:
        c = Checker(driver, base, site)
        driver.get("about:blank")
        driver.get_log("browser"), driver.get_log("performance")  # the browser's own start
        for page in pages:
            c.visit_safely(page)
        linked_api = sorted({urllib.parse.unquote(h[len(base):].split("#")[0])
                             for _, h in c.links if h.startswith(base + "api/")})
        for page in (every if args.all_api else linked_api):
            if page.startswith("api/") and page not in c.ids and page in every:
                c.visit_safely(page)
        c.check_links()
        for page in pages:
            if page.startswith("en/") and page not in ("en/search.html", "en/genindex.html"):
                c.check_switch(page)
                c.check_switch("zh/" + page[3:])
        c.check_search()
        c.check_file_url()
        saved = c.screenshots()
    finally:
        driver.quit()
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    n = c.counts
    print(f"site_test: {n['pages']} pages, {n['images']} images, {n['links']} internal links, "
          f"{n['hints']} hints, {n['switches']} language switches, {len(SEARCHES)} searches; "
          f"screenshots: {', '.join(saved)}; {time.time() - start:.0f} s")
    print(f"site_test: {len(c.failures)} failures")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
