"""JupyterHub configuration of the CS349E course(s): `jupyterhub -f deploy/jupyterhub/jupyterhub_config.py`.

The courses come from a TOML file (CS349E_HUB_COURSES, default courses.toml next to this file;
courses-two.toml: two courses side by side). For each course nbgrader's documented JupyterHub
layout: a system user `grader-<course>` owns the course folder and runs that course's formgrader as
a hub service; the group `formgrade-<course>` (instructors, TAs) may open it, the group
`nbgrader-<course>` (students) lists who takes it, and nbgrader's JupyterHubAuthPlugin lets each
student fetch from and submit to their own courses only. Everyone logs in with their system
account (PAM) and gets JupyterLab as that user (LocalProcessSpawner).
"""

import os
import sys
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hub_courses import load_hub  # noqa: E402
from closed_homes import refuse_open_homes  # noqa: E402
from kernel_debugger import refuse_debugger  # noqa: E402
from service_ports import refuse_held_ports, watch  # noqa: E402
from shared_settings import refuse_stale_settings  # noqa: E402
from user_origins import refuse_shared_origin  # noqa: E402

c = get_config()  # noqa: F821  (provided by JupyterHub)

COURSES_FILE = os.environ.get("CS349E_HUB_COURSES", str(Path(__file__).resolve().parent / "courses.toml"))
HUB = load_hub(COURSES_FILE)
BIN = HUB.hub_env / "bin"
# Every JupyterLab the hub starts (a user's, a course's formgrader): its kernels on files, not ports.
KERNELS_ON_FILES = ("--KernelManager.transport=ipc",)

# ------------------------------------------------------------------ the hub
c.JupyterHub.bind_url = os.environ.get("CS349E_HUB_URL", "http://127.0.0.1:8000")
c.JupyterHub.hub_bind_url = os.environ.get("CS349E_HUB_API_URL", "http://127.0.0.1:8081")
c.ConfigurableHTTPProxy.api_url = os.environ.get("CS349E_HUB_PROXY_API_URL", "http://127.0.0.1:8001")
c.JupyterHub.db_url = f"sqlite:///{HUB.state_dir / 'jupyterhub.sqlite'}"
if HUB.subdomain_host:
    # Each user's server on an origin of its own (user_origins.py): wildcard DNS and TLS.
    c.JupyterHub.subdomain_host = HUB.subdomain_host
c.JupyterHub.cookie_secret_file = str(HUB.state_dir / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(HUB.state_dir / "jupyterhub-proxy.pid")
c.ConfigurableHTTPProxy.command = [os.environ.get("CS349E_HUB_PROXY", "configurable-http-proxy")]

# ------------------------------------------------------------------ who logs in
# System accounts and their passwords (PAM). Only the course's people: nobody else on the machine.
c.JupyterHub.authenticator_class = "jupyterhub.auth.PAMAuthenticator"
c.Authenticator.allowed_users = set(HUB.users())
c.Authenticator.admin_users = set(HUB.admins)

# ------------------------------------------------------------------ each user's JupyterLab
# Every user's server runs as that system user, from the shared environment (JupyterLab, nbgrader's
# Assignments panel). On a systemd machine, SystemdSpawner (jupyterhub-systemdspawner) is the
# drop-in replacement that also caps each user's memory and CPU.
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
# A user's server runs as she does and would read settings from her home: a
# ~/.jupyter/jupyter_server_config.py may serve anyone who opens /user/<name>/... a page of hers
# without a login (extra_static_paths), on the hub's origin when servers share it. Her server is
# the kit's as installed: no settings, extensions or Python packages from her home.
c.Spawner.disable_user_config = True
# Kernels speak ZeroMQ: over TCP (jupyter_client's default) every kernel listens on ports of
# 127.0.0.1, and its IOPub socket publishes each cell's code and output to any account that
# subscribes (signed, not secret). Over ipc its sockets are files in the user's own runtime
# folder (~/.local/share/jupyter/runtime, mode 0700): nobody else can connect.
c.Spawner.args = [*KERNELS_ON_FILES]
c.Spawner.environment = {"PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120

# ------------------------------------------------------------------ courses: groups, roles, formgrader services
c.JupyterHub.load_groups = {}
roles = [
    # A user's server asks the hub which nbgrader-/formgrade- groups its user is in.
    {"name": "server", "scopes": ["inherit"]},
]
services = []
for course in HUB.courses:
    c.JupyterHub.load_groups[f"formgrade-{course.id}"] = {"users": [*course.formgraders, course.grader]}
    c.JupyterHub.load_groups[f"nbgrader-{course.id}"] = {"users": list(course.students)}
    roles.append({"name": f"formgrade-{course.id}", "groups": [f"formgrade-{course.id}"],
                  "scopes": [f"access:services!service={course.id}"]})
    roles.append({"name": f"nbgrader-{course.id}", "groups": [f"nbgrader-{course.id}"], "scopes": []})
    # formgrader asks the hub who its users are and which course groups they are in, and adds a
    # student it is told about to the course's student group (of this course only).
    roles.append({"name": f"grader-{course.id}", "services": [course.id],
                  "scopes": ["read:users", "list:users", "read:groups", "list:groups",
                             f"groups!group=nbgrader-{course.id}"]})
    services.append({
        "name": course.id,
        "url": f"http://127.0.0.1:{course.port}",
        # The course's formgrader: a JupyterLab of the grader user whose folder is the course
        # (nbgrader reads the kit's nbgrader_config.py from it; pregrade runs from there).
        "command": [str(BIN / "jupyterhub-singleuser"), f"--ServerApp.root_dir={course.root}", *KERNELS_ON_FILES],
        "user": course.grader,
        "cwd": str(course.root),
        "environment": {"JUPYTERHUB_DEFAULT_URL": "/lab/tree/", "HOME": str(course.home),
                        "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin"},
        "oauth_no_confirm": True,
    })
    # The grader user is a hub user too (its token asks the hub about groups).
    c.Authenticator.allowed_users.add(course.grader)
c.JupyterHub.load_roles = roles
c.JupyterHub.services = services

# ------------------------------------------------------------------ refusals at start
# Any hub user may bind a free port of 127.0.0.1: one who holds a formgrader's port would get the
# course's formgrader traffic, one who holds the hub's address every login (service_ports.py). The
# shared environment's nbgrader settings must be this kit's (shared_settings.py), and it has no
# kernel debugger (kernel_debugger.py); every person's home is closed (closed_homes.py). Only in
# the hub itself, not where this file is read for its settings (tests/hub/test_hub_config.py).
_hub = sys.modules.get("jupyterhub.app")
if _hub is not None and _hub.JupyterHub.initialized():
    refuse_shared_origin(HUB)
    refuse_stale_settings(HUB, COURSES_FILE)
    refuse_debugger(HUB, COURSES_FILE)
    refuse_open_homes(HUB, COURSES_FILE)
    def _port(url: str) -> int:
        parsed = urlparse(url)
        return parsed.port or (443 if parsed.scheme == "https" else 80)
    HUB_PORTS = {_port(c.JupyterHub.bind_url): "the hub's address", _port(c.JupyterHub.hub_bind_url): "the hub's API",
                 _port(c.ConfigurableHTTPProxy.api_url): "the proxy's API"}
    refuse_held_ports(HUB.courses, HUB_PORTS)
    watch(HUB.courses, HUB_PORTS)

