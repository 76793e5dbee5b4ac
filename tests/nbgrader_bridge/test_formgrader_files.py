"""formgrader serves the files of a student's autograded/ folder from the instructor's own origin
(<base>/formgrader/submissions/<id>/<file>): a page or picture a student handed in must not run
there. A real Jupyter server with nbgrader's formgrader, started in a copy of the course, as a
TA's JupyterLab (or the hub's formgrader service) runs it; each file opened in headless Chromium.
formgrader's own pages, opened by a link a student sends, and its view of the student's submission
under the name the student chose: nothing of either runs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from browser import CHROMIUM, FLAGS, NAME_PAYLOAD, _RUN, assert_inert
from course_copy import clean_env, copy_course

pytest.importorskip("nbgrader")
pytest.importorskip("jupyter_server")
pytestmark = pytest.mark.timeout(300)

ASSIGNMENT, STUDENT, TOKEN = "lec01_codesign", "amy", "cs349e-test-token"
# What a student hands in beside their code: each sets the page's data-pwned if any of it runs.
FILES = {
    "report.html": f"<html><body><p>my report</p><script>{_RUN.format('html')}</script></body></html>",
    "plot.svg": ('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
                 f'<script>{_RUN.format("svg")}</script></svg>'),
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def formgrader(tmp_path_factory):
    """(base URL, submission id) of a formgrader serving amy's autograded/ folder with FILES in it."""
    from nbgrader.api import Gradebook

    course = copy_course(tmp_path_factory.mktemp("formgrader") / "course")
    if os.path.dirname(sys.executable) not in os.environ["PATH"].split(os.pathsep):   # the gradebook runs `alembic`
        os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_assignment(ASSIGNMENT)
        gb.add_notebook("handout", ASSIGNMENT)
        # a name the student chose in the LMS, imported with `nbgrader db student import`
        gb.add_student(STUDENT, first_name=NAME_PAYLOAD, last_name=NAME_PAYLOAD.replace("name", "last"))
        gb.add_submission(ASSIGNMENT, STUDENT)
        submission = gb.find_submission_notebook("handout", ASSIGNMENT, STUDENT).id
    folder = course / "autograded" / STUDENT / ASSIGNMENT
    folder.mkdir(parents=True)
    for name, text in FILES.items():
        (folder / name).write_text(text)
    import nbformat     # the notebook formgrader shows (with the student's name over it)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("my answer")]), folder / "handout.ipynb")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.token={TOKEN}", "--ServerApp.open_browser=False", "--ServerApp.allow_root=True",
         f"--ServerApp.root_dir={course}"],
        cwd=course, env={**clean_env(), "JUPYTER_CONFIG_DIR": str(course / ".jupyter-config")},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/formgrader/?token={TOKEN}", timeout=5)
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the Jupyter server did not start: {server.stderr.read().decode()[-2000:]}")
                time.sleep(0.5)
        yield url, submission
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_handed_in_page_is_sent_sandboxed(formgrader, name):
    """Before: `Content-Security-Policy: frame-ancestors 'self'; report-uri ...`, no sandbox: the
    student's script ran in the instructor's origin."""
    url, submission = formgrader
    with urllib.request.urlopen(f"{url}/formgrader/submissions/{submission}/{name}?token={TOKEN}") as reply:
        policy = reply.headers["Content-Security-Policy"]
        assert reply.read().decode() == FILES[name]     # still shown as the student handed it in
    directives = [d.strip() for d in policy.split(";")]
    assert "sandbox" in directives, policy               # no allow-scripts, no allow-same-origin


