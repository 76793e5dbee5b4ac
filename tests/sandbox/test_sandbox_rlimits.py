"""The fallback without bubblewrap: a plain child with rlimits, still safe for the grader."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy
import pytest
from sandbox_helpers import FAST, write_files

from autograder.sandbox import launcher
from autograder.sandbox.launcher import PROJECT_ROOT, SANDBOX_GID, SANDBOX_UID, launch_plan
from autograder.sandbox.uids import FIRST_UID, claim_uid, release_uid
from autograder.sandbox.workdir import copy_submission, remove_tree

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only a root grader gives up its uid")

RL = dict(isolation="rlimits")

CODE = {
    "codesign.py": """
        import os, resource, sys
        import numpy as np

        def ok(x):
            print("value", x)
            return np.asarray(x) * 2

        def spin():
            while True:
                pass

        def hard_exit():
            os._exit(5)

        def sys_exit():
            sys.exit(1)

        def huge():
            return np.ones(10**11)

        def creeping():
            hoard = []
            while True:
                hoard.append(np.empty(64 * 1024**2, dtype=np.uint8))

        def env():
            return dict(os.environ), os.getcwd()

        def limits():
            return {name: resource.getrlimit(getattr(resource, name))[0]
                    for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE")}

        def import_solutions():
            import solutions
    """,
}


def test_fallback_reports_rlimits_and_calls_work(sandbox):
    box = sandbox(CODE, **RL)
    assert box.isolation == "rlimits"
    outcome = box.call("codesign", "ok", ([1.5, 2.0],))
    assert outcome.status == "ok" and outcome.value.tolist() == [3.0, 4.0]
    assert outcome.output == "value [1.5, 2.0]\n"


def test_fallback_applies_rlimits_and_a_scrubbed_environment(sandbox, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "s3cret")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    box = sandbox(CODE, **RL)
    limits = box.call("codesign", "limits").value
    assert limits == {"RLIMIT_AS": FAST.memory_bytes, "RLIMIT_CPU": FAST.cpu_seconds,
                      "RLIMIT_FSIZE": FAST.file_bytes, "RLIMIT_CORE": 0}
    env, cwd = box.call("codesign", "env").value
    assert cwd == str(box.workdir)
    assert "GRADER_SECRET" not in env and "NBGRADER_EXECUTION" not in env
    assert env["CS349E_TRUSTED_GRADING"] == "1" and env["OMP_NUM_THREADS"] == "1"


def test_fallback_does_not_put_the_project_on_sys_path(sandbox):
    assert sandbox(CODE, **RL).call("codesign", "import_solutions").exc_type == "ModuleNotFoundError"


def test_fallback_timeouts_and_crashes_recover(sandbox):
    box = sandbox(CODE, **RL)
    assert box.call("codesign", "spin", timeout=0.5).status == "timeout"
    crashed = box.call("codesign", "hard_exit")
    assert crashed.status == "crashed" and "exit status 5" in crashed.exc_message
    assert box.call("codesign", "sys_exit").exc_type == "SystemExit"
    assert box.call("codesign", "ok", (1,)).value == 2


def test_fallback_memory_cap(sandbox):
    box = sandbox(CODE, limits=replace(FAST, memory_bytes=768 * 1024**2), **RL)
    assert box.call("codesign", "huge").exc_type == "MemoryError"
    creeping = box.call("codesign", "creeping")
    assert creeping.status == "crashed" or creeping.exc_type == "MemoryError"
    assert box.call("codesign", "ok", (1,)).value == 2


# -- a root grader without bubblewrap gives up root where uid 65534 can run the worker ---------

@pytest.fixture
def fresh_probes():
    """The machine probe and the warning are once per process; these tests fake the machine."""
    cached = (launcher.sandbox_uid_problem, launcher.warn_not_isolated)  # before any monkeypatch
    for function in cached:
        function.cache_clear()
    yield
    for function in cached:
        function.cache_clear()


@pytest.fixture
def private_box(tmp_path):
    """(student folder, the sandbox's private folder holding its copy) like Sandbox makes them:
    the private folder in the system temp folder, which uid 65534 can enter."""
    student = write_files(tmp_path / "student", {"codesign.py": "def f():\n    return 1\n"})
    private = Path(tempfile.mkdtemp(prefix="cs349e-sandbox-test-"))
    copy_submission(student, private / "submission")
    yield student, private
    remove_tree(private)


def owners(folder: Path) -> set[int]:
    return {folder.stat().st_uid} | {p.lstat().st_uid for p in folder.rglob("*")}


@needs_root
def test_root_fallback_drops_to_its_uid_and_hands_it_only_the_private_folder(
        monkeypatch, capsys, fresh_probes, private_box):
    student, private = private_box
    uid = claim_uid()
    try:
        monkeypatch.setattr(launcher, "sandbox_uid_problem", lambda: None)
        plan = launch_plan("rlimits", private / "submission", private, FAST, uid=uid)
        assert plan.isolation == "rlimits" and plan.drop_to == (uid, uid)
        assert (plan.counted_uid, plan.max_processes) == (uid, FAST.max_processes)
        assert plan.nproc_limit() == FAST.max_processes    # a fresh uid runs nothing yet
        assert owners(private) == {uid}                    # HOME and the submission copy
        assert stat.S_IMODE(private.stat().st_mode) == 0o700   # closed to other sandboxes
        assert (private / "home").is_dir() and plan.env["HOME"] == str(private / "home")
        assert owners(student) == {0}                      # never the student's own folder
        warning = capsys.readouterr().err
        assert "NOT isolated" in warning and "runs as an unprivileged uid of its own" in warning
    finally:
        release_uid(uid)


@needs_root
def test_root_fallback_stays_root_and_says_so_where_65534_cannot_run_python(
        monkeypatch, capsys, fresh_probes, private_box):
    _, private = private_box
    problem = "/opt/python is mode 0700: others cannot enter it"
    monkeypatch.setattr(launcher, "sandbox_uid_problem", lambda: problem)
    plan = launch_plan("rlimits", private / "submission", private, FAST)
    assert plan.isolation == "rlimits"
    assert (plan.drop_to, plan.counted_uid, plan.max_processes) == (None, None, None)
    assert owners(private) == {0}
    warning = capsys.readouterr().err
    assert "runs as ROOT and can read every file the grader can" in warning and problem in warning


@needs_root
def test_root_fallback_stays_root_when_its_private_folder_is_out_of_reach(
        monkeypatch, capsys, fresh_probes, tmp_path):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    (closed / "box").mkdir()
    monkeypatch.setattr(launcher, "sandbox_uid_problem", lambda: None)
    plan = launch_plan("rlimits", closed / "box", closed / "box", FAST)
    assert plan.drop_to is None and owners(closed) == {0}
    assert "others cannot enter it" in capsys.readouterr().err


def test_uid_problem_names_the_directory_that_shuts_65534_out(monkeypatch, fresh_probes, tmp_path):
    inside = tmp_path / "install" / "lib"
    inside.mkdir(parents=True)
    (tmp_path / "install").chmod(0o700)
    monkeypatch.setattr(launcher, "_missing_capabilities", lambda: [])
    monkeypatch.setattr(launcher, "_paths_the_worker_reads", lambda: [inside])
    problem = launcher.sandbox_uid_problem()
    assert problem is not None and "others cannot enter it" in problem
    blocked = problem.split(" is mode ")[0]
    assert Path(blocked) in [inside, *inside.parents]
    assert not os.stat(blocked).st_mode & stat.S_IXOTH


def test_uid_problem_names_a_file_others_cannot_read(monkeypatch, fresh_probes):
    opened = Path(tempfile.mkdtemp(prefix="cs349e-reach-"))
    try:
        opened.chmod(0o755)
        if launcher._closed_ancestor(opened):
            pytest.skip("the system temp folder is closed to others")
        private_file = opened / "worker.py"
        private_file.write_text("")
        private_file.chmod(0o600)
        assert launcher._unreachable(opened) is None
        assert "others cannot read it" in launcher._unreachable(private_file)
    finally:
        shutil.rmtree(opened)


def test_uid_problem_names_missing_capabilities(monkeypatch, fresh_probes):
    monkeypatch.setattr(launcher, "_missing_capabilities", lambda: ["CAP_SETUID", "CAP_CHOWN"])
    assert "lacks CAP_SETUID, CAP_CHOWN" in launcher.sandbox_uid_problem()


@needs_root
def test_permission_check_agrees_with_a_real_start_as_65534():
    """Where the bits shut uid 65534 out, starting this Python as 65534 does fail."""
    closed = [p for p in launcher._paths_the_worker_reads() if launcher._unreachable(p)]
    if not closed:
        pytest.skip("uid 65534 can reach this Python's files")
    assert launcher._start_as_sandbox_uid() is not None


STUDENT = {"codesign.py": """
    import os

    def who():
        return os.getuid(), os.getgid(), os.getgroups()

    def read(path):
        return open(path).read()

    def write_home():
        with open(os.path.join(os.environ["HOME"], "note.txt"), "w") as note:
            note.write("ok")
        with open("answer.txt", "w") as answer:
            answer.write("ok")
"""}

GRADER = """
import json, sys
from pathlib import Path
from autograder.sandbox import Sandbox, launcher
problem = launcher.sandbox_uid_problem()
if problem is None:
    with Sandbox(Path(sys.argv[1]), isolation="rlimits") as box:
        who = box.call("codesign", "who").value
        secret = box.call("codesign", "read", (sys.argv[2],)).exc_type
        wrote = box.call("codesign", "write_home").status
        problem = {"who": who, "secret": secret, "wrote": wrote}
print(json.dumps(problem))
"""


def python_65534_can_run(folder: Path) -> str | None:
    """This interpreter if uid 65534 can run it, else a virtualenv of the system's Python of the
    same version that sees this environment's packages (numpy), or None."""
    if launcher.sandbox_uid_problem() is None:
        return sys.executable
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path="/usr/bin:/usr/local/bin")
    if system is None or launcher._closed_ancestor(folder / "venv"):
        return None
    made = subprocess.run([system, "-m", "venv", "--without-pip", str(folder / "venv")],
                          capture_output=True, timeout=60)
    if made.returncode != 0:
        return None
    python = folder / "venv" / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, timeout=60).stdout.strip()
    (Path(site) / "shared.pth").write_text(str(Path(numpy.__file__).parents[1]) + "\n")
    return str(python)


