"""What the Gradescope runner knows of its container: where the bundle was unpacked, which
isolation it grades with ("best": bubblewrap where the container allows it, else the uid
fallback), how its secrets are closed to student code, and how grading failed.
"""

from pathlib import Path

from autograder.sandbox import confinement

SOURCE_ROOT = Path(__file__).resolve().parents[2]
STUDENT = "submission"
# What a bundle may bake in (confinement.ContainerPolicy); the default: bubblewrap where the
# container allows it, else the uid fallback (container_isolation).
BEST = confinement.BEST.name
BUNDLE_ISOLATIONS = confinement.CONTAINER_CHOICES
# Gradescope kills the container at its own timeout; ours is a backstop inside it.
DEFAULT_TIMEOUT = 1800.0


class GradingFailed(RuntimeError):
    """The grader did not produce a result for the submission."""


class GradingRefused(GradingFailed):
    """The grader refused to run (exit status 2): isolation unavailable here, or a configuration error."""


def protect_secrets(assignment: str, root: Path) -> None:
    """Close the unpacked bundle (the reference, the hidden tests), the results folder and
    submission_metadata.json to every uid but root's.

    Under bubblewrap the student's worker never sees /autograder at all. A bundle built with
    --isolation rlimits runs the worker on the same filesystem as an unprivileged uid: there
    only these permissions keep it away (the grader refuses rlimits while the source is open).
    Only ever done to an unpacked bundle (root/source), never to a working repository.
    """
    if SOURCE_ROOT != (root / "source").resolve():
        return
    (root / "results").mkdir(parents=True, exist_ok=True)
    for path in (SOURCE_ROOT, SOURCE_ROOT / "solutions", SOURCE_ROOT / "autograder" / assignment, root / "results"):
        path.chmod(0o700)
    # Gradescope's metadata lists the previous submissions with their whole results (feedback not
    # yet published) and a group's members: the runner alone reads it
    metadata = root / "submission_metadata.json"
    if metadata.is_file() and not metadata.is_symlink():
        metadata.chmod(0o600)


def container_isolation(requested: str) -> tuple[str, str | None]:
    """(the isolation to grade with, why bubblewrap was not used when "best" fell back).

    "best" (the bundle's default): bubblewrap where it works in this container, else the uid
    fallback, which is safe here because a Gradescope container grades one submission and holds
    nothing else of the class; where neither can run, grading is refused. "bubblewrap" and
    "rlimits" are taken as asked (resolved, and refused if unavailable, by the grader)."""
    try:
        chosen, problem = confinement.container_policy(requested).choose()
    except confinement.SandboxUnavailable as err:
        raise GradingRefused(str(err)) from None
    return chosen.name, problem
