"""Every person's home closed to every other account, for setup_hub.py and jupyterhub_config.py.

A student works in her home: the fetched notebooks, her answers, fetched feedback, nbgrader's
submission cache. useradd makes homes 0755 where login.defs sets no HOME_MODE (Debian's default)
and JupyterLab writes with umask 022: a classmate would read it all. setup_hub.py closes the homes
of everyone the courses file lists; a person added since (useradd, then the courses file) has an
open home until it runs again, so the hub does not start while one is open.
"""

from __future__ import annotations

import os
import pwd
import stat
import sys
from pathlib import Path

from hub_courses import Hub


def open_homes(hub: Hub) -> list[str]:
    """One line per listed person whose home another account may enter or list."""
    found = []
    for name in hub.users():
        try:
            home = Path(pwd.getpwnam(name).pw_dir)
            mode = os.lstat(home).st_mode
        except (KeyError, OSError):
            continue   # no account or no home yet: the hub's login refuses them, setup_hub makes them
        if not stat.S_ISDIR(mode) or mode & 0o077:
            found.append(f"{name} ({home}, mode {stat.S_IMODE(mode):04o})")
    return found


def refuse_open_homes(hub: Hub, courses_file: str) -> None:
    found = open_homes(hub)
    if found:
        print(f"not starting the hub: the home of {', '.join(found)} is open to other accounts (their classmates "
              f"would read their work); run the set-up again, as root from the kit's folder: "
              f"python3 deploy/jupyterhub/setup_hub.py {courses_file}", file=sys.stderr)
        sys.exit(1)
