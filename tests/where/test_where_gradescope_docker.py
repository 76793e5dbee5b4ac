"""The Gradescope bundle as shipped, in a Docker container with Docker's defaults (default
seccomp profile and capabilities, no --privileged; image imported from a debootstrap Debian 12
root, setup.sh run in it: tests/where/docker_gradescope.py). There bubblewrap cannot create its
namespaces, so the bundle must grade under the uid-separated fallback and say so: alice gets
every automatic point, a buggy student part of them, eve about what bubblewrap gives her, and no
submission reads /autograder/source.

Skipped, with the reason, where no Docker daemon runs or can be started, or the image cannot be
built (no network for debootstrap/apt/PyPI on a machine without a cached image)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import mutants
from gradescope.gradescope_container import lay_out, run_autograder as run_in_bubblewrap
from where import docker_gradescope as gs
from where.debian import CannotBuild

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"
EXAMPLES = ROOT / "examples" / ASSIGNMENT / "submissions"
GRADING = tomllib.loads((ROOT / "assignments" / ASSIGNMENT / "grading.toml").read_text(encoding="utf-8"))
AUTO_POINTS = sum(item["points"] for item in GRADING["items"] if item["kind"] != "text")
FUNCTIONS = [item["id"] for item in GRADING["items"] if item["kind"] == "function"]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

# Reads the hidden parts of the bundle directly and reports what it saw through its answers.
STEALS_SOURCE = '''
import os
_seen = []
for _path in ("/autograder/source/solutions/lec01_codesign/codesign.py", "/autograder/source/hw_specs.py",
              "/autograder/source/autograder/lec01_codesign"):
    try:
        if os.path.isdir(_path):
            os.listdir(_path)
        else:
            open(_path, "rb").read(1)
        _seen.append(_path)
    except OSError as _exc:
        pass
if _seen:
    raise SystemExit("READ /autograder/source: " + ", ".join(_seen))
'''

# Writes three files of 30 MB into HOME, each under the 64 MB file cap, and keeps them open after
# deleting them: no folder lists them, the disk still holds them (90 MB against a 64 MB budget).
HOLDS_DELETED = '''
import os as _os
_held = []
for _piece in range(3):
    _path = _os.path.join(_os.environ["HOME"], f"held-{_piece}")
    _handle = open(_path, "wb")
    _handle.write(b"x" * (30 << 20))
    _handle.flush()
    _os.unlink(_path)
    _held.append(_handle)
'''


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    done = subprocess.run([sys.executable, "-m", "autograder", "gradescope", ASSIGNMENT, "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def image(bundle) -> str:
    problem = gs.daemon_problem()
    if problem:
        pytest.skip(f"cannot run Docker here: {problem}")
    try:
        tag, took = gs.setup_image(bundle)
    except CannotBuild as exc:
        if "setup.sh failed" in str(exc):
            raise  # the bundle's own setup is broken: a failure, not this machine's limit
        pytest.skip(f"cannot build the Gradescope image here: {exc}")
    print(f"\nimage {tag}: " + (f"setup.sh took {took:.0f} s" if took is not None else "cached"))
    return tag


@pytest.fixture(scope="module")
def graded(image, bundle, tmp_path_factory):
    """Grades a submission in a fresh container once per name; the runs are kept for the report."""
    runs = {}

    def grade(name: str, submission: Path, student_id: str = "alice") -> gs.ContainerRun:
        """`student_id`: whose notebook it is (its typed id and numbers): Gradescope's sid."""
        if name not in runs:
            runs[name] = gs.run_submission(image, bundle, submission, student_id=student_id)
            results = runs[name].results or {}
            recorded = results.get("extra_data", {}).get("submission", {})
            print(f"\n{name}: exit {runs[name].returncode}, {runs[name].seconds:.1f} s, score {results.get('score')}, "
                  f"isolation {recorded.get('isolation')!r}, quotas {recorded.get('quotas')!r}")
        return runs[name]
    return grade


