"""A course's formgrader is a hub service on a fixed port of 127.0.0.1, and every hub user has a
terminal on the same machine. A student's process that holds that port when the hub starts (any
restart: the old service is gone, the port is free) took formgrader over: the real service could
not bind ("port ... is not available"), the hub found the student's server answering at the
service's URL and routed /services/<course>/ to it, so the instructor and the TAs opening
formgrader got the student's page (a "log in again" form asks for their system password). The hub
now refuses to start while anyone but the course's grader user listens on a formgrader port, and
stops if one does later (deploy/jupyterhub/service_ports.py).

The hub test needs what tests/hub/test_hub_browser.py needs (root, configurable-http-proxy, the
shared environment); the check of who listens needs root only."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import time
import urllib.request

import pytest

from hub_machine import HubExited, missing_requirements, start_hub
import service_ports
from hub_courses import Course

SQUATTER = """
import http.server as h
class Page(h.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"SQUATTED: log in again")
h.HTTPServer(("127.0.0.1", {port}), Page).serve_forever()
"""


def _hold_port_as(user: str, port: int) -> None:
    subprocess.Popen(["runuser", "-u", user, "--", "setsid", "/usr/bin/python3", "-c", SQUATTER.format(port=port)])
    deadline = time.monotonic() + 20
    while not service_ports.listening_uids(port):
        assert time.monotonic() < deadline, f"{user}'s server did not listen on {port}"
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_students_server_on_the_formgrader_port_never_gets_formgraders_traffic():
    reason = missing_requirements()
    if reason:
        pytest.skip(f"the hub test {reason}")
    try:
        machine = start_hub(before_start=lambda m: _hold_port_as("bob", m.course("cs349e").port))
    except HubExited as exited:   # refused: said why, and by whom
        assert "formgrader port" in str(exited) and "bob" in str(exited), str(exited)[-2000:]
        return
    try:
        with urllib.request.urlopen(f"{machine.url}/services/cs349e/formgrader", timeout=10) as response:
            page = response.read()
        assert b"SQUATTED" not in page, "the hub routed formgrader to bob's server"
    finally:
        machine.close()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_formgrader_port_taken_over_after_the_start_stops_the_hub():
    """The formgrader dies (a crash; here killed) and a student's process binds its port: the hub
    stops within seconds, saying who holds the port, instead of routing formgrader there."""
    reason = missing_requirements()
    if reason:
        pytest.skip(f"the hub test {reason}")
    machine = start_hub()
    try:
        subprocess.run(["pkill", "-KILL", "-U", machine.course("cs349e").grader], check=True)
        _hold_port_as("bob", machine.course("cs349e").port)
        deadline = time.monotonic() + 60
        while machine.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert machine.process.poll() is not None, "the hub kept routing formgrader to bob's server"
        assert "stopping the hub: formgrader port" in machine.log.read_text()
    finally:
        machine.close()


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="reads which account holds a socket: run as root")


def _course(port: int, grader: str) -> Course:
    return Course(id="cs349e", grader=grader, port=port, instructors=(), tas=(), students=())


@needs_root
def test_whoever_listens_on_a_formgrader_port_but_its_grader_is_named():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        nobody = pwd.getpwnam("nobody").pw_name
        [problem] = service_ports.foreign_listeners([_course(port, nobody)])
        assert f"formgrader port {port}" in problem and "root" in problem and "cs349e" in problem
        assert service_ports.foreign_listeners([_course(port, "root")]) == []


@needs_root
def test_a_free_formgrader_port_is_no_problem():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert service_ports.foreign_listeners([_course(port, "nobody")]) == []


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_students_server_on_the_hubs_own_port_never_gets_the_logins():
    """bob binds the hub's address (127.0.0.1:8000 by default; nginx forwards there) while the hub
    is down: the proxy cannot bind it, the hub finds something answering there and goes on, and
    every login form (a system password) reaches bob's page. The hub refuses to start, naming him.
    (His page answers until he is stopped: the hub cannot unbind him; its refusal says who he is.)"""
    reason = missing_requirements()
    if reason:
        pytest.skip(f"the hub test {reason}")
    try:   # bob's page answers the hub's health check: start_hub may take it for the hub's
        machine = start_hub(before_start=lambda m: _hold_port_as("bob", int(m.url.rsplit(":", 1)[1])))
    except HubExited as exited:
        said = str(exited)
    else:
        try:
            deadline = time.monotonic() + 60
            while machine.process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert machine.process.poll() is not None, "the hub runs with bob's server on its address"
            said = machine.log.read_text()
        finally:
            machine.close()
    assert "not starting the hub" in said and "(the hub's address) is held by bob" in said, said[-2000:]


@needs_root
def test_whoever_but_the_hub_listens_on_a_port_of_the_hubs_own_is_named():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        [problem] = service_ports.foreign_hub_listeners({port: "the hub's address"}, pwd.getpwnam("nobody").pw_uid)
        assert f"port {port} (the hub's address) is held by root" in problem
        assert service_ports.foreign_hub_listeners({port: "the hub's address"}, 0) == []
