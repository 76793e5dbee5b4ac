"""`python -m autograder.gradescope <assignment>`: grade the one submission of a Gradescope container.

run_autograder starts this from /autograder/source. It copies the student's files into a
one-student class folder, grades it with the fixed command line (`python -m autograder grade`:
the same hidden tests, sandbox and limits as a local batch), and writes
/autograder/results/results.json. The isolation is the best the container offers (bubblewrap,
else the uid fallback: `container_isolation`) unless the bundle fixed one. It fails closed: if
grading does not complete, the result gives no credit and tells the student so in one short
line (exit status 2 when the grader refused, e.g. no isolation works here; 1 when it failed);
why, with what to do, goes to Gradescope's staff-only log and the result's extra_data, never to
the student.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.atomic import atomic_write_text
from autograder.engine.variants import has_variants
from autograder.gradescope.lateness import submission_times, write_timestamp
from autograder.gradescope.results import FALLBACK_LOG, failure_results, fallback_note, final_results
from autograder.gradescope.schema import VISIBILITIES, check_results
from autograder.gradescope.submission import UploadTooLarge, collect_submission, submission_student
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


def _auto_points(assignment: str) -> float:
    """The automatically graded points (a failure result shows them as lost, never 0 of 0)."""
    from autograder.engine.registry import load_config
    from autograder.engine.vocabulary import AUTOMATIC_KINDS

    try:
        config = load_config(assignment)
    except Exception:  # noqa: BLE001 - the failure result must still be written
        return 1.0
    return sum(item.points for item in config.items_of(*AUTOMATIC_KINDS)) or 1.0


def _grade_class(assignment: str, submissions: Path, out: Path, timeout: float, isolation: str,
                 due: str | None = None, student_ids: Path | None = None) -> None:
    cmd = [sys.executable, "-m", "autograder", "grade", assignment, str(submissions), "--out", str(out), "-j", "1",
           "--force", "--isolation", isolation]
    cmd += ["--due", due] if due else []
    cmd += ["--student-ids", str(student_ids)] if student_ids else []
    print("$", " ".join(cmd), flush=True)
    try:
        done = subprocess.run(cmd, cwd=SOURCE_ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GradingFailed(f"grading did not finish within {timeout:.0f} s") from None
    print(done.stdout, done.stderr, sep="\n", flush=True)
    if done.returncode == 2:
        lines = done.stderr.strip().splitlines()
        raise GradingRefused(lines[-1] if lines else "`python -m autograder grade` refused (exit status 2)")
    if done.returncode != 0:
        raise GradingFailed(f"`python -m autograder grade` exited with status {done.returncode}:\n{done.stderr[-1500:]}")


def protect_secrets(assignment: str, root: Path) -> None:
    """Close the unpacked bundle (the reference, the hidden tests) and the results folder to
    every uid but root's.

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


def grade_upload(assignment: str, root: Path, visibility: str, timeout: float, isolation: str = BEST) -> dict:
    """Grade root/submission/ and return Gradescope's results (not yet written)."""
    from autograder.engine.registry import ConfigError, load_config

    try:
        config = load_config(assignment)
    except ConfigError as err:
        raise GradingFailed(f"configuration error: {err}") from None
    protect_secrets(assignment, root)
    isolation, bubblewrap_missing = container_isolation(isolation)
    if bubblewrap_missing:
        print(f"NOTE: bubblewrap cannot run in this container ({bubblewrap_missing}); this submission "
              f"is graded with the uid fallback (isolation rlimits), automatically: the container "
              f"grades one submission only.", flush=True)
    with tempfile.TemporaryDirectory(prefix="cs349e-gradescope-") as tmp:
        submissions, out = Path(tmp) / "submissions", Path(tmp) / "out"
        collected = collect_submission(root / "submission", config.student_files, submissions / STUDENT)
        print(f"student files found: {collected.found or 'none'}; missing: {list(collected.missing) or 'none'}")
        created_at, due = submission_times(root)   # the late policy of grading.toml
        write_timestamp(submissions / STUDENT, created_at)
        ids = None
        student = submission_student(root)   # the variant of an assignment with per-student variants
        if student is None and has_variants(assignment):
            # the folder's name here is the runner's own, not a student's: grading it would use a
            # variant nobody was given
            raise GradingFailed("submission_metadata.json names no submitter (users[0].sid or email): "
                                f"{assignment} has per-student variants and cannot be graded without the student's id")
        if student is not None:
            ids = Path(tmp) / "student_ids.json"
            ids.write_text(json.dumps({STUDENT: {"id": student[0], "source": student[1]}}), encoding="utf-8")
        print(f"student id: {student[0]!r} ({student[1]})" if student else "student id: none in the metadata")
        _grade_class(assignment, submissions, out, timeout, isolation, due, ids)
        engine_file = out / "results" / f"{STUDENT}.json"
        try:
            engine = json.loads(engine_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise GradingFailed(f"the grader wrote no usable result for the submission ({err})") from None
    results = final_results(engine, visibility=visibility, missing=collected.missing,
                            automatic_fallback=bubblewrap_missing)
    if fallback_note(engine.get("extra_data", {}).get("submission", {}).get("isolation")) and not bubblewrap_missing:
        print(FALLBACK_LOG, flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.gradescope",
                                     description="Grade /autograder/submission/ inside a Gradescope container.")
    parser.add_argument("assignment")
    parser.add_argument("--root", type=Path, default=Path("/autograder"), help="Gradescope's folder (default /autograder)")
    parser.add_argument("--visibility", choices=VISIBILITIES, default="after_published")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds before grading counts as failed")
    parser.add_argument("--isolation", choices=BUNDLE_ISOLATIONS, default=BEST,
                        help="set when the bundle is built (python -m autograder gradescope --isolation)")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    status = 0
    try:
        results = grade_upload(args.assignment, args.root, args.visibility, args.timeout, args.isolation)
        check_results(results)
    except UploadTooLarge as err:
        print(f"grading failed: {err}", file=sys.stderr, flush=True)
        results, status = failure_results(str(err), max_score=_auto_points(args.assignment),
                                          message=err.student_message), 1
    except GradingRefused as err:
        print(f"grading refused: {err}", file=sys.stderr, flush=True)
        results, status = failure_results(str(err), max_score=_auto_points(args.assignment)), 2
    except (GradingFailed, ValueError) as err:
        print(f"grading failed: {err}", file=sys.stderr, flush=True)
        results, status = failure_results(str(err), max_score=_auto_points(args.assignment)), 1
    results["execution_time"] = round(time.perf_counter() - started, 2)
    # Gradescope's harness reads it after this process ends: on disk, whole, readable
    atomic_write_text(args.root / "results" / "results.json",
                      json.dumps(results, ensure_ascii=False, indent=1) + "\n", permissions=0o644)
    print(f"wrote {args.root / 'results' / 'results.json'}: score {results['score']}", flush=True)
    return status
