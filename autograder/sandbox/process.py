"""One running worker process: its private channel, its output pipe, and how to end it.

The parent never blocks on the worker without a deadline: every wait is a select loop over the
channel and the output pipe, so a worker that prints 200 MB, hangs, or stops reading cannot
stall the grader, and output beyond the cap is read and thrown away as it arrives.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import select
import selectors
import signal
import socket
import subprocess
import time
from typing import Callable

from . import reaper
from .cgroups import NO_GROUP, SandboxCgroup
from .clock import Budget, Meter, uid_meter
from .codec import PREFIX, WireError, parse_header, parse_prefix
from .launcher import LaunchPlan
from .limits import Limits
from .outcomes import TimeoutCause
from .output import OutputCollector

_READ_CHUNK = 1 << 20
_PIPE_SIZE = 1 << 20
_HEADROOM = 64 * 1024   # reply bytes allowed on top of a value's bound (control fields, traceback)


class WorkerTimeout(Exception):
    """The worker did not answer in time; `cause` says why (clock.Budget.check)."""

    def __init__(self, cause: TimeoutCause = TimeoutCause.CPU):
        super().__init__(str(cause))
        self.cause = cause


class WorkerDied(Exception):
    """The worker's channel closed: it crashed, exited, or was killed. The message says how."""


