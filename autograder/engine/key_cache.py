"""Answer keys computed once per variant, for every process that grades.

A variant's keys are a pure function of the assignment's sources and the variant's parameters, and
a student's parameters a pure function of the sources, the secret seed and the id; computing them
costs the reference's real work (quantization sweeps, matmuls on the real tensors). Without a store
every process paid it again: `grade`, `pregrade`, each Dask worker, `answers`, `check`, the
lecture's own key on every start. Here each result is written once and read by all of them.

Where: `<course>/.key_cache/<assignment>/<digest>/`, beside the course's other instructor-only
stores and outside everything students are handed (`assignments/`, the release): folders 0700,
files 0600, owned by the grader; a folder or file that is not (another owner, a link, loose
modes) is not used. `<digest>` covers what a key can depend on: the assignment's grading digest
(grading.toml, the hidden tests, the reference, the shared modules, the data files, the variant
seed: registry._grading_digest), numpy's and Python's versions and this store's format. A changed
reference or seed therefore finds an empty folder (the stale ones are removed), and a changed
parameter another entry. Each entry repeats what it was computed for and is checked against the
request and grading.toml on reading (assignment._checked_key); anything unreadable is computed
again. Writes are atomic: processes grading side by side at worst compute an entry twice.

Work every variant's keys share (lec01's end-to-end forward through the lab's model, the same for
every student) is stored too (`cached_value`, in `shared/`): without it each process that met a
student not yet stored did it again (≈ 1.1 s of CPU on a laptop-class core, minutes emulated).

Only plain values are stored (numbers, letters). Keys that are checks rather than values
(MeasuredKey, DerivedKey: the same in every variant) come from the hidden-test package's optional
`key_checks()`; without it, a key holding such checks is not cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import shutil
import stat
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping

from autograder.atomic import atomic_write_text
from autograder.engine.registry import REPO_ROOT, load_config

ENABLED = True   # off: every key computed afresh (to measure its cost, or to compare with the store)
FOLDER = ".key_cache"
FORMAT = 1
MAX_ENTRY_BYTES = 1 << 20
KEYS, VARIANTS, SHARED = "keys", "variants", "shared"


def store_root() -> Path:
    return REPO_ROOT / FOLDER


@lru_cache(maxsize=None)
def assignment_digest(name: str) -> str:
    """What the assignment's keys and variants depend on, as a folder name."""
    import numpy

    text = f"format {FORMAT}\0{load_config(name).digest}\0numpy {numpy.__version__}\0python {sys.version_info[:3]}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cached_key(name: str, params_json: str | None, compute: Callable[[], Mapping[str, Any]],
               checks: Callable[[], Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The key of `params_json` (canonical JSON; None: the package's own default) from the store,
    or `compute()`d and stored. `checks()` gives the entries that are not plain values."""
    folder = _folder(name, KEYS)
    entry = None if folder is None else _read(folder / _entry_name(params_json or ""))
    if entry is not None and entry.get("params") == params_json and isinstance(entry.get("key"), dict):
        kept = entry.get("checks")
        if not kept:
            return dict(entry["key"])
        if checks is not None and isinstance(kept, list):
            extra = dict(checks())
            if sorted(extra) == sorted(kept):
                return {**entry["key"], **extra}
    key = dict(compute())
    if folder is not None:
        plain = {item: value for item, value in key.items() if _plain(value)}
        odd = sorted(set(key) - set(plain))
        if not odd or checks is not None and sorted(checks()) == odd:
            _write(folder / _entry_name(params_json or ""), {"params": params_json, "key": plain, "checks": odd})
    return key


def is_stored(name: str, params_json: str | None) -> bool:
    """Whether the store holds the key of `params_json` (a cheap look, not the checks of reading)."""
    folder = _folder(name, KEYS)
    entry = None if folder is None else _read(folder / _entry_name(params_json or ""))
    return entry is not None and entry.get("params") == params_json


def cached_params(name: str, student_id: str, draw: Callable[[], dict]) -> dict:
    """A student's parameters from the store, or `draw()`n and stored (named by a hash of the id)."""
    folder = _folder(name, VARIANTS)
    path = None if folder is None else folder / _entry_name(f"student:{student_id}")
    entry = None if path is None else _read(path)
    if entry is not None and entry.get("student") == student_id and isinstance(entry.get("params"), dict):
        return entry["params"]
    params = draw()
    if path is not None:
        _write(path, {"student": student_id, "params": params})
    return params


def cached_value(name: str, label: str, compute: Callable[[], Any]) -> Any:
    """`compute()` (a pure function of `name`'s sources: the same in every variant), from the store
    or computed and stored; only a value that JSON gives back equal is stored (and returned as
    JSON gives it back, so that the computing process sees what every reader does)."""
    folder = _folder(name, SHARED)
    path = None if folder is None else folder / _entry_name(f"shared:{label}")
    entry = None if path is None else _read(path)
    if entry is not None and entry.get("label") == label and "value" in entry:
        return entry["value"]
    value = compute()
    try:
        plain = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return value
    if plain != value:
        return value
    if path is not None:
        _write(path, {"label": label, "value": plain})
    return plain   # as a later process reads it (float, not numpy's float64): the same value everywhere


def _entry_name(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40] + ".json"


def _plain(value: Any) -> bool:
    """A letter or a finite number that JSON gives back equal (numpy's float64 is a float)."""
    return isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                      and math.isfinite(value))


def _folder(name: str, kind: str) -> Path | None:
    """The store's folder for `name`'s current digest, made private; None when it cannot be."""
    if not ENABLED:
        return None
    try:
        root = store_root()
        digest = assignment_digest(name)
        parent = root / name
        folder = parent / digest / kind
        fresh = not (parent / digest).exists()
        for level in (root, parent, parent / digest, folder):
            if not _private_dir(level):
                return None
        if fresh:   # the sources changed: what was computed for older ones is never read again
            for other in parent.iterdir():
                if other.name != digest:
                    shutil.rmtree(other, ignore_errors=True)
        return folder
    except OSError:
        return None


def _private_dir(path: Path) -> bool:
    """`path` is (made) a real folder of ours that nobody else can read."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        return False
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)
    return True


def _read(path: Path) -> dict | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077
                or info.st_size > MAX_ENTRY_BYTES):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            value = json.loads(handle.read(MAX_ENTRY_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
    return value if isinstance(value, dict) else None


def _write(path: Path, value: dict) -> None:
    try:
        text = json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return
    with contextlib.suppress(OSError):
        atomic_write_text(path, text)   # 0600, as the store requires

