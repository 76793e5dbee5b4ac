"""The Gradescope bundle: what `python -m autograder gradescope` packs, and what its
run_autograder writes when Gradescope runs it (full marks, a bug, a cheat, no bubblewrap, the
bubblewrap 0.6.1 of Ubuntu 22.04, a bundle built with --isolation rlimits)."""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import mutants
from autograder.gradescope.results import AUTOMATIC_FALLBACK_NOTE, FAILED_MESSAGE
from autograder.gradescope.schema import results_problems
from gradescope_container import lay_out, run_autograder
from rlimits_machine import interpreter_can_be_closed

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"
GRADING = tomllib.loads((ROOT / "assignments" / ASSIGNMENT / "grading.toml").read_text(encoding="utf-8"))
AUTO_POINTS = sum(item["points"] for item in GRADING["items"] if item["kind"] != "text")
AUTO_ITEMS = [item["id"] for item in GRADING["items"] if item["kind"] != "text"]
# Gradescope runs run_autograder as root; so does the test's privileged bubblewrap that binds /autograder.
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None or os.geteuid() != 0,
                                 reason="needs bubblewrap and root to lay out /autograder")


def autograder_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    done = autograder_cli("gradescope", ASSIGNMENT, "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def rlimits_bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder-rlimits.zip"
    done = autograder_cli("gradescope", ASSIGNMENT, "--out", str(out), "--isolation", "rlimits")
    assert done.returncode == 0, done.stderr
    assert "isolation rlimits" in done.stdout
    return out


@pytest.fixture(scope="module")
def strict_bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder-bubblewrap.zip"
    done = autograder_cli("gradescope", ASSIGNMENT, "--out", str(out), "--isolation", "bubblewrap")
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("reference") / "full_marks"
    done = autograder_cli("reference", ASSIGNMENT, str(dest))
    assert done.returncode == 0, done.stderr
    return dest


def names(bundle: Path) -> list[str]:
    with zipfile.ZipFile(bundle) as zf:
        return zf.namelist()


def test_scripts_sit_at_the_root_and_are_executable(bundle):
    with zipfile.ZipFile(bundle) as zf:
        for script in ("setup.sh", "run_autograder"):
            mode = zf.getinfo(script).external_attr >> 16
            assert mode & 0o111, f"{script} is not executable in the zip"


def test_bundle_carries_the_grader_and_never_tests_or_examples(bundle):
    packed = set(names(bundle))
    assignment_files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "assignments" / ASSIGNMENT).rglob("*")
                        if p.is_file() and "__pycache__" not in p.parts and not any(q.startswith(".") for q in p.parts)}
    assert assignment_files <= packed
    assert {"hw_specs.py", "console.py", "autograder/__main__.py", "autograder/commands/grade.py",
            f"solutions/{ASSIGNMENT}/codesign.py", "autograder/gradescope/runtime.py"} <= packed
    assert any(n.startswith(f"autograder/{ASSIGNMENT}/") for n in packed), "hidden tests missing"
    forbidden = [n for n in packed if n.startswith(("tests/", "examples/", "benchmarks/", ".git", "autograder/nbgrader_bridge/"))
                 or "__pycache__" in n or n.endswith(".pyc")]
    assert forbidden == []


def test_bundle_is_reproducible(bundle, tmp_path):
    again = tmp_path / "again.zip"
    assert autograder_cli("gradescope", ASSIGNMENT, "--out", str(again)).returncode == 0
    assert again.read_bytes() == bundle.read_bytes()


def test_a_bundle_carries_its_own_assignment_only(tmp_path):
    """Lecture 1's zip holds no other lecture's reference or hidden tests, and adding an assignment
    to the course leaves it byte for byte the same; the second assignment's zip holds none of lecture 1."""
    from autograder.gradescope.bundle import build_bundle
    from course_copy import copy_course

    root = copy_course(tmp_path / "course")
    alone = build_bundle(ASSIGNMENT, tmp_path / "alone.zip", root=root).path.read_bytes()
    other = "fx_intensity"
    for top in ("assignments", "solutions", "autograder"):
        shutil.copytree(ROOT / "tests" / "fixtures" / "course" / top / other, root / top / other)
    beside = build_bundle(ASSIGNMENT, tmp_path / "beside.zip", root=root).path.read_bytes()
    assert beside == alone
    packed = set(names(build_bundle(other, tmp_path / "other.zip", root=root).path))
    assert f"solutions/{other}/intensity.py" in packed and f"autograder/{other}/__init__.py" in packed
    assert not [n for n in packed if ASSIGNMENT in n], "the second bundle carries lecture 1's files"
    assert "hw_specs.py" not in packed and "console.py" in packed  # the shared modules it declares


