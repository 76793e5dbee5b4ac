"""One confinement spec, applied by the worker to itself before any student code runs.

However the worker was started (by bubblewrap, forked from the fork server, or by the uid
fallback's plain start), it applies the same `Lockdown`, in this order:

0. the signal state of a fresh interpreter: nothing blocked, SIGINT raising KeyboardInterrupt,
   every other signal at its default (but SIGPIPE and SIGXFSZ, ignored as Python ignores them).
   A grader started as a script's background job inherits SIGINT ignored, and student code would
   behave differently depending on how the grader was started;
1. hard rlimits (address space, CPU, file size, no core files, processes);
   then, where the grader asks (the uid fallback, which has no bubblewrap to give it one) and the
   platform allows a mount namespace, private size-capped tmpfs over the host's shared scratch
   folders (/tmp, /var/tmp, /dev/shm, /run/lock), the sandbox's own folder bound back: nothing
   written there outlives the sandbox or fills the host's memory; its own folder (the copy and
   HOME) on an overlay over a tmpfs of its disk budget (private_disk.py); and a /proc listing only the
   processes of its own uid (hidepid=invisible, Linux 5.8+). Where no mount namespace can be
   made (a container's default profile), the grader removes what the uid left (leftovers.py);
   and, where the grader asks (the uid fallback, where the platform allows one: launcher.py
   probes it), a network namespace of its own with only its loopback up: no port of the host
   (its loopback services, another sandbox's listener) nor an abstract socket is reachable;
   asked for, it is required, and with a mount namespace a sysfs of its own (/sys/class/net then
   lists only its loopback, not the host's interfaces); and, likewise where asked (the uid fallback), an IPC namespace of
   its own where the platform allows one (its SysV segments bounded in all; with a mount namespace,
   /dev/mqueue shows its own queues): a SysV segment or POSIX queue a student makes is never
   in the host's tables (elsewhere the grader removes the uid's by owner and creator, leftovers.py);
2. no_new_privs: no setuid binary or file capability can ever raise privileges again;
3. an empty capability bounding set (and no ambient capabilities), while still privileged;
4. the switch to the sandbox's uid/gid with no supplementary groups, checked, and an empty
   inheritable set: nothing of root is left;
5. where the grader asks, SIGKILL when the grader dies (the uid fallback has no bubblewrap
   --die-with-parent);
6. where the grader placed the sandbox, its CPUs (placement.py): every process and thread the
   worker starts inherits them;
7. a session keyring of its own (keyctl JOIN_SESSION_KEYRING): a grader started from a login
   (pam_keyinit) holds the instructor's session keyring, Kerberos tickets and `user` keys, which
   a worker would otherwise inherit (where the platform refuses keyctl itself, no process here
   reaches a keyring through it, and the worker goes on);
8. a seccomp filter refusing new user namespaces (unshare/clone with CLONE_NEWUSER; clone3,
   whose flags a filter cannot read, answers ENOSYS so the C library uses clone); the keyring
   calls (keyctl, add_key, request_key: every uid's own keyrings outlive its processes, so a
   sandbox's uid would carry keys to the next student it is given to); io_uring (an SQPOLL ring's
   kernel thread runs on any CPU it names, outside the sandbox's affinity), memfd_create and memfd_secret (a
   memfd written but never mapped, a secret one mapped a little at a time, is memory neither
   RLIMIT_AS nor RLIMIT_MEMLOCK counts: where no cgroup holds the sandbox it was unbounded), userfaultfd,
   perf_event_open, bpf, fanotify (open to unprivileged users since Linux 5.13) and inotify (the
   marks and watches of both sit on the host's inodes, under every mount namespace: a watch on a
   file every sandbox reads read-only, the standard library, would tell one student when another
   student's code opens and reads it), and the pidfd calls (pidfd_open, pidfd_getfd,
   pidfd_send_signal: a pidfd of any host process answers PIDFD_GET_INFO with its pid, parent and
   uids, so under the uid fallback every host process was listed while its /proc showed only the
   sandbox's own; asyncio falls back to its thread watcher when pidfd_open is refused), and on
   x86 modify_ldt (segments of its own in the LDT: kernel code with a history of leaks and
   privilege escalations that only DOS and 16-bit emulators use): kernel
   attack surface the grader never needs (nothing the worker runs watches files), all EPERM; and
   sched_setaffinity, so nothing in the sandbox leaves its CPUs; sched_setscheduler,
   sched_setattr and setpriority (os.nice too), so the sandbox runs at the priority the grader
   gave it: lowering one's own needs no privilege, and at SCHED_IDLE or nice 19 any ordinary
   process on the sandbox's CPU kept honest code from running, which the grader must take for a
   starved machine ('machine overloaded', never graded; numpy, OpenBLAS and matplotlib set no
   priority); and socket() of any family but
   Unix, IPv4/6 and netlink (EAFNOSUPPORT): the network namespace confines those, not AF_VSOCK,
   which reaches the hypervisor and the host's VM sockets from any namespace, nor the rarely used
   families (AF_ALG, AF_TIPC, AF_RDS...) whose kernel code nothing here needs; and prctl
   PR_SCHED_CORE (a core scheduling cookie keeps an SMT sibling, a classmate's CPU, idle); and,
   where no cgroup holds the sandbox and its IPC namespace has no bound of ours (bubblewrap's,
   or none), shmget: a detached segment is memory no rlimit counts.

Any step that does not take effect ends the worker (fail closed), but for the two a platform
may not offer, as said in 1 and 7. The parent builds the spec
(`Lockdown.to_config`); `apply` runs in the worker, so this file uses the standard library only
and is one of the worker's files (worker_plan.WORKER_FILES).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import resource
import signal
import socket
import struct
import sys
from dataclasses import asdict, dataclass

# A package module in the grader, a top-level module beside this one in the worker.
if __package__:
    from . import private_disk
    from .seccomp_filter import ARCHES, filter_program
else:
    import private_disk
    from seccomp_filter import ARCHES, filter_program

_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_SET_SECCOMP, _PR_SET_NO_NEW_PRIVS = 1, 24, 22, 38
_PR_SET_DUMPABLE = 4
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_SECCOMP_MODE_FILTER = 2
_CLONE_NEWNS, _CLONE_NEWNET, _CLONE_NEWIPC = 0x00020000, 0x40000000, 0x08000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x1, 0x2, 0x4, 0x8, 0x1000, 0x4000, 1 << 18
_LAST_CAPABILITY = 63
# The machine's other world-writable folders: one page and a few entries, enough for the folders
# of a path bound back inside one (nothing the worker runs writes there)
_OTHER_OPEN_FOLDER = "mode=1777,size=4k,nr_inodes=64"
_QUEUE_FOLDER = "/dev/mqueue"   # POSIX message queues as files, where the host mounts them
_KEYCTL_JOIN_SESSION_KEYRING = 1
_MAX_LOCKED_BYTES = 1 << 20   # RLIMIT_MEMLOCK at most (a typical default is 8 MB; nothing here locks pages)
_MAX_OPEN_FILES = 4096        # RLIMIT_NOFILE at most


@dataclass(frozen=True)
class Lockdown:
    """What the worker applies to itself; sizes in bytes, times in seconds."""

    memory_bytes: int
    cpu_seconds: int
    file_bytes: int
    nproc: int | None                  # RLIMIT_NPROC, None where it cannot apply
    drop_to: tuple[int, int] | None    # uid, gid to switch to (started as root), else None
    parent_pid: int | None = None      # die with this process (uid fallback), else None
    block_userns: bool = True
    cpus: tuple[int, ...] | None = None   # the sandbox's CPUs (placement.py), None: anywhere
    # {"folders": [...], "keep": [...], "bytes": n, "disk": {...}}: private tmpfs over `folders` where a
    # mount namespace can be made, `keep` (folders inside them the worker needs) bound back, the
    # sandbox's own folder overlaid (private_disk.py); else None
    scratch: dict | None = None
    own_network: bool = False          # a network namespace of its own (the uid fallback's)
    own_ipc: bool = False              # an IPC namespace of its own where the platform allows one
    memory_group: bool = False         # a cgroup bounds the whole sandbox's memory, the kernel's too

    def to_config(self) -> dict:
        return asdict(self)


def userns_filter_problem() -> str | None:
    """Why the user-namespace filter cannot be built for this machine, or None."""
    if platform.machine() not in ARCHES:
        return (f"no seccomp filter for the {platform.machine()} architecture "
                f"(written for {', '.join(ARCHES)})")
    if sys.byteorder != "little":
        return "the seccomp filter reads syscall arguments as little-endian"
    return None


# -- in the worker ------------------------------------------------------------------------------
_libc = None


def apply(spec: dict) -> dict:
    """Confines this process as `spec` (Lockdown.to_config) says; exits if any step fails.
    Returns what the platform decided: {"private_scratch": whether the shared scratch folders
    were covered with tmpfs of its own, "own_network", "own_ipc": whether it has those namespaces
    of its own, "own_proc": whether its /proc lists only its own uid's processes, "private_disk":
    whether its own folder's writes land on a capped tmpfs}."""
    global _libc
    _libc = ctypes.CDLL(None, use_errno=True)
    try:
        _fresh_signal_state()
        _rlimits(spec)
        private_scratch, private_disk = _private_scratch(spec.get("scratch"))
        own_proc = private_scratch and bool(spec["scratch"].get("hide_processes")) and _own_proc()
        if spec.get("own_network"):
            own_network()
            if private_scratch:
                # sysfs lists the interfaces of the namespace that mounted it: the host's, with
                # their addresses and traffic counters, until the sandbox mounts its own
                _mount("sysfs", "/sys", "sysfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY)
        own_ipc, segments_bounded = _own_ipc(spec["file_bytes"]) if spec.get("own_ipc") else (False, False)
        if own_ipc and private_scratch and os.path.isdir(_QUEUE_FOLDER):
            # a queue made through the folder lands in the namespace of its mount: the host's,
            # where a classmate graded at once opened it, until the folder shows this one's own
            _mount("mqueue", _QUEUE_FOLDER, "mqueue", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _empty_bounding_set(spec.get("drop_to") is not None)
        _switch_ids(spec.get("drop_to"))
        if spec.get("drop_to"):
            # The switch made the worker non-dumpable: its open files closed to all but CAP_SYS_PTRACE,
            # which a container's root lacks, so the disk watchdog could not count the deleted files
            # it holds (open_files.py). Student code could make itself dumpable anyway (prctl).
            _prctl(_PR_SET_DUMPABLE, 1)
        if spec.get("parent_pid"):
            # After the switch: the kernel clears the parent-death signal when the uid changes.
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != spec["parent_pid"]:   # the grader died before the request took effect
                os._exit(1)
        if spec.get("cpus"):
            _pin(spec["cpus"])
        _fresh_session_keyring()
        if spec.get("block_userns", True):
            # a detached SysV segment is memory no rlimit counts: refused where nothing bounds them
            _install_filter(() if spec.get("memory_group") or segments_bounded else ("shmget",))
    except OSError as exc:
        sys.exit(f"sandbox worker: lockdown failed: {exc}")
    return {"private_scratch": private_scratch, "own_network": bool(spec.get("own_network")), "own_ipc": own_ipc,
            "own_proc": own_proc, "private_disk": private_disk}


def _fresh_signal_state() -> None:
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    for signum in signal.valid_signals():
        if signum in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):
            pass   # reserved by the C library (its real-time signals 32, 33)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)


def _private_scratch(scratch: dict | None) -> tuple[bool, bool]:
    """Private tmpfs over the shared scratch folders (needs CAP_SYS_ADMIN: before the switch), and
    over the sandbox's own folder (private_disk.py); whether each was covered."""
    if not scratch:
        return False, False
    if _libc.unshare(_CLONE_NEWNS) != 0:
        err = ctypes.get_errno()
        if err in (errno.EPERM, errno.EINVAL, errno.ENOSYS):
            return False, False   # no mount namespace: the grader removes what the uid leaves instead
        raise OSError(err, "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)   # nothing mounted here reaches the host
    cwd = os.getcwd()
    disk = private_disk.overlay(scratch.get("disk"))   # before the folder is bound back below /tmp
    kept = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)) for path in scratch["keep"]]
    for folder in scratch["folders"]:
        if os.path.isdir(folder) and not os.path.islink(folder):
            _mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, f"mode=1777,size={int(scratch['bytes'])}")
    for folder in scratch.get("others", ()):   # parents first: a folder inside one covered is gone
        if os.path.isdir(folder) and not os.path.islink(folder):
            _mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, _OTHER_OPEN_FOLDER)
    for path, fd in kept:
        os.makedirs(path, mode=0o755, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC)
        os.close(fd)
    os.chdir(cwd)   # through the folder bound back
    return True, disk


