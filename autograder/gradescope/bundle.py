"""Builds the Gradescope autograder zip: setup.sh, run_autograder and a README (supported base
images, the isolation baked in) at the root, the pinned requirements, and the sources the
trusted grader needs (see contents.py)."""

import zipfile
from dataclasses import dataclass
from pathlib import Path

from autograder.atomic import atomic_file
from autograder.gradescope.contents import BundleSourceError, bundle_sources
from autograder.gradescope.requirements import grading_distributions, pinned_requirements
from autograder.gradescope.container import BEST
from autograder.gradescope.schema import VISIBILITIES
from autograder.gradescope.scripts import readme, run_autograder, setup_sh
from autograder.sandbox.confinement import container_policy

REPO_ROOT = Path(__file__).resolve().parents[2]
# A fixed timestamp makes the zip byte-for-byte reproducible from the same sources.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Bundle:
    path: Path
    sources: tuple[str, ...]
    requirements: tuple[str, ...]
    isolation: str = BEST


def _add(zf: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
    info.external_attr = (0o100000 | mode) << 16  # regular file + permission bits
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def build_bundle(assignment: str, out: Path, *, root: Path = REPO_ROOT, visibility: str = "after_published",
                 isolation: str = BEST) -> Bundle:
    """Write the Gradescope zip for `assignment` to `out` (atomically) and describe it.

    `isolation` is baked into run_autograder: "best" (default) grades under bubblewrap where the
    container allows it and otherwise with the uid fallback, saying which; "bubblewrap" refuses
    to grade in a container where bubblewrap cannot run; "rlimits" lowers it explicitly."""
    if visibility not in VISIBILITIES:
        raise BundleSourceError(f"visibility must be one of {list(VISIBILITIES)}, got {visibility!r}")
    try:
        container_policy(isolation)
    except ValueError as err:
        raise BundleSourceError(str(err)) from None
    sources = bundle_sources(root, assignment)
    requirements = pinned_requirements(grading_distributions(root / "pyproject.toml"))
    out = Path(out)
    with atomic_file(out, "wb") as handle, zipfile.ZipFile(handle, "w") as zf:
        _add(zf, "setup.sh", setup_sh(assignment).encode(), 0o755)
        _add(zf, "run_autograder", run_autograder(assignment, visibility, isolation).encode(), 0o755)
        _add(zf, "README.md", readme(assignment, isolation).encode(), 0o644)
        _add(zf, "requirements.txt", ("\n".join(requirements) + "\n").encode(), 0o644)
        for rel in sources:
            _add(zf, rel, (root / rel).read_bytes(), 0o644)
    return Bundle(path=out, sources=sources, requirements=requirements, isolation=isolation)
