"""The uid fallback's network: each sandbox a network namespace of its own, so with two students
graded at once (-j 2 as root) neither reaches the other's listener, the host reaches neither,
and no sandbox reaches a service of the host's loopback (TCP or an abstract Unix socket, which
the network namespace scopes too)."""

from __future__ import annotations

import contextlib
import os
import socket
import uuid

import pytest
from sandbox_helpers import needs_rlimits

from autograder.sandbox import confinement

pytestmark = needs_rlimits

NET = {
    "codesign.py": """
        import socket

        _held = []

        def listen():
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen()
            _held.append(server)
            return server.getsockname()[1]

        def listen_abstract(name):
            server = socket.socket(socket.AF_UNIX)
            server.bind("\\0" + name)
            server.listen()
            _held.append(server)
            return "listening"

        def connect(port):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            return "connected"

        def connect_path(path):
            with socket.socket(socket.AF_UNIX) as client:
                client.settimeout(2)
                client.connect(path)
            return "connected"

        def seen_by_netlink_and_proc():
            # the interfaces (rtnetlink) and the Unix and TCP sockets (/proc/net, sock_diag's view)
            with open("/proc/net/unix") as unix, open("/proc/net/tcp") as tcp:
                return [name for _, name in socket.if_nameindex()], unix.read(), tcp.read()

        def connect_abstract(name):
            with socket.socket(socket.AF_UNIX) as client:
                client.settimeout(2)
                client.connect("\\0" + name)
            return "connected"
    """,
}
REFUSED = ("ConnectionRefusedError", "FileNotFoundError", "OSError", "TimeoutError")


def refused(outcome) -> bool:
    return outcome.status == "raised" and outcome.exc_type in REFUSED


def test_the_fallback_has_a_network_of_its_own_where_the_platform_allows_one():
    assert confinement.UID_FALLBACK.own_network


def test_a_listener_in_one_sandbox_is_reached_by_no_other_sandbox_nor_the_host(sandbox):
    alice = sandbox(NET, isolation="rlimits")
    bob = sandbox(NET, isolation="rlimits")
    port = alice.call("codesign", "listen", ()).value
    assert alice.call("codesign", "connect", (port,)).value == "connected"   # its own loopback works
    assert refused(bob.call("codesign", "connect", (port,)))
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()

    name = f"cs349e-{uuid.uuid4().hex}"
    assert alice.call("codesign", "listen_abstract", (name,)).value == "listening"
    assert alice.call("codesign", "connect_abstract", (name,)).value == "connected"
    assert refused(bob.call("codesign", "connect_abstract", (name,)))
    with socket.socket(socket.AF_UNIX) as client, pytest.raises(OSError):
        client.connect("\0" + name)


@contextlib.contextmanager
def _host_listeners():
    """(port, name): the host listening on 127.0.0.1:port and on the abstract socket `name`."""
    name = f"cs349e-{uuid.uuid4().hex}"
    with socket.socket() as server, socket.socket(socket.AF_UNIX) as abstract:
        server.bind(("127.0.0.1", 0))
        server.listen()
        abstract.bind("\0" + name)
        abstract.listen()
        yield server.getsockname()[1], name


def test_a_sandbox_reaches_no_listener_of_the_host(sandbox):
    with _host_listeners() as (port, name):
        box = sandbox(NET, isolation="rlimits")
        assert refused(box.call("codesign", "connect", (port,)))
        assert refused(box.call("codesign", "connect_abstract", (name,)))


@pytest.mark.parametrize("folder", ["/run", "/tmp", "/dev/shm"])
def test_a_sandbox_reaches_no_world_writable_socket_of_the_host_in_run(sandbox, folder):
    """A network namespace scopes abstract sockets, not those in the filesystem: the host's
    services in /run (the system bus, the journal behind /dev/log, nscd, snapd: mode 0666 by
    design) would still answer student code that shares the grader's files; so would a desktop's
    in /tmp (X11's /tmp/.X11-unix)."""
    import os

    path = f"{folder}/cs349e-{uuid.uuid4().hex[:12]}.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        try:
            os.chmod(path, 0o666)
            server.listen()
            with socket.socket(socket.AF_UNIX) as host:   # what the sandbox must not do, done by the host
                host.connect(path)
            box = sandbox(NET, isolation="rlimits")
            assert refused(box.call("codesign", "connect_path", (path,)))
        finally:
            os.unlink(path)


def test_netlink_and_proc_net_show_the_sandbox_nothing_of_the_hosts_sockets(sandbox):
    """rtnetlink and /proc/net answer for the reader's network namespace: a fallback worker must not
    list the host's interfaces, the paths of its Unix sockets (to connect to through the files)
    or its TCP listeners."""
    with _host_listeners() as (port, name):
        box = sandbox(NET, isolation="rlimits")
        interfaces, unix, tcp = box.call("codesign", "seen_by_netlink_and_proc", ()).value
        assert interfaces == ["lo"]
        assert name not in unix
        assert f":{port:04X}" not in tcp


def test_a_cluster_still_takes_rlimits_only_behind_tls_with_a_network_namespace_or_without(monkeypatch):
    """The namespace is this machine's (another worker's may have none) and the fallback shares the
    worker's files (a readable TLS key could leave in a student's output): the cluster's rule for
    rlimits does not depend on it."""
    from autograder.cluster.worker_side import isolation_problem
    from autograder.sandbox import uid_fallback

    assert "plain TCP" in isolation_problem("rlimits", "tcp://127.0.0.1:40000", None)
    monkeypatch.setattr(uid_fallback, "network_namespace_problem", lambda: "unshare(CLONE_NEWNET): EPERM")
    assert not confinement.UID_FALLBACK.own_network
    assert "plain TCP" in isolation_problem("rlimits", "tcp://127.0.0.1:40000", None)


SYSFS = {
    "codesign.py": """
        import glob, os

        def interfaces_in_sysfs():
            listed = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
            devices = sorted({os.path.basename(p) for depth in range(1, 6)
                              for p in glob.glob("/sys/devices/" + "*/" * depth + "net/*")})
            return listed, devices
    """,
}


@pytest.mark.parametrize("isolation", ["rlimits", "bubblewrap"])
def test_sysfs_names_no_interface_of_the_host(sandbox, isolation):
    """/sys/class/net and /sys/devices/*/net list the interfaces of the namespace that mounted
    sysfs: the host's (their names, MAC addresses, counters of a classmate's traffic) unless the
    sandbox's sysfs is its own."""
    host = set(os.listdir("/sys/class/net")) - {"lo"}
    assert host, "the host has an interface besides its loopback"
    outcome = sandbox(SYSFS, isolation=isolation).call("codesign", "interfaces_in_sysfs", ())
    assert outcome.status == "ok", outcome
    listed, devices = outcome.value
    assert not host & (set(listed) | set(devices)), (listed, devices)
