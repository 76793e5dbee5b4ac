"""Set up one server for the courses of a TOML file, as root: `sudo python3 deploy/jupyterhub/setup_hub.py
deploy/jupyterhub/courses.toml` from the kit's folder (docs/jupyterhub.md). Safe to run again.

1. The shared environment (hub_env): a virtualenv of the system's python3 with the kit's
   `instructor` and `hub` extras, readable by every user; nbgrader's machine-wide settings in its
   etc/jupyter/nbgrader_config.py (the exchange, one folder per course, the hub's groups decide
   who may use which course). No kernel debugger in it (kernel_debugger.py).
2. The exchange folder, world-writable with the sticky bit (nbgrader's documented permissions).
3. Users: each course's grader user (and, with create_users = true, everyone listed); every
   listed person's home closed to other users (mode 0700).
4. Each course folder: a copy of the kit owned by the grader user in a home nobody else can enter
   (solutions/ and autograder/ stay closed to students), with the hub's settings appended to its
   nbgrader_config.py. An existing course folder is left as it is (it holds the gradebook).
5. Each course's students in its gradebook, with the names courses.toml gives (formgrader lists
   them by name), through nbgrader's own `nbgrader db student import` of the course's students.csv.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import pwd
import shutil
import stat
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hub_courses import CoursesError, Hub, load_hub  # noqa: E402
from kernel_debugger import remove_debugger  # noqa: E402
from shared_settings import global_nbgrader_config, settings_path  # noqa: E402

KIT = Path(__file__).resolve().parents[2]
# What a course folder does not need from the kit's folder: anywhere in it, caches and
# environments; at its top, the tests and a course's own data (nbgrader's folders, the gradebook).
# Only at the top: the kit keeps a `feedback` template among its own modules.
_NOT_COPIED_ANYWHERE = shutil.ignore_patterns(".git", ".venv", "venv", "__pycache__", "*.pyc", ".pytest_cache",
                                              ".hypothesis", "node_modules")
_NOT_COPIED_AT_TOP = {"tests", "benchmarks", "release", "submitted", "autograded", "feedback", "gradebook.db",
                      ".pinned_results", "released_solutions", "downloaded", "artifacts"}


def not_copied(folder: str, names: list[str]) -> set[str]:
    """shutil.copytree's `ignore`: the names in `folder` the course folder does not get."""
    ignored = set(_NOT_COPIED_ANYWHERE(folder, names))
    if Path(folder).resolve() == KIT:
        ignored |= _NOT_COPIED_AT_TOP & set(names)
    return ignored


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

STUDENTS_CSV = "students.csv"


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
    path = settings_path(hub)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(global_nbgrader_config(hub))
    _readable(path.parent)


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
    close_homes(hub)


def close_homes(hub: Hub) -> None:
    """Every person's home closed to every other user (mode 0700). A student works there: the
    fetched notebooks and feedback, and nbgrader's submission cache, whose secret names their
    feedback in the exchange. useradd makes homes 0755 where login.defs sets no HOME_MODE
    (Debian's default), and JupyterLab writes with umask 022: a classmate would read it all."""
    for name in hub.users():
        home = Path(pwd.getpwnam(name).pw_dir)
        mode = os.lstat(home).st_mode   # lstat: a home that is a link is not followed to its target
        if not stat.S_ISDIR(mode):
            raise CoursesError(f"home of {name}: {home} is not a folder")
        if mode & 0o077:
            os.chmod(home, stat.S_IMODE(mode) & 0o700)
            print(f"home of {name}: closed to other users (it was mode {stat.S_IMODE(mode):04o})")


def make_course(hub: Hub) -> None:
    for course in hub.courses:
        owner = pwd.getpwnam(course.grader)
        course.home.mkdir(exist_ok=True)
        os.chown(course.home, owner.pw_uid, owner.pw_gid)
        os.chmod(course.home, 0o700)
        if course.root.exists():
            print(f"course {course.id}: {course.root} exists, left as it is")
            continue
        shutil.copytree(KIT, course.root, ignore=not_copied, symlinks=False)
        with open(course.root / "nbgrader_config.py", "a", encoding="utf-8") as config:
            config.write(COURSE_HUB_SETTINGS.format(course_id=course.id, exchange=str(hub.exchange)))
        subprocess.run(["chown", "-R", f"{owner.pw_uid}:{owner.pw_gid}", str(course.home)], check=True)
        print(f"course {course.id}: {course.root} (owner {course.grader})")


def as_grader(hub: Hub, course, *command: str) -> None:
    """A command in the course folder as its grader user, from the shared environment."""
    env = {"PATH": f"{hub.hub_env / 'bin'}:/usr/bin:/bin", "HOME": str(course.home), "LANG": "C.UTF-8"}
    runuser = shutil.which("runuser") or "/usr/sbin/runuser"   # util-linux's, found before PATH changes
    subprocess.run([runuser, "-u", course.grader, "--", *command], cwd=course.root, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def add_students(hub: Hub) -> None:
    """The course's students in its gradebook with the names courses.toml gives (it is the roster:
    a student it names without one has no name in the gradebook either)."""
    for course in hub.courses:
        path = course.root / STUDENTS_CSV
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["id", "first_name", "last_name"])
            for student in course.students:
                writer.writerow([student, *course.names.get(student, ("", ""))])
        owner = pwd.getpwnam(course.grader)
        os.chown(path, owner.pw_uid, owner.pw_gid)
        # The hub need not run yet: its groups come from courses.toml (jupyterhub_config.py), so
        # nbgrader's JupyterHub plugin, which would add each student to the group through the hub's
        # API, is not used for the import.
        as_grader(hub, course, "nbgrader", "db", "student", "import", STUDENTS_CSV,
                  "--Authenticator.plugin_class=nbgrader.auth.NoAuthPlugin")
        print(f"course {course.id}: {len(course.students)} student(s) in the gradebook, "
              f"{len(course.names)} with a name")


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
        remove_debugger(hub)   # also from an environment an older kit built
        write_global_config(hub)
        make_exchange(hub)
        make_course(hub)
        add_students(hub)
    except (CoursesError, subprocess.CalledProcessError, OSError) as err:
        print(f"setup_hub: {err}", file=sys.stderr)
        return 1
    print(f"ready: sudo {hub.hub_env / 'bin' / 'jupyterhub'} -f {Path(__file__).resolve().parent / 'jupyterhub_config.py'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
