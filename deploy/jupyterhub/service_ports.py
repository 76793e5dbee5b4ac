"""Who listens on each course's formgrader port, for jupyterhub_config.py.

A formgrader is a hub service on a fixed TCP port of 127.0.0.1, and every hub user has a terminal on
the same machine: any account may bind a free port. A student's server that holds the port when the
hub starts (after any restart the port is free) answers at the service's URL, the real formgrader
cannot bind, and the hub routes /services/<course>/ to the student: the instructor and the TAs get
the student's page. So the hub starts only while nobody listens on a formgrader port, and stops
when anyone but the course's grader user listens on one later (`watch`).

The hub's own ports are the same: its address (where nginx forwards every login form, with a
system password), its API (where every user's server sends its token) and its proxy's API. A
student who binds one while the hub is down (a restart) is answered by nothing: the proxy cannot
bind, the hub finds something answering and goes on. So none may be held by anyone but the hub's
own account when it starts, or later.

The owner of every listening socket is read from /proc/net/tcp and tcp6 (its uid column).
"""

from __future__ import annotations

import os
import pwd
import signal
import sys
import threading
from pathlib import Path

_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
_LISTEN = "0A"
# How often a started hub looks again (a port taken over is served to nobody for longer than this
# after the real service has bound it; before that, only while the hub starts).
WATCH_SECONDS = 1.0


def listening_uids(port: int) -> set[int]:
    """The uids of the sockets listening on TCP `port`, any address, IPv4 or IPv6."""
    uids = set()
    for table in _TABLES:
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, uid = fields[1], fields[3], fields[7]
            if state == _LISTEN and int(local.rsplit(":", 1)[1], 16) == port:
                uids.add(int(uid))
    return uids


def _account(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def foreign_listeners(courses) -> list[str]:
    """One line per course whose formgrader port someone other than its grader user listens on."""
    problems = []
    for course in courses:
        try:
            grader = pwd.getpwnam(course.grader).pw_uid
        except KeyError:
            grader = None
        others = sorted(uid for uid in listening_uids(course.port) if uid != grader)
        if others:
            problems.append(f"formgrader port {course.port} of course {course.id} is held by "
                            f"{', '.join(_account(uid) for uid in others)}, not by {course.grader}: the hub would route "
                            f"the course's formgrader to it (stop that process, or give the course another port)")
    return problems


def foreign_hub_listeners(hub_ports: dict[int, str], hub_uid: int) -> list[str]:
    """One line per port of the hub's own (port -> what it is) someone else listens on."""
    problems = []
    for port, what in hub_ports.items():
        others = sorted(uid for uid in listening_uids(port) if uid != hub_uid)
        if others:
            problems.append(f"port {port} ({what}) is held by {', '.join(_account(uid) for uid in others)}: "
                            f"it would get what is sent there (stop that process)")
    return problems


def _problems(courses, hub_ports: dict[int, str]) -> list[str]:
    return foreign_hub_listeners(hub_ports, os.geteuid()) + foreign_listeners(courses)


def refuse_held_ports(courses, hub_ports: dict[int, str] | None = None) -> None:
    """Before the hub starts: every formgrader port and every port of the hub's own free (or the
    hub's), else SystemExit naming who holds it."""
    problems = _problems(courses, hub_ports or {})
    if problems:
        raise SystemExit("not starting the hub: " + "; ".join(problems))


def watch(courses, hub_ports: dict[int, str] | None = None, interval: float = WATCH_SECONDS) -> threading.Thread:
    """A daemon thread that stops this hub (SIGTERM to itself) once anyone but a course's grader
    user listens on its formgrader port, or anyone else on a port of the hub's own, saying who on
    stderr (the hub's log)."""
    def run():
        stop = threading.Event()
        while not stop.wait(interval):
            problems = _problems(courses, hub_ports or {})
            if problems:
                print("stopping the hub: " + "; ".join(problems), file=sys.stderr, flush=True)
                os.kill(os.getpid(), signal.SIGTERM)
                return

    thread = threading.Thread(target=run, name="formgrader-ports", daemon=True)
    thread.start()
    return thread