def runs_as_65534(python: str) -> bool:
    """Checked without the launcher: uid 65534 imports numpy with `python` and reads the worker."""
    worker = launcher._HERE / "worker.py"
    code = f"import os, numpy; open({str(worker)!r}).read(); os.listdir({str(worker.parent)!r})"
    try:
        probe = subprocess.run([python, "-s", "-c", code], cwd="/", user=SANDBOX_UID, group=SANDBOX_GID,
                               extra_groups=[], capture_output=True, timeout=60)
    except OSError:
        return False
    return probe.returncode == 0


@needs_root
def test_root_fallback_worker_cannot_read_root_only_files(tmp_path):
    """The whole way, with a Python uid 65534 can run: the worker is 65534 with no groups,
    a root-only file stays closed, and HOME and its copy are writable."""
    secret = tmp_path / "solutions" / "key.txt"
    secret.parent.mkdir(mode=0o700)
    secret.write_text("the reference")
    student = write_files(tmp_path / "student", STUDENT)
    interpreters = Path(tempfile.mkdtemp(prefix="cs349e-python-"))
    try:
        interpreters.chmod(0o755)
        python = python_65534_can_run(interpreters)
        if python is None or not runs_as_65534(python):
            pytest.skip("no Python on this machine that uid 65534 can run")
        run = subprocess.run([python, "-c", GRADER, str(student), str(secret)], cwd=PROJECT_ROOT,
                             capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(interpreters)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    uid, gid, groups = result.pop("who")
    assert uid == gid >= FIRST_UID and groups == []
    assert result == {"secret": "PermissionError", "wrote": "ok"}
    assert "runs as an unprivileged uid of its own" in run.stderr
    assert owners(student) == {0}
