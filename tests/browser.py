"""A page rendered in headless Chromium (Debian's /usr/bin/chromium, no download), and the
checks that a student's payload in it stayed text: nothing ran, nothing can run on a click."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

# Debian's Chromium (the tests that drive it through Playwright pass it as executable_path), and
# the flags every test starts it with: as root in a container, nothing fetched in the background.
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ("--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync")
FLAGS = ("--headless", *CHROMIUM_FLAGS, "--disable-quic",
         "--host-resolver-rules=MAP * ~NOTFOUND",  # offline: a page's CDN scripts never load
         "--virtual-time-budget=3000")   # let onerror/onload handlers and timers fire before the dump

# Each form sets the page's `data-pwned` attribute if it runs (what --dump-dom then shows).
_RUN = "document.documentElement.setAttribute('data-pwned','{}')"
PAYLOAD = (f"<img src=x onerror=\"{_RUN.format('img')}\">"
           f"<script>{_RUN.format('script')}</script>"
           f"<svg onload=\"{_RUN.format('svg')}\"></svg>"
           f"<a href=\"javascript:{_RUN.format('link')}\">a link</a>"
           f"[md link](javascript:{_RUN.format('md')}) <iframe src=\"javascript:parent.{_RUN.format('frame')}\"></iframe>"
           "<details open ontoggle=\"" + _RUN.format("toggle") + "\"></details>")
# A file or folder name cannot hold '/': the same attack in one tag.
NAME_PAYLOAD = f"<img src=x onerror={_RUN.format('name').replace(' ', '')}>"


def dump_dom(page: Path, profile: Path, extra_flags: tuple[str, ...] = ()) -> str:
    """The page's DOM after it loaded and its scripts ran (file:// URL, offline)."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    done = subprocess.run([CHROMIUM, *FLAGS, *extra_flags, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=True, start_new_session=True)
    return done.stdout


def assert_inert(dom: str, must_show: str = "", page_handlers=()) -> None:
    """No payload ran; no element has an event handler (but the page's own, `page_handlers`:
    their exact code) or a javascript: URL; and, when given, `must_show` (the payload's text) is
    on the page as text."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(dom, "html.parser")
    assert soup.html is not None and not soup.html.has_attr("data-pwned"), soup.html.get("data-pwned")
    for element in soup.find_all(True):
        handlers = [name for name, code in element.attrs.items()
                    if name.lower().startswith("on") and code not in page_handlers]
        assert not handlers, f"<{element.name}> has {handlers}"
        for name in ("href", "src", "action", "formaction", "xlink:href"):
            value = re.sub(r"[\s\x00-\x1f]", "", str(element.get(name, ""))).lower()
            assert not value.startswith(("javascript:", "vbscript:", "data:text")), f"<{element.name} {name}={value}>"
    if must_show:
        assert must_show in soup.get_text(), f"{must_show!r} is not shown as text"
