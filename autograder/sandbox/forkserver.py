"""The fork server: imports numpy and matplotlib once, then forks each sandbox's worker from
that state into the sandbox bubblewrap built for it.

A fresh interpreter pays ~0.4 s of CPU to import numpy and pyplot: more than half of grading a
whole submission. This process pays it once per grader process. It runs on the host as root,
started by the grader (forkserver_client.py) with the sandbox's base environment; it never runs
student code and holds nothing of the project but the worker's own modules.

For each request (one message on its socket, with five descriptors: the namespace socket, the
worker's channel, its output pipe, its config pipe, a status pipe) it forks a helper, which
  1. receives the namespaces of the sandbox's placeholder process, sent only once bubblewrap
     has built the sandbox and exec'd the placeholder, and joins its ipc, uts, net and pid ones,
  2. forks the worker, closes everything else, waits for it (a worker any of whose threads
     stops under PTRACE_TRACEME is killed) and writes how it ended to the status pipe.
The worker joins the sandbox's cgroup (before it runs anything that allocates, and so does every
process it starts), then its cgroup and mount namespaces (which moves its root and working
directory into the sandbox); starts a new session, keeps only its own descriptors (0-2 output,
3 channel, 4 config), takes the sandbox's environment, working directory, command line and a
`__main__` like a started worker's (multiprocessing's spawn re-runs it by path), and runs
worker.main, which applies the sandbox's Lockdown (lockdown.py: rlimits, no_new_privs, no
capabilities, the sandbox's uid, no user namespaces) before any student code runs, as a started
worker does: the same state, with the imports already done. Requests are parsed only in helpers, so the memory every
worker inherits holds no other sandbox's request. The helper stays outside the sandbox (its cgroup and pid
namespace): student code cannot see, signal or starve it.

The grader forks from here only submissions none of whose files shadows a preloaded module (the
names come with the server's hello), and raises RLIMIT_AS by what the preloaded libraries map,
so a forked worker behaves as a started one would.

Run as `python -s -B -m forkserver SOCKET_FD` with this folder on PYTHONPATH; standard library,
the worker's modules and the libraries it preloads only (imported in main: forkserver_client.py
imports this file's constants).
"""

import array
import builtins
import ctypes
import json
import os
import signal
import socket
import struct
import sys
import traceback
import types

CHANNEL_FD, CONFIG_FD = 3, 4           # where the worker finds them (the config says 3)
FONT_LIST_ENV = "CS349E_FORKSERVER_FONT_LIST"   # matplotlib's shared font list (plotting.py)
# The order they are joined (mount last), with their CLONE_NEW* flag; bubblewrap makes the cgroup
# namespace only where the kernel has one (--unshare-cgroup-try).
NAMESPACES = {"cgroup": 0x02000000, "ipc": 0x08000000, "uts": 0x04000000, "net": 0x40000000,
              "pid": 0x20000000, "mnt": 0x00020000}
REQUIRED = {"ipc", "uts", "net", "pid", "mnt"}
_JOINED_BY_WORKER = {"cgroup", "mnt"}
STATUS = struct.Struct("!i")
_DESCRIPTORS = 5
_PR_SET_PDEATHSIG = 1
_MS_BIND, _MS_REC, _MS_PRIVATE = 0x1000, 0x4000, 1 << 18
_WALL = 0x40000000   # waitpid: threads and tracees too
_libc = ctypes.CDLL(None, use_errno=True)
worker = None   # the worker module, imported by main()
_EXTRA_ADDRESS_SPACE = 0   # bytes the preloaded libraries add to a worker's virtual memory


