"""The worker: runs INSIDE the sandbox and is the only process that executes student code.

Started by the trusted parent as `python -s -B worker.py CONFIG_FD` with the submission's
private copy as its working directory; it reads its config (JSON) from the pipe CONFIG_FD and
closes it, so nothing of the config stays in argv, the environment or an open descriptor. It first locks itself down (rlimits, then an
unprivileged uid when started as root, no new privileges or capabilities, no user namespaces:
lockdown.py), then serves requests from a private socket:

    import    import a student module once; reply with its public callables
    calls     call student functions; one reply per call, streamed
    notebook  run the notebook in a forked child (its state never leaks into later calls); the
              reply holds the answer variables and every code cell's outputs (nbrunner.py)
    exit      leave

Student stdout/stderr is the worker's fd 1/2, a pipe the parent drains. After each request the
worker writes an end marker to that pipe, so the parent can tell which output belongs to which
call. Everything the worker sends is untrusted by the parent: this file holds no secret and
decides no score.
"""

import importlib
import json
import os
import select
import signal
import socket
import sys
from struct import error as struct_error
import time
import traceback

MAX_MESSAGE = 2000
MAX_TRACEBACK = 4000


def main(config: dict) -> None:
    # Imported here, as the other modules below: multiprocessing's spawn re-runs this file's top
    # level in children, which do not have this folder on their path.
    import lockdown
    applied = lockdown.apply(config["lockdown"])   # the same confinement however this worker was started
    marker_fd = os.dup(1)  # private copy of the output pipe: survives a student closing fd 1
    channel = socket.socket(fileno=config["channel_fd"])
    channel.set_inheritable(False)

    import numpy  # noqa: F401 - warm: every submission uses it
    import codec
    import nbrunner
    import warm_notebook

    # From here on imports resolve in the submission first; our own modules leave sys.modules
    # so a student's `codec.py` is theirs, not ours.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [os.getcwd()] + [p for p in sys.path if p and os.path.abspath(p) != here]
    for name in ("codec", "lockdown", "private_disk", "nbrunner", "cell_outputs", "warm_notebook"):
        sys.modules.pop(name, None)
    sys.argv = ["sandbox"]

    server = Server(channel, marker_fd, config, codec, nbrunner)
    server.warm = warm_notebook.WarmChild.start(server.notebook_reply)  # pyplot imported ahead
    server.send({"id": 0, "status": "ready", "pid": os.getpid(), "uid": os.getuid(),
                 "private_scratch": applied["private_scratch"],
                 "own_network": applied["own_network"], "own_ipc": applied["own_ipc"],
                 "own_proc": applied["own_proc"], "private_disk": applied["private_disk"]})
    server.serve()


