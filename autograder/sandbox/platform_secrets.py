"""The secrets a container platform mounts for the grader's own processes, and which of them a
sandbox's uid could read: Kubernetes' service account token and CA
(`/var/run/secrets/kubernetes.io/serviceaccount/`, mode 0644 by default, each file a link through
`..data/` into a timestamped folder), Docker's and Compose's secrets (`/run/secrets/<name>`, mode
0444 by default), a cloud provider's projected tokens beside them.

The uid fallback runs student code as another uid on the grader's filesystem. Its worker covers
`/run` with an empty tmpfs where it can make a mount namespace; where it cannot (a container's
default profile) these files are student code's to read, and a pod's token speaks for the
grader to the cluster's API. uid_fallback.rlimits_problem refuses then.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

SECRET_FOLDERS = ("/run/secrets", "/var/run/secrets")
MAX_ENTRIES = 10_000   # a platform mounts a handful; past this, the folder counts as readable


def readable_by_others() -> list[Path]:
    """Each file (its real path) below SECRET_FOLDERS that a uid with no files or groups of its
    own could open and read, links followed as a reader's open follows them."""
    found: dict[Path, None] = {}
    seen = 0
    for top in SECRET_FOLDERS:
        if not os.path.isdir(top):
            continue
        for folder, _dirs, files in os.walk(top):   # Kubernetes' `..data` link not entered: its target is
            for name in files:
                seen += 1
                if seen > MAX_ENTRIES:
                    return [*found, Path(top)]
                real = Path(os.path.realpath(os.path.join(folder, name)))
                if real not in found and _others_can_read(real):
                    found[real] = None
    return list(found)


def _others_can_read(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    if not stat.S_ISREG(mode) or not mode & stat.S_IROTH:
        return False
    for parent in path.parents:
        try:
            if not parent.stat().st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True