def main(sock_fd: int) -> None:
    global worker
    # Started as `python -m forkserver` with its folder on PYTHONPATH, so that its command line,
    # which its workers' /proc/self/cmdline shows, names no path of the grader's machine.
    del sys.path[0]   # `-m` put the working folder (/) first; a started worker has no such entry
    font_list = os.environ.pop(FONT_LIST_ENV, "")
    sock = socket.socket(fileno=sock_fd)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)   # ends with the grader
    try:
        _private_tmp(font_list)
    except OSError as exc:
        sock.send(f"refused: no private /tmp ({exc})".encode())
        return
    # The worker imports these from sys.modules: its files are not where the sandbox can see them.
    import codec  # noqa: F401
    import lockdown  # noqa: F401
    import nbrunner  # noqa: F401
    import warm_notebook
    import worker
    import numpy  # noqa: F401 - a started worker imports it too: not counted as extra
    global _EXTRA_ADDRESS_SPACE
    before = _address_space()
    warm_notebook.import_libraries()
    _EXTRA_ADDRESS_SPACE = max(0, _address_space() - before)
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:   # forking a threaded process is unsafe: refuse, the grader starts workers itself
        sock.send(f"refused: {threads} threads after the imports".encode())
        return
    # The names a submission's own module must not have: under these, a forked worker would find
    # the preloaded module (the grader starts such a submission's worker the usual way).
    preloaded = sorted({name.split(".")[0] for name in sys.modules} - {"__main__"})
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p) != here]   # as in a started worker
    sock.send(b"ready " + json.dumps(preloaded).encode())
    signal.signal(signal.SIGCHLD, lambda *_: _reap())   # no helper lingers as a zombie
    # Requests are received into this one buffer and parsed only in the helper, and the buffer
    # is wiped once the helper is forked: no later worker finds an earlier sandbox's request in
    # the memory it inherits.
    buffer = bytearray(1 << 16)
    while True:
        size, fds, truncated = _receive(sock, buffer)
        if not size:
            return   # the grader is gone
        if len(fds) != _DESCRIPTORS or truncated:
            for fd in fds:
                os.close(fd)
            continue
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)   # the helper waits for its own
            sock.close()
            # Student code can walk up its frames to these: the request is handed down in a box
            # each level empties, so nothing of it is left in reach once the worker runs.
            box = [bytes(buffer[:size])]
            buffer[:size] = bytes(size)
            _helper(box, *fds)   # never returns
        buffer[:size] = bytes(size)
        for fd in fds:
            os.close(fd)


def _receive(sock: socket.socket, buffer: bytearray) -> tuple[int, list[int], bool]:
    """(bytes received into `buffer`, descriptors, whether anything was cut off)."""
    size, ancillary, flags, _ = sock.recvmsg_into([buffer], socket.CMSG_SPACE((_DESCRIPTORS + 1) * 4))
    fds = array.array("i")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
    return size, list(fds), bool(flags & (socket.MSG_CTRUNC | socket.MSG_TRUNC))


def _helper(box: list, ns_fd: int, channel: int, out: int, config: int, status: int) -> None:
    code = 125
    try:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)   # ends with the fork server (and the grader)
        request = json.loads(box.pop())
        namespaces = socket.socket(fileno=ns_fd)
        namespaces.settimeout(request["timeout"])
        message, ns_fds, _, _ = socket.recv_fds(namespaces, 256, len(NAMESPACES))
        namespaces.close()
        names = message.decode("ascii", "replace").split()
        if names != [n for n in NAMESPACES if n in names] or len(names) != len(ns_fds) or not REQUIRED <= set(names):
            raise RuntimeError(f"the sandbox's placeholder sent namespaces {names} "
                               "(bubblewrap could not build the sandbox?)")
        # The pid namespace applies to children only; the worker joins the cgroup (while it still
        # sees the host's cgroup files) and the mount namespace itself. This helper stays outside
        # the sandbox's cgroup: its memory and process limits are the worker's alone.
        later = []
        for name, fd in zip(names, ns_fds):   # in NAMESPACES order: the mount namespace last
            if name in _JOINED_BY_WORKER:
                later.append((name, fd))
            else:
                _setns(name, fd)
        box.append(request)
        del request
        pid = os.fork()
        if pid == 0:
            os.close(status)
            _worker(box, channel, out, config, later)   # never returns
        for fd in (channel, config, *(fd for _, fd in later)):
            os.close(fd)
        os.write(status, STATUS.pack(_wait_for(pid)))
        code = 0
    except BaseException:  # noqa: BLE001 - reported in the worker's output; the grader gives up
        try:
            os.write(out, f"sandbox fork server: {traceback.format_exc(limit=3)}".encode())
        except OSError:
            pass
    finally:
        os._exit(code)


def _wait_for(pid: int) -> int:
    """The worker's wait status once it has ended. Any of its threads may have made this helper
    its tracer (PTRACE_TRACEME) and stopped: every child and tracee is waited for (__WALL), and
    a stop ends the whole worker, as a crash, instead of leaving it (and bwrap's pid 1, which
    waits for it to be reaped) stuck forever."""
    while True:
        waited, wait_status = os.waitpid(-1, _WALL)
        if os.WIFSTOPPED(wait_status):
            # A thread of the worker stopped: the worker ends. Another tracee (a child the worker
            # started with CLONE_PARENT, so ours): only that child ends, as under bubblewrap's
            # pid 1 it would hang by itself.
            os.kill(pid if _thread_group(waited) in (pid, None) else waited, signal.SIGKILL)
        elif waited == pid:
            return wait_status   # tracees still unreaped are released when this helper exits