@pytest.mark.parametrize("name", sorted(FILES))
def test_nothing_a_handed_in_page_holds_runs_when_a_ta_opens_it(formgrader, name, tmp_path):
    url, submission = formgrader
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    flags = [f for f in FLAGS if not f.startswith("--host-resolver-rules")] + [
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
    done = subprocess.run([CHROMIUM, *flags, f"--user-data-dir={tmp_path}", "--dump-dom",
                           f"{url}/formgrader/submissions/{submission}/{name}?token={TOKEN}"],
                          capture_output=True, text=True, timeout=120, check=True, start_new_session=True)
    from bs4 import BeautifulSoup
    root = BeautifulSoup(done.stdout, "html.parser").find(True)      # <html>, or the <svg> document's own
    assert root is not None and not root.has_attr("data-pwned"), root.get("data-pwned")
    if name.endswith(".html"):
        assert_inert(done.stdout, must_show="my report")


# formgrader's own pages (Jinja templates without autoescaping) write the ids of their URL's path
# into the page, and its view of a submission the student's name from the gradebook: a link a
# student sends the TA ("my grade looks wrong: <link>") is a page of the TA's own origin.
PAGE_PATHS = {
    "gradebook": "/formgrader/gradebook/{payload}",
    "gradebook notebook": f"/formgrader/gradebook/{ASSIGNMENT}/{{payload}}",
    "manage submissions": "/formgrader/manage_submissions/{payload}",
    "manage student": "/formgrader/manage_students/{payload}",
    "manage student notebook": f"/formgrader/manage_students/{STUDENT}/{{payload}}",
    "submission": "/formgrader/submissions/{submission}/",       # the student's name, from the gradebook
}


# formgrader's own buttons, not anything a student wrote
FORMGRADERS_OWN_HANDLERS = {"toggle_name(true);", "toggle_name(false);", "toggleAllNames()"}


@pytest.mark.parametrize("page", sorted(PAGE_PATHS))
def test_nothing_a_link_or_a_students_name_holds_runs_in_formgraders_pages(formgrader, page, tmp_path):
    """Before: /formgrader/gradebook/<img src=x onerror=...> ran the student's script as the TA's
    Jupyter session, and so did a name the student chose in the LMS on formgrader's view of their
    submission."""
    from urllib.parse import quote

    from bs4 import BeautifulSoup
    url, submission = formgrader
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    path = PAGE_PATHS[page].format(payload=quote(NAME_PAYLOAD, safe=""), submission=submission)
    flags = [f for f in FLAGS if not f.startswith("--host-resolver-rules")] + [
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
    done = subprocess.run([CHROMIUM, *flags, f"--user-data-dir={tmp_path}", "--dump-dom", f"{url}{path}?token={TOKEN}"],
                          capture_output=True, text=True, timeout=120, check=True, start_new_session=True)
    assert "formgrader" in done.stdout.lower()            # formgrader's page, not an error of the server
    assert_inert(done.stdout, page_handlers=FORMGRADERS_OWN_HANDLERS)
    if page == "submission":
        assert "my answer" in done.stdout                 # the submission's view, its name as text
        assert NAME_PAYLOAD in BeautifulSoup(done.stdout, "html.parser").get_text()


@pytest.mark.parametrize("path, api", [
    (f"/formgrader/gradebook/{ASSIGNMENT}/handout", f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/handout"),
    (f"/formgrader/manage_students/{STUDENT}", f"/formgrader/api/student_submissions/{STUDENT}"),
    (f"/formgrader/manage_submissions/{ASSIGNMENT}", f"/formgrader/api/submissions/{ASSIGNMENT}"),
])
def test_formgraders_pages_still_work_with_their_values_escaped(formgrader, path, api):
    """Escaped, each page's script still reads its ids (a `<script>` string) and asks formgrader's
    API for what the gradebook holds of them."""
    from playwright.sync_api import sync_playwright

    from browser import CHROMIUM_FLAGS
    url, _ = formgrader
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_FLAGS))
        try:
            page = browser.new_page(extra_http_headers={"Authorization": f"token {TOKEN}"})   # its API calls too
            with page.expect_response(lambda reply: reply.url == f"{url}{api}", timeout=60_000) as reply:
                page.goto(f"{url}{path}")
            assert reply.value.status == 200
        finally:
            browser.close()


# formgrader's API answers GET with JSON that quotes the ids of its URL (an unknown student's
# submission is {"student": <the id>, ...}); tornado sends what a handler writes as text/html.
API_PATHS = {
    "submission": f"/formgrader/api/submission/{ASSIGNMENT}/{{payload}}",
    "student notebook submissions": "/formgrader/api/student_notebook_submissions/{payload}/" + ASSIGNMENT,
    "assignment": "/formgrader/api/assignment/{payload}",
    # nbgrader's assignment list, course list and validate extensions, in the same JupyterLab
    "nbgrader version": "/nbgrader_version?version={payload}",
    "assignments": "/assignments?course_id={payload}",
    "validate": "/assignments/validate?path={payload}",
}


@pytest.mark.parametrize("api", sorted(API_PATHS))
def test_nothing_a_link_to_formgraders_api_holds_runs(formgrader, api, tmp_path):
    """Before: /formgrader/api/submission/<assignment>/<img src=x onerror=...> answered
    {"student": "<img ...>"} as text/html, and the link a student sends the TA ran its script as the
    TA's Jupyter session. Every answer of the API is plain text (formgrader's scripts JSON.parse it)."""
    import urllib.request
    from urllib.parse import quote

    url, _ = formgrader
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    path = API_PATHS[api].format(payload=quote(NAME_PAYLOAD, safe=""))
    flags = [f for f in FLAGS if not f.startswith("--host-resolver-rules")] + [
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
    done = subprocess.run([CHROMIUM, *flags, f"--user-data-dir={tmp_path}", "--dump-dom",
                           f"{url}{path}{'&' if '?' in path else '?'}token={TOKEN}"],
                          capture_output=True, text=True, timeout=120, check=True, start_new_session=True)
    assert_inert(done.stdout)
    # the API still answers formgrader's own pages, the same JSON
    request = urllib.request.Request(f"{url}/formgrader/api/submission/{ASSIGNMENT}/{STUDENT}",
                                     headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        assert reply.headers.get_content_type() == "text/plain" and reply.headers["X-Content-Type-Options"] == "nosniff"
        assert json.loads(reply.read())["student"] == STUDENT


def test_formgraders_pages_read_their_api_answered_as_plain_text(formgrader):
    """The API's answers as plain text: formgrader's scripts still read them (as jQuery hands them a
    string, which they JSON.parse; an application/json answer jQuery parses itself, and theirs failed)."""
    from playwright.sync_api import sync_playwright

    from browser import CHROMIUM_FLAGS
    url, _ = formgrader
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_FLAGS))
        try:
            page = browser.new_page(extra_http_headers={"Authorization": f"token {TOKEN}"})
            page.goto(f"{url}/formgrader/manage_submissions/{ASSIGNMENT}")
            # as manage_submissions.js reads the answer of its autograde button: JSON.parse of a string
            read = page.evaluate("""api => new Promise((done, failed) => $.get(api)
                .done(answer => done(JSON.parse(answer).student)).fail(failed))""",
                                 f"{url}/formgrader/api/submission/{ASSIGNMENT}/{STUDENT}")
            assert read == STUDENT
        finally:
            browser.close()


@pytest.fixture
def listener():
    """(port, paths requested) of an HTTP server on 127.0.0.1: a student's server, whatever the URL."""
    import http.server
    import threading

    requested: list[str] = []

    class Record(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requested.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], requested
    finally:
        server.shutdown()
        server.server_close()


def test_a_submitted_notebook_opened_in_the_graders_jupyterlab_loads_nothing_from_elsewhere(formgrader, listener):
    """A TA opens a student's submitted notebook (or a handed-in Markdown file) in the grader's
    JupyterLab. JupyterLab's own sanitizer keeps remote images, a CSS background and a video of an
    untrusted notebook's Markdown cells and HTML outputs: before, each was requested from the
    student's server as the notebook opened (it learnt when, and from where, the TA read it). The
    grader's server now allows pictures, media and fonts only from itself and `data:`/`blob:`."""
    import nbformat
    from playwright.sync_api import sync_playwright

    from browser import CHROMIUM_FLAGS
    url, _ = formgrader
    port, requested = listener
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    remote = f"http://127.0.0.1:{port}"
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(
            f'# my notes heading\n\n<img src="{remote}/md-img.png"> ![plot]({remote}/md-image.png)\n\n'
            f'<div style="background-image:url({remote}/md-css.png)">styled</div>'
            f'<ul style="list-style-image:url({remote}/md-list.png)"><li>item</li></ul>'
            f'<p style="cursor:url({remote}/md-cursor.png), auto">cursor</p>'
            f'<audio src="{remote}/md-audio.mp3" autoplay></audio><input type="image" src="{remote}/md-input.png">'
            f'<img src=x onerror="window.cs349ePwned=1">'),
        nbformat.v4.new_code_cell("show()", outputs=[nbformat.v4.new_output("display_data", data={
            "text/html": f'<img src="{remote}/out-img.png"><video src="{remote}/out-video.mp4" autoplay></video>',
            "text/plain": "x"})]),
    ])
    headers = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
    for path, model in {
        f"submitted/{STUDENT}/{ASSIGNMENT}/handout.ipynb": {"type": "notebook", "content": notebook},
        f"submitted/{STUDENT}/{ASSIGNMENT}/notes.md": {"type": "file", "format": "text",
                                                       "content": f'# notes\n\n<img src="{remote}/mdfile-img.png">\n'},
    }.items():
        for folder in ("submitted", f"submitted/{STUDENT}", f"submitted/{STUDENT}/{ASSIGNMENT}"):
            urllib.request.urlopen(urllib.request.Request(f"{url}/api/contents/{folder}", method="PUT", headers=headers,
                                                          data=json.dumps({"type": "directory"}).encode()))
        urllib.request.urlopen(urllib.request.Request(f"{url}/api/contents/{path}", method="PUT", headers=headers,
                                                      data=json.dumps(model).encode()))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_FLAGS))
        try:
            page = browser.new_page()
            for path, shown in ((f"submitted/{STUDENT}/{ASSIGNMENT}/handout.ipynb", "my notes heading"),
                                (f"submitted/{STUDENT}/{ASSIGNMENT}/notes.md", "notes")):
                opened = f"{url}/lab/tree/{path}?token={TOKEN}"
                if path.endswith(".md"):
                    opened = f"{url}/lab/tree/{path}?token={TOKEN}&factory=Markdown%20Preview"
                page.goto(opened)
                page.locator(".jp-RenderedMarkdown h1", has_text=shown).first.wait_for(timeout=90_000)
                page.wait_for_timeout(3000)   # images, media and styles requested once rendered
                assert page.evaluate("window.cs349ePwned") is None
        finally:
            browser.close()
    assert requested == [], requested
