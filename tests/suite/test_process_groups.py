"""When a pytest run that started a long-running process (jupyter-lab, a dask scheduler) ends,
however it ends, is that process and everything in its group gone?"""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from core.script_output import REPO
from process_groups import running

# A test that starts a process which itself starts a child (as jupyter-lab starts kernels), writes
# both pids down, then waits to be interrupted.
TEST = textwrap.dedent('''
    import subprocess, sys, time
    {start}

    def test_waits_beside_a_server(tmp_path_factory):
        code = "import subprocess, sys, time; c = subprocess.Popen(['sleep', '600']); print(c.pid, flush=True); time.sleep(600)"
        proc = start([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        child = proc.stdout.readline().strip()
        open({pids!r}, "w").write(f"{{proc.pid}} {{child}}")
        time.sleep(600)
''')
HELPER = "from process_groups import start"
PLAIN = "start = lambda args, **kw: subprocess.Popen(args, start_new_session=True, **kw)"

# A test that runs a command the plain way (subprocess.run, as most tests run the kit's commands)
# which itself starts a child, and is stopped while the command runs.
BLOCKING = textwrap.dedent('''
    import subprocess, sys

    def test_runs_a_command():
        code = ("import os, subprocess, time; c = subprocess.Popen(['sleep', '600']); "
                "open({pids!r}, 'w').write(str(os.getpid()) + ' ' + str(c.pid)); time.sleep(600)")
        subprocess.run([sys.executable, "-c", code], timeout=900)
''')


def _as_from_a_terminal() -> None:
    """The stopped run starts with the signals' default dispositions, as one typed at a terminal: a
    suite itself run under nohup (SIGHUP ignored, inherited) would otherwise hand that on, and the
    plugin rightly leaves an ignored SIGHUP ignored."""
    for signum in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def _run_and_stop(tmp_path, start_line: str, sig: int, *, test: str = TEST,
                   plugins: tuple[str, ...] = ()) -> list[bool]:
    """Runs `test` under pytest (with `plugins`), stops pytest with `sig` once both pids are
    written, and says which of (process, its child) are still alive a few moments later."""
    pids = tmp_path / "pids"
    (tmp_path / "test_server.py").write_text(test.format(start=start_line, pids=str(pids)))
    loaded = [arg for plugin in plugins for arg in ("-p", plugin)]
    pytest_run = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *loaded,
                                   "-o", f"pythonpath={REPO} {REPO / 'tests'}", "test_server.py"],
                                  cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True,   # never this run's own group, which the cleanup below kills
                                  preexec_fn=_as_from_a_terminal)
    try:
        for _ in range(600):
            if pids.exists() and len(pids.read_text().split()) == 2:
                break
            time.sleep(0.1)
        started = [int(p) for p in pids.read_text().split()]
        os.kill(pytest_run.pid, sig)
        pytest_run.wait(timeout=60)
        for _ in range(100):   # the group gets its signal at once; give it a moment to exit
            if not any(running(p) for p in started):
                break
            time.sleep(0.1)
        return [running(p) for p in started]
    finally:
        pytest_run.kill()
        for pid in [int(p) for p in pids.read_text().split()] if pids.exists() else []:
            try:
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL],
                         ids=["interrupted", "terminated", "killed"])
def test_the_helper_leaves_nothing_behind(tmp_path, sig):
    process_alive, child_alive = _run_and_stop(tmp_path, HELPER, sig)
    assert not process_alive
    if sig != signal.SIGKILL:   # killed: the kernel tells the process; what it started is its to end
        assert not child_alive


def test_a_plain_new_session_outlives_an_interrupted_run(tmp_path):
    """What the helper is for: started the old way, the process outlives pytest."""
    assert _run_and_stop(tmp_path, PLAIN, signal.SIGTERM) == [True, True]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=["interrupted", "terminated", "hung-up"])
