"""The explicit fallback without bubblewrap: a plain child with rlimits, run as an unprivileged uid
of its own, still safe for the grader and unable to read the project.

Where the fallback refuses on this machine (an interpreter under a 0700 /root, a world-readable
project), the tests that need a working fallback run inside the machine tests/rlimits_machine.py
makes and report here (fallback_in_machine.py)."""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import stat
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from sandbox_helpers import FAST, needs_rlimits, write_files

from autograder.sandbox import SandboxUnavailable, launcher, uid_fallback
from autograder.sandbox.launcher import PROJECT_ROOT, launch_plan
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

        def abort():
            os.abort()

        def raise_core_limit():
            try:
                resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY,) * 2)
            except (ValueError, OSError) as exc:
                return type(exc).__name__, resource.getrlimit(resource.RLIMIT_CORE)
            return "raised", resource.getrlimit(resource.RLIMIT_CORE)

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


@needs_rlimits
def test_fallback_reports_rlimits_and_calls_work(sandbox):
    box = sandbox(CODE, **RL)
    assert box.isolation == "rlimits"
    outcome = box.call("codesign", "ok", ([1.5, 2.0],))
    assert outcome.status == "ok" and outcome.value.tolist() == [3.0, 4.0]
    assert outcome.output == "value [1.5, 2.0]\n"


@needs_rlimits
def test_fallback_applies_rlimits_and_a_scrubbed_environment(sandbox, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "s3cret")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    box = sandbox(CODE, **RL)
    limits = box.call("codesign", "limits").value
    assert limits == {"RLIMIT_AS": FAST.memory_bytes, "RLIMIT_CPU": FAST.cpu_seconds,
                      "RLIMIT_FSIZE": FAST.file_bytes, "RLIMIT_CORE": 1}
    env, cwd = box.call("codesign", "env").value
    assert cwd == str(box.workdir)
    assert "GRADER_SECRET" not in env and "NBGRADER_EXECUTION" not in env
    assert env["OMP_NUM_THREADS"] == "1" and "CS349E_TRUSTED_GRADING" not in env


@needs_rlimits
def test_fallback_does_not_put_the_project_on_sys_path(sandbox):
    assert sandbox(CODE, **RL).call("codesign", "import_solutions").exc_type == "ModuleNotFoundError"


@needs_rlimits
def test_fallback_timeouts_and_crashes_recover(sandbox):
    box = sandbox(CODE, **RL)
    assert box.call("codesign", "spin", timeout=0.5).status == "timeout"
    crashed = box.call("codesign", "hard_exit")
    assert crashed.status == "crashed" and "exit status 5" in crashed.exc_message
    assert box.call("codesign", "sys_exit").exc_type == "SystemExit"
    assert box.call("codesign", "ok", (1,)).value == 2


@needs_rlimits
def test_a_crash_dumps_no_core_and_the_limit_stays_at_one_byte(sandbox):
    """A core limit of 1, not 0: where dumps are piped to a crash handler the kernel ignores 0
    (the handler would run outside the sandbox's CPUs, once per crash); 1 skips piped dumps and is
    below any core file's size. The student cannot raise it."""
    box = sandbox(CODE, **RL)
    assert box.call("codesign", "raise_core_limit").value == ("ValueError", (1, 1))
    assert box.call("codesign", "abort").status == "crashed"
    assert not [p for p in box.workdir.rglob("core*") if p.is_file()]
    assert box.call("codesign", "ok", (1,)).value == 2


@needs_rlimits
def test_fallback_memory_cap(sandbox):
    box = sandbox(CODE, limits=replace(FAST, memory_bytes=768 * 1024**2), **RL)
    assert box.call("codesign", "huge").exc_type == "MemoryError"
    creeping = box.call("codesign", "creeping")
    assert creeping.status == "crashed" or creeping.exc_type == "MemoryError"
    assert box.call("codesign", "ok", (1,)).value == 2


# -- the fallback runs only as an unprivileged uid of its own, with the project closed --------

