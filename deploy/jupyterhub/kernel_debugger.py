"""No kernel debugger in the hub's shared environment, for setup_hub.py and jupyterhub_config.py.

JupyterLab's debugger button makes the kernel start debugpy, which listens on a port of 127.0.0.1
with no password. Once she turns the debugger off again, the kernel waits there for the next
debugger: any account of the machine that attaches runs code in her kernel, as her (her files,
her answers). debugpy can listen on nothing but TCP, so the shared environment has none: ipykernel
then offers no debugger (JupyterLab shows no button) and starts nothing. The hub does not start on
an environment that has it (one set up by an older kit, or debugpy installed since).
"""

from __future__ import annotations

import subprocess
import sys

from hub_courses import Hub

_FOUND = "import importlib.util, sys; sys.exit(3 if importlib.util.find_spec('debugpy') else 0)"


def _python(hub: Hub) -> str:
    return str(hub.hub_env / "bin" / "python")


def has_debugger(hub: Hub) -> bool:
    """Whether a kernel of the shared environment would find debugpy (-s: no user site, as the
    hub's servers run with PYTHONNOUSERSITE)."""
    done = subprocess.run([_python(hub), "-s", "-c", _FOUND], capture_output=True, text=True)
    if done.returncode not in (0, 3):
        raise OSError(f"{_python(hub)} could not say whether debugpy is installed: {done.stderr.strip()[-300:]}")
    return done.returncode == 3


def remove_debugger(hub: Hub) -> None:
    if has_debugger(hub):
        subprocess.run([_python(hub), "-m", "pip", "uninstall", "-y", "-q", "debugpy"], check=True)
        print(f"environment {hub.hub_env}: debugpy removed (a kernel's debugger would listen on a port anyone can use)")


def refuse_debugger(hub: Hub, courses_file: str) -> None:
    try:
        found = has_debugger(hub)
    except OSError as err:
        print(f"not starting the hub: {err}", file=sys.stderr)
        sys.exit(1)
    if found:
        print(f"not starting the hub: the shared environment {hub.hub_env} has debugpy: a kernel whose debugger a "
              f"student turned off waits on a port of 127.0.0.1 for anyone to run code as her; run the set-up "
              f"again, as root from the kit's folder: python3 deploy/jupyterhub/setup_hub.py {courses_file}",
              file=sys.stderr)
        sys.exit(1)
