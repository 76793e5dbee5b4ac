"""`grade --scheduler`: a real dask scheduler and two workers on loopback grade the example class
exactly as a local run does; a worker killed mid-batch loses nobody and grades nobody twice; a
worker with another kit is refused with one line; student code on a worker reaches no port of
the cluster (while the same code outside the sandbox does)."""

from __future__ import annotations

import csv
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import pytest

from autograder.cluster.client_side import DaskExecutor
from autograder.cluster.kit_version import kit_version, version_text
from autograder.engine import grade_batch
from autograder.engine.registry import ASSIGNMENTS_DIR, REPO_ROOT
from course_copy import copy_course
from dask_processes import dask_env, wait_for_worker, wait_until_gone
from engine.corpus import ASSIGNMENT, EXAMPLES_DIR

pytestmark = pytest.mark.timeout(300)


def autograder(*args, timeout=240, cwd=REPO_ROOT):
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=cwd, env=dask_env(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """The example class graded here, as the README's main job does (-j 2)."""
    out = tmp_path_factory.mktemp("local") / "out"
    run = autograder("grade", ASSIGNMENT, EXAMPLES_DIR, "--out", out, "-j", "2")
    assert run.returncode == 0, run.stderr
    return out


def results_without_timing(out):
    """Every results file, minus the wall time it took and the reference measurement its grader
    process took of the machine (the things two runs may differ in), and the seal over them."""
    results = {}
    for path in sorted((out / "results").glob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        data.pop("execution_time")
        data["extra_data"]["submission"].pop("seconds")
        data["extra_data"]["submission"].pop("reference")
        data["extra_data"].pop("seal")   # the grader's seal of the whole record, timing included
        results[path.name] = data
    return results


def graded_on(client, since: float) -> dict[str, str]:
    """grading task key -> the worker that ran it, for the cluster's tasks since `since`."""
    return {task["key"]: task["worker"] for task in client.get_task_stream(start=since)
            if str(task["key"]).startswith("grade-")}


def test_the_cluster_grades_the_example_class_exactly_as_a_local_run(cluster, local_run, tmp_path):
    out = tmp_path / "out"
    since = time.time()
    run = autograder("grade", ASSIGNMENT, EXAMPLES_DIR, "--out", out, "--scheduler", cluster.address)
    assert run.returncode == 0, run.stderr

    assert (out / "grades.csv").read_bytes() == (local_run / "grades.csv").read_bytes()
    feedback = sorted(p.name for p in (local_run / "feedback").iterdir())
    assert sorted(p.name for p in (out / "feedback").iterdir()) == feedback == [
        f"{p.name}.md" for p in sorted(EXAMPLES_DIR.iterdir())]
    for name in feedback:
        assert (out / "feedback" / name).read_bytes() == (local_run / "feedback" / name).read_bytes(), name
    assert results_without_timing(out) == results_without_timing(local_run)
    # graded by the workers, one task per student
    tasks = graded_on(cluster.client, since)
    assert sorted(re.sub(r"^grade-lec01_codesign-|-[0-9a-f]{8}$", "", key) for key in tasks) == [
        p.name for p in sorted(EXAMPLES_DIR.iterdir())]
    assert set(tasks.values()) <= set(cluster.client.scheduler_info()["workers"])


def test_pregrade_pins_what_a_local_grade_gives(cluster, local_run, tmp_path):
    """pregrade --scheduler in a course copy (the same kit in another folder: accepted) pins the
    local run's results for nbgrader's submitted/ layout."""
    course = copy_course(tmp_path / "course")
    for example in sorted(EXAMPLES_DIR.iterdir()):
        shutil.copytree(example, course / "submitted" / example.name / ASSIGNMENT)
    run = autograder("pregrade", ASSIGNMENT, "--scheduler", cluster.address, cwd=course)
    assert run.returncode == 0, run.stderr
    assert "5 of 5 student(s) pinned" in run.stderr
    pinned = course / ".pinned_results" / ASSIGNMENT
    assert (pinned / "grades.csv").read_bytes() == (local_run / "grades.csv").read_bytes()
    assert results_without_timing(pinned) == results_without_timing(local_run)


def test_a_worker_with_another_kit_is_refused_with_one_line(cluster, tmp_path):
    other = copy_course(tmp_path / "other-kit")
    hidden = other / "autograder" / ASSIGNMENT / "__init__.py"
    hidden.write_text(hidden.read_text("utf-8") + "\n# another revision of the hidden tests\n", "utf-8")
    theirs = subprocess.run(
        [sys.executable, "-c", "from autograder.cluster.kit_version import kit_version, version_text; "
                               "print(version_text(kit_version()))"],
        cwd=other, env=dask_env(), capture_output=True, text=True, timeout=60).stdout.strip()
    ours = version_text(kit_version())
    assert theirs and theirs != ours

    proc = cluster.worker(cluster.address, "other-kit", cwd=other)
    address = None
    try:
        address = wait_for_worker(cluster.client, "other-kit")
        out = tmp_path / "out"
        run = autograder("grade", ASSIGNMENT, EXAMPLES_DIR, "--out", out, "--scheduler", cluster.address)
        assert run.returncode == 2
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1, run.stderr
        assert f"worker {address} runs kit {theirs}" in lines[0] and f"the instructor's kit is {ours}" in lines[0]
        assert "differ in sources" in lines[0]
        assert not (out / "results").exists()   # refused before anything was graded
    finally:
        cluster.kill(proc, signal.SIGTERM)
        if address:
            wait_until_gone(cluster.client, address)


def test_a_worker_killed_mid_batch_loses_nobody_and_grades_nobody_twice(cluster, local_run, tmp_path):
    submissions = tmp_path / "submissions"
    for copy in range(2):
        for example in sorted(EXAMPLES_DIR.iterdir()):
            shutil.copytree(example, submissions / f"{example.name}{copy}")
    students = sorted(p.name for p in submissions.iterdir())
    # each copy is handed in by the original's student (their variant), as --student-ids names them
    copies_of = {name: (name[:-1], "folder") for name in students}
    victim = cluster.worker(cluster.address, "victim", cwd=REPO_ROOT)
    victim_address = wait_for_worker(cluster.client, "victim")

    reported, outcome, out = [], {}, tmp_path / "out"

    def grade():
        try:
            outcome["report"] = grade_batch(ASSIGNMENT, submissions, out, executor=DaskExecutor(cluster.address),
                                            on_result=lambda student, result, error: reported.append(student),
                                            student_ids=copies_of)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            outcome["error"] = exc

    batch = threading.Thread(target=grade)
    batch.start()
    try:
        deadline = time.monotonic() + 120
        held = []
        while not held and batch.is_alive() and time.monotonic() < deadline:
            held = list(cluster.client.processing(workers=[victim_address]).get(victim_address, ()))
            time.sleep(0.02)
        assert held, "the victim was never given a student"
        graded_before = len(reported)
        cluster.kill(victim)   # SIGKILL to the worker, its nanny and everything they started
    finally:
        batch.join(timeout=240)
    assert not batch.is_alive() and "error" not in outcome, outcome.get("error")
    assert graded_before < len(students)   # killed mid-batch

    report = outcome["report"]
    assert report.failed == ()
    assert sorted(reported) == students == list(report.graded)   # each reported (and written) once
    assert sorted(p.stem for p in (out / "results").glob("*.json")) == students
    # each copy graded as the local run graded its original
    local = {row["student"]: row for row in csv.DictReader((local_run / "grades.csv").open(encoding="utf-8"))}
    for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8")):
        assert {**row, "student": row["student"][:-1]} == local[row["student"][:-1]]


PROBE = '''

def ridge_point(*args, **kwargs):
    import socket
    for port in {ports!r}:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            print(f"port {{port}}: REACHED")
        except OSError as err:
            print(f"port {{port}}: unreachable ({{err.strerror}})")
    raise NotImplementedError
'''


def test_student_code_on_a_worker_cannot_reach_the_cluster(cluster, tmp_path):
    info = cluster.client.scheduler_info()["workers"]
    addresses = [cluster.address, *info, *(w["nanny"] for w in info.values() if w.get("nanny"))]
    ports = sorted({urlsplit(a).port for a in addresses})
    probe = PROBE.format(ports=ports)
    hostile = (ASSIGNMENTS_DIR / ASSIGNMENT / "codesign.py").read_text("utf-8") + probe
    (tmp_path / "subs" / "mallory").mkdir(parents=True)
    (tmp_path / "subs" / "mallory" / "codesign.py").write_text(hostile, "utf-8")

    # The same code outside the sandbox reaches every port: the test can fail.
    outside = subprocess.run([sys.executable, "-c", probe + "\ntry:\n    ridge_point()\nexcept NotImplementedError:\n"
                              "    pass\n"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert outside.stdout.count("REACHED") == len(ports), outside.stdout + outside.stderr

    since = time.time()
    report = grade_batch(ASSIGNMENT, tmp_path / "subs", tmp_path / "out", executor=DaskExecutor(cluster.address))
    assert report.graded == ("mallory",) and report.isolation == "bubblewrap"
    assert list(graded_on(cluster.client, since).values())[0] in info   # on a worker
    feedback = (tmp_path / "out" / "feedback" / "mallory.md").read_text("utf-8")
    for port in ports:
        assert f"port {port}: unreachable" in feedback
    assert "REACHED" not in feedback


def test_rlimits_on_a_plain_tcp_cluster_is_refused_before_connecting(tmp_path):
    run = autograder("grade", ASSIGNMENT, EXAMPLES_DIR, "--out", tmp_path / "out", "--isolation", "rlimits",
                     "--scheduler", "tcp://127.0.0.1:9")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs a TLS cluster" in lines[0] and "cannot reach" not in lines[0], run.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("verb", [("grade", ASSIGNMENT, str(EXAMPLES_DIR), "--out", "OUT"), ("pregrade", ASSIGNMENT)])
def test_jobs_and_a_scheduler_do_not_combine(verb, tmp_path):
    args = [a.replace("OUT", str(tmp_path / "out")) for a in verb]
    run = autograder(*args, "-j", "2", "--scheduler", "tcp://127.0.0.1:9")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        f"{verb[0]}: -j and --scheduler do not combine: the cluster's workers set how many submissions are "
        f"graded at once"]
