"""The bubblewrap side of launching a worker: what the installed bwrap accepts, whether it works
here (`bubblewrap_problem`, probed once per process), and the command line a worker starts under.

Under bubblewrap the worker sees a read-only system and Python install, its own copy of the
submission at /submission (read-only too: the only writable place is a tmpfs /tmp, size-capped
where bwrap supports --size, so a submission cannot fill the grader's disk), the worker's files at
/opt/sandbox, and nothing of the project: no solutions/, no autograder/, no tests. It has no
network, its own pid namespace (all of it dies with the sandbox), and runs unprivileged so
RLIMIT_NPROC applies and it cannot change the files it only reads. Started by root, each sandbox
runs as a host uid of its own (see uids.py); otherwise as 65534 inside its own user namespace.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .limits import Limits
from .lockdown import userns_filter_problem
from .outcomes import SandboxUnavailable
from .worker_plan import (_HERE, INSIDE_WORKDIR, INSIDE_WORKER_DIR, PROJECT_ROOT, SANDBOX_GID, SANDBOX_UID,
                          SCRATCH_WORKDIR, WORKER_FILES, LaunchPlan, _base_env)

# /etc files the dynamic linker, the C library, Python's startup and fontconfig (matplotlib) consult.
_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives",
              "nsswitch.conf", "passwd", "group", "fonts")
_SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_NAMESPACES = ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
               "--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent", "--new-session")


@dataclass(frozen=True)
class BwrapFeatures:
    """What the installed bwrap accepts (0.7+: --perms and --size before --tmpfs; 0.5+: --chmod)."""

    path: str
    version: str
    tmpfs_options: bool   # --perms/--size apply to --tmpfs (a size-capped /tmp in one step)
    chmod: bool           # --chmod MODE PATH (how 0.5/0.6 open the tmpfs /tmp to every uid)
    disable_userns: bool = False   # --disable-userns (0.8+; with --unshare-user only)


@functools.cache
def bwrap_features() -> BwrapFeatures | None:
    """Probed once per process from `bwrap --version` and `bwrap --help`; None without bwrap."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10,
                                 stdin=subprocess.DEVNULL).stdout.strip()
        usage = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10,
                               stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return BwrapFeatures(path, "unknown", tmpfs_options=False, chmod=False)
    return BwrapFeatures(path, version or "unknown", tmpfs_options="--size" in usage,
                         chmod="--chmod" in usage, disable_userns="--disable-userns" in usage)


@functools.cache
def bubblewrap_problem() -> str | None:
    """Why bubblewrap cannot run the worker here, or None if it can.

    Probed once per process: the machine does not change between students (tests that fake
    it call `bubblewrap_problem.cache_clear()` and `bwrap_features.cache_clear()`)."""
    features = bwrap_features()
    if features is None:
        return "bwrap is not installed"
    if userns_filter_problem() is not None:
        return userns_filter_problem()
    if not (features.tmpfs_options or features.chmod):
        return f"{features.version} is too old (0.5 or newer is needed)"
    try:
        prefix = _bwrap_prefix(workdir=None, limits=Limits())
    except SandboxUnavailable as exc:
        return str(exc)
    try:
        probe = subprocess.run([*prefix, sys.executable, "-S", "-c", ""], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=10, env=_base_env("/tmp"))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not start: {exc}"
    if probe.returncode != 0:
        detail = " ".join(probe.stderr.decode("utf-8", "replace").split())[:300]
        return f"bwrap failed on this machine (exit {probe.returncode}): {detail}"
    return None


def bubblewrap_plan(backend, workdir, private_dir, limits, *, uid, env) -> LaunchPlan:
    """confinement.Bubblewrap's plan: the worker starts inside bwrap."""
    as_root = os.geteuid() == 0
    return LaunchPlan(
        isolation=backend.name,
        prefix=tuple(_bwrap_prefix(workdir, limits)),
        worker_path=f"{INSIDE_WORKER_DIR}/worker.py",
        cwd=str(workdir),
        env={**_base_env("/tmp"), **env},
        drop_to=(uid, uid) if as_root else None,
        # As root the worker becomes host uid `uid`, whose processes are counted machine-wide
        # (only this sandbox's when the uid is its own); in a user namespace the count is per
        # sandbox.
        max_processes=limits.max_processes,
        counted_uid=uid if as_root else None,
        worker_cwd=SCRATCH_WORKDIR,
        backend=backend,
    )