def _own_proc() -> bool:
    """A /proc that lists only the processes this uid may inspect (the uid fallback has no pid
    namespace: the host's command lines, a classmate's worker). hidepid=invisible is Linux 5.8's,
    where each proc mount has options of its own; an older kernel refuses the word (EINVAL) before
    anything changes, as does a container's masked /proc (EPERM): the host's /proc stays there.
    Whether this uid's own /proc was mounted."""
    try:
        _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "hidepid=invisible")
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EPERM):
            raise
        return False
    return True


def _own_ipc(segment_bytes: int) -> tuple[bool, bool]:
    """An IPC namespace of its own (needs CAP_SYS_ADMIN: before the switch), its SysV segments
    bounded to `segment_bytes` in all; (whether it was made, whether the bound was set). A detached segment's pages are in no
    process's address space, so RLIMIT_AS never counted them: where no cgroup holds the sandbox,
    a new namespace's default (no bound) let one call keep 2 GB after another until the machine
    ran out of memory."""
    if _libc.unshare(_CLONE_NEWIPC) == 0:
        pages = max(1, segment_bytes // os.sysconf("SC_PAGE_SIZE"))
        for name, value in (("shmmax", segment_bytes), ("shmall", pages)):
            try:
                with open(f"/proc/sys/kernel/{name}", "w", encoding="ascii") as setting:
                    setting.write(str(value))   # this namespace's own value
            except OSError as exc:
                # a read-only /proc/sys (a container given CAP_SYS_ADMIN): segments are refused
                # instead, unless a cgroup holds the sandbox; anything else ends the worker
                if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                    raise
                return True, False
        return True, True
    err = ctypes.get_errno()
    if err in (errno.EPERM, errno.EINVAL, errno.ENOSYS):
        return False, False   # a container's profile: the grader removes the uid's objects instead
    raise OSError(err, "unshare(CLONE_NEWIPC)")


def own_network() -> None:
    """Moves this process into a new network namespace (needs CAP_SYS_ADMIN: before the switch)
    with its loopback up, so student code may still talk to itself over 127.0.0.1."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.unshare(_CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare(CLONE_NEWNET): {os.strerror(err)}")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock.fileno(), _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def _mount(source, target, fstype, flags, data=None) -> None:
    encode = (lambda v: v.encode() if isinstance(v, str) else v)
    if _libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def _rlimits(spec: dict) -> None:
    """Hard rlimits, so student code cannot raise them again once unprivileged."""
    limits = {
        resource.RLIMIT_AS: spec["memory_bytes"],
        resource.RLIMIT_CPU: spec["cpu_seconds"],
        resource.RLIMIT_FSIZE: spec["file_bytes"],
        # 1, not 0: where core_pattern pipes dumps to a crash handler (apport, systemd-coredump)
        # the kernel ignores a limit of 0 and runs the handler outside the sandbox's CPUs; a limit
        # of 1 makes it skip piped dumps, and is below any core file's smallest size
        resource.RLIMIT_CORE: 1,
        # the grader's own may be generous (`ulimit -r`, systemd's LimitRTPRIO): a real-time or
        # raised-priority spinner would starve its CPU, locked pages cannot be reclaimed
        resource.RLIMIT_RTPRIO: 0,
        resource.RLIMIT_RTTIME: 0,
        resource.RLIMIT_NICE: 0,
    }
    # the grader's may be large (a container's 1 048 576 open files: kernel memory RLIMIT_AS does not count)
    for which, most in ((resource.RLIMIT_MEMLOCK, _MAX_LOCKED_BYTES), (resource.RLIMIT_NOFILE, _MAX_OPEN_FILES)):
        hard = resource.getrlimit(which)[1]
        if hard == resource.RLIM_INFINITY or hard > most:
            limits[which] = most
    if spec.get("nproc"):
        limits[resource.RLIMIT_NPROC] = spec["nproc"]
    for which, value in limits.items():
        resource.setrlimit(which, (value, value))
    # A file write beyond RLIMIT_FSIZE then fails with OSError instead of killing the worker.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _empty_bounding_set(required: bool) -> None:
    """Drops every capability from the bounding set (needs CAP_SETPCAP: a worker started as root
    holds it until the switch). Where it is not held (bubblewrap in a user namespace) no_new_privs
    already keeps exec from gaining anything; where the worker gives up root it is required."""
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)   # EINVAL before 4.3: none
    for capability in range(_LAST_CAPABILITY + 1):
        if _libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            if err == errno.EINVAL:
                break   # past the kernel's last capability
            if err == errno.EPERM and not required:
                return
            raise OSError(err, f"could not drop capability {capability} from the bounding set")
    if required and _status_field("CapBnd") != 0:
        raise OSError(errno.EPERM, "the capability bounding set is not empty")


def _switch_ids(drop_to) -> None:
    """Become the sandbox's uid/gid (started as root); nothing of root may be left after."""
    if not drop_to:
        return
    uid, gid = drop_to
    if uid == 0 or gid == 0:
        raise OSError(errno.EPERM, "refusing to run student code as uid or gid 0")
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
        raise OSError(errno.EPERM, "could not switch to the sandbox's uid")
    _clear_capabilities()
    if any(_status_field(name) for name in ("CapEff", "CapPrm", "CapInh", "CapAmb")):
        raise OSError(errno.EPERM, "capabilities left after the switch")


def _clear_capabilities() -> None:
    """capset(): empties the inheritable set (setresuid clears only the permitted/effective)."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)   # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()                    # two {effective, permitted, inheritable}
    if _libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def _pin(cpus) -> None:
    """Runs this process on `cpus` only (one thread yet: everything it starts inherits them)."""
    os.sched_setaffinity(0, cpus)
    if os.sched_getaffinity(0) != set(cpus):
        raise OSError(errno.EPERM, f"could not run on CPUs {sorted(cpus)}")


def _fresh_session_keyring() -> None:
    """Joins a new, empty session keyring: the grader's is no longer this process's to reach.
    Where keyctl itself is refused (a container's seccomp profile: ENOSYS or EPERM for a call that
    needs no privilege) no process here can reach any keyring through it, and step 8 refuses it
    again; any other failure ends the worker."""
    numbers = ARCHES.get(platform.machine(), (None, {}))[1]
    if "keyctl" not in numbers:
        raise OSError(errno.ENOSYS, userns_filter_problem() or "no keyctl number for this machine")
    _libc.syscall.restype = ctypes.c_long
    if _libc.syscall(numbers["keyctl"], _KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EPERM):
            raise OSError(err, "could not join a session keyring of its own")


def _install_filter(also_refused: tuple[str, ...] = ()) -> None:
    arch, numbers = ARCHES.get(platform.machine(), (None, None))
    if arch is None or sys.byteorder != "little":
        raise OSError(errno.ENOSYS, userns_filter_problem() or "no seccomp filter for this machine")
    if len(os.listdir("/proc/self/task")) != 1:
        raise OSError(errno.EBUSY, "the seccomp filter must be set while the worker has one thread")
    program = filter_program(arch, numbers, also_refused)
    buffer = ctypes.create_string_buffer(program)
    fprog = struct.pack("HxxxxxxQ", len(program) // 8, ctypes.addressof(buffer))
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.c_char_p(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def _status_field(name: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(name + ":"):
                return int(line.split()[1], 16)
    return 0


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option})")
