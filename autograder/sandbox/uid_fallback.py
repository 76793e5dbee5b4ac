"""The explicit rlimits fallback: a worker that is a plain child of the root grader and switches
to an unprivileged uid of the sandbox's own, and the probes that decide whether it may run here.

The fallback shares the grader's filesystem and network, so it runs only where it can still keep
the project private: the grader is root, the worker switches to an unprivileged uid of its own
that can run this Python, runs from a private copy of the worker's files, and the project folder
(solutions/, the hidden tests) is closed to other users. Anywhere else `rlimits_problem()` says
why not, and the grader refuses.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path

from . import disk_budget, platform_secrets
from .leftovers import SHARED_SCRATCH, world_writable_folders
from .limits import Limits
from .lockdown import userns_filter_problem
from .outcomes import SandboxUnavailable
from .workdir import hand_over
from .worker_plan import (_HERE, NOT_ISOLATED_WARNING, PROJECT_ROOT, SANDBOX_GID, SANDBOX_UID, WORKER_FILES,
                          LaunchPlan, _base_env)

# Linux capability bits (linux/capability.h) the root grader needs to hand the worker to its uid.
_DROP_CAPABILITIES = {"CAP_CHOWN": 0, "CAP_SETGID": 6, "CAP_SETUID": 7}


@functools.cache
def rlimits_problem() -> str | None:
    """Why the rlimits fallback cannot keep solutions/ and the hidden tests away from student
    code on this machine, with what to do, or None where it can.

    Without bubblewrap only file permissions protect the project: the worker must run as an
    unprivileged uid of its own (the grader must be root and that uid must reach this Python)
    and the project folder must be closed to other users."""
    euid = os.geteuid()
    if euid != 0:
        return (f"the grader runs as uid {euid}, not root, so student code would run as your uid "
                f"and could read solutions/ and the hidden tests; install bubblewrap, or grade as "
                f"root with the project closed to other users")
    if userns_filter_problem() is not None:
        return userns_filter_problem()
    problem = sandbox_uid_problem()
    if problem is not None:
        return (f"student code cannot run as an unprivileged uid here because {problem}; install "
                f"bubblewrap, or {_readable_python_hint()}")
    if _closed_ancestor(PROJECT_ROOT / "solutions") is None:
        return (f"the project {PROJECT_ROOT} is readable by other users, so student code could "
                f"read solutions/ and the hidden tests; close it (chmod 700 {PROJECT_ROOT}, with "
                f"the Python install outside it) or install bubblewrap")
    return _platform_secret_problem()


def _platform_secret_problem() -> str | None:
    """A secret the container platform mounts for the grader (a Kubernetes service account
    token, a Docker secret) that the sandbox's uid could read, and that no mount of the worker's
    covers: `/run` is covered where the worker can make a mount namespace, nothing elsewhere."""
    readable = platform_secrets.readable_by_others()
    covered = bool(readable) and PRIVATE_SCRATCH and mount_namespace_problem() is None
    for path in readable:
        if covered and any(Path(folder) in path.parents for folder in HIDDEN_HOST_FOLDERS):
            continue
        where = ("the worker cannot make a mount namespace here to cover /run "
                 f"({mount_namespace_problem() or 'switched off'})" if not covered else
                 "it lies where no mount of the worker's covers it")
        return (f"{path}, a secret the container platform mounts for the grader (a Kubernetes service "
                f"account token, a Docker secret), is readable by other users, and {where}: student "
                f"code could read it and act as the grader; mount it readable by root alone "
                f"(Kubernetes: automountServiceAccountToken: false, or the volume's defaultMode: 0400; "
                f"Compose: the secret's mode: 0400) or install bubblewrap")
    return None


def _probe(code: str) -> str | None:
    """Why one start of `code` under this interpreter (as the worker starts) failed, or None."""
    try:
        probe = subprocess.run([sys.executable, "-S", "-B", "-c", code], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=30, env=_base_env("/tmp"))
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the probe could not start: {exc}"
    if probe.returncode != 0:
        return " ".join(probe.stderr.decode("utf-8", "replace").split())[-300:] or f"exit {probe.returncode}"
    return None


@functools.cache
def mount_namespace_problem() -> str | None:
    """Why the fallback's worker cannot make a mount namespace here (its private scratch, /run
    covered), or None. Probed once per process by one real start that does what the worker does
    first (lockdown._private_scratch)."""
    if os.geteuid() != 0:
        return f"the grader runs as uid {os.geteuid()}, not root"
    code = ("import ctypes, os, sys; libc = ctypes.CDLL(None, use_errno=True); "
            "sys.exit(0 if libc.unshare(0x00020000) == 0 else os.strerror(ctypes.get_errno()))")
    return _probe(code)


@functools.cache
def network_namespace_problem() -> str | None:
    """Why the fallback's worker cannot have a network namespace of its own here, or None.

    Where this is None every fallback worker makes one before giving up root (lockdown.py) and
    ends if it cannot; elsewhere (not root, a container's default seccomp profile) student code
    shares this machine's network and the fallback says so. Probed once per process, by one
    real start that does what the worker does."""
    if os.geteuid() != 0:
        return f"the grader runs as uid {os.geteuid()}, not root"
    code = f"import sys; sys.path.insert(0, {str(_HERE)!r}); import lockdown; lockdown.own_network()"
    return _probe(code)


@functools.cache
def warn_not_isolated(who_runs_it: str, own_network: bool = False) -> None:
    """Printed once per process: the lowered isolation must never go unnoticed."""
    bar = "!" * 78
    network = ("It has a network namespace of its own." if own_network else
               f"It shares the grader's network: no network namespace here ({network_namespace_problem()}).")
    print(f"{bar}\n{NOT_ISOLATED_WARNING}\n{who_runs_it} {network}\n{bar}", file=sys.stderr, flush=True)


def _readable_python_hint() -> str:
    """What to do when uid 65534 cannot run this Python. A virtualenv keeps running the interpreter
    it was made from, so where that install itself is closed (pyenv under a 0700 /root) a new
    virtualenv made from it would not help."""
    base = Path(os.path.realpath(sys.base_prefix))
    if _unreachable(base) is not None:
        return (f"make the virtualenv from a Python every user can read: this one's install {base} "
                f"is closed to others, and a virtualenv made from it keeps using it (e.g. "
                f"`/usr/bin/python3 -m venv /opt/cs349e-venv`, outside the project)")
    return "use a virtualenv every user can read (e.g. under /opt) outside the project"


def fallback_plan(backend, workdir, private_dir, limits, *, uid, env) -> LaunchPlan:
    """confinement.UidFallback's plan: a plain child that switches to the sandbox's own uid."""
    from .uids import SHARED_UID
    problem = rlimits_problem() or _closed_ancestor(private_dir)
    if uid in (SHARED_UID, 0):
        # Its processes are found and ended by uid (reaper.py): the uid must be this sandbox's.
        problem = problem or f"no uid of its own for this sandbox (got {uid})"
    if problem is not None:
        raise SandboxUnavailable(backend.refusal(problem))
    home = private_dir / "home"
    home.mkdir(exist_ok=True)
    from .plotting import install_font_cache   # (imported here: see plotting.py)
    install_font_cache(home / "matplotlib")   # before hand_over: the worker's uid owns it
    warn_not_isolated("Student code runs as an unprivileged uid of its own.", backend.own_network)
    # The worker's only writable places: its submission copy and HOME, both in private_dir.
    # Unlike under bubblewrap the copy stays writable: on a tmpfs of the disk budget where the
    # worker can make a mount namespace, else on the host disk under the grader's watchdog
    # (disk_budget.py); RLIMIT_FSIZE caps each file.
    hand_over(private_dir, uid, uid)
    worker_dir = _private_worker_copy(private_dir)
    return LaunchPlan(
        isolation=backend.name,
        prefix=(),
        worker_path=str(worker_dir / "worker.py"),
        cwd=str(workdir),
        env={**_base_env(str(home)), **env},
        drop_to=(uid, uid),
        max_processes=limits.max_processes,   # RLIMIT_NPROC counts the uid machine-wide
        counted_uid=uid,
        backend=backend,
        scratch=_private_scratch(private_dir, limits) if PRIVATE_SCRATCH else None,
        new_network=backend.own_network,
        new_ipc=True,
    )


PRIVATE_SCRATCH = True   # tests switch it off to stand for a platform without mount namespaces
# Host folders covered with an empty tmpfs too, though no uid may write to them: the sockets of the
# host's services live there (the system bus, the journal behind /dev/log, nscd), many mode 0666,
# and a network namespace does not scope a socket reached through the filesystem. Covered first,
# so /run/lock below it is simply absent.
HIDDEN_HOST_FOLDERS = ("/run",)


def _private_scratch(private_dir: Path, limits: Limits) -> dict:
    """Lockdown.scratch for a fallback worker: /run and the shared folders, each a tmpfs of
    `limits.file_bytes`; the machine's other folders every uid may write into (Ubuntu's
    /var/crash, PHP's sessions), each an all but empty tmpfs (nothing a worker runs writes there,
    and on the host's disk nothing bounded what a student wrote while the sandbox ran); the
    sandbox's folder and the interpreter's install bound back where they lie inside one of them (a
    checkout with its .venv in /tmp), and the sandbox's folder on a tmpfs of its disk budget
    (disk_budget.py)."""
    folders = [*HIDDEN_HOST_FOLDERS, *SHARED_SCRATCH]
    needed = {Path(os.path.realpath(private_dir))} | {Path(os.path.realpath(p)) for p in
                                                      (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    needed.add(Path(sys.executable).resolve().parent.parent)
    # (not one inside what the worker needs: an empty folder there would break its start)
    others = [f for f in world_writable_folders()
              if not any(Path(f) == Path(c) or Path(c) in Path(f).parents for c in (*folders, *needed))]
    covered = [Path(f) for f in (*folders, *others)]
    keep = sorted({str(p) for p in needed if any(f in p.parents for f in covered)})
    return {"folders": folders, "others": others, "keep": keep, "bytes": limits.file_bytes, "hide_processes": True,
            "disk": disk_budget.tmpfs_spec(private_dir, limits)}   # its own folder too (private_disk.py)


def _private_worker_copy(private_dir: Path) -> Path:
    """The worker's files copied into the sandbox's private folder, owned by root and read-only
    to the worker: it never needs to read anything inside the (closed) project."""
    target = private_dir / "worker"
    target.mkdir(mode=0o755)
    for name in WORKER_FILES:
        shutil.copyfile(_HERE / name, target / name)
        os.chmod(target / name, 0o644)
    return target


@functools.cache
def sandbox_uid_problem() -> str | None:
    """Why a worker started by root here could not switch to an unprivileged uid and go on
    running, or None if it can. Probed with uid 65534: any uid without files or groups of its
    own (such as a sandbox's) is "others" to the install, like 65534.

    The rlimits fallback gives up root only when this is None. The worker imports the standard
    library, numpy and its own modules after the switch, so uid 65534 must reach all of them:
    /root is often mode 0700 with the interpreter (pyenv) below it. Checked once per process:
    the capabilities, then the permission bits on the way to those files, then one real start
    of this Python as uid 65534.
    """
    missing = _missing_capabilities()
    if missing:
        return f"the grader lacks {', '.join(missing)}"
    for path in _paths_the_worker_reads():
        problem = _unreachable(path)
        if problem is not None:
            return problem
    return _start_as_sandbox_uid()


def _missing_capabilities() -> list[str]:
    """The capabilities of `_DROP_CAPABILITIES` this process lacks (root in a container may)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            line = next(line for line in status if line.startswith("CapEff:"))
        effective = int(line.split()[1], 16)
    except (OSError, StopIteration, ValueError, IndexError):
        return ["readable capabilities (/proc/self/status)"]
    return [name for name, bit in _DROP_CAPABILITIES.items() if not effective >> bit & 1]


def _paths_the_worker_reads() -> list[Path]:
    """Directories the worker imports from after the switch (its own files are a private copy)."""
    install = sysconfig.get_paths()
    dirs = {sys.prefix, sys.base_prefix, install["stdlib"], install["platstdlib"],
            install["purelib"], install["platlib"]}
    dynload = Path(install["platstdlib"]) / "lib-dynload"   # the stdlib's C extensions
    if dynload.is_dir():
        dirs.add(str(dynload))
    return sorted({Path(os.path.realpath(d)) for d in dirs})


def _closed_ancestor(path: Path) -> str | None:
    """The first directory above `path` that others (uid 65534) cannot enter, as a reason."""
    for parent in reversed(Path(os.path.realpath(path)).parents):
        try:
            mode = parent.stat().st_mode
        except OSError as exc:
            return f"{parent} cannot be checked: {exc.strerror}"
        if not mode & stat.S_IXOTH:
            return f"{parent} is mode {stat.S_IMODE(mode):04o}: others cannot enter it"
    return None


def _unreachable(path: Path) -> str | None:
    """Why others cannot read `path` (a directory must also be enterable: Python lists the
    directories it imports from), or None."""
    problem = _closed_ancestor(path)
    if problem is not None:
        return problem
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"{path} cannot be checked: {exc.strerror}"
    wanted = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    if mode & wanted != wanted:
        return f"{path} is mode {stat.S_IMODE(mode):04o}: others cannot read it"
    return None


def _start_as_sandbox_uid() -> str | None:
    """Runs this Python as uid 65534 once, importing numpy the way the worker does."""
    try:
        probe = subprocess.run([sys.executable, "-s", "-B", "-c", "import numpy"], cwd="/",
                               env=_base_env("/tmp"), user=SANDBOX_UID, group=SANDBOX_GID,
                               extra_groups=[], stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{sys.executable} could not start as uid {SANDBOX_UID}: {exc}"
    if probe.returncode != 0:
        detail = probe.stderr.decode("utf-8", "replace").strip()[-300:]
        return f"{sys.executable} failed as uid {SANDBOX_UID} (exit {probe.returncode}): {detail}"
    return None