def isolation_of(run: gs.ContainerRun) -> str:
    assert run.results is not None, run.log[-3000:]
    submission = run.results.get("extra_data", {}).get("submission")
    assert submission, f"the result records no isolation (exit {run.returncode}):\n{run.results.get('output')}\n{run.log[-2000:]}"
    return submission["isolation"]


def score_of(run: gs.ContainerRun, item: str) -> float:
    (test,) = [t for t in run.results["tests"] if t["name"].split()[0].startswith(item)]
    return test["score"]


def test_alice_gets_every_automatic_point_and_the_result_names_the_isolation(graded):
    run = graded("alice", EXAMPLES / "alice")
    assert run.returncode == 0, run.log[-3000:]
    assert run.results["score"] == pytest.approx(AUTO_POINTS)
    # Docker's default seccomp refuses bubblewrap's namespaces: the fallback must have been used, and said.
    assert isolation_of(run) != "bubblewrap"
    assert isolation_of(run) in run.results["output"] or "uid" in run.results["output"]


def test_a_buggy_student_gets_partial_credit(graded, tmp_path):
    buggy = tmp_path / "buggy"
    mutants.mutate_submission(EXAMPLES / "alice", buggy, ("e2m1_ties_to_smaller",))
    run = graded("buggy", buggy)
    assert run.returncode == 0, run.log[-3000:]
    assert 0 < run.results["score"] < AUTO_POINTS
    assert score_of(run, "to_e2m1") < 10


def test_eve_scores_about_what_bubblewrap_gives_her(graded, bundle, tmp_path):
    run = graded("eve", EXAMPLES / "eve", student_id="eve")
    here = run_in_bubblewrap(lay_out(tmp_path / "autograder", bundle, EXAMPLES / "eve", student_id="eve"))
    assert here.results is not None and here.results["extra_data"]["submission"]["isolation"] == "bubblewrap"
    assert run.results["score"] == pytest.approx(here.results["score"], abs=1.0), (run.results["score"], here.results["score"])


@pytest.mark.parametrize("hostile", ["steals_source", "reads_reference", "peeks_at_grader"])
def test_no_submission_reads_the_bundle_source(graded, hostile, tmp_path):
    submission = tmp_path / hostile
    shutil.copytree(EXAMPLES / "alice", submission)
    if hostile == "steals_source":
        code = submission / "codesign.py"
        code.write_text(STEALS_SOURCE + code.read_text(encoding="utf-8"), encoding="utf-8")
    else:
        shutil.copy2(ROOT / "tests" / "corpus" / ASSIGNMENT / hostile / "codesign.py", submission / "codesign.py")
    run = graded(hostile, submission)
    assert isolation_of(run) != ""
    assert "READ /autograder/source" not in str(run.results)
    if hostile == "steals_source":  # nothing read, so it is alice's code and earns alice's points
        assert run.results["score"] == pytest.approx(AUTO_POINTS)
    else:  # found no reference to run: its functions earn nothing
        assert sum(score_of(run, f) for f in FUNCTIONS) == 0


def test_files_held_open_after_deleting_them_count_against_the_budget_in_a_container(graded, tmp_path):
    """Docker's root has no CAP_SYS_PTRACE: the watchdog, reading /proc/<pid>/fd as root, counted
    none of these files, and the student kept alice's points with 90 MB on a 64 MB budget (one
    import, any number of files). It reads as the sandbox's uid where root is refused."""
    submission = tmp_path / "holds_deleted"
    shutil.copytree(EXAMPLES / "alice", submission)
    code = submission / "codesign.py"
    code.write_text(HOLDS_DELETED + code.read_text(encoding="utf-8"), encoding="utf-8")
    run = graded("holds_deleted", submission)
    assert isolation_of(run) != "bubblewrap"
    assert sum(score_of(run, f) for f in FUNCTIONS) == 0, run.results["output"][-2000:]
    assert "写入的文件超过" in str(run.results), str(run.results)[-2000:]
