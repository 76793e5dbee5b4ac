"""The Python packages a Gradescope container needs to grade, pinned to this environment's versions.

The grading environment is the student environment: the kit's `[project].dependencies` in
pyproject.toml (numpy, hypothesis, nbformat, rich, matplotlib, pytest), never the instructor
extra (nbgrader, JupyterLab). Every package is pinned, together with everything it pulls in,
to the version installed here, so Gradescope grades with exactly the versions the kit was
tested with.
"""

import importlib.metadata as metadata
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from autograder.gradescope.contents import BundleSourceError


def grading_distributions(pyproject: Path) -> tuple[str, ...]:
    """The top-level distributions the grader needs: pyproject's [project].dependencies."""
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        return tuple(Requirement(spec).name for spec in project["dependencies"])
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise BundleSourceError(f"cannot read [project].dependencies from {pyproject}: {exc}") from exc


def pinned_requirements(top_level: tuple[str, ...]) -> tuple[str, ...]:
    """`name==version` for the distributions and their whole dependency closure, sorted.

    Markers are evaluated for this interpreter and without extras, i.e. what pip installed here.
    """
    pins: dict[str, str] = {}
    pending = list(top_level)
    while pending:
        name = canonicalize_name(pending.pop())
        if name in pins:
            continue
        try:
            pins[name] = metadata.version(name)
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            raise BundleSourceError(
                f"cannot pin {name!r} for the Gradescope bundle: it is not installed in this "
                "environment; install the kit first (pip install '.[instructor]')"
            ) from None
        for spec in requires:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                pending.append(req.name)
    return tuple(f"{name}=={version}" for name, version in sorted(pins.items()))