def test_a_command_run_the_plain_way_ends_with_the_run(tmp_path, sig):
    """The suite's own plugin (tests/conftest.py loads it) ends whatever the run started, however
    it was started: a `subprocess.run` still going when pytest is stopped, and its child."""
    assert _run_and_stop(tmp_path, "", sig, test=BLOCKING, plugins=("process_groups",)) == [False, False]


# A test that makes a temporary folder outside pytest's tmp_path (as the README and exchange tests do:
# other accounts must enter it) and removes it in a `finally`, stopped while it works.
CLEANS_UP = textwrap.dedent('''
    import os, shutil, subprocess, sys, tempfile, time

    def test_works_in_a_folder_of_its_own():
        base = tempfile.mkdtemp(prefix="cs349e-stopped-")
        try:
            code = "import os, time; open({pids!r}, 'w').write(str(os.getpid()) + ' ' + str(os.getpid())); time.sleep(600)"
            open({pids!r} + ".folder", "w").write(base)
            subprocess.run([sys.executable, "-c", code], timeout=900)
        finally:
            shutil.rmtree(base, ignore_errors=True)
''')


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=["interrupted", "terminated", "hung-up"])
def test_a_stopped_run_still_runs_the_tests_finally(tmp_path, sig):
    """A CI timeout (SIGTERM) or a closed terminal (SIGHUP) unwinds the run as Ctrl-C does: the
    `finally` of the test that was running removes what it made outside pytest's tmp_path."""
    _run_and_stop(tmp_path, "", sig, test=CLEANS_UP, plugins=("process_groups",))
    folder = (tmp_path / "pids.folder").read_text()
    left = os.path.exists(folder)
    shutil.rmtree(folder, ignore_errors=True)   # this test's own leftover, when it fails
    assert not left, f"{folder} was left behind"


def test_the_suite_loads_the_plugin():
    conftest = (REPO / "tests" / "conftest.py").read_text()
    assert "end_all_on_exit()" in conftest


# A process whose multiprocessing lock is a named semaphore (spawn context: kept by name, removed by the
# resource tracker it starts, in its group): as a dask worker's are.
HOLDS_A_SEMAPHORE = ("import multiprocessing, time; lock = multiprocessing.get_context('spawn').Lock(); "
                     "print(lock._semlock.name, flush=True); time.sleep(600)")


def test_a_group_killed_outright_leaves_no_semaphore_in_dev_shm():
    """A dask worker killed whole (tests/cluster) took its resource tracker with it: each run of the
    suite left six /dev/shm/sem.mp-* files behind. Ending a group removes the named semaphores its
    processes held that no other process holds."""
    import process_groups

    proc = process_groups.start([sys.executable, "-c", HOLDS_A_SEMAPHORE], stdout=subprocess.PIPE, text=True)
    path = "/dev/shm/sem." + proc.stdout.readline().strip().lstrip("/")
    assert os.path.exists(path)
    process_groups.end(proc, signal.SIGKILL)
    proc.stdout.close()
    assert not os.path.exists(path)


def test_a_semaphore_another_process_holds_is_kept():
    """Only what no process outside the ended group maps is removed (a lock shared with the test)."""
    import process_groups

    holder = subprocess.Popen([sys.executable, "-c", HOLDS_A_SEMAPHORE], stdout=subprocess.PIPE, text=True)
    try:
        path = "/dev/shm/sem." + holder.stdout.readline().strip().lstrip("/")
        code = f"import mmap, os, time; f = open({path!r}, 'r+b'); m = mmap.mmap(f.fileno(), 0); time.sleep(600)"
        group = process_groups.start([sys.executable, "-c", code])
        info = os.stat(path)
        key = (os.major(info.st_dev), os.minor(info.st_dev), info.st_ino)
        deadline = time.monotonic() + 10
        while key not in process_groups.shm_mapped_by([group.pid]) and time.monotonic() < deadline:
            time.sleep(0.05)
        process_groups.end(group, signal.SIGKILL)
        assert os.path.exists(path)       # the holder, outside the group, still maps it
    finally:
        holder.terminate()
        holder.wait()
        holder.stdout.close()
