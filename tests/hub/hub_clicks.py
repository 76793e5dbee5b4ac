"""Playwright for Python on the system's Chromium (nothing downloaded): what a student, a TA and an
instructor click on the hub. Each step leaves a screenshot in the artifacts folder."""

from __future__ import annotations

import re
import time
from pathlib import Path

from browser import CHROMIUM, CHROMIUM_FLAGS  # noqa: F401  (the one place they are set)

SLOW = 180_000  # ms: a JupyterLab starting or nbgrader validating on a busy 2-core machine


class Shots:
    """Numbered screenshots of every step, kept as the test's artifacts."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.n = 0

    def __call__(self, page, what: str) -> Path:
        self.n += 1
        path = self.folder / f"{self.n:02d}-{re.sub(r'[^a-z0-9]+', '-', what.lower()).strip('-')}.png"
        page.screenshot(path=str(path))
        return path


def login(browser, url: str, user: str, password: str, *, landing: str = "**/lab**"):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(SLOW)
    page = context.new_page()
    page.goto(f"{url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", password)
    page.click("#login_submit")
    if landing:
        page.wait_for_url(landing)
    return page


def wait_for_lab(page) -> None:
    page.wait_for_selector("#jp-main-dock-panel")
    page.wait_for_selector(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    # JupyterLab's first-run news question covers the bottom right corner.
    news = page.locator(".jp-toast-button:has-text('No')")
    try:
        news.first.click(timeout=5000)
    except Exception:  # noqa: BLE001 (not asked this time)
        pass


def open_assignments(page):
    page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    page.click(".lm-Menu-itemLabel:text-is('Assignment List')")
    panel = page.locator("#nbgrader-assignment-list")
    panel.locator("#released_assignments_list_loading").wait_for(state="hidden")
    return panel


def refresh_assignments(page):
    panel = page.locator("#nbgrader-assignment-list")
    panel.locator("#refresh_assignments_list").click()
    panel.locator("#released_assignments_list_loading").wait_for(state="hidden")
    panel.locator("#fetched_assignments_list_loading").wait_for(state="hidden")
    panel.locator("#submitted_assignments_list_loading").wait_for(state="hidden")
    return panel


def open_file(page, user: str, url: str, path: str) -> None:
    """Opens a file in JupyterLab the way a link or the file browser does (lab/tree/<path>)."""
    page.goto(f"{url}/user/{user}/lab/tree/{path}")
    wait_for_lab(page)


def upload(page, user: str, url: str, folder: str, files: list[Path]) -> None:
    """The file browser's Upload button, into `folder`, overwriting the fetched files."""
    open_file(page, user, url, folder)
    page.wait_for_selector(f".jp-FileBrowser-crumbs:has-text('{folder.split('/')[-1]}')")
    with page.expect_file_chooser() as chooser:
        page.click(".jp-FileBrowser-toolbar [data-command='filebrowser:upload'], .jp-FileBrowser-toolbar jp-button[title='Upload Files']")
    chooser.value.set_files([str(f) for f in files])
    pending = {f.name for f in files}
    while pending:  # one "overwrite?" question per file, in the order the uploads reach them
        dialog = page.locator(".jp-Dialog").first
        dialog.wait_for()
        name = next(n for n in pending if n in dialog.inner_text())
        page.locator(f".jp-Dialog:has-text('{name}') button:has-text('Overwrite')").click()
        page.locator(f".jp-Dialog:has-text('{name}')").wait_for(state="detached")
        pending.discard(name)
    for f in files:
        page.wait_for_selector(f".jp-DirListing-item[title*='{f.name}']")
    time.sleep(1)  # the upload's last chunk is written when the listing shows it; let it settle


def save(page) -> None:
    page.keyboard.press("Control+s")
    page.wait_for_selector(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty", state="detached")
