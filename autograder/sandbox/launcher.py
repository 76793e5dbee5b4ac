"""How a worker process is started: the bubblewrap command line, or the explicit rlimits fallback.

Under bubblewrap the worker sees a read-only system and Python install, its own copy of the
submission at /submission (read-only too: the only writable place is a tmpfs /tmp, size-capped
where bwrap supports --size, so a submission cannot fill the grader's disk), the worker's files at
/opt/sandbox, and nothing of the project: no solutions/, no autograder/, no tests. It has no
network, its own pid namespace (all of it dies with the sandbox), and runs unprivileged so
RLIMIT_NPROC applies and it cannot change the files it only reads. Started by root, each sandbox
runs as a host uid of its own (see uids.py); otherwise as 65534 inside its own user namespace.

Isolation fails closed: without a working bubblewrap nothing is graded unless the caller asks for
"rlimits" explicitly. The rlimits fallback shares the grader's filesystem and network, so it runs
only where it can still keep the project private: the grader is root, the worker switches to an
unprivileged uid of its own that can run this Python, runs from a private copy of the worker's
files, and the project folder (solutions/, the hidden tests) is closed to other users. Anywhere
else `resolve_isolation("rlimits")` refuses and says why.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

from . import confinement
from .confinement import INSTALL_HINT, ISOLATION_ENV_VAR, SandboxUnavailable  # noqa: F401 - their old home
from .limits import Limits
from .lockdown import Lockdown, userns_filter_problem
from .workdir import hand_over

# "nobody": the uid inside a user namespace, and the one the fallback's reachability probe uses.
SANDBOX_UID = SANDBOX_GID = 65534
INSIDE_WORKDIR = "/submission"
SCRATCH_WORKDIR = "/tmp/work"            # the worker's cwd: links to the submission
INSIDE_WORKER_DIR = "/opt/sandbox"
WORKER_FILES = ("worker.py", "lockdown.py", "codec.py", "nbrunner.py", "warm_notebook.py")   # all the sandbox sees of autograder/
_HERE = Path(__file__).resolve().parent
PROJECT_ROOT = _HERE.parents[1]
# /etc files the dynamic linker, the C library, Python's startup and fontconfig (matplotlib) consult.
_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives",
              "nsswitch.conf", "passwd", "group", "fonts")
_SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_NAMESPACES = ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
               "--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent", "--new-session")

NOT_ISOLATED_WARNING = ("WARNING: sandbox without bubblewrap (isolation 'rlimits', asked explicitly): "
                        "student code shares every world-readable file (and the grader's network where "
                        "it cannot have one of its own); the project (solutions/, hidden tests) is closed to it.")
ISOLATIONS = confinement.CHOICES
# Linux capability bits (linux/capability.h) the root grader needs to hand the worker to its uid.
_DROP_CAPABILITIES = {"CAP_CHOWN": 0, "CAP_SETGID": 6, "CAP_SETUID": 7}


@dataclass(frozen=True)
class LaunchPlan:
    """Everything needed to start one worker, except the per-start config (fds, nonce)."""

    isolation: str               # the isolation's name, as results record it
    prefix: tuple[str, ...]      # bwrap and its options, or empty
    worker_path: str             # worker.py as the worker process sees it
    cwd: str                     # host directory to start in
    env: dict[str, str]
    drop_to: tuple[int, int] | None   # uid/gid the worker switches to after setting rlimits
    max_processes: int | None         # RLIMIT_NPROC headroom, None where it cannot apply (root)
    counted_uid: int | None           # RLIMIT_NPROC counts this uid's processes machine-wide
    worker_cwd: str = ""              # the worker's folder as it sees it (bubblewrap: set by bwrap)
    backend: "confinement.Isolation | None" = None   # what made it (launch_plan always sets it)
    cpus: tuple[int, ...] | None = None         # the CPUs the worker pins itself to (placement.py)
    scratch: dict | None = None                 # private scratch folders (Lockdown.scratch)
    new_network: bool = False                   # the worker makes its own network namespace

    def argv(self, config_fd: str, info_fd: int | None = None) -> list[str]:
        """The command line; the worker reads its config from the pipe `config_fd` (never argv:
        student code can read its command line); `info_fd` asks bubblewrap to report its pid 1
        there (JSON)."""
        return self.wrap([sys.executable, "-s", "-B", self.worker_path, config_fd], info_fd)

    def wrap(self, command: list[str], info_fd: int | None = None) -> list[str]:
        """`command` run in the sandbox (after the bwrap prefix, if any)."""
        prefix = list(self.prefix)
        if info_fd is not None and prefix:
            prefix[1:1] = ["--info-fd", str(info_fd)]
        return [*prefix, *command]

    def lockdown(self, limits: Limits) -> Lockdown:
        """What a worker of this plan applies to itself before any student code runs."""
        return Lockdown(memory_bytes=limits.memory_bytes, cpu_seconds=int(limits.cpu_seconds),
                        file_bytes=limits.file_bytes, nproc=self.nproc_limit(), drop_to=self.drop_to,
                        # bubblewrap ends the sandbox with the grader (--die-with-parent); the
                        # fallback's worker asks the kernel itself.
                        parent_pid=None if self.backend.dies_with_grader else os.getpid(),
                        cpus=self.cpus, scratch=self.scratch, own_network=self.new_network)

    def nproc_limit(self) -> int | None:
        """RLIMIT_NPROC for a worker starting now: `max_processes` beyond what the counted uid
        already runs (in a user namespace the count is per sandbox and starts at zero)."""
        if self.max_processes is None:
            return None
        already = processes_of(self.counted_uid) if self.counted_uid is not None else 0
        return already + self.max_processes


def resolve_isolation(requested: str = confinement.DEFAULT.name) -> str:
    """The name of the isolation `requested` gets here (confinement.choose: ValueError for an
    unknown name, SandboxUnavailable, with one line saying why and what to do, where it cannot
    work). Both machine probes run once per process."""
    return confinement.choose(requested).name


def isolation_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The isolation the nbgrader path asks for (confinement.from_env), by name."""
    return confinement.from_env(environ).name


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
                f"bubblewrap, or use a Python install every user can read (e.g. a virtualenv "
                f"under /opt) outside the project")
    if _closed_ancestor(PROJECT_ROOT / "solutions") is None:
        return (f"the project {PROJECT_ROOT} is readable by other users, so student code could "
                f"read solutions/ and the hidden tests; close it (chmod 700 {PROJECT_ROOT}, with "
                f"the Python install outside it) or install bubblewrap")
    return None


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
    try:
        probe = subprocess.run([sys.executable, "-S", "-B", "-c", code], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=30, env=_base_env("/tmp"))
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the probe could not start: {exc}"
    if probe.returncode != 0:
        return " ".join(probe.stderr.decode("utf-8", "replace").split())[-300:] or f"exit {probe.returncode}"
    return None


