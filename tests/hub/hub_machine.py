"""A real JupyterHub on 127.0.0.1 for tests/hub: the course set up by deploy/jupyterhub/setup_hub.py
exactly as docs/jupyterhub.md says, system users with passwords (PAM), the hub in its own process
group. Everything it creates is removed by `close()`: the hub and its children, the users and
their homes, the exchange and the hub's state. The shared environment stays cached in
/opt/cs349e-hub/test-env (rebuilt when pyproject.toml changes).
"""

from __future__ import annotations

import os
import pwd
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
ASSIGNMENT = "lec01_codesign"

from browser import CHROMIUM  # noqa: E402

sys.path.insert(0, str(DEPLOY))
from hub_courses import Hub, load_hub  # noqa: E402


def missing_requirements() -> str | None:
    """Why this machine cannot run the hub test (None: it can)."""
    if os.geteuid() != 0:
        return "needs root (creates system users and runs the hub as root, as on a course server)"
    if CHROMIUM is None:
        return "chromium is not installed (apt-get install -y chromium; .ci/run installs it)"
    for tool in ("/usr/bin/python3", "/usr/sbin/useradd"):
        if not Path(tool).exists():
            return f"{tool} is not installed"
    if shutil.which("configurable-http-proxy") is None:
        return "configurable-http-proxy is not installed (npm install -g configurable-http-proxy)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install '.[hub]')"
    return None


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

[[course]]
id = "cs349e"
grader = "grader-cs349e"
port = {ports[0]}
instructors = ["instructor"]
tas = ["ta"]
students = ["alice", "bob", "dave"]

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
    created_users: list[str] = field(default_factory=list)

    def course(self, course_id: str):
        return next(c for c in self.hub.courses if c.id == course_id)

    def as_grader(self, course_id: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """A command in the course folder as its grader user, from the shared environment."""
        course = self.course(course_id)
        env = {"PATH": f"{ENV / 'bin'}:/usr/bin:/bin", "HOME": str(course.home), "LANG": "C.UTF-8"}
        return subprocess.run(["setpriv", f"--reuid={course.grader}", f"--regid={course.grader}", "--init-groups",
                               "--", *args], cwd=course.root, env=env, capture_output=True, text=True,
                              check=check, timeout=600)

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


def start_hub() -> HubMachine:
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
        # docs/jupyterhub.md, step 2, as written (with this test's courses file).
        setup = subprocess.run(["/usr/bin/python3", str(DEPLOY / "setup_hub.py"), str(toml)], cwd=KIT,
                               capture_output=True, text=True, timeout=900)
        if setup.returncode != 0:
            raise RuntimeError(f"setup_hub.py failed:\n{setup.stdout}\n{setup.stderr}")
        for name in hub.users():
            machine.passwords[name] = secrets.token_urlsafe(12)
        subprocess.run(["chpasswd"], input="".join(f"{u}:{p}\n" for u, p in machine.passwords.items()),
                       text=True, check=True)
        env = {**os.environ, "CS349E_HUB_COURSES": str(toml), "CS349E_HUB_URL": machine.url,
               "CS349E_HUB_API_URL": f"http://127.0.0.1:{free_port()}",
               "CS349E_HUB_PROXY_API_URL": f"http://127.0.0.1:{free_port()}",
               "PATH": f"{ENV / 'bin'}:{os.environ['PATH']}"}
        for attempt in range(3):
            with open(machine.log, "a") as log:
                machine.process = subprocess.Popen(
                    [str(ENV / "bin" / "jupyterhub"), "-f", str(DEPLOY / "jupyterhub_config.py")],
                    cwd=hub.state_dir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                wait_for(f"{machine.url}/hub/health", machine)
                return machine
            except HubExited:
                # JupyterHub gives a managed service 10 s to answer, then exits (a systemd unit
                # restarts it); on a loaded machine a formgrader can take longer to start.
                if attempt == 2 or "Cannot connect to" not in machine.log.read_text():
                    raise
                machine.stop_processes()
    except BaseException:
        machine.close()
        raise


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
