"""A grader without a cgroup per sandbox: how it gets one (a delegated systemd user scope it can
start itself in, on cgroup v2) and, where it cannot, one line saying what it lacks and how to
get it on this machine.
"""

from __future__ import annotations

import functools
import os

from . import confinement
from .cgroups import _mounts


SCOPE_ENV = "CS349E_DELEGATED_SCOPE"   # set once the grader runs in the scope below (no second try)


def delegated_scope_argv(command: list[str]) -> list[str] | None:
    """`command` run in a systemd user scope whose cgroup the instructor owns (Delegate=yes), for a
    non-root grader on cgroup v2 that has no group of its own to write; None where the grader has
    one already, or no such scope can be made here (no systemd user manager, cgroup v1)."""
    if os.geteuid() == 0 or os.environ.get(SCOPE_ENV) or confinement.quotas().per_sandbox:
        return None
    if not _cgroup2_mounted():
        return None
    scope, _ = _user_scope()
    return [*scope, *command] if scope else None


_SCOPE = ("--user", "--scope", "--quiet", "--collect", "-p", "Delegate=yes")


@functools.cache
def _user_scope() -> tuple[list[str] | None, str | None]:
    """systemd-run's command line for a delegated user scope and None, or None and why there is none."""
    import shutil
    import subprocess
    systemd_run = shutil.which("systemd-run")
    if systemd_run is None:
        return None, "systemd-run is not installed"
    scope = [systemd_run, *_SCOPE]
    try:
        probe = subprocess.run([*scope, "true"], stdin=subprocess.DEVNULL, capture_output=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"`systemd-run --user` did not answer: {exc}"
    if probe.returncode != 0:
        said = " ".join(probe.stderr.decode("utf-8", "replace").split())[:200] or f"exit {probe.returncode}"
        return None, f"`systemd-run --user` failed: {said}"
    return scope, None


def _user_name() -> str:
    import pwd
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def _cgroup2_mounted() -> bool:
    try:
        return any(fstype == "cgroup2" for _, _, fstype, _ in _mounts())
    except OSError:
        return False


def missing_quotas() -> str | None:
    """For a grader without a cgroup per sandbox: what it lacks, why, and how to get it on this
    machine (one line for the console); None where sandboxes get a cgroup each."""
    quota = confinement.quotas()
    if quota.per_sandbox:
        return None
    lost = (f"no cgroup per sandbox ({quota.problem}): memory is capped per process, not for the whole "
            f"sandbox; its CPU share is not held; CPU time is counted per process, not for its process tree")
    user = _user_name()
    if os.geteuid() == 0:
        how = ("as root the grader needs a writable cgroup hierarchy: run it on the host, or in a container "
               "given a writable /sys/fs/cgroup")
    elif not _cgroup2_mounted():
        how = ("cgroup v1 hands no group to a non-root user: grade as root, or on a machine with cgroup v2")
    else:
        scope, why = _user_scope()
        if scope is not None:
            how = "grade in a delegated scope: systemd-run --user --scope -p Delegate=yes .venv/bin/python -m autograder …"
        else:
            how = (f"there is no systemd user manager here ({why}): ask root once for `loginctl enable-linger "
                   f"{user}`, log in again and grade in `systemd-run --user --scope -p Delegate=yes …`, or for a "
                   f"cgroup v2 subtree chowned to {user} (docs/grading.md, \"Non-root without a systemd user manager\")")
    return f"quotas: rlimits only, {lost}; to get them back: {how}; every result records `rlimits`"
