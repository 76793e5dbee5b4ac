"""The worker's seccomp filter as a classic-BPF program (lockdown.py installs it; its step 8 says
why each call is refused). Runs in the worker: standard library only, one of the worker's files
(worker_plan.WORKER_FILES).
"""

from __future__ import annotations

import errno
import struct

CLONE_NEWUSER = 0x10000000
# (audit arch, syscall numbers) of the architectures the filter is written for.
ARCHES = {
    "x86_64": (0xC000003E, {"clone": 56, "unshare": 272, "clone3": 435, "sched_setaffinity": 203, "socket": 41,
                            "add_key": 248, "request_key": 249, "keyctl": 250, "io_uring_setup": 425,
                            "io_uring_enter": 426, "io_uring_register": 427, "userfaultfd": 323,
                            "perf_event_open": 298, "bpf": 321, "fanotify_init": 300, "fanotify_mark": 301,
                            "inotify_init": 253, "inotify_init1": 294, "inotify_add_watch": 254,
                            "pidfd_send_signal": 424, "pidfd_open": 434, "pidfd_getfd": 438,
                            "sched_setscheduler": 144, "sched_setattr": 314, "setpriority": 141,
                            "memfd_create": 319, "memfd_secret": 447, "prctl": 157, "shmget": 29,
                            "modify_ldt": 154}),   # x86 only
    "aarch64": (0xC00000B7, {"clone": 220, "unshare": 97, "clone3": 435, "sched_setaffinity": 122, "socket": 198,
                             "add_key": 217, "request_key": 218, "keyctl": 219, "io_uring_setup": 425,
                             "io_uring_enter": 426, "io_uring_register": 427, "userfaultfd": 282,
                             "perf_event_open": 241, "bpf": 280, "fanotify_init": 262, "fanotify_mark": 263,
                             "inotify_init1": 26, "inotify_add_watch": 27,   # no inotify_init here
                             "pidfd_send_signal": 424, "pidfd_open": 434, "pidfd_getfd": 438,
                             "sched_setscheduler": 119, "sched_setattr": 274, "setpriority": 140,
                             "memfd_create": 279, "memfd_secret": 447, "prctl": 167, "shmget": 194}),
}
# Refused outright (EPERM): lockdown.py's step 8 says why.
REFUSED_CALLS = ("sched_setaffinity", "keyctl", "add_key", "request_key", "io_uring_setup",
                 "io_uring_enter", "io_uring_register", "userfaultfd", "perf_event_open", "bpf",
                 "fanotify_init", "fanotify_mark", "inotify_init", "inotify_init1", "inotify_add_watch",
                 "pidfd_open", "pidfd_getfd", "pidfd_send_signal",
                 "sched_setscheduler", "sched_setattr", "setpriority", "memfd_create", "memfd_secret",
                 "modify_ldt")
# socket() families the sandbox's network namespace confines, the only ones libraries here use
# (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK); any other is EAFNOSUPPORT, lockdown.py's step 8.
SOCKET_FAMILIES = (1, 2, 10, 16)
# prctl options refused (EPERM): PR_SCHED_CORE, a core scheduling cookie of its own, which on a
# machine with SMT keeps the sibling CPU (a classmate's) idle whenever the sandbox runs on its own.
REFUSED_PRCTL_OPTIONS = (62,)
_X32_BIT = 0x40000000   # x86_64's x32 syscall numbers: another way to reach the same calls


def filter_program(arch: int, numbers: dict[str, int], also_refused: tuple[str, ...] = ()) -> bytes:
    """The classic-BPF program: wrong architecture (i386 via int 0x80) -> killed; x32 -> EPERM;
    clone3 -> ENOSYS; REFUSED_CALLS -> EPERM; unshare/clone whose flags (first argument) hold
    CLONE_NEWUSER -> EPERM; socket of a family not in SOCKET_FAMILIES -> EAFNOSUPPORT; prctl of an
    option in REFUSED_PRCTL_OPTIONS -> EPERM; all else allowed. Jumps name labels, resolved below."""
    ld_w_abs, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, kill = 0x7FFF0000, 0x80000000
    eperm, enosys = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
    eafnosupport = 0x00050000 | errno.EAFNOSUPPORT
    code = [
        (ld_w_abs, None, None, 4),                      # the architecture
        (jeq, None, "kill", arch),
        (ld_w_abs, None, None, 0),                      # the syscall number
        (jge, "eperm", None, _X32_BIT),
        (jeq, "enosys", None, numbers["clone3"]),
        *((jeq, "eperm", None, numbers[name]) for name in (*REFUSED_CALLS, *also_refused) if name in numbers),
        (jeq, "flags", None, numbers["unshare"]),
        (jeq, "flags", None, numbers["clone"]),
        (jeq, "family", None, numbers["socket"]),
        (jeq, "option", None, numbers["prctl"]),
        (ret, None, None, allow),
        "flags", (ld_w_abs, None, None, 16),            # args[0], low 32 bits
        (jset, "eperm", None, CLONE_NEWUSER),
        (ret, None, None, allow),
        "family", (ld_w_abs, None, None, 16),           # args[0]: the int domain
        *((jeq, "allow", None, family) for family in SOCKET_FAMILIES),
        (ret, None, None, eafnosupport),
        "option", (ld_w_abs, None, None, 16),           # args[0]: prctl's option
        *((jeq, "eperm", None, option) for option in REFUSED_PRCTL_OPTIONS),
        (ret, None, None, allow),
        "allow", (ret, None, None, allow),
        "eperm", (ret, None, None, eperm),
        "enosys", (ret, None, None, enosys),
        "kill", (ret, None, None, kill),
    ]
    labels, program = {}, []
    for item in code:
        if isinstance(item, str):
            labels[item] = len(program)
        else:
            program.append(item)
    out = []
    for index, (op, true, false, k) in enumerate(program):
        jt, jf = (labels[t] - index - 1 if t else 0 for t in (true, false))
        out.append(struct.pack("HBBI", op, jt, jf, k))
    return b"".join(out)
