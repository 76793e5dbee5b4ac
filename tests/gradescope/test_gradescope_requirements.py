"""Does setup.sh's requirements.txt hold everything the bundled code imports, pinned, and nothing
of the instructor install?"""

import ast
import importlib.metadata as metadata
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from autograder.gradescope.contents import bundle_sources
from autograder.gradescope.requirements import grading_distributions, pinned_requirements

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"
# Imported lazily on paths the grader never takes.
NOT_NEEDED_FOR_GRADING = {"ipython": "console.py renders HTML only inside a Jupyter kernel; the grader starts none"}


@pytest.fixture(scope="module")
def pinned() -> dict[str, str]:
    pins = pinned_requirements(grading_distributions(ROOT / "pyproject.toml"))
    return dict(pin.split("==") for pin in pins)


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every absolute import in a file, lazy ones inside functions included."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_every_third_party_import_of_the_bundle_is_pinned(pinned):
    sources = [ROOT / rel for rel in bundle_sources(ROOT, ASSIGNMENT) if rel.endswith(".py")]
    # Modules the bundle itself provides: packages, top-level files, and sibling files that are
    # imported as top-level modules (the assignment folder, the sandbox's worker files).
    own = {Path(rel).parts[0] for rel in bundle_sources(ROOT, ASSIGNMENT)} | {p.stem for p in sources}
    providers = metadata.packages_distributions()
    needed = {}
    for source in sources:
        for module in imported_modules(source) - own - set(sys.stdlib_module_names):
            dists = providers.get(module)
            assert dists, f"{source.relative_to(ROOT)} imports {module!r}, which no installed distribution provides"
            needed[canonicalize_name(dists[0])] = source.relative_to(ROOT).as_posix()
    unpinned = {dist: where for dist, where in needed.items() if dist not in pinned and dist not in NOT_NEEDED_FOR_GRADING}
    assert unpinned == {}, "imported by the bundle but not installed by setup.sh"


def test_pins_are_closed_under_dependencies(pinned):
    for dist in pinned:
        for spec in metadata.requires(dist) or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                assert canonicalize_name(req.name) in pinned, f"{dist} needs {req.name}, not pinned"


def test_pins_are_the_tested_versions(pinned):
    assert all(metadata.version(dist) == version for dist, version in pinned.items())


def test_the_instructor_install_stays_out(pinned):
    assert not set(pinned) & {"nbgrader", "jupyterlab", "nbconvert", "notebook", "sqlalchemy"}


def test_a_dependency_that_is_not_installed_is_named():
    with pytest.raises(ValueError, match="no-such-dist-cs349e"):
        pinned_requirements(("no-such-dist-cs349e",))
