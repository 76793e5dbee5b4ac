"""Runs an autograder bundle the way Gradescope does, on this machine.

Gradescope unpacks the zip into /autograder/source, copies run_autograder to
/autograder/run_autograder, puts the upload in /autograder/submission/ and reads
/autograder/results/results.json. Here a temporary folder with that layout is bound at
/autograder inside bubblewrap, beside the system folders (read-only) and this interpreter's
install — no checkout of the project — and run_autograder is pointed at this interpreter
through CS349E_PYTHON instead of the virtualenv setup.sh would build.

Modules of the instructor install (nbgrader and its Jupyter stack) are made unimportable for the
grader, as they are on Gradescope's image. `deny_bubblewrap` keeps only Docker's default
capabilities (no CAP_SYS_ADMIN), which is how a Docker container without privileges refuses the
grader's own bubblewrap while its root can still hand files and processes to another uid.
`reachable_python` models the interpreter setup.sh installs (/autograder/venv, readable by every
uid): the folders on the way to this interpreter (a 0700 /root here) are made enterable, as in
tests/rlimits_machine.py; otherwise they are closed to every uid but root's. `bwrap_06` puts
the stand-in for Ubuntu 22.04's bubblewrap 0.6.1 (tests/bwrap_standin.py) first on PATH.
"""

import json
import shutil
import stat
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

from bwrap_standin import write_bwrap_06
from rlimits_machine import PYTHON, interpreter_args, system_args

INSTRUCTOR_ONLY_MODULES = ("nbgrader", "nbconvert", "nbclient", "jupyter_client", "ipykernel", "jupyterlab", "ml_dtypes")
# The capabilities Docker leaves a container's root by default.
DOCKER_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID",
                       "SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE")
ENV_PREFIX = ("--setenv", "CS349E_PYTHON", PYTHON, "--setenv", "PYTHONPATH", "/autograder/.instructor_only")
# The container's whole environment otherwise: Docker's default, nothing of the host's.
CONTAINER_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root"}


@dataclass(frozen=True)
class ContainerRun:
    returncode: int
    log: str  # run_autograder's stdout + stderr (Gradescope's staff-only log)
    results: dict | None


def lay_out(root: Path, bundle: Path, submission: Path, student_id: str | None = None) -> Path:
    """A Gradescope /autograder folder at `root` with the bundle unpacked and `submission` uploaded
    by `student_id` (default: the submission folder's name), the sid of submission_metadata.json
    as Gradescope always writes it."""
    source = root / "source"
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(source)
        for info in zf.infolist():  # zipfile drops permission bits; Gradescope's unzip keeps them
            mode = info.external_attr >> 16
            if mode & 0o111:
                target = source / info.filename
                target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    shutil.copy2(source / "run_autograder", root / "run_autograder")
    shutil.copytree(submission, root / "submission")
    student_id = submission.name if student_id is None else student_id
    if student_id:
        users = [{"sid": student_id, "email": f"{student_id}@example.edu", "name": student_id}]
        (root / "submission_metadata.json").write_text(json.dumps({"users": users}), encoding="utf-8")
    (root / "results").mkdir()
    blockers = root / ".instructor_only"
    blockers.mkdir()
    for name in INSTRUCTOR_ONLY_MODULES:
        (blockers / f"{name}.py").write_text(f"raise ImportError('{name} is not installed on Gradescope')\n")
    return root


def _interpreter_binds(reachable_python: bool) -> list[str]:
    """The interpreter's install at its own path; the folders on the way are closed to every uid
    but root's (as a pyenv under a 0700 /root is) unless `reachable_python`."""
    return interpreter_args(open_interpreter=reachable_python)


def _docker_capabilities() -> list[str]:
    args = ["--cap-drop", "ALL"]
    for name in DOCKER_CAPABILITIES:
        args += ["--cap-add", f"CAP_{name}"]
    return args


def run_autograder(root: Path, *, deny_bubblewrap: bool = False, reachable_python: bool = False,
                   bwrap_06: bool = False, timeout: float = 300) -> ContainerRun:
    path = []
    if bwrap_06:
        write_bwrap_06(root / ".bwrap-0.6")
        path = ["--setenv", "PATH", f"/autograder/.bwrap-0.6:{CONTAINER_ENV['PATH']}"]
    cmd = [shutil.which("bwrap"), *system_args(), "--bind", str(root), "/autograder",
           "--dev-bind", "/dev", "/dev", "--bind", "/proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp",
           *_interpreter_binds(reachable_python),
           *(_docker_capabilities() if deny_bubblewrap else []), *ENV_PREFIX, *path,
           "--chdir", "/autograder", "--", "/autograder/run_autograder"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env=CONTAINER_ENV)
    results_file = root / "results" / "results.json"
    results = json.loads(results_file.read_text(encoding="utf-8")) if results_file.exists() else None
    return ContainerRun(done.returncode, done.stdout + done.stderr, results)
