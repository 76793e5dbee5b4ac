"""A folder of wheels for everything pyproject.toml installs, so that the README's `pip install`
commands run verbatim and offline in a test (pip reads PIP_NO_INDEX / PIP_FIND_LINKS from the
environment: its configuration changes, the command does not).

Built once per pyproject.toml and Python version (with that Python's own pip), under ~/.cache/cs349e-tests/ (or
$CS349E_TEST_CACHE). Building it the first time downloads the wheels from the package index, as
the container tests' image builds do; every later run is offline.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = "instructor,test,student,cluster"
# The build backend pip installs to build '.' itself (pyproject's [build-system]).
BUILD_REQUIREMENTS = ("setuptools>=68", "wheel")


def cache_dir() -> Path:
    return Path(os.environ.get("CS349E_TEST_CACHE") or Path.home() / ".cache" / "cs349e-tests")


def wheelhouse(python: str, root: Path = ROOT) -> Path:
    """The wheelhouse for `root`'s pyproject.toml and the interpreter `python` (the `python3` the
    README's `python3 -m venv` will run: a wheel's Requires-Python is judged by it), built if missing."""
    version = subprocess.run([python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True,
                             check=True).stdout
    key = hashlib.sha256((root / "pyproject.toml").read_bytes() + version.encode()).hexdigest()[:16]
    folder = cache_dir() / f"wheelhouse-{key}"
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="wheelhouse-", dir=folder.parent))
    try:
        builder = staging / ".pip"
        subprocess.run([python, "-m", "venv", str(builder)], check=True, capture_output=True)
        done = subprocess.run([str(builder / "bin" / "python"), "-m", "pip", "wheel", "--quiet", "--wheel-dir",
                               str(staging), f".[{EXTRAS}]", *BUILD_REQUIREMENTS], cwd=root, capture_output=True,
                              text=True, timeout=1200)
        if done.returncode != 0:
            raise RuntimeError(f"could not build the test wheelhouse:\n{done.stderr[-3000:]}")
        shutil.rmtree(builder)
        for own in staging.glob("cs349e_kit-*.whl"):   # the project itself is installed from the clone
            own.unlink()
        staging.chmod(0o755)
        staging.rename(folder)   # atomic: a half-built wheelhouse is never used
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def offline_pip_env(folder: Path) -> dict[str, str]:
    """pip's configuration for an offline install from `folder` (no config file of the machine's)."""
    return {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(folder),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_COMPILE": "1"}
