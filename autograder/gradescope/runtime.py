"""`python -m autograder.gradescope <assignment>`: the Gradescope runner's command line, a shim
over autograder.api.gradescope_run (which grades the container's one submission and writes
results.json). The container's constants and helpers are gradescope/container.py's.
"""

import argparse
from pathlib import Path

from autograder.gradescope.container import (BEST, BUNDLE_ISOLATIONS, DEFAULT_TIMEOUT, SOURCE_ROOT, STUDENT,  # noqa: F401
                                             GradingFailed, GradingRefused, container_isolation, protect_secrets)
from autograder.gradescope.schema import VISIBILITIES


def main(argv: list[str] | None = None) -> int:
    from autograder.api.gradescope_run import gradescope_run

    parser = argparse.ArgumentParser(prog="python -m autograder.gradescope",
                                     description="Grade /autograder/submission/ inside a Gradescope container.")
    parser.add_argument("assignment")
    parser.add_argument("--root", type=Path, default=Path("/autograder"), help="Gradescope's folder (default /autograder)")
    parser.add_argument("--visibility", choices=VISIBILITIES, default="after_published")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds before grading counts as failed")
    parser.add_argument("--isolation", choices=BUNDLE_ISOLATIONS, default=BEST,
                        help="set when the bundle is built (python -m autograder gradescope --isolation)")
    args = parser.parse_args(argv)
    return gradescope_run(assignment=args.assignment, root=args.root, visibility=args.visibility,
                          timeout=args.timeout, isolation=args.isolation)
