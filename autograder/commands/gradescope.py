"""`python -m autograder gradescope <assignment> --out autograder.zip`: build the Gradescope bundle."""

from __future__ import annotations

import sys
from pathlib import Path

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


def add_parser(subparsers) -> None:
    from autograder.sandbox import confinement

    parser = subparsers.add_parser(
        "gradescope", help="build a Gradescope autograder zip (setup.sh, run_autograder, the trusted grader)",
        description="Build a zip following Gradescope's autograder specification. Upload it as the "
                    "assignment's autograder (Ubuntu 22.04 or Debian 12 base image, at least 3 GB of memory: the sandbox "
                    "lets student code use 2 GiB); every submission is then graded by the same hidden tests "
                    "and sandbox as `python -m autograder grade`.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("--out", type=Path, required=True, help="where to write the zip, e.g. autograder.zip")
    parser.add_argument("--visibility", choices=VISIBILITIES, default="after_published",
                        help="when students see the per-item results and feedback (default: after_published, "
                             "so hidden-test feedback cannot be mined by resubmitting)")
    parser.add_argument("--isolation", choices=confinement.CONTAINER_CHOICES, default=confinement.BEST.name,
                        help="baked into the bundle (default best: bubblewrap where the container allows it, else "
                             "the uid fallback, safe there because a container grades one submission; every result "
                             "says which. bubblewrap: a container where bwrap cannot run refuses every submission "
                             "with no credit. rlimits: lowered explicitly, graded as an unprivileged uid with "
                             "/autograder/source closed to it)")


def run(args) -> int:
    from autograder.errors import InstructorError
    from autograder.gradescope.bundle import build_bundle

    try:
        bundle = build_bundle(args.assignment, args.out, visibility=args.visibility, isolation=args.isolation)
    except InstructorError as err:
        print(f"gradescope: {err}", file=sys.stderr)
        return 2
    size_kb = bundle.path.stat().st_size / 1024
    print(f"wrote {bundle.path} ({size_kb:.0f} KB): setup.sh, run_autograder (isolation {bundle.isolation}), "
          f"README.md, {len(bundle.requirements)} pinned requirements, {len(bundle.sources)} source files")
    return 0
