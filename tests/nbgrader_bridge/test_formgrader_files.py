"""formgrader serves the files of a student's autograded/ folder from the instructor's own origin
(<base>/formgrader/submissions/<id>/<file>): a page or picture a student handed in must not run
there. A real Jupyter server with nbgrader's formgrader, started in a copy of the course, as a
TA's JupyterLab (or the hub's formgrader service) runs it; each file opened in headless Chromium."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from browser import CHROMIUM, FLAGS, _RUN, assert_inert
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
        gb.add_student(STUDENT)
        gb.add_submission(ASSIGNMENT, STUDENT)
        submission = gb.find_submission_notebook("handout", ASSIGNMENT, STUDENT).id
    folder = course / "autograded" / STUDENT / ASSIGNMENT
    folder.mkdir(parents=True)
    for name, text in FILES.items():
        (folder / name).write_text(text)
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