@pytest.fixture
def fresh_probes():
    """The machine probes and the warning are once per process; these tests fake the machine."""
    cached = (launcher.sandbox_uid_problem, launcher.rlimits_problem, launcher.warn_not_isolated,
              launcher.network_namespace_problem)
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
        monkeypatch.setattr(uid_fallback, "rlimits_problem", lambda: None)
        plan = launch_plan("rlimits", private / "submission", private, FAST, uid=uid)
        assert plan.isolation == "rlimits" and plan.drop_to == (uid, uid)
        assert (plan.counted_uid, plan.max_processes) == (uid, FAST.max_processes)
        assert plan.nproc_limit() == FAST.max_processes    # a fresh uid runs nothing yet
        worker = Path(plan.worker_path)
        assert worker.parent == private / "worker" and PROJECT_ROOT not in worker.parents
        assert owners(worker.parent) == {0}                # root's: the worker cannot change it
        assert owners(private) - owners(worker.parent) == {uid}   # HOME and the submission copy
        assert stat.S_IMODE(private.stat().st_mode) == 0o700   # closed to other sandboxes
        assert (private / "home").is_dir() and plan.env["HOME"] == str(private / "home")
        assert owners(student) == {0}                      # never the student's own folder
        assert "runs as an unprivileged uid of its own" in capsys.readouterr().err
    finally:
        release_uid(uid)


@needs_root
def test_root_fallback_refuses_where_65534_cannot_run_python(monkeypatch, fresh_probes, private_box):
    _, private = private_box
    problem = "/opt/python is mode 0700: others cannot enter it"
    monkeypatch.setattr(uid_fallback, "sandbox_uid_problem", lambda: problem)
    with pytest.raises(SandboxUnavailable, match="unprivileged uid") as refused:
        launch_plan("rlimits", private / "submission", private, FAST)
    assert problem in str(refused.value) and "bubblewrap" in str(refused.value)
    assert owners(private) == {0}                          # nothing was handed over


@needs_root
def test_the_refusal_says_a_virtualenv_keeps_an_interpreter_others_cannot_reach(monkeypatch, fresh_probes, tmp_path):
    """pyenv under a 0700 /root: a virtualenv made from that Python still runs /root's interpreter,
    so "use a virtualenv under /opt" would not help; the hint names the interpreter's install."""
    home = tmp_path / "root"
    (home / "python").mkdir(parents=True)
    home.chmod(0o700)
    monkeypatch.setattr(uid_fallback.sys, "base_prefix", str(home / "python"))
    monkeypatch.setattr(uid_fallback, "sandbox_uid_problem", lambda: f"{home} is mode 0700: others cannot enter it")
    problem = uid_fallback.rlimits_problem()
    assert f"{home / 'python'}" in problem and "keeps" in problem
    assert "/usr/bin/python3 -m venv" in problem


@needs_root
def test_root_fallback_refuses_where_the_project_is_open_to_others(monkeypatch, fresh_probes, tmp_path):
    project = tmp_path / "kit"
    (project / "solutions").mkdir(parents=True)
    project.chmod(0o755)
    monkeypatch.setattr(uid_fallback, "sandbox_uid_problem", lambda: None)
    monkeypatch.setattr(uid_fallback, "_closed_ancestor", lambda path: None)   # every folder open
    monkeypatch.setattr(uid_fallback, "PROJECT_ROOT", project)
    with pytest.raises(SandboxUnavailable, match=f"chmod 700 {project}"):
        launcher.resolve_isolation("rlimits")


@needs_root
def test_root_fallback_refuses_when_its_private_folder_is_out_of_reach(monkeypatch, fresh_probes, tmp_path):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    (closed / "box").mkdir()
    monkeypatch.setattr(uid_fallback, "rlimits_problem", lambda: None)
    with pytest.raises(SandboxUnavailable, match="others cannot enter it"):
        launch_plan("rlimits", closed / "box", closed / "box", FAST)
    assert owners(closed) == {0}


def test_fallback_refuses_a_grader_that_is_not_root(monkeypatch, fresh_probes):
    """As an ordinary uid the student's code would run as that uid and read the project."""
    monkeypatch.setattr(uid_fallback.os, "geteuid", lambda: 1000)
    with pytest.raises(SandboxUnavailable, match="not root") as refused:
        launcher.resolve_isolation("rlimits")
    assert "bubblewrap" in str(refused.value) and "\n" not in str(refused.value)


def test_uid_problem_names_the_directory_that_shuts_65534_out(monkeypatch, fresh_probes, tmp_path):
    inside = tmp_path / "install" / "lib"
    inside.mkdir(parents=True)
    (tmp_path / "install").chmod(0o700)
    monkeypatch.setattr(uid_fallback, "_missing_capabilities", lambda: [])
    monkeypatch.setattr(uid_fallback, "_paths_the_worker_reads", lambda: [inside])
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
    monkeypatch.setattr(uid_fallback, "_missing_capabilities", lambda: ["CAP_SETUID", "CAP_CHOWN"])
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

    def worker_file():
        return os.path.realpath(__import__("sys").modules["__main__"].__file__)

    def write_home():
        with open(os.path.join(os.environ["HOME"], "note.txt"), "w") as note:
            note.write("ok")
        with open("answer.txt", "w") as answer:
            answer.write("ok")