def launch_plan(isolation: "str | confinement.Isolation", workdir: Path, private_dir: Path, limits: Limits, *,
                uid: int = SANDBOX_UID, env: Mapping[str, str] | None = None,
                cpus: tuple[int, ...] | None = None) -> LaunchPlan:
    """The plan for a worker in `workdir` (the submission copy) with `private_dir` (a host
    directory of this sandbox only, for HOME/TMPDIR and the worker's files in the fallback).

    A root grader's worker switches to host uid (and gid) `uid`, which should be this sandbox's
    own (`uids.claim_uid()`). `env` adds variables the caller's code in the sandbox reads (e.g.
    the notebook's check() helper); it cannot replace the base environment. The fallback
    refuses (SandboxUnavailable) where `rlimits_problem()` says it cannot keep the project
    private; otherwise `private_dir` is handed over to `uid` and closed to every other uid.
    `cpus` (placement.claim) are the only CPUs the worker and all it starts may run on."""
    plan = confinement.asked(isolation).plan(workdir, private_dir, limits, uid=uid, env=_checked_env(env or {}))
    return replace(plan, cpus=tuple(cpus)) if cpus else plan


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
    # Unlike under bubblewrap the copy stays writable (the worker's cwd is on the host disk,
    # only RLIMIT_FSIZE caps each file).
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
    )


# The host folders every uid may write to; the uid fallback's worker covers them with a private
# tmpfs of its own where the platform allows a mount namespace (lockdown.py), and the grader
# removes what its uid left in them in any case (leftovers.py).
SHARED_SCRATCH = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
PRIVATE_SCRATCH = True   # tests switch it off to stand for a platform without mount namespaces


def _private_scratch(private_dir: Path, limits: Limits) -> dict:
    """Lockdown.scratch for a fallback worker: the shared folders, each a tmpfs of
    `limits.file_bytes`, with the sandbox's folder and the interpreter's install bound back where
    they lie inside one of them (a checkout with its .venv in /tmp)."""
    covered = [Path(f) for f in SHARED_SCRATCH]
    needed = {Path(os.path.realpath(private_dir))} | {Path(os.path.realpath(p)) for p in
                                                      (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    needed.add(Path(sys.executable).resolve().parent.parent)
    keep = sorted({str(p) for p in needed if any(f in p.parents for f in covered)})
    return {"folders": list(SHARED_SCRATCH), "keep": keep, "bytes": limits.file_bytes}


def _private_worker_copy(private_dir: Path) -> Path:
    """The worker's files copied into the sandbox's private folder, owned by root and read-only
    to the worker: it never needs to read anything inside the (closed) project."""
    target = private_dir / "worker"
    target.mkdir(mode=0o755)
    for name in WORKER_FILES:
        shutil.copyfile(_HERE / name, target / name)
        os.chmod(target / name, 0o644)
    return target


def _checked_env(env: Mapping[str, str]) -> dict[str, str]:
    base = _base_env("/tmp")
    for name, value in env.items():
        if not isinstance(name, str) or not name or "=" in name or not isinstance(value, str):
            raise ValueError(f"sandbox environment entries must be NAME=str, got {name!r}={value!r}")
        if name in base or name.startswith("CS349E_SANDBOX"):
            raise ValueError(f"sandbox environment variable {name} is set by the launcher")
    return dict(env)


@functools.cache
def warn_not_isolated(who_runs_it: str, own_network: bool = False) -> None:
    """Printed once per process: the lowered isolation must never go unnoticed."""
    bar = "!" * 78
    network = ("It has a network namespace of its own." if own_network else
               f"It shares the grader's network: no network namespace here ({network_namespace_problem()}).")
    print(f"{bar}\n{NOT_ISOLATED_WARNING}\n{who_runs_it} {network}\n{bar}", file=sys.stderr, flush=True)


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


def _base_env(home: str) -> dict[str, str]:
    """The worker's whole environment: nothing inherited from the grader."""
    from .plotting import sandbox_env   # (imported here: see plotting.py)
    venv_bin = str(Path(sys.prefix) / "bin")
    return {
        "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home if home != "/tmp" else "/tmp",
        "MPLCONFIGDIR": f"{home}/matplotlib",
        "MPLBACKEND": "Agg",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",       # output printed just before a crash is not lost
        "PYTHONIOENCODING": "utf-8",
        "PYTHONNOUSERSITE": "1",
        "OPENBLAS_NUM_THREADS": "1",   # one thread: threads count against RLIMIT_NPROC/AS
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        **sandbox_env(),
    }


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


def processes_of(uid: int) -> int:
    """How many processes `uid` runs now (RLIMIT_NPROC counts them all)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count