class WorkerProcess:
    """Starts immediately; `wait_ready` collects the worker's hello later, so start-up overlaps
    with whatever the caller does meanwhile."""

    def __init__(self, plan: LaunchPlan, limits: Limits, *, factories: tuple[str, ...] = (),
                 cgroup: SandboxCgroup = NO_GROUP, fork_server: bool = True):
        self.plan = plan
        self._cgroup = cgroup
        self.imported: set[str] = set()
        self.ready = False
        self.private_scratch = False
        self.own_network = self.own_ipc = self.own_proc = self.private_disk = False
        self.why_stopped: Callable[[], str | None] = lambda: None   # the grader's reason, if it ended it
        self._next_id = 1
        self._max_reply = self._default_max_reply = limits.result_bytes + _HEADROOM
        nonce = secrets.token_hex(8)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_read, out_write = os.pipe()
        try:
            fcntl.fcntl(out_write, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)  # fewer wake-ups when flooded
        except OSError:
            pass
        env = dict(plan.env)
        # Without a pid namespace (the uid fallback), kill() finds what the worker left running by
        # its uid, the sandbox's own; a watcher does it if the grader dies first (reaper.py).
        self._reaped_uid = plan.drop_to[0] if plan.backend.reaps_by_uid and plan.drop_to else None
        if self._reaped_uid is not None:
            reaper.watch(self._reaped_uid)

        def config(channel_fd: int) -> int:
            # The config (with the nonce) travels through a pipe the worker reads and closes before
            # any student code runs: nothing of it is left in argv, the environment or an open fd.
            return _config_pipe(json.dumps({
                "channel_fd": channel_fd, "nonce": nonce, "lockdown": plan.lockdown(limits, memory_group=cgroup.bounded).to_config(),
                "result_bytes": limits.result_bytes, "factories": list(factories),
            }).encode())

        # bubblewrap reports the host pid of the sandbox's pid 1 here: killing that process
        # tears the whole pid namespace down before we reap bwrap.
        info_read, info_write = os.pipe() if plan.backend.pid_namespace else (None, None)
        self._status = None   # the fork server's report of how the worker ended
        prefix = cgroup.prefix()
        try:
            forked = (self._fork_from_server(plan, cgroup, env, limits, theirs, out_write, config)
                      if fork_server else None)
            if forked is not None:
                self._status, placeholder_fd, command = forked
                argv = plan.wrap(command, info_write)
                passed = (placeholder_fd, info_write)
            else:
                config_read = config(theirs.fileno())
                passed = (theirs.fileno(), config_read) + ((info_write,) if info_write is not None else ())
                argv = plan.argv(str(config_read), info_write)
            try:
                self.proc = subprocess.Popen(
                    [*prefix, *argv], cwd=plan.cwd, env=env,
                    stdin=subprocess.DEVNULL, stdout=out_write, stderr=out_write, pass_fds=passed,
                    start_new_session=True, close_fds=True)
            finally:
                for fd in passed:
                    if fd not in (theirs.fileno(), info_write):
                        os.close(fd)
        except BaseException:
            for end in (ours, theirs):
                end.close()
            for fd in (out_read, out_write, info_read, info_write, self._status):
                if fd is not None:
                    os.close(fd)
            raise
        theirs.close()
        os.close(out_write)
        if info_write is not None:
            os.close(info_write)
            os.set_blocking(info_read, False)
        self._info = info_read
        self.forked = self._status is not None   # from the fork server (forkserver.py)
        self._namespace_pid: int | None = None
        ours.setblocking(False)
        os.set_blocking(out_read, False)
        self._channel = ours
        self._out = out_read
        self._out_open = True
        self._selector = selectors.DefaultSelector()
        self._selector.register(ours, selectors.EVENT_READ, "channel")
        self._selector.register(out_read, selectors.EVENT_READ, "output")
        if self._status is not None:
            # Forked, the worker's end does not end the sandbox by itself (bwrap's placeholder
            # lives on, and a child it left may hold the channel): the helper's report does.
            self._selector.register(self._status, selectors.EVENT_READ, "status")
        self.output = OutputCollector(nonce.encode(), limits.output_bytes)
        self._inbox = bytearray()
        self._unread = 0                      # bytes of an over-bound reply still to drop
        self._over_bound_reply: dict = {}     # what such a reply is taken for
        self._channel_open = True
        self._closed = False

    @staticmethod
    def _fork_from_server(plan, cgroup, env, limits, channel, out_write, config):
        """(status pipe, placeholder's descriptor, its command) when the fork server takes
        this worker, else None (forkserver.py: the same sandbox, the imports already done)."""
        from . import forkserver_client   # (imported here: see forkserver_client.py)
        server = forkserver_client.server_for(plan, cgroup)
        if server is None:
            return None
        ns_server, ns_placeholder = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        status_read, status_write = os.pipe()
        config_read = config(forkserver_client.CHANNEL_FD)
        request = {"cgroup_procs": cgroup.procs_files(), "timeout": limits.start_timeout,
                   "cwd": plan.worker_cwd, "env": env, "worker_path": plan.worker_path}
        try:
            sent = server.spawn(request, [ns_server.fileno(), channel.fileno(), out_write, config_read,
                                          status_write])
        finally:
            ns_server.close()
            os.close(status_write)
            os.close(config_read)
        if not sent:
            ns_placeholder.close()
            os.close(status_read)
            return None
        fd = ns_placeholder.detach()
        return status_read, fd, forkserver_client.placeholder_argv(fd)

    # -- requests ------------------------------------------------------------------------
    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def expect(self, request_ids) -> None:
        """Only these requests' end markers count in the output from now on."""
        self.output.expect(request_ids)

    def wait_ready(self, timeout: float) -> None:
        """Waits for the worker's hello; WorkerDied / WorkerTimeout with its output otherwise."""
        if self.ready:
            return
        header, _ = self.receive(Budget(timeout, None, time.monotonic() + timeout))
        if header.get("id") != 0 or header.get("status") != "ready":
            raise WireError("the worker's first message is not its hello")
        self.output.discard()
        # What the worker's lockdown could do on this platform (a started fallback worker's
        # mount namespace); a bubblewrap sandbox's scratch is its own whatever this says.
        self.private_scratch = header.get("private_scratch") is True
        self.own_network = header.get("own_network") is True
        self.own_ipc = header.get("own_ipc") is True
        self.own_proc = header.get("own_proc") is True
        self.private_disk = header.get("private_disk") is True   # its folder on a capped tmpfs
        self.ready = True

    def send(self, data: bytes, budget: Budget) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[self._channel.send(view[:_READ_CHUNK]):]
                continue
            except BlockingIOError:
                pass
            except OSError as exc:
                raise WorkerDied(self._ending(f"broke its channel ({exc.strerror})")) from None
            self._wait(budget, writing=True)

    def receive(self, budget: Budget, max_bytes: int | None = None,
                request_id: int | None = None) -> tuple[dict, memoryview]:
        """The next complete frame from the worker, reading output meanwhile. A frame announcing
        more than Limits.result_bytes is refused from its prefix, before any of it is kept
        (WireError). One announcing more than `max_bytes` of value (a call's own bound, which
        the worker is never told: it is derived from the expected answer) is read away as it
        arrives, never kept, and comes back as a "too_large" reply to `request_id`."""
        self._max_reply = self._default_max_reply if max_bytes is None else max_bytes + _HEADROOM
        self._over_bound_reply = {"id": request_id, "status": "too_large"}
        while True:
            frame = self._take_frame()
            if frame is not None:
                return frame
            if not self._channel_open:
                raise WorkerDied(self._ending("closed its channel"))
            self._wait(budget)

    def take_output(self, request_id: int) -> str:
        """`request_id`'s output; everything the worker wrote before replying is in the pipe."""
        self._drain_output()
        return self.output.take(request_id)

    def take_all_output(self, request_id: int) -> str:
        self._drain_output()
        return self.output.take_all(request_id)

    def discard_output(self) -> None:
        self._drain_output()
        self.output.discard()

    # -- ending --------------------------------------------------------------------------
    def kill(self) -> None:
        """Ends the worker and every process it started; reaps it; closes our ends. Idempotent."""
        if self._closed:
            return
        self._closed = True
        namespace_pid = self._read_namespace_pid()
        if namespace_pid is not None and self.proc.poll() is None:
            # While bwrap lives, its pid 1 is alive or an unreaped zombie: the pid is still ours.
            _kill(namespace_pid)
            try:
                self.proc.wait(timeout=2)   # bwrap exits once the namespace is gone
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._cgroup.kill()   # every process of the sandbox, wherever it went (a cgroup's)
        if self._reaped_uid is not None:
            reaper.kill_uid(self._reaped_uid)   # no pid namespace: every process of its uid
            reaper.unwatch(self._reaped_uid)
        self.proc.wait()
        for fd in (self._info, self._status):
            if fd is not None:
                os.close(fd)
        self._drain_output()   # the dead worker's last words
        self._selector.close()
        self._channel.close()
        os.close(self._out)
        self._out_open = self._channel_open = False

    def meter(self) -> Meter:
        """The sandbox's (CPU, run-queue wait) seconds: from its cgroup, else from the worker's
        process tree and, in the uid fallback, every process of its uid (clock.uid_meter)."""
        if self._cgroup.bounded or self._reaped_uid is None:
            return self._cgroup.meter(self.proc.pid)
        return uid_meter(self.proc.pid, self._reaped_uid)

    @property
    def alive(self) -> bool:
        if self._closed or self.proc.poll() is not None:
            return False
        # Forked from the fork server, the worker may end while bubblewrap's placeholder lives on.
        return self._status is None or not select.select([self._status], [], [], 0)[0]

    # -- internals -----------------------------------------------------------------------
    def _read_namespace_pid(self) -> int | None:
        """bwrap's pid 1 (host pid) from --info-fd, written as soon as the sandbox exists."""
        if self._namespace_pid is None and self._info is not None:
            try:
                info = json.loads(os.read(self._info, 65536) or b"{}")
                pid = info.get("child-pid")
                self._namespace_pid = pid if type(pid) is int and pid > 1 else None
            except (BlockingIOError, ValueError, AttributeError):
                pass
        return self._namespace_pid

    def _wait(self, budget: Budget, writing: bool = False) -> None:
        now = time.monotonic()
        while now >= budget.wake_at():
            cause = budget.check(now)
            if cause is not None:
                raise WorkerTimeout(cause)
        remaining = budget.wake_at() - now
        if writing:
            self._selector.modify(self._channel, selectors.EVENT_READ | selectors.EVENT_WRITE, "channel")
        try:
            events = self._selector.select(remaining)
        finally:
            if writing:
                self._selector.modify(self._channel, selectors.EVENT_READ, "channel")
        for key, mask in events:
            if key.data == "output":
                self._drain_output()
            elif key.data == "status":
                self._worker_ended()
            elif mask & selectors.EVENT_READ:
                self._read_channel()

    def _worker_ended(self) -> None:
        """The forked worker is gone: what it wrote is all there is, as when bwrap's pid 1 ends."""
        self._selector.unregister(self._status)
        if self._channel_open:
            self._read_channel()
        if self._channel_open:
            self._channel_open = False
            self._selector.unregister(self._channel)

    def _read_channel(self) -> None:
        while self._channel_open:
            try:
                chunk = self._channel.recv(_READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._channel_open = False
                self._selector.unregister(self._channel)
                return
            self._inbox += chunk
            if len(self._inbox) > self._max_reply + PREFIX.size:
                return  # _take_frame refuses it, or drops it (past its call's bound)

    def _take_frame(self) -> tuple[dict, memoryview] | None:
        if self._unread:   # the rest of a reply past its call's bound: dropped as it comes
            dropped = min(self._unread, len(self._inbox))
            del self._inbox[:dropped]
            self._unread -= dropped
            if self._unread:
                return None
            return dict(self._over_bound_reply), memoryview(b"")
        if len(self._inbox) < PREFIX.size:
            return None
        head_len, body_len = parse_prefix(bytes(self._inbox[:PREFIX.size]), self._default_max_reply)
        end = PREFIX.size + head_len + body_len
        if head_len + body_len > self._max_reply:
            self._unread = end
            self._over_bound_reply["exc_message"] = (f"the reply needs {(head_len + body_len) / 2**20:.1f} MB "
                                                     "on the wire, far more than this call's answer")
            return self._take_frame()
        if len(self._inbox) < end:
            return None
        with memoryview(self._inbox) as view:
            frame = bytes(view[:end])   # one copy; the inbox can then shrink
        del self._inbox[:end]
        header = parse_header(frame[PREFIX.size:PREFIX.size + head_len])
        return header, memoryview(frame)[PREFIX.size + head_len:]

    def _drain_output(self) -> None:
        while self._out_open:
            try:
                chunk = os.read(self._out, _READ_CHUNK)
            except BlockingIOError:
                return
            if not chunk:
                self._out_open = False
                self._selector.unregister(self._out)
                return
            self.output.feed(chunk)

    def _ending(self, what: str) -> str:
        """How the worker ended, for a 'crashed' outcome."""
        if self.why_stopped() is not None:   # the grader's watchdog ended it (disk_budget.py)
            return self.why_stopped()
        if self._status is not None:
            from .forkserver_client import read_status
            code = read_status(self._status, 1.0)
            if code is None:
                return f"the worker {what} but is still running"
            return f"the worker {what}: {describe_exit(code, through_bwrap=False)}"
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return f"the worker {what} but is still running"
        return f"the worker {what}: {describe_exit(code, through_bwrap=self.plan.backend.pid_namespace)}"


def describe_exit(code: int, *, through_bwrap: bool) -> str:
    """'killed by SIGSEGV', 'exit status 3', ... (bwrap reports a fatal signal N as 128 + N)."""
    signum = -code if code < 0 else code - 128 if through_bwrap and code > 128 else None
    if signum:
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        hint = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (out of memory?)",
                "SIGSEGV": " (segmentation fault)"}.get(name, "")
        return f"killed by {name}{hint}"
    return f"exit status {code}"


def _config_pipe(data: bytes) -> int:
    """The read end of a pipe that already holds `data` (and EOF)."""
    read_end, write_end = os.pipe()
    try:
        if len(data) > 60_000:   # must fit the pipe buffer: nobody reads before the worker starts
            raise ValueError("the sandbox worker's config is too large for its pipe")
        os.write(write_end, data)
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return read_end


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