def test_unknown_assignment_is_a_usage_error(tmp_path):
    done = autograder_cli("gradescope", "lec99_nothing", "--out", str(tmp_path / "x.zip"))
    assert done.returncode == 2 and "lec99_nothing" in done.stderr
    assert not (tmp_path / "x.zip").exists()


def test_setup_sh_is_valid_bash(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as zf:
        (tmp_path / "setup.sh").write_bytes(zf.read("setup.sh"))
    done = subprocess.run(["bash", "-n", str(tmp_path / "setup.sh")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_setup_sh_installs_from_package_registries_only(bundle):
    with zipfile.ZipFile(bundle) as zf:
        setup = zf.read("setup.sh").decode()
        requirements = zf.read("requirements.txt").decode().split()
    commands = [line.strip() for line in setup.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    for fetcher in ("curl", "wget", "git ", "http://", "https://", "--index-url", "--extra-index-url",
                    "--find-links", "--trusted-host", "pip download", "add-apt-repository", "dpkg -i"):
        assert not [c for c in commands if fetcher in c], f"setup.sh uses {fetcher!r}"
    installs = [c for c in commands if " install " in c]
    assert installs, "setup.sh installs nothing"
    for command in installs:
        if command.startswith("apt-get"):
            packages = [w for w in command.split()[2:] if not w.startswith("-")]
            assert packages and all(re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", p) for p in packages), command
        else:
            assert re.search(r"-m pip install .*-r /autograder/source/requirements\.txt$", command), command
    assert "bubblewrap" in setup
    assert requirements and all(re.fullmatch(r"[A-Za-z0-9_.-]+==[A-Za-z0-9_.+!-]+", r) for r in requirements)
    pinned = {r.split("==")[0].lower() for r in requirements}
    assert {"numpy", "hypothesis", "nbformat", "rich"} <= pinned
    assert not pinned & {"nbgrader", "jupyterlab", "notebook", "nbconvert"}


def _grade_in_container(tmp_path: Path, bundle: Path, submission: Path, **kwargs):
    run = run_autograder(lay_out(tmp_path / "autograder", bundle, submission), **kwargs)
    assert run.results is not None, f"no results.json written:\n{run.log[-3000:]}"
    assert results_problems(run.results) == [], run.results
    return run


def item_of(test: dict) -> str:
    """The grading.toml id a test is named after (ids are identifiers; a title may follow)."""
    return re.match(r"[A-Za-z_0-9]+", test["name"]).group()


def _test_of(results: dict, item_id: str) -> dict:
    (test,) = [t for t in results["tests"] if item_of(t) == item_id]
    return test


@needs_bwrap
def test_full_marks_submission_gets_every_automatic_point(tmp_path, bundle, reference):
    run = _grade_in_container(tmp_path, bundle, reference)
    results = run.results
    assert run.returncode == 0, run.log[-3000:]
    assert results["score"] == pytest.approx(AUTO_POINTS)
    assert sum(t["max_score"] for t in results["tests"]) == pytest.approx(AUTO_POINTS)
    assert [item_of(t) for t in results["tests"]] == AUTO_ITEMS
    assert {t["status"] for t in results["tests"]} == {"passed"}
    assert {t["visibility"] for t in results["tests"]} == {"after_published"}
    assert results["extra_data"]["submission"]["isolation"] == "bubblewrap"
    assert "隔离方式：rlimits" not in results["output"] and "isolation 'rlimits'" not in results["output"]
    quotas = results["extra_data"]["submission"]["quotas"]   # named to the student too
    assert quotas and f"资源限制：{quotas.split(' (')[0]}" in results["output"]


@needs_bwrap
def test_buggy_submission_loses_points_only_where_the_bug_is(tmp_path, bundle, reference):
    buggy = tmp_path / "buggy"
    mutants.mutate_submission(reference, buggy, ("e2m1_ties_to_smaller",))
    results = _grade_in_container(tmp_path, bundle, buggy).results
    failed = {item_of(t) for t in results["tests"] if t["status"] == "failed"}
    # quantize rounds with to_e2m1, and the end-to-end lab measures the whole model through the
    # student's own quantize against the reference model's keys: its numbers follow the bug
    end_to_end = {"q34a_fp8_end_deficit", "q34p_nvfp4_end_prediction", "q34b_nvfp4_end_deficit", "q35_fp4_rank_agreement",
                  "q35p_fp4_end_prediction", "q34r_h16_end_prediction", "q35g_fp4_end_over_fp8", "q34h_h16_end_over_fp8"}
    assert "to_e2m1" in failed and failed <= {"to_e2m1", "quantize"} | end_to_end
    assert 0 < results["score"] < AUTO_POINTS
    assert "0.75" in _test_of(results, "to_e2m1")["output"]  # the counterexample is shown


def test_the_bundle_readme_names_its_base_images_and_isolation(bundle, rlimits_bundle):
    for zipped, isolation in ((bundle, "best"), (rlimits_bundle, "rlimits")):
        with zipfile.ZipFile(zipped) as zf:
            readme = zf.read("README.md").decode()
            runner = zf.read("run_autograder").decode()
        assert "Ubuntu 22.04" in readme and "Debian 12" in readme and "3.11.0rc1" in readme
        assert f"## Isolation: {isolation}" in readme
        assert runner.rstrip().endswith(f"--isolation {isolation}")


@needs_bwrap
def test_without_bubblewrap_the_default_bundle_grades_with_the_uid_fallback_and_says_so(
        tmp_path, bundle, reference):
    """Docker's default seccomp profile refuses bubblewrap's namespaces: the default bundle grades
    the container's one submission with the uid fallback instead of giving everyone 0."""
    run = _grade_in_container(tmp_path, bundle, reference, deny_bubblewrap=True, reachable_python=True)
    assert run.returncode == 0, run.log[-3000:]
    assert run.results["score"] == pytest.approx(AUTO_POINTS)
    submission = run.results["extra_data"]["submission"]
    assert submission["isolation"] == "rlimits" and submission["quotas"]
    assert AUTOMATIC_FALLBACK_NOTE in run.results["output"]
    assert "bubblewrap cannot run in this container" in run.results["extra_data"]["isolation_note"]
    assert "graded with the uid fallback" in run.log and "apt-get" not in run.results["output"]


@needs_bwrap
def test_without_bubblewrap_a_bubblewrap_bundle_refuses_and_tells_the_student_only_that(
        tmp_path, strict_bundle, reference):
    """Fails closed: no credit, exit status 2; the student reads one short line, the course staff
    why and how to fix it (the log, extra_data)."""
    run = _grade_in_container(tmp_path, strict_bundle, reference, deny_bubblewrap=True)
    assert run.returncode == 2, run.log[-3000:]
    assert run.results["score"] == 0
    assert run.results["output"] == FAILED_MESSAGE
    assert {t["output"] for t in run.results["tests"]} == {FAILED_MESSAGE}
    reason = run.results["extra_data"]["grading_failed"]
    assert "bubblewrap cannot sandbox student code here" in reason and "apt-get install bubblewrap" in reason
    assert "apt-get install bubblewrap" in run.log


@needs_bwrap
def test_a_rlimits_bundle_grades_without_bubblewrap_and_says_so(tmp_path, rlimits_bundle, reference):
    run = _grade_in_container(tmp_path, rlimits_bundle, reference, deny_bubblewrap=True, reachable_python=True)
    assert run.returncode == 0, run.log[-3000:]
    assert run.results["extra_data"]["submission"]["isolation"] == "rlimits"
    # no mount namespace in the container: the grader's watchdog bounded what it wrote
    assert run.results["extra_data"]["submission"]["disk_cap"] == "watchdog"
    assert "rlimits" in run.results["output"] and "bubblewrap" in run.results["output"]
    assert run.results["score"] == pytest.approx(AUTO_POINTS)


@needs_bwrap
@pytest.mark.skipif(not interpreter_can_be_closed(), reason="this interpreter lives in the system folders")
def test_a_rlimits_bundle_refuses_where_the_sandbox_uid_cannot_run_python(tmp_path, rlimits_bundle, reference):
    """The grading Python under a 0700 folder (as under /root): the fallback cannot give up root,
    so it refuses instead of grading as root beside the reference."""
    run = _grade_in_container(tmp_path, rlimits_bundle, reference, deny_bubblewrap=True)
    assert run.returncode == 2, run.log[-3000:]
    assert run.results["score"] == 0 and run.results["output"] == FAILED_MESSAGE
    reason = run.results["extra_data"]["grading_failed"]
    assert "isolation 'rlimits' refused" in reason and "unprivileged uid" in reason


@needs_bwrap
@pytest.mark.skipif(not interpreter_can_be_closed(), reason="this interpreter lives in the system folders")
def test_the_default_bundle_refuses_where_neither_isolation_can_run(tmp_path, bundle, reference):
    run = _grade_in_container(tmp_path, bundle, reference, deny_bubblewrap=True)
    assert run.returncode == 2, run.log[-3000:]
    assert run.results["score"] == 0 and run.results["output"] == FAILED_MESSAGE
    reason = run.results["extra_data"]["grading_failed"]
    assert "bubblewrap cannot run in this container" in reason and "fallback is refused" in reason


@needs_bwrap
def test_the_bubblewrap_of_ubuntu_22_04_grades_under_bubblewrap(tmp_path, bundle, reference):
    """bwrap 0.6.1 rejects --perms/--size before --tmpfs: the grader picks options it accepts."""
    run = _grade_in_container(tmp_path, bundle, reference, bwrap_06=True)
    assert run.returncode == 0, run.log[-3000:]
    assert run.results["extra_data"]["submission"]["isolation"] == "bubblewrap"
    assert run.results["score"] == pytest.approx(AUTO_POINTS)


@needs_bwrap
@pytest.mark.parametrize("isolation", ["bubblewrap", "rlimits"])
def test_importing_the_reference_from_the_bundle_scores_nothing_for_functions(
        tmp_path, bundle, rlimits_bundle, reference, isolation):
    cheat = tmp_path / "cheat"
    shutil.copytree(reference, cheat)
    (cheat / "codesign.py").write_text(
        "import sys\nsys.path.insert(0, '/autograder/source')\n"
        f"from solutions.{ASSIGNMENT}.codesign import *  # noqa\n", encoding="utf-8")
    if isolation == "bubblewrap":
        run = _grade_in_container(tmp_path, bundle, cheat)
    else:  # /autograder/source is closed to the worker's uid
        run = _grade_in_container(tmp_path, rlimits_bundle, cheat, deny_bubblewrap=True, reachable_python=True)
    assert run.results["extra_data"]["submission"]["isolation"] == isolation
    functions = [item["id"] for item in GRADING["items"] if item["kind"] == "function"]
    assert sum(_test_of(run.results, f)["score"] for f in functions) == 0
    assert "No module named 'solutions'" in _test_of(run.results, functions[0])["output"]


@needs_bwrap
def test_the_uid_fallback_cannot_read_the_submissions_metadata(tmp_path, rlimits_bundle, reference):
    """Gradescope's submission_metadata.json lists the student's previous submissions with their
    whole results (every item's feedback, published or not, and the record of the answers graded),
    and every other member of a group. With the uid fallback the student's code runs beside it on
    the container's filesystem: read there (and sent over the container's network), it gave away
    the feedback `after_published` holds back. The runner reads it first and closes it to every
    uid but root's."""
    spy = tmp_path / "spy"
    shutil.copytree(reference, spy)
    code = (spy / "codesign.py").read_text(encoding="utf-8")
    (spy / "codesign.py").write_text(
        "try:\n    open('/autograder/submission_metadata.json').read()\nexcept OSError:\n    pass\n"
        "else:\n    raise RuntimeError('read the previous submissions')\n" + code, encoding="utf-8")
    root = lay_out(tmp_path / "autograder", rlimits_bundle, spy)
    metadata = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
    metadata["previous_submissions"] = [{"submission_time": "2030-01-01T00:00:00Z", "score": 0.0,
                                         "results": {"tests": [{"name": "q01", "output": "hidden feedback"}]}}]
    (root / "submission_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
    (root / "submission_metadata.json").chmod(0o644)
    run = run_autograder(root, deny_bubblewrap=True, reachable_python=True)
    assert run.results is not None, run.log[-3000:]
    assert run.results["extra_data"]["submission"]["isolation"] == "rlimits"
    assert run.results["score"] == pytest.approx(AUTO_POINTS), [
        (t["name"], t["output"][:200]) for t in run.results["tests"] if t["score"] < t["max_score"]][:3]
