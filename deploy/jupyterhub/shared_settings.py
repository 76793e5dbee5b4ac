"""nbgrader's settings for every user of the hub: what setup_hub.py writes into the shared
environment (etc/jupyter/nbgrader_config.py), and the hub's refusal to start on other ones.

The file is written at set-up, and the kit changes with it: a hub started from a newer kit on an
environment set up by an older one would run with the older settings (a student's Validate kernel
on ports of 127.0.0.1 that any account can subscribe to), silently. So the hub starts only where
the file is exactly what this kit writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hub_courses import Hub

GLOBAL_NBGRADER_CONFIG = '''\
# nbgrader's settings for every user of this hub (written by deploy/jupyterhub/setup_hub.py).
c = get_config()  # noqa: F821
c.Exchange.root = {exchange!r}
# One exchange folder per course; the hub's nbgrader-<course>/formgrade-<course> groups say who may
# fetch from, submit to or collect from which.
c.Exchange.path_includes_course = True
c.Authenticator.plugin_class = "nbgrader.auth.JupyterHubAuthPlugin"
# A submission without one of the released notebooks (deleted or renamed) is refused with
# nbgrader's message naming it, instead of reaching the instructor without its answers.
c.ExchangeSubmit.strict = True
# The kernel nbgrader starts itself (Validate runs the whole notebook) listens on files in the
# user's own runtime folder (mode 0700), not on ports of 127.0.0.1, whose IOPub socket would publish
# every cell's code and output to any account that subscribes. A fresh name each time these settings
# are read (the Validate button reads them for every notebook): two validations never share one.
import os as _os
import uuid as _uuid
from jupyter_core.paths import jupyter_runtime_dir as _runtime_dir
_os.makedirs(_runtime_dir(), mode=0o700, exist_ok=True)
c.KernelManager.transport = "ipc"
c.KernelManager.ip = _os.path.join(_runtime_dir(), f"nbgrader-kernel-{{_uuid.uuid4().hex}}")
'''


def settings_path(hub: Hub) -> Path:
    return hub.hub_env / "etc" / "jupyter" / "nbgrader_config.py"


def global_nbgrader_config(hub: Hub) -> str:
    return GLOBAL_NBGRADER_CONFIG.format(exchange=str(hub.exchange))


def stale_settings_problem(hub: Hub) -> str | None:
    """Why the shared environment's nbgrader settings are not this kit's, or None."""
    path = settings_path(hub)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        return f"{path} cannot be read ({err.strerror})"
    if text != global_nbgrader_config(hub):
        return f"{path} is not what this kit writes (set up by another version, or edited)"
    return None


def refuse_stale_settings(hub: Hub, courses_file: str) -> None:
    problem = stale_settings_problem(hub)
    if problem is not None:
        print(f"not starting the hub: {problem}; run the set-up again, as root from the kit's folder: "
              f"python3 deploy/jupyterhub/setup_hub.py {courses_file}", file=sys.stderr)
        sys.exit(1)
