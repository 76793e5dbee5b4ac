"""A machine, made on this one with bubblewrap, where the grader runs as an unprivileged user, as
a non-root instructor's does: the system and this interpreter's install (the folders on the way
made enterable, as in tests/rlimits_machine.py), the project read-only at its own path, a fresh
/tmp; the command runs as uid/gid 65534 with no capabilities. The sandbox's own bubblewrap then
runs unprivileged, in a user namespace, and no cgroup is writable: quotas are rlimits."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from rlimits_machine import PYTHON, ROOT, interpreter_args, machine_problem, system_args

USER = 65534


def nonroot_problem() -> str | None:
    """Why the machine cannot be made here, or None."""
    problem = machine_problem()
    if problem is not None:
        return problem
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    if not all(os.stat(folder).st_mode & 0o005 == 0o005 for folder in [ROOT, *ROOT.parents]):
        return f"the project {ROOT} is not readable by other users"
    return None


def run_as_user(*command: str, timeout: float = 300) -> subprocess.CompletedProcess:
    parents = []   # made enterable (bwrap would make them 0700)
    for folder in reversed(ROOT.parents):
        if folder != Path("/"):
            parents += ["--perms", "0755", "--dir", str(folder)]
    args = [shutil.which("bwrap"), "--die-with-parent", *system_args(), "--bind", "/proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--tmpfs", "/tmp", *interpreter_args(), *parents, "--ro-bind", str(ROOT), str(ROOT),
            "--chdir", str(ROOT), "--",
            shutil.which("setpriv"), f"--reuid={USER}", f"--regid={USER}", "--clear-groups",
            "--inh-caps=-all", "--", *command]
    env = {"PATH": f"{Path(PYTHON).parent}:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env)