def _bwrap_prefix(workdir: Path | None, limits: Limits) -> list[str]:
    features = bwrap_features()
    if features is None:
        raise SandboxUnavailable("bwrap is not installed")
    binds = _readonly_binds()
    args = [features.path, *_NAMESPACES]
    if os.geteuid() == 0:
        # Privileged bubblewrap, no user namespace: the worker starts as root holding only these
        # capabilities, empties its bounding set (CAP_SETPCAP) and switches to its sandbox's uid
        # itself, after setting its rlimits (lockdown.py).
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    else:
        args += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID)]
        # No user namespace inside this one (the worker's seccomp filter refuses them too).
        args += ["--disable-userns"] if features.disable_userns else []
    # Fresh /proc, /dev and /tmp first, so binds that live under /tmp on the host (a checkout
    # in /tmp with its .venv) are mounted on top of the new /tmp instead of hidden by it.
    args += ["--proc", "/proc", "--dev", "/dev", *_scratch_tmpfs("/tmp", features, limits),
             *_scratch_tmpfs("/dev/shm", features, limits)]
    from .plotting import font_cache_binds   # (imported here: see plotting.py)
    args += font_cache_binds("/tmp/matplotlib")   # the MPLCONFIGDIR of _base_env("/tmp")
    for name in _SYSTEM_DIRS:
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    destinations = ([dst for _, dst in binds] + [f"{INSIDE_WORKER_DIR}/{n}" for n in WORKER_FILES]
                    + [INSIDE_WORKDIR])
    for directory in _parent_dirs(destinations, already=[dst for _, dst in binds]):
        args += ["--perms", "0755", "--dir", directory]  # bwrap would make them 0700
    for src, dst in binds:
        args += ["--ro-bind", src, dst]
    for name in WORKER_FILES:
        args += ["--ro-bind", str(_HERE / name), f"{INSIDE_WORKER_DIR}/{name}"]
    if workdir is not None:
        # The copy is read-only (files written there would land on the host disk). The worker runs
        # in a scratch folder on the size-capped tmpfs /tmp that links to every submitted file:
        # imports and reads see the submission, a notebook's plt.savefig("x.png") still works,
        # and nothing the student writes can change a submitted file or outgrow the tmpfs.
        args += ["--ro-bind", str(workdir), INSIDE_WORKDIR, "--perms", "0777", "--dir", SCRATCH_WORKDIR]
        for entry in sorted(workdir.iterdir()):
            args += ["--symlink", f"{INSIDE_WORKDIR}/{entry.name}", f"{SCRATCH_WORKDIR}/{entry.name}"]
        args += ["--chdir", SCRATCH_WORKDIR]
    return args


def _scratch_tmpfs(path: str, features: BwrapFeatures, limits: Limits) -> list[str]:
    """A tmpfs every uid may write to (mode 1777).

    bwrap 0.7+ caps its size at `limits.file_bytes`. 0.5/0.6 (Ubuntu 22.04) reject --perms and
    --size before --tmpfs, so there the tmpfs is made with the kernel's default size (half the
    RAM: memory, never the grader's disk) and opened with --chmod; RLIMIT_FSIZE still caps every
    file the worker writes."""
    if features.tmpfs_options:
        return ["--perms", "1777", "--size", str(limits.file_bytes), "--tmpfs", path]
    return ["--tmpfs", path, "--chmod", "1777", path]


def visible_host_paths() -> list[Path]:
    """The host folders and files every sandbox sees, read-only: the system folders, /usr, a few
    /etc files and the Python install (a secret kept in any of them is student code's to read)."""
    system = [Path("/") / name for name in _SYSTEM_DIRS]
    return [p for p in system if p.is_dir() and not p.is_symlink()] + [Path(src) for src, _ in _readonly_binds()]


def _readonly_binds() -> list[tuple[str, str]]:
    """(host path, sandbox path) of /usr, /etc bits and the Python install, found from the
    running interpreter rather than hard-coded."""
    binds = [("/usr", "/usr")]
    for name in _ETC_FILES:
        path = Path("/etc") / name
        if path.exists():
            binds.append((str(path), str(path)))
    roots = set()
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        roots.add(Path(prefix))
    real = Path(sys.executable).resolve().parent.parent   # the interpreter behind a venv symlink
    roots.add(real)
    for root in sorted(roots, key=lambda p: len(p.parts)):
        if any(root == kept or kept in root.parents for kept in (Path(d) for _, d in binds)):
            continue
        if root == Path("/") or root in PROJECT_ROOT.parents or root == PROJECT_ROOT:
            raise SandboxUnavailable(
                f"the Python install at {root} contains the project {PROJECT_ROOT}; the sandbox "
                f"would expose solutions/. Use a virtualenv outside the project or inside .venv/")
        binds.append((str(root), str(root)))
    return binds


def _parent_dirs(destinations: list[str], already: list[str]) -> list[str]:
    """Directories bwrap must create for `destinations`, parents first, skipping those inside
    an existing bind."""
    mounted = [Path(d) for d in already]
    needed: list[str] = []
    for dst in destinations:
        for parent in reversed(Path(dst).parents):
            if parent == Path("/") or any(parent == m or m in parent.parents for m in mounted):
                continue
            if str(parent) not in needed:
                needed.append(str(parent))
    return needed
