"""deploy/jupyterhub/setup_hub.py and the homes of the hub's people. Every student works in their
own home (fetched notebooks, fetched feedback, and nbgrader's submission cache with each
submission's secret, which names their feedback in the exchange): a home a classmate can enter
hands that classmate the work and the feedback. useradd makes homes mode 0755 where login.defs
sets no HOME_MODE (Debian's default). Root and useradd required, else skipped; the users made
here are removed."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest

import hub_machine  # noqa: F401 - puts deploy/jupyterhub on sys.path
import setup_hub
from hub_courses import load_hub

STUDENTS = ("r12hubalice", "r12hubbob")

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("useradd") or not shutil.which("runuser"),
                                reason="root, useradd and runuser required")


def _courses(tmp_path: Path, create_users: bool) -> Path:
    path = tmp_path / "courses.toml"
    path.write_text(f'''
hub_env = "{tmp_path / 'env'}"
state_dir = "{tmp_path / 'state'}"
exchange = "{tmp_path / 'exchange'}"
create_users = {str(create_users).lower()}
admins = []

[[course]]
id = "cs349e"
grader = "r12hubgrader"
port = 9999
instructors = []
tas = []
students = {list(STUDENTS)!r}
'''.replace("'", '"'))
    return path


@pytest.fixture
def no_users():
    def remove():
        for name in (*STUDENTS, "r12hubgrader"):
            subprocess.run(["userdel", "--remove", name], capture_output=True)
    remove()
    yield
    remove()


def _classmate_reads_alices_secret() -> subprocess.CompletedProcess:
    alice, bob = STUDENTS
    cache = f"~/.local/share/jupyter/nbgrader_cache/cs349e/{alice}+lec01_codesign+2030-01-01"
    # as nbgrader submit writes it, with the spawner's usual umask
    subprocess.run(["runuser", "-u", alice, "--", "bash", "-c",
                    f"umask 022 && mkdir -p {cache} && echo 5eC7e7 > {cache}/submission_secret.txt"], check=True)
    home = pwd.getpwnam(alice).pw_dir
    return subprocess.run(["runuser", "-u", bob, "--", "bash", "-c",
                           f"cat {home}/.local/share/jupyter/nbgrader_cache/cs349e/*/submission_secret.txt"],
                          capture_output=True, text=True)


def test_a_created_students_home_is_closed_to_classmates(tmp_path, no_users):
    hub = load_hub(_courses(tmp_path, create_users=True))
    setup_hub.make_users(hub)
    for name in STUDENTS:
        assert os.stat(pwd.getpwnam(name).pw_dir).st_mode & 0o077 == 0
    seen = _classmate_reads_alices_secret()
    assert "5eC7e7" not in seen.stdout and seen.returncode != 0


def test_an_existing_students_open_home_is_closed(tmp_path, no_users, capsys):
    for name in STUDENTS:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True)
        os.chmod(pwd.getpwnam(name).pw_dir, 0o755)
    hub = load_hub(_courses(tmp_path, create_users=False))
    setup_hub.make_users(hub)
    said = capsys.readouterr().out
    assert "5eC7e7" not in _classmate_reads_alices_secret().stdout
    for name in STUDENTS:
        assert os.stat(pwd.getpwnam(name).pw_dir).st_mode & 0o077 == 0
        assert f"home of {name}: closed to other users (it was mode 0755)" in said


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_hub_does_not_start_while_a_students_home_is_open():
    """A student added since the set-up (useradd, then the courses file) or whose home was opened
    again: the hub refuses to start, naming her and the command that closes it."""
    from hub_machine import HubExited, missing_requirements, start_hub

    reason = missing_requirements()
    if reason:
        pytest.skip(f"the hub test {reason}")
    try:
        machine = start_hub(before_start=lambda m: os.chmod(pwd.getpwnam("alice").pw_dir, 0o755))
    except HubExited as exited:
        said = str(exited)
    else:
        machine.close()
        pytest.fail("the hub started while alice's home was open to her classmates")
    assert "not starting the hub: the home of alice" in said and "setup_hub.py" in said, said[-2000:]
