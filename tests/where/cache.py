"""Where the images live and when they must be rebuilt: a folder per recipe hash under
CACHE_ROOT (outside every checkout, shared by them), built under a lock, complete only once a
`ready` file is written, so an interrupted build is redone rather than used."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

CACHE_ROOT = Path(os.environ.get("CS349E_WHERE_CACHE", "/var/cache/cs349e-where"))


def recipe_key(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


@contextmanager
def locked(name: str):
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(CACHE_ROOT / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def cached_build(name: str, key: str, build) -> Path:
    """The folder CACHE_ROOT/<name>-<key>, made by `build(folder)` unless a complete one exists.
    Older builds of the same name are removed once the new one is ready."""
    folder = CACHE_ROOT / f"{name}-{key}"
    with locked(name):
        if (folder / "ready").exists():
            return folder
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        start = time.monotonic()
        build(folder)
        (folder / "ready").write_text(f"built in {time.monotonic() - start:.0f} s\n")
        for old in CACHE_ROOT.glob(f"{name}-*"):
            if old != folder and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
    return folder
