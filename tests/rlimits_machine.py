"""A machine, made on this one with bubblewrap, where the explicit rlimits fallback can keep the
project private, so the fallback's grading can be tested here at all.

The fallback refuses unless the grader is root, an unprivileged uid can run this Python, and the
project is closed to other users. Here the interpreter sits under a 0700 /root and the project in
a world-readable /work, so inside a private mount namespace (the production rules untouched):

- the closed ancestor of the interpreter (/root) is a fresh tmpfs (0755) holding only the
  interpreter's own tree, bound back read-only at the same path;
- the folder holding the project (and any other world-readable copy of it: sibling checkouts)
  is a fresh tmpfs holding only the virtualenv, bound back at the same path (a `.venv` inside
  the checkout too, alone);
- the project itself is mounted at /closed/<name> under a 0700 /closed, as `chmod 700` would
  leave it on a real machine.

Everything else of / is read-only; /tmp is fresh; `binds` (test folders) are mounted writable at
their own paths. Processes inside keep root's capabilities (the grader hands files and processes
to the sandbox's uid).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLOSED = Path("/closed")
PROJECT_INSIDE = CLOSED / ROOT.name
# This environment's interpreter by a path that does not go through the project (.venv may be a link).
PYTHON = str(Path(os.path.realpath(sys.prefix)) / "bin" / "python")


def _interpreter_roots() -> list[Path]:
    return sorted({Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                       Path(sys.executable).resolve().parent.parent)})


def _opened_ancestor(path: Path) -> tuple[Path, Path] | None:
    """(closed ancestor, its child on the way to `path`) for the first ancestor others cannot enter."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not parent.stat().st_mode & stat.S_IXOTH:
            child = path if path.parent == parent else next(p for p in path.parents if p.parent == parent)
            return parent, child
    return None


def hide_checkouts_args() -> list[str]:
    """bwrap options that replace the folder holding the checkout (sibling checkouts, other copies
    of solutions/) with a fresh tmpfs, then bind this interpreter's install back at its own path:
    beside the checkout (a shared virtualenv), or inside it (`.venv`, as CI makes it: bound alone,
    without the rest of the project)."""
    hidden = ROOT.parent if ROOT.parent != Path("/") else ROOT
    args = ["--tmpfs", str(hidden)]
    for root in _interpreter_roots():
        if ROOT == root or ROOT in root.parents:
            between = [d for d in reversed(root.parents) if hidden in d.parents]
            for folder in between:   # bwrap would make them 0700: the sandbox uid must pass
                args += ["--perms", "0755", "--dir", str(folder)]
            args += ["--ro-bind", str(root), str(root)]
        elif hidden in root.parents:
            top = hidden / root.relative_to(hidden).parts[0]
            args += ["--ro-bind", str(top), str(top)]
    return args


def open_interpreter_args() -> list[str]:
    """bwrap options that make the 0700 folder above the interpreter (here /root) a fresh tmpfs
    holding only the interpreter's own tree, so every uid can run it as setup.sh's would be."""
    opened: dict[Path, set[Path]] = {}
    for root in _interpreter_roots():
        found = _opened_ancestor(root)
        if found:
            opened.setdefault(found[0], set()).add(found[1])
    args = []
    for ancestor, children in sorted(opened.items()):
        args += ["--tmpfs", str(ancestor)]
        for child in sorted(children):
            args += ["--ro-bind", str(child), str(child)]
    return args


def machine_problem() -> str | None:
    """Why the machine cannot be made here, or None."""
    if os.geteuid() != 0:
        return "making it needs root"
    if shutil.which("bwrap") is None:
        return "making it needs bubblewrap"
    return None


def machine_argv(*command: str, binds: tuple[Path, ...] = ()) -> list[str]:
    """bwrap's command line that runs `command` inside the machine, in the project's folder."""
    args = [shutil.which("bwrap") or "bwrap", "--die-with-parent"]
    for entry in sorted(Path("/").iterdir()):
        if entry.name in ("proc", "dev", "tmp") or entry == CLOSED:
            continue
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry), str(entry)]
        elif entry.is_dir():
            args += ["--ro-bind", str(entry), str(entry)]
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    args += open_interpreter_args() + hide_checkouts_args()
    args += ["--perms", "0700", "--dir", str(CLOSED), "--bind", str(ROOT), str(PROJECT_INSIDE)]
    for folder in binds:
        args += ["--bind", str(folder), str(folder)]
    return [*args, "--chdir", str(PROJECT_INSIDE), "--", *command]


def run_in_machine(*command: str, binds: tuple[Path, ...] = (), timeout: float = 300,
                   env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    environ["PYTHONDONTWRITEBYTECODE"] = "1"
    environ.update(env or {})
    return subprocess.run(machine_argv(*command, binds=binds), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=environ)
