"""A machine, made on this one with bubblewrap, where the explicit rlimits fallback can keep the
project private, so the fallback's grading can be tested here at all.

The fallback refuses unless the grader is root, an unprivileged uid can run this Python, and the
project is closed to other users. Here the interpreter sits under a 0700 /root and the project in
a world-readable /work beside other checkouts, so inside a private mount namespace (the
production rules untouched) the machine holds only:

- the system (/usr, /etc, /opt, /var, /bin, /lib…), read-only; a fresh /tmp, /var/tmp,
  /dev/shm (every uid may write there, as on a server), /run, /proc and /dev;
- this interpreter's install at its own path, the folders on the way made enterable by every
  uid (as setup.sh's /autograder/venv is) — or, for `open_interpreter=False`, closed (0700) to
  every uid but root's, as a pyenv under /root is;
- the project at /closed/<name> under a 0700 /closed, as `chmod 700` leaves it on a real machine;
  no other checkout, no other copy of solutions/ (/work, /home and /root are not there);
- `binds` (test folders), writable at their own paths.

Processes inside keep root's capabilities (the grader hands files and processes to the
sandbox's uid).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLOSED = Path("/closed")
PROJECT_INSIDE = CLOSED / ROOT.name
# This environment's interpreter by a path that does not go through the project (.venv may be a
# link); a .venv that really lives inside the checkout is bound alone at its own path.
PYTHON = str(Path(os.path.realpath(sys.prefix)) / "bin" / "python")
SYSTEM = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "opt", "var", "run", "sys")


def _interpreter_roots() -> list[Path]:
    return sorted({Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                       Path(sys.executable).resolve().parent.parent)})


def system_args() -> list[str]:
    """The system folders of /, read-only (symlinks such as /bin -> usr/bin kept as links)."""
    args = []
    for name in SYSTEM:
        entry = Path("/") / name
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry), str(entry)]
        elif entry.is_dir():
            args += ["--ro-bind", str(entry), str(entry)]
    return args


def interpreter_args(open_interpreter: bool = True) -> list[str]:
    """This interpreter's install at its own path, unless the system folders already hold it
    (then there is nothing to close: `interpreter_can_be_closed()` says so)."""
    system = [Path("/") / name for name in SYSTEM]
    args, made = [], set()
    for root in _interpreter_roots():
        if any(root == s or s in root.parents for s in system):
            continue
        for folder in reversed(root.parents):
            if folder == Path("/") or folder in made:
                continue
            mode = 0o755 if open_interpreter else 0o700
            args += ["--perms", f"{mode:04o}", "--dir", str(folder)]
            made.add(folder)
        args += ["--ro-bind", str(root), str(root)]
    return args


def interpreter_can_be_closed() -> bool:
    return "--dir" in interpreter_args(open_interpreter=False)


def machine_problem() -> str | None:
    """Why the machine cannot be made here, or None."""
    if os.geteuid() != 0:
        return "making it needs root"
    if shutil.which("bwrap") is None:
        return "making it needs bubblewrap"
    return None


def machine_argv(*command: str, binds: tuple[Path, ...] = ()) -> list[str]:
    """bwrap's command line that runs `command` inside the machine, in the project's folder."""
    # A writable /run, as a server's tmpfs is (root's CPU claims live there: placement.py).
    args = [shutil.which("bwrap") or "bwrap", "--die-with-parent", *system_args(),
            "--perms", "0755", "--tmpfs", "/run", "--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777", "--tmpfs", "/dev/shm",
            "--perms", "1777", "--tmpfs", "/var/tmp", *interpreter_args(),
            "--perms", "0700", "--dir", str(CLOSED), "--bind", str(ROOT), str(PROJECT_INSIDE)]
    for folder in binds:
        args += ["--bind", str(folder), str(folder)]
    return [*args, "--chdir", str(PROJECT_INSIDE), "--", *command]


# The machine's whole environment: a fixed, minimal one, as a course server's would be (nothing
# of the host's, so a test passes or fails alike whoever runs it); `env` adds to it.
MACHINE_ENV = {"PATH": f"{Path(PYTHON).parent}:/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp",
               "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}


def run_in_machine(*command: str, binds: tuple[Path, ...] = (), timeout: float = 300,
                   env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environ = {**MACHINE_ENV, **(env or {})}
    return subprocess.run(machine_argv(*command, binds=binds), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=environ)
