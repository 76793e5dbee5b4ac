"""Whether other accounts of this machine can reach a folder by its path."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def open_to_others(folder: Path) -> bool:
    """Whether every existing folder on the way to `folder` (itself included) lets others in. A
    folder they can enter but not list still gives them every file whose name they know
    (solutions/<assignment>/codesign.py, submitted/<student>/...)."""
    path = Path(os.path.realpath(folder))
    for step in (*reversed(path.parents), path):
        try:
            mode = os.stat(step).st_mode
        except FileNotFoundError:
            break          # made by the grader below a folder checked already
        except OSError:
            return False   # (what the grader cannot check, student code cannot enter either)
        if not mode & stat.S_IXOTH:
            return False
    return True
