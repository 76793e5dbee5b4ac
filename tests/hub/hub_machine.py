"""A real JupyterHub on 127.0.0.1 for tests/hub: the course set up by deploy/jupyterhub/setup_hub.py
exactly as docs/jupyterhub.md says, system users with passwords (PAM), the hub in its own process
group. Everything it creates is removed by `close()`: the hub and its children, the users and
their homes, the exchange and the hub's state. The shared environment stays cached in
/opt/cs349e-hub/test-env (rebuilt when pyproject.toml changes).
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]
DEPLOY = KIT / "deploy" / "jupyterhub"
TEST_ROOT = Path("/srv/cs349e-hub-test")  # readable by every user (unlike pytest's tmp_path under /tmp/pytest-of-root)
ENV = Path("/opt/cs349e-hub/test-env")
DOC = KIT / "docs" / "jupyterhub.md"
# What this test's course differs in from the documented one (courses.toml): the courses file, and
# the shared environment, cached apart from a real installation's.
DOCUMENTED_ENV = "/opt/cs349e-hub/venv"
DOCUMENTED_COURSES = "deploy/jupyterhub/courses.toml"
ASSIGNMENT = "lec01_codesign"
# Names of two students on the course's roster (courses.toml); dave has none.
NAMES = {"alice": ("晓雯", "李"), "bob": ("建国", "王")}

from browser import CHROMIUM  # noqa: E402

sys.path.insert(0, str(DEPLOY))
from hub_courses import Hub, load_hub  # noqa: E402


def missing_requirements() -> str | None:
    """Why this machine cannot run the hub test (None: it can)."""
    if os.geteuid() != 0:
        return "needs root (creates system users and runs the hub as root, as on a course server)"
    if CHROMIUM is None:
        return "chromium is not installed (apt-get install -y chromium; .ci/run installs it)"
    for tool in ("/usr/bin/python3", "/usr/sbin/useradd", "/usr/sbin/runuser"):
        if not Path(tool).exists():
            return f"{tool} is not installed"
    if shutil.which("configurable-http-proxy") is None:
        return "configurable-http-proxy is not installed (npm install -g configurable-http-proxy)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install '.[hub]')"
    return None


def doc_command(step: str, replace: dict[str, str], *replaced: str) -> str:
    """The ```bash block of docs/jupyterhub.md's step `step` (its bold title), as written but for
    the strings `replaced` (each of which must be in it), replaced as `replace` says."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"**{step}**")
    block = re.search(r"```bash\n(.*?)```", text[start:], flags=re.S).group(1)
    command = "\n".join(line.strip() for line in block.strip().splitlines())
    for documented in replaced:
        here = replace[documented]
        assert documented in command, f"docs/jupyterhub.md, {step}: `{documented}` is no longer in {command!r}"
        command = command.replace(documented, here)
    return command


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def courses_toml(ports: list[int]) -> str:
    return f'''
hub_env = "{ENV}"
state_dir = "{TEST_ROOT / 'state'}"
exchange = "{TEST_ROOT / 'exchange'}"
create_users = true
admins = ["instructor"]
# On 127.0.0.1 every server shares the hub's origin (no wildcard DNS): accepted, as the file must say.
shared_origin = "accept"

[[course]]
id = "cs349e"
grader = "grader-cs349e"
port = {ports[0]}
instructors = ["instructor"]
tas = ["ta"]
students = ["alice", "bob", "dave"]

[course.names]
alice = {{ first = "{NAMES['alice'][0]}", last = "{NAMES['alice'][1]}" }}
bob = {{ first = "{NAMES['bob'][0]}", last = "{NAMES['bob'][1]}" }}

[[course]]
id = "cs349f"
grader = "grader-cs349f"
port = {ports[1]}
instructors = ["instructor"]
tas = []
students = ["carol"]
'''


@dataclass
class HubMachine:
    hub: Hub
    url: str
    passwords: dict[str, str]
    log: Path
    process: subprocess.Popen | None = None
    doc_replace: dict[str, str] = field(default_factory=dict)
    created_users: list[str] = field(default_factory=list)

    def course(self, course_id: str):
        return next(c for c in self.hub.courses if c.id == course_id)

    def as_grader(self, course_id: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """A command in the course folder as its grader user, from the shared environment."""
        course = self.course(course_id)
        env = {"PATH": f"{ENV / 'bin'}:/usr/bin:/bin", "HOME": str(course.home), "LANG": "C.UTF-8"}
        return subprocess.run([shutil.which("runuser"), "-u", course.grader, "--", *args], cwd=course.root, env=env,
                              capture_output=True, text=True, check=check, timeout=600)

    def run_doc_step(self, step: str, *replaced: str) -> subprocess.CompletedProcess:
        """A step of docs/jupyterhub.md as written (but for `replaced`), as root from the kit's folder."""
        done = subprocess.run(["bash", "-c", doc_command(step, self.doc_replace, *replaced)], cwd=KIT,
                              env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"docs/jupyterhub.md, {step}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    def stop_processes(self) -> None:
        """The hub (its own process group), its proxy (a session of its own) and every process of
        the users this machine created (the servers the hub spawned, each in its own session)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        _kill_pid_file(self.hub.state_dir / "jupyterhub-proxy.pid")
        for name in self.created_users:
            _kill_user(name)

    def close(self) -> None:
        self.stop_processes()
        if self.log.is_file():   # kept with the screenshots
            (KIT / "artifacts" / "hub").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.log, KIT / "artifacts" / "hub" / "jupyterhub.log")
        for name in self.created_users:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
        shutil.rmtree(TEST_ROOT, ignore_errors=True)


def _kill_pid_file(path: Path) -> None:
    try:
        pid = int(path.read_text().strip())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        pass


def _kill_user(name: str) -> None:
    """Servers the hub spawned as this user (each in the hub's process group already; this is the
    safety net when the hub died first)."""
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return
    deadline = time.monotonic() + 20
    while subprocess.run(["pgrep", "-U", str(uid)], capture_output=True).returncode == 0 and time.monotonic() < deadline:
        subprocess.run(["pkill", "-KILL", "-U", str(uid)], capture_output=True)
        time.sleep(0.2)


def start_hub(before_start=None) -> HubMachine:
    """The hub set up and started; `before_start(machine)`, if given, runs once its users exist."""
    for name in ("instructor", "ta", "alice", "bob", "carol", "dave", "grader-cs349e", "grader-cs349f"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        raise RuntimeError(f"system user {name} exists already: the hub test creates and removes its own users")
    shutil.rmtree(TEST_ROOT, ignore_errors=True)
    TEST_ROOT.mkdir(parents=True)
    os.chmod(TEST_ROOT, 0o755)
    toml = TEST_ROOT / "courses.toml"
    toml.write_text(courses_toml([free_port(), free_port()]))
    os.chmod(toml, 0o644)
    hub = load_hub(toml)
    machine = HubMachine(hub=hub, url=f"http://127.0.0.1:{free_port()}", passwords={},
                         log=TEST_ROOT / "jupyterhub.log")
    machine.created_users = [*hub.users(), *(c.grader for c in hub.courses)]
    try:
        # docs/jupyterhub.md, steps 2 and 3, as written (with this test's courses file and environment).
        machine.doc_replace = {DOCUMENTED_COURSES: str(toml), DOCUMENTED_ENV: str(ENV)}
        setup = subprocess.run(["bash", "-c", doc_command("Courses and people.", machine.doc_replace, DOCUMENTED_COURSES)], cwd=KIT,
                               env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
                               capture_output=True, text=True, timeout=900)
        if setup.returncode != 0:
            raise RuntimeError(f"setup_hub.py failed:\n{setup.stdout}\n{setup.stderr}")
        for name in hub.users():
            machine.passwords[name] = secrets.token_urlsafe(12)
        subprocess.run(["chpasswd"], input="".join(f"{u}:{p}\n" for u, p in machine.passwords.items()),
                       text=True, check=True)
        if before_start is not None:
            before_start(machine)
        env = {**os.environ, "CS349E_HUB_URL": machine.url,
               "CS349E_HUB_API_URL": f"http://127.0.0.1:{free_port()}",
               "CS349E_HUB_PROXY_API_URL": f"http://127.0.0.1:{free_port()}",
               "PATH": f"{ENV / 'bin'}:{os.environ['PATH']}"}
        for start in range(1, HUB_STARTS + 1):
            with open(machine.log, "a") as log:
                machine.process = subprocess.Popen(
                    ["bash", "-c", doc_command("Start the hub", machine.doc_replace, DOCUMENTED_COURSES, DOCUMENTED_ENV)],
                    cwd=KIT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                wait_for(f"{machine.url}/hub/health", machine)
                return machine
            except HubExited as exited:
                slow = SLOW_SERVICE.findall(machine.log.read_text())
                if not slow:
                    raise
                if start == HUB_STARTS:
                    raise RuntimeError(f"the hub exited {HUB_STARTS} times: formgrader service(s) {', '.join(sorted(set(slow)))} "
                                       f"did not answer within JupyterHub's 10 s for a managed service\n{exited}") from None
                machine.stop_processes()   # and start again, as systemd's Restart=on-failure does
    except BaseException:
        machine.close()
        raise


# JupyterHub gives each managed service 10 tries of 1 s to answer (JupyterHub.start_service; not
# configurable) and exits when one does not. A formgrader service's cold start (JupyterLab, nbgrader
# and the course's nbgrader_config.py) took 9.4 s and 10.1 s here on a busy 2-core machine; started
# again, its files are in the page cache and it answers sooner. docs/jupyterhub.md runs the hub under
# systemd with Restart=on-failure, which does what this does: start again, a bounded number of times.
HUB_STARTS = 3
SLOW_SERVICE = re.compile(r"Cannot connect to (\S+) service")


class HubExited(RuntimeError):
    pass


def wait_for(url: str, machine: HubMachine, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if machine.process is not None and machine.process.poll() is not None:
            raise HubExited(f"the hub exited ({machine.process.returncode}):\n{machine.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer within {seconds:.0f} s:\n{machine.log.read_text()[-3000:]}")