class Server:
    def __init__(self, channel, marker_fd, config, codec, nbrunner):
        self.channel = channel
        self.marker_fd = marker_fd
        self.nonce = config["nonce"].encode()
        self.result_bytes = config["result_bytes"]
        self.codec = codec
        self.nbrunner = nbrunner
        self.modules = {}          # name -> imported module
        self.failed_imports = {}   # name -> reply fields of the failed import
        self.factories = frozenset(config.get("factories") or ())   # declared by the assignment
        self.warm = None           # warm_notebook.WarmChild, taken by the first notebook request

    # -- transport -------------------------------------------------------------------------
    def serve(self) -> None:
        while True:
            request = self.receive()
            if request is None:
                return
            header, body = request
            op = header.get("op")
            if op == "import":
                reply = self.import_module(header)
                self.end_marker(header["id"])
                self.send(reply)
            elif op == "calls":
                for spec in header["calls"]:
                    reply = self.call(spec, body)
                    self.end_marker(spec["id"])
                    self.send_frame(reply)
            elif op == "notebook":
                self.send_frame(self.notebook(header))
            elif op == "exit":
                return
            else:
                sys.exit(f"sandbox worker: unknown op {op!r}")

    def receive(self):
        prefix = self._read_exact(self.codec.PREFIX.size)
        if prefix is None:
            return None
        magic, head_len, body_len = self.codec.PREFIX.unpack(prefix)
        if magic != self.codec.MAGIC:
            sys.exit("sandbox worker: bad request frame")
        head = self._read_exact(head_len)
        body = self._read_exact(body_len) if body_len else b""
        return json.loads(head), body

    def _read_exact(self, n: int):
        parts, got = [], 0
        while got < n:
            chunk = self.channel.recv(min(n - got, 1 << 20))
            if not chunk:
                return None
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def send(self, header: dict, encoder=None) -> None:
        self.send_frame(self.frame(header, encoder))

    def frame(self, header: dict, encoder=None) -> bytes:
        encoder = encoder or self.codec.Encoder(self.result_bytes)
        try:
            return encoder.frame(header)
        except self.codec.ResultTooLarge as exc:
            slim = {k: header[k] for k in ("id",) if k in header}
            return self.codec.Encoder(self.result_bytes).frame(
                dict(slim, status="raised", exc_type="ResultTooLarge", exc_mro=["ResultTooLarge"],
                     exc_message=str(exc)))

    def send_frame(self, data: bytes) -> None:
        self.channel.sendall(data)

    def end_marker(self, request_id: int) -> None:
        """Flush student output, then mark the end of this request's output in the pipe."""
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - the student may have replaced the streams
                pass
        try:
            os.write(self.marker_fd, self.codec.end_marker(self.nonce, request_id))
        except OSError:
            pass

    # -- requests --------------------------------------------------------------------------
    def import_module(self, header: dict) -> dict:
        name = header["module"]
        reply = {"id": header["id"]}
        module = self._import(name)
        if module is None:
            return dict(reply, **self.failed_imports[name])
        try:
            public = sorted(n for n in dir(module)
                            if isinstance(n, str) and not n.startswith("_")
                            and callable(getattr(module, n, None)))
        except BaseException as exc:  # noqa: BLE001
            return dict(reply, **self.raised(exc))
        return dict(reply, status="ok", value=public)

    def _import(self, name: str):
        if name in self.modules:
            return self.modules[name]
        if name in self.failed_imports:
            return None
        try:
            module = importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - SyntaxError, SystemExit, anything
            self.failed_imports[name] = self.raised(exc)
            return None
        self.modules[name] = module
        return module

    def call(self, spec: dict, body: bytes) -> bytes:
        reply = {"id": spec["id"]}
        module = self._import(spec["module"])
        if module is None:
            return self.frame(dict(reply, during_import=True, **self.failed_imports[spec["module"]]))
        try:
            decoder = self.codec.Decoder(body, rebuild=self.rebuild)
            args = decoder.value(spec["args"])
            kwargs = decoder.value(spec["kwargs"])
            function = getattr(module, spec["function"])
            value = function(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - includes SystemExit and KeyboardInterrupt
            return self.frame(dict(reply, **self.raised(exc)))
        # The parent refuses a reply beyond the sandbox's bound unread; say so in a small reply.
        # (A call's own, smaller bound is the parent's alone: it comes from the expected answer.)
        bound = self.result_bytes
        encoder = self.codec.Encoder(bound)
        try:
            node = encoder.value(value)
            data = encoder.frame(dict(reply, status="ok", value=node))
        except self.codec.ResultTooLarge as exc:
            return self.frame(dict(reply, status="too_large", exc_message=str(exc)))
        except BaseException as exc:  # noqa: BLE001 - a hostile value may break encoding
            encoder = self.codec.Encoder(bound)
            node = encoder.value(self.codec.Unsupported(type(value).__name__, f"could not encode: {exc!r}"))
            return self.frame(dict(reply, status="ok", value=node), encoder)
        return data

    def rebuild(self, factory: str, data):
        """A declared factory (from the trusted overlay files) applied to plain data."""
        if factory not in self.factories:
            raise ValueError(f"factory {factory!r} is not declared by the assignment")
        module_name, _, qualname = factory.partition(":")
        target = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
        return target(data)

    def raised(self, exc: BaseException) -> dict:
        kind = type(exc)
        try:
            message = f"sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else str(exc)
        except BaseException:  # noqa: BLE001 - a student __str__ / __repr__ may raise anything
            message = "<message could not be read>"
        return {"status": "raised", "exc_type": _name(kind),
                "exc_mro": [_name(c) for c in kind.__mro__ if c is not object],
                "exc_message": message[:MAX_MESSAGE], "traceback": self.own_traceback(exc)}

    @staticmethod
    def own_traceback(exc: BaseException) -> str:
        """Traceback lines from the submission's own files, with paths relative to it."""
        root = os.getcwd() + os.sep
        try:
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(root)]
            for f in frames:
                f.filename = f.filename[len(root):]
            return "".join(traceback.format_list(frames))[-MAX_TRACEBACK:]
        except BaseException:  # noqa: BLE001
            return ""

    # -- notebook --------------------------------------------------------------------------
    def notebook(self, header: dict) -> bytes:
        """Runs the notebook in a forked child; a crash there costs the notebook, not the worker.
        The worker reads it first: "unreadable" is only ever its own word, said before any cell
        runs. The child's reply is the cells' to forge (a first cell made the runner raise its
        own 'unreadable' at the next, which the grader, no module of the student's imported,
        took for its own fault on every run: never graded)."""
        if header.get("read_only"):
            # only the reading: asked before any of the student's code runs here, so the word is ours
            return self.notebook_read(header)
        warm, self.warm = self.warm, None
        try:
            self.nbrunner.read_code_cells(header["path"])
        except self.nbrunner.NotebookUnreadable as exc:
            if warm is not None:
                warm.discard()
            self.end_marker(header["id"])
            return self.frame({"id": header["id"], "status": "unreadable", "variables": {},
                               "cell_errors": [], "message": str(exc)})
        started = warm.hand_over(header) if warm is not None else None
        if started is not None:
            return self.notebook_collected(header, *started)
        try:
            read_end, write_end = os.pipe()
        except OSError as exc:
            return self.notebook_not_started(header, exc)
        try:
            pid = os.fork()
        except OSError as exc:   # EAGAIN: the submission holds all its processes (RLIMIT_NPROC)
            os.close(read_end)
            os.close(write_end)
            return self.notebook_not_started(header, exc)
        if pid == 0:
            os.close(read_end)
            try:
                _write_all(write_end, self.notebook_reply(header))
            finally:
                os._exit(0)
        os.close(write_end)
        return self.notebook_collected(header, pid, read_end)

    def notebook_read(self, header: dict) -> bytes:
        """Whether the worker reads the notebook, running none of it: status "ok" or "unreadable"."""
        try:
            self.nbrunner.read_code_cells(header["path"])
            status, message = "ok", ""
        except self.nbrunner.NotebookUnreadable as exc:
            status, message = "unreadable", str(exc)
        self.end_marker(header["id"])
        return self.frame({"id": header["id"], "status": status, "variables": {}, "cell_errors": [],
                           "message": message})

    def notebook_collected(self, header: dict, pid: int, read_end: int) -> bytes:
        data, status = self._collect_child(pid, read_end)
        os.close(read_end)
        if data is not None and self._says_unreadable(data):
            # read above by the worker: the child said so after its cells began to run
            return self.frame({"id": header["id"], "status": "crashed", "variables": {}, "cell_errors": [],
                               "message": f"{header['path']} was read, then its cells made the notebook's "
                                          f"process report it unreadable"})
        if data is not None:
            return data
        self.end_marker(header["id"])
        return self.frame({"id": header["id"], "status": "crashed", "variables": {},
                           "cell_errors": [], "message": f"the notebook's process {status}"})

    def notebook_not_started(self, header: dict, exc: OSError) -> bytes:
        self.end_marker(header["id"])
        return self.frame({"id": header["id"], "status": "crashed", "variables": {},
                           "cell_errors": [], "message": (
                               f"the notebook's process could not start: "
                               f"{exc.strerror or exc} (the submission's own processes may "
                               f"use up its process limit)")})

    def notebook_reply(self, header: dict) -> bytes:
        """In the notebook's child: runs it, ends its output, returns the reply frame. The child
        lets go of the worker's channel first: its reply reaches the grader only through the
        worker, which vets it (a cell wrote 'unreadable' onto the channel itself, and the grader
        took it for its own misreading on every run)."""
        self.channel.close()
        data = self.notebook_child(header)
        self.end_marker(header["id"])
        return data

    def notebook_child(self, header: dict) -> bytes:
        nbrunner = self.nbrunner
        reply = {"id": header["id"], "variables": {}, "cell_errors": [], "message": ""}
        namespace = {}
        deadline = time.monotonic() + header["seconds"]
        try:
            run = nbrunner.run_notebook(header["path"], namespace,
                                        cell_timeout=header["cell_timeout"], deadline=deadline)
        except nbrunner.NotebookUnreadable as exc:
            return self.frame(dict(reply, status="unreadable", message=str(exc)))
        encoder = self.codec.Encoder(self.result_bytes)
        variables = {}
        for name in header["variables"]:
            found, value = _variable(namespace, name)
            if found:
                try:
                    variables[name] = encoder.value_or_unsupported(value)
                except BaseException as exc:  # noqa: BLE001
                    variables[name] = encoder.value(self.codec.Unsupported(
                        type(value).__name__, f"could not encode: {exc!r}"))
        reply = dict(reply, status=run.status, variables=variables,
                     cell_errors=[list(e) for e in run.cell_errors], message=run.message,
                     overloaded=run.overloaded)
        try:
            return encoder.frame(dict(reply, cells=run.cells))
        except self.codec.ResultTooLarge:
            # The cells' outputs are for the feedback; the answers must still arrive.
            return self.frame(dict(reply, cells=[]), encoder)

    def _says_unreadable(self, data: bytes) -> bool:
        """Whether a child's reply frame has status "unreadable" (a frame that does not parse is
        left for the parent to refuse)."""
        try:
            _, head_len, _ = self.codec.PREFIX.unpack(data[:self.codec.PREFIX.size])
            head = json.loads(data[self.codec.PREFIX.size:self.codec.PREFIX.size + head_len])
        except (ValueError, TypeError, struct_error):
            return False
        return isinstance(head, dict) and head.get("status") == "unreadable"

    def _collect_child(self, pid: int, fd: int):
        """(the child's complete reply frame or None, how the child ended). Stops reading when
        the frame is complete or the child is gone (a grandchild may hold the pipe open)."""
        buf, need, status = bytearray(), None, None
        while need is None or len(buf) < need:
            ready, _, _ = select.select([fd], [], [], 0.05 if status is None else 0)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                buf += chunk
                if need is None and len(buf) >= self.codec.PREFIX.size:
                    _, head_len, body_len = self.codec.PREFIX.unpack(bytes(buf[:self.codec.PREFIX.size]))
                    need = self.codec.PREFIX.size + head_len + body_len
                    if need > self.result_bytes + (1 << 20):
                        os.kill(pid, signal.SIGKILL)
                        break
            elif status is not None:
                break
            else:
                done, status = os.waitpid(pid, os.WNOHANG)
                status = status if done else None
        if status is None:
            _, status = os.waitpid(pid, 0)
        if need is not None and len(buf) >= need:
            return bytes(buf[:need]), "finished"
        if os.WIFSIGNALED(status):
            signum = os.WTERMSIG(status)
            name = signal.Signals(signum).name if signum in signal.valid_signals() else str(signum)
            return None, f"was killed by {name}"
        return None, f"ended without a result (exit status {os.WEXITSTATUS(status)})"


def _variable(namespace: dict, name: str) -> tuple[bool, object]:
    """(found, value) of a name the grader asked the notebook for: a variable of the notebook, or
    "module:attribute", an attribute of a module the notebook imported (what a trusted module of
    the assignment noted during the run, e.g. the timings it took)."""
    if ":" not in name:
        return (True, namespace[name]) if name in namespace else (False, None)
    module, attribute = name.split(":", 1)
    try:   # the module is the notebook's to change: whatever it does, the rest of the reply goes back
        return True, getattr(sys.modules[module], attribute)
    except BaseException:  # noqa: BLE001
        return False, None


def _name(kind: type) -> str:
    name = getattr(kind, "__name__", "?")
    return name[:200] if isinstance(name, str) else "?"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_config(fd: int) -> dict:
    parts = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        parts.append(chunk)
    os.close(fd)
    return json.loads(b"".join(parts))


if __name__ == "__main__":
    main(read_config(int(sys.argv[1])))