def _thread_group(tid: int) -> int | None:
    try:
        with open(f"/proc/{tid}/status") as status:
            return int(next(line for line in status if line.startswith("Tgid:")).split()[1])
    except (OSError, StopIteration, ValueError):
        return None


def _setns(name: str, fd: int) -> None:
    if _libc.setns(fd, NAMESPACES[name]) != 0:   # the kernel checks the kind too
        raise OSError(ctypes.get_errno(), f"setns({name}): {os.strerror(ctypes.get_errno())}")
    os.close(fd)


def _worker(box: list, channel: int, out: int, config: int, later: list) -> None:
    code = 1
    try:
        request = box.pop()
        for path in request["cgroup_procs"]:
            with open(path, "w") as procs:
                procs.write(str(os.getpid()))
        for name, fd in later:
            _setns(name, fd)
        os.setsid()
        high = [os.dup(fd) for fd in (channel, out, config)]   # out of the way of 0-4
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(high[1], 1)
        os.dup2(high[1], 2)
        os.dup2(high[0], CHANNEL_FD)
        os.dup2(high[2], CONFIG_FD)
        os.closerange(CONFIG_FD + 1, os.sysconf("SC_OPEN_MAX"))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ["PWD"] = request["cwd"]   # as bwrap's --chdir sets it
        numpy_random = sys.modules.get("numpy.random")
        if numpy_random is not None:
            numpy_random.seed()   # as a fresh interpreter would: not every student the same draws
        sys.argv = [request["worker_path"], str(CONFIG_FD)]
        sys.orig_argv = [sys.executable, "-s", "-B", *sys.argv]
        # __main__ as in a started worker (worker.py run as a script): multiprocessing's spawn
        # and forkserver start methods re-run it by path in their children.
        script = types.ModuleType("__main__")
        script.__dict__.update({k: v for k, v in vars(worker).items() if not k.startswith("__")})
        script.__file__, script.__builtins__ = request["worker_path"], builtins
        sys.modules["__main__"] = script
        del request, script   # (see main)
        config = worker.read_config(CONFIG_FD)
        # RLIMIT_AS as for a started worker, which has not mapped the preloaded libraries.
        config["lockdown"]["memory_bytes"] += _EXTRA_ADDRESS_SPACE
        serve = worker.main
        for name in ("worker", "forkserver"):   # a submission's worker.py is its own
            sys.modules.pop(name, None)
        serve(config)
        code = 0
    except SystemExit as exc:
        if isinstance(exc.code, int):
            code = exc.code
        elif exc.code is not None:
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _private_tmp(font_list: str) -> None:
    """A /tmp of this process only, laid out as in a sandbox: libraries remember paths they saw
    while being imported (matplotlib its config folder, MPLCONFIGDIR=/tmp/matplotlib), so those
    paths must be the ones workers will find in their sandbox. What this process still needs
    from the host's /tmp (a checkout there and its .venv) is bound back at the same paths, as
    bubblewrap binds it into a sandbox; the host's /tmp itself is never written."""
    fonts = open(font_list, "rb").read() if font_list else None
    if _libc.unshare(NAMESPACES["mnt"]) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    if _libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "mount --make-rprivate /")
    kept = []   # opened in this namespace (a bind's source must be), before /tmp is covered
    for path in sorted(_paths_in_use(), key=len):
        inside_kept = any(path == k or path.startswith(k + "/") for k, _ in kept)
        if (path + "/").startswith("/tmp/") and not inside_kept and os.path.isdir(path):
            kept.append((path, os.open(path, os.O_PATH | os.O_DIRECTORY)))
    if _libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, b"mode=1777,size=16m") != 0:
        raise OSError(ctypes.get_errno(), "mount tmpfs /tmp")
    for path, fd in kept:
        os.makedirs(path, exist_ok=True)
        if _libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None, _MS_BIND | _MS_REC, None) != 0:
            raise OSError(ctypes.get_errno(), f"bind {path}")
        os.close(fd)
    config = os.environ["MPLCONFIGDIR"]   # the sandbox's (worker_plan._base_env)
    os.makedirs(config, exist_ok=True)
    if fonts is not None:
        with open(os.path.join(config, os.path.basename(font_list)), "wb") as copy:
            copy.write(fonts)


def _paths_in_use() -> set[str]:
    """Folders this process imports from: its import path and the Python install, as given and
    with links resolved."""
    found = set()
    executable_root = os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))
    for path in [*sys.path, sys.prefix, sys.base_prefix, sys.exec_prefix, executable_root]:
        if path:
            found |= {os.path.abspath(path), os.path.realpath(path)}
    return found


def _address_space() -> int:
    """This process's virtual memory size in bytes (what RLIMIT_AS limits)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


if __name__ == "__main__":
    main(int(sys.argv[1]))