"""}


@needs_root
@needs_rlimits
def test_root_fallback_worker_cannot_read_the_project_or_root_only_files(sandbox, tmp_path, scratch):
    """The whole way: the worker is a uid of its own with no groups, runs a private copy of its
    files, cannot read the reference, the hidden tests or a root-only file (in /tmp: with a
    private /tmp it does not even see it), and can write HOME and its copy."""
    secret = tmp_path / "root_only" / "key.txt"
    secret.parent.mkdir(mode=0o700)
    secret.write_text("the reference")
    box = sandbox(STUDENT, **RL)
    uid, gid, groups = box.call("codesign", "who").value
    assert uid == gid >= FIRST_UID and groups == []
    hidden = "FileNotFoundError" if scratch == "private scratch" else "PermissionError"
    assert box.call("codesign", "read", (str(secret),)).exc_type == hidden
    for path in (PROJECT_ROOT / "solutions" / "lec01_codesign" / "codesign.py",
                 PROJECT_ROOT / "autograder" / "lec01_codesign" / "__init__.py"):
        assert box.call("codesign", "read", (str(path),)).exc_type == "PermissionError", path
    assert PROJECT_ROOT not in Path(box.call("codesign", "worker_file").value).parents
    assert box.call("codesign", "write_home").status == "ok"


# -- the next student on the same machine ---------------------------------------------------------
LEAVER = {"codesign.py": """
    import ctypes, os

    def leave(tag):
        # What one student leaves on the host: private files where any uid may write, a folder
        # with a file in it, a SysV shared-memory segment. Returns what was made.
        made = []
        for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
            path = os.path.join(folder, f"left-{tag}")
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except OSError:
                continue
            os.write(fd, b"alice's answers")
            os.close(fd)
            made.append(path)
        os.makedirs(f"/tmp/left-dir-{tag}/inner", mode=0o700)
        with open(f"/tmp/left-dir-{tag}/inner/note", "w") as note:
            note.write("alice")
        made.append(f"/tmp/left-dir-{tag}")
        libc = ctypes.CDLL(None, use_errno=True)
        segment = libc.shmget(0, 4096, 0o1000 | 0o600)   # IPC_PRIVATE, IPC_CREAT, mode 0600
        return os.getuid(), made, segment

    def fill(folder, pieces, size):
        # Writes `pieces` files of `size` bytes; how many fit, and the error that stopped it.
        written = 0
        try:
            for piece in range(pieces):
                with open(os.path.join(folder, f"fill-{piece}"), "wb") as handle:
                    handle.write(b"x" * size)
                written += 1
        except OSError as exc:
            return written, exc.errno
        return written, 0

    def device(folder):
        return os.stat(folder).st_dev

    def mqueue(name, text):
        # A POSIX message queue holding a message: it lives in the kernel, not in a folder, and
        # /dev/mqueue (where it could be seen) is not mounted on every machine.
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mq_open.restype = ctypes.c_int
        fd = libc.mq_open(name.encode(), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600, None)
        if fd < 0:
            return -ctypes.get_errno()
        data = text.encode()
        return libc.mq_send(fd, data, len(data), 0)

    def busy(folder):
        # A process that left the worker (setsid, double fork) and keeps writing into `folder`.
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                index = 0
                while True:
                    index += 1
                    try:
                        os.mkdir(os.path.join(folder, f"busy-{index}"))
                    except OSError:
                        pass
            os._exit(0)
        os.wait()
        return os.path.abspath(folder)

    def nest(folder, depth):
        # A chain of folders deeper than the grader's recursion limit, one level at a time.
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        os.mkdir("nest", dir_fd=fd)
        inner = os.open("nest", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(fd)
        return os.getcwd()

    def give_away(to_uid):
        # SysV objects whose owner the student changed (IPC_SET lets the owner name any uid as
        # the new owner; only the creator's uid, cuid, stays): a shared-memory segment, a
        # semaphore set and a message queue, each readable by everyone. Returns their ids.
        libc = ctypes.CDLL(None, use_errno=True)
        made = {"shm": libc.shmget(0, 4096, 0o1000 | 0o666), "sem": libc.semget(0, 1, 0o1000 | 0o666),
                "msg": libc.msgget(0, 0o1000 | 0o666)}
        for table, ident in made.items():
            buffer = ctypes.create_string_buffer(512)       # struct {shm,sem,msq}id_ds: ipc_perm first
            if table == "sem":
                stat_ok = libc.semctl(ident, 0, 2, buffer)  # IPC_STAT
            else:
                stat_ok = getattr(libc, f"{table}ctl")(ident, 2, buffer)
            ctypes.c_uint32.from_buffer(buffer, 4).value = to_uid   # ipc_perm.uid (after __key)
            if table == "sem":
                done = libc.semctl(ident, 0, 1, buffer)     # IPC_SET
            else:
                done = getattr(libc, f"{table}ctl")(ident, 1, buffer)
            made[table] = [ident, stat_ok, done, ctypes.get_errno()]
        return os.getuid(), made

    def ok(x):
        return x

    def read(paths):
        found = {}
        for path in paths:
            try:
                with open(path, "rb") as handle:
                    found[path] = handle.read().decode()
            except OSError as exc:
                found[path] = exc.errno
        return os.getuid(), found
"""}


def _sysv_segments_of(uid: int) -> list[str]:
    with open("/proc/sysvipc/shm") as table:
        rows = [line.split() for line in table.read().splitlines()[1:]]
    return [row[1] for row in rows if int(row[7]) == uid]   # shmid; uid column


@pytest.fixture(params=["private scratch", "no mount namespace"])
def scratch(request, monkeypatch):
    """The fallback where the platform allows the worker a mount namespace (private tmpfs over
    the shared folders), and where it does not (a container's default profile)."""
    monkeypatch.setattr(uid_fallback, "PRIVATE_SCRATCH", request.param == "private scratch")
    return request.param


@needs_root
@needs_rlimits
def test_the_next_student_under_rlimits_finds_nothing_the_previous_left(sandbox, scratch):
    """-j 1: one student after another in the same grader. The first leaves mode-0600 files in
    /tmp, /dev/shm (RAM) and the like; once its sandbox is closed every one is gone, and the next
    student runs as another uid that could not read them anyway."""
    tag = os.urandom(4).hex()
    first = sandbox(LEAVER, **RL)
    uid, made, segment = first.call("codesign", "leave", (tag,)).value
    assert segment >= 0 and {f"/tmp/left-{tag}", f"/dev/shm/left-{tag}"} <= set(made), made
    first.close()
    assert [path for path in made if os.path.lexists(path)] == []
    assert _sysv_segments_of(uid) == []
    second = sandbox(LEAVER, **RL)
    next_uid, _ = second.call("codesign", "read", ([],)).value
    assert next_uid != uid


def _sysv_left_by(uid: int) -> dict[str, list[int]]:
    """The SysV objects (shm, sem, msg) whose owner or creator is `uid`, by table."""
    found = {}
    for table, id_name in (("shm", "shmid"), ("sem", "semid"), ("msg", "msqid")):
        with open(f"/proc/sysvipc/{table}") as handle:
            lines = handle.read().splitlines()
        columns = lines[0].split()
        rows = [dict(zip(columns, line.split())) for line in lines[1:]]
        found[table] = [int(row[id_name]) for row in rows if uid in (int(row["uid"]), int(row["cuid"]))]
    return found


@needs_root
@needs_rlimits
def test_a_sysv_object_given_to_another_uid_still_goes_with_the_sandbox(sandbox, scratch):
    """IPC_SET lets a segment's owner hand it to any uid (here nobody's, 65534): the grader
    removed the uid's SysV objects by their owner only, so a segment given away outlived the
    sandbox, readable by whoever came next and holding memory until the machine restarts. The
    creator (cuid) cannot be changed: it must go by that too."""
    box = sandbox(LEAVER, **RL)
    uid, made = box.call("codesign", "give_away", (65534,)).value
    assert all(ident >= 0 and stat_ok == 0 and done == 0 for ident, stat_ok, done, _ in made.values()), made
    box.close()
    assert _sysv_left_by(uid) == {"shm": [], "sem": [], "msg": []}


@needs_root
@needs_rlimits
def test_a_file_left_in_any_world_writable_system_folder_goes_with_the_sandbox(sandbox, scratch, open_system_folder):
    """Only /tmp, /var/tmp, /dev/shm, /run/lock and /dev/mqueue were swept: a mode-0600 file the
    student left in another folder every uid may write into (Ubuntu's /var/crash) outlived the
    sandbox, and the student given its uid next (the 65th after it, or the next grader run with
    the same pid) could read it."""
    box = sandbox(LEAVER, **RL)
    path = open_system_folder / "left"
    uid, found = box.call("codesign", "read", ([],)).value
    assert tuple(box.call("codesign", "fill", (str(open_system_folder), 1, 16)).value) == (1, 0)
    box.close()
    assert [p.name for p in open_system_folder.iterdir()] == [], f"{path.parent} still holds uid {uid}'s files"


@needs_root
@needs_rlimits
def test_where_the_platform_allows_the_fallbacks_scratch_folders_are_private_and_bounded(sandbox, monkeypatch):
    """A student cannot fill the host's /dev/shm (its memory) or /tmp: each is a tmpfs of the
    sandbox's own, as large as one file may be."""
    monkeypatch.setattr(uid_fallback, "PRIVATE_SCRATCH", True)
    limits = replace(FAST, file_bytes=1024**2)
    box = sandbox(LEAVER, limits=limits, **RL)
    for folder in ("/dev/shm", "/tmp"):
        assert box.call("codesign", "device", (folder,)).value != os.stat(folder).st_dev, folder
        written, err = box.call("codesign", "fill", (folder, 4, 400 * 1024)).value
        assert err == errno.ENOSPC and written * 400 * 1024 <= limits.file_bytes, (folder, written, err)
    assert box.call("codesign", "ok", (1,)).status == "ok"   # its own folder is still there


@needs_root
@needs_rlimits
def test_fallback_closes_after_student_code_nests_folders_past_the_recursion_limit(sandbox, scratch):
    """shutil.rmtree recurses once per level: 1500 nested folders in the sandbox's own folder and
    in /tmp ended the grader's close with RecursionError, before the uid's processes were ended
    and its files swept. Now both go and the sandbox closes."""
    box = sandbox(LEAVER, **RL)
    workdir = box.call("codesign", "nest", (".", 1500)).value
    box.call("codesign", "nest", ("/tmp", 1500))
    uid = box.call("codesign", "read", ([],)).value[0]
    box.close()
    assert not os.path.lexists(workdir)
    assert [entry for entry in os.scandir("/tmp") if entry.stat(follow_symlinks=False).st_uid == uid] == []


def _mqueue_message(name: str) -> str | None:
    """What the queue `name` holds (read as root), or None when there is no such queue."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.mq_open(name.encode(), os.O_RDONLY | os.O_NONBLOCK)
    if fd < 0:
        assert ctypes.get_errno() == errno.ENOENT, os.strerror(ctypes.get_errno())
        return None
    buffer = ctypes.create_string_buffer(1 << 16)
    size = libc.mq_receive(fd, buffer, len(buffer), None)
    os.close(fd)
    libc.mq_unlink(name.encode())
    return buffer.raw[:max(size, 0)].decode()


@needs_root
@needs_rlimits
def test_the_next_student_under_rlimits_finds_no_message_queue_the_previous_left(sandbox, scratch):
    """A POSIX message queue outlives the sandbox in the host's IPC namespace (kernel memory, and
    the uid's next holder could read it); it must go with the sandbox, /dev/mqueue mounted or not."""
    name = f"/left-{os.urandom(4).hex()}"
    box = sandbox(LEAVER, **RL)
    assert box.call("codesign", "mqueue", (name, "alice's answers")).value == 0
    box.close()
    assert _mqueue_message(name) is None


@needs_root
@needs_rlimits
def test_fallback_removes_the_sandbox_folder_while_a_left_process_writes_into_it(sandbox, scratch):
    """A process that left the worker's session (setsid, double fork) and keeps adding entries to
    the sandbox's own folder: the folder still goes when the sandbox closes."""
    box = sandbox(LEAVER, **RL)
    workdir = box.call("codesign", "busy", (".",)).value
    box.close()
    assert not os.path.lexists(workdir)


@needs_root
@needs_rlimits
def test_the_fallback_records_whether_its_scratch_folders_were_its_own(sandbox, scratch):
    """What a result says about /tmp and /dev/shm is what the worker's lockdown could do on the
    platform: a tmpfs of its own with a mount namespace, the shared folders without one."""
    box = sandbox(LEAVER, **RL)
    assert box.call("codesign", "ok", (1,)).status == "ok"
    assert box.private_scratch is (scratch == "private scratch")
