"""matplotlib's font cache, built once per grader install and shared read-only with sandboxes.

The first `import matplotlib` with an empty MPLCONFIGDIR scans every font and writes
`fontlist-v*.json` there (0.1-0.2 s); each sandbox starts with an empty /tmp, so every submission
paid it again. The trusted grader builds that file once, in a plain child process with the
sandbox's view of the fonts (HOME and MPLCONFIGDIR empty, the same /usr and Python install), and
keeps it under the grader's cache folder, keyed by matplotlib's version and the font folders'
modification times. Each sandbox gets it as a read-only file inside its own writable MPLCONFIGDIR:
matplotlib reads it, and nothing a submission does can change it for the next one.

`sandbox_env()` also asks the worker to import pyplot in a notebook child forked before any
student code runs (see warm_notebook.py), so the import overlaps the function tests.

worker_plan.py, bwrap.py and uid_fallback.py import this module inside their functions: a hidden-test draw imports the sandbox
package, and hypothesis draws from the literal constants of every local module it finds imported.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Benchmarks switch this off to measure the old behaviour side by side in one run.
ENABLED = True
CACHE_DIR_ENV = "CS349E_GRADER_CACHE"       # overrides where the shared cache lives
WARM_NOTEBOOK_ENV = "SANDBOX_WARM_NOTEBOOK"  # read by the worker (warm_notebook.py)
_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "/etc/fonts")
_BUILD_TIMEOUT = 120


def sandbox_env() -> dict[str, str]:
    """Environment entries the worker needs for the warm notebook child."""
    return {WARM_NOTEBOOK_ENV: "1"} if ENABLED else {}


def shared_font_list() -> Path | None:
    """The font list sandboxes get, or None (switched off, or no cache)."""
    return font_cache() if ENABLED else None


def font_cache_binds(mplconfigdir: str) -> list[str]:
    """bubblewrap options that create the sandbox's MPLCONFIGDIR (writable: matplotlib refuses
    a read-only one) holding the shared font list read-only; [] without a cache."""
    cache = shared_font_list()
    if cache is None:
        return []
    return ["--perms", "0777", "--dir", mplconfigdir, "--ro-bind", str(cache), f"{mplconfigdir}/{cache.name}"]


def install_font_cache(mplconfigdir: Path) -> None:
    """Copies the shared font list into a fallback (rlimits) sandbox's own MPLCONFIGDIR."""
    cache = shared_font_list()
    if cache is not None:
        mplconfigdir.mkdir(exist_ok=True)
        shutil.copyfile(cache, mplconfigdir / cache.name)


def cache_root() -> Path:
    """The grader's cache folder: $CS349E_GRADER_CACHE, else $XDG_CACHE_HOME or ~/.cache."""
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "cs349e-grader"


@functools.cache
def font_cache() -> Path | None:
    """The shared `fontlist-v*.json`, built on first use; None when matplotlib is not installed
    or the build failed (each sandbox then builds its own, as matplotlib always does)."""
    key = _cache_key()
    if key is None:
        return None
    folder = cache_root() / f"matplotlib-fonts-{key}"
    found = sorted(folder.glob("fontlist-v*.json"))
    if found:
        return found[-1]
    try:
        return _build(folder)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"note: matplotlib's font cache could not be shared with the sandboxes ({exc}); "
              "each sandbox builds its own", file=sys.stderr)
        return None


def _cache_key() -> str | None:
    """What the font list depends on: matplotlib's version and install, the interpreter, and the
    font folders (their modification time changes when fonts are added or removed)."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    package = Path(list(spec.submodule_search_locations)[0])
    parts = [importlib.metadata.version("matplotlib"), str(package), os.path.realpath(sys.executable)]
    for folder in (*_FONT_DIRS, str(package / "mpl-data" / "fonts" / "ttf")):
        try:
            parts.append(f"{folder}:{os.stat(folder).st_mtime_ns}")
        except OSError:
            parts.append(f"{folder}:-")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _build(folder: Path) -> Path:
    """Imports matplotlib once in a child with an empty MPLCONFIGDIR and HOME (as in a sandbox)
    and moves the font list it wrote into `folder` atomically (parallel graders may race)."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as scratch:
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": scratch, "MPLCONFIGDIR": scratch,
               "MPLBACKEND": "Agg", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONNOUSERSITE": "1"}
        subprocess.run([sys.executable, "-s", "-B", "-c", "import matplotlib.font_manager"], env=env,
                       cwd=scratch, stdin=subprocess.DEVNULL, capture_output=True, check=True,
                       timeout=_BUILD_TIMEOUT)
        built = sorted(Path(scratch).glob("fontlist-v*.json"))
        if not built:
            raise OSError("matplotlib wrote no fontlist-v*.json")
        target = folder / built[-1].name
        from autograder.atomic import atomic_write_bytes   # (imported here: see above)
        atomic_write_bytes(target, built[-1].read_bytes(), permissions=0o644)
    return target
