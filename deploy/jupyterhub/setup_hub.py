"""Set up one server for the courses of a TOML file, as root: `sudo python3 deploy/jupyterhub/setup_hub.py
deploy/jupyterhub/courses.toml` from the kit's folder (docs/jupyterhub.md). Safe to run again.

1. The shared environment (hub_env): a virtualenv of the system's python3 with the kit's
   `instructor` and `hub` extras, readable by every user; nbgrader's machine-wide settings in its
   etc/jupyter/nbgrader_config.py (the exchange, one folder per course, the hub's groups decide
   who may use which course).
2. The exchange folder, world-writable with the sticky bit (nbgrader's documented permissions).
3. Users: each course's grader user (and, with create_users = true, everyone listed).
4. Each course folder: a copy of the kit owned by the grader user in a home nobody else can enter
   (solutions/ and autograder/ stay closed to students), with the hub's settings appended to its
   nbgrader_config.py. An existing course folder is left as it is (it holds the gradebook).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hub_courses import CoursesError, Hub, load_hub  # noqa: E402

KIT = Path(__file__).resolve().parents[2]
# What a course folder does not need from the kit's folder.
_NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "venv", "tests", "benchmarks", "__pycache__", "*.pyc",
                                     ".pytest_cache", ".hypothesis", "release", "submitted", "autograded",
                                     "feedback", "gradebook.db", ".pinned_results", "released_solutions",
                                     "downloaded", "node_modules")

GLOBAL_NBGRADER_CONFIG = '''\
# nbgrader's settings for every user of this hub (written by deploy/jupyterhub/setup_hub.py).
c = get_config()  # noqa: F821
c.Exchange.root = {exchange!r}
# One exchange folder per course; the hub's nbgrader-<course>/formgrade-<course> groups say who may
# fetch from, submit to or collect from which.
c.Exchange.path_includes_course = True
c.Authenticator.plugin_class = "nbgrader.auth.JupyterHubAuthPlugin"
'''

COURSE_HUB_SETTINGS = '''

# ------------------------------------------------------------------ this course on the hub
# (appended by deploy/jupyterhub/setup_hub.py; the rest of this file is the kit's)
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
c.Exchange.path_includes_course = True
c.Authenticator.plugin_class = "nbgrader.auth.JupyterHubAuthPlugin"
# formgrader's "autograde" button pregrades a student first (the kit's autograde requires it).
c.LoadPinnedResult.pregrade_missing = True
'''


def env_key() -> str:
    """Names what the environment was built from: a changed pyproject.toml builds it again."""
    return hashlib.sha256((KIT / "pyproject.toml").read_bytes()).hexdigest()[:16]


def build_env(hub: Hub, python: str) -> None:
    stamp = hub.hub_env / ".cs349e-env"
    if stamp.is_file() and stamp.read_text().strip() == env_key():
        print(f"environment {hub.hub_env}: up to date")
        return
    print(f"environment {hub.hub_env}: building (pip install '.[instructor,hub]')")
    if hub.hub_env.exists():
        shutil.rmtree(hub.hub_env)
    hub.hub_env.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([python, "-m", "venv", str(hub.hub_env)], check=True)
    pip = [str(hub.hub_env / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, f"{KIT}[instructor,hub]"], check=True, cwd=KIT)
    # jsonschema's optional RFC 3987 checker builds a grammar on import (3.6 s of CPU on every
    # JupyterLab start, and the hub gives each formgrader service 10 s to answer); nothing here
    # validates IRIs.
    subprocess.run([*pip[:-2], "uninstall", "-y", "-q", "rfc3987-syntax"], check=True)
    # The Assignments panel for everyone; formgrader and course management belong to the services.
    jupyter = str(hub.hub_env / "bin" / "jupyter")
    for ext in ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                "@jupyter/nbgrader:course-list"):
        subprocess.run([jupyter, "labextension", "disable", "--level=sys_prefix", ext], check=True,
                       stdout=subprocess.DEVNULL)
    stamp.write_text(env_key() + "\n")
    _readable(hub.hub_env)


def _readable(path: Path) -> None:
    subprocess.run(["chmod", "-R", "a+rX", str(path)], check=True)


def write_global_config(hub: Hub) -> None:
    folder = hub.hub_env / "etc" / "jupyter"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(GLOBAL_NBGRADER_CONFIG.format(exchange=str(hub.exchange)))
    _readable(folder)


def make_exchange(hub: Hub) -> None:
    hub.exchange.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.exchange, 0o1777)
    hub.state_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.state_dir, 0o700)


def user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def make_users(hub: Hub) -> None:
    wanted = [c.grader for c in hub.courses] + (hub.users() if hub.create_users else [])
    for name in dict.fromkeys(wanted):
        if not user_exists(name):
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True)
            print(f"user {name}: created")
    missing = [name for name in hub.users() if not user_exists(name)]
    if missing:
        raise CoursesError(f"no system user {', '.join(missing)}: create them (useradd) or set create_users = true")


def make_course(hub: Hub) -> None:
    for course in hub.courses:
        owner = pwd.getpwnam(course.grader)
        course.home.mkdir(exist_ok=True)
        os.chown(course.home, owner.pw_uid, owner.pw_gid)
        os.chmod(course.home, 0o700)
        if course.root.exists():
            print(f"course {course.id}: {course.root} exists, left as it is")
            continue
        shutil.copytree(KIT, course.root, ignore=_NOT_COPIED, symlinks=False)
        with open(course.root / "nbgrader_config.py", "a", encoding="utf-8") as config:
            config.write(COURSE_HUB_SETTINGS.format(course_id=course.id, exchange=str(hub.exchange)))
        subprocess.run(["chown", "-R", f"{owner.pw_uid}:{owner.pw_gid}", str(course.home)], check=True)
        print(f"course {course.id}: {course.root} (owner {course.grader})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("courses", help="the courses file (deploy/jupyterhub/courses.toml)")
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="the interpreter the shared environment is built from (readable by every user)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("setup_hub: run as root (it creates users, /srv/nbgrader/exchange and the shared environment)",
              file=sys.stderr)
        return 2
    try:
        hub = load_hub(args.courses)
        make_users(hub)
        build_env(hub, args.python)
        write_global_config(hub)
        make_exchange(hub)
        make_course(hub)
    except (CoursesError, subprocess.CalledProcessError, OSError) as err:
        print(f"setup_hub: {err}", file=sys.stderr)
        return 1
    print(f"ready: sudo {hub.hub_env / 'bin' / 'jupyterhub'} -f {Path(__file__).resolve().parent / 'jupyterhub_config.py'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
