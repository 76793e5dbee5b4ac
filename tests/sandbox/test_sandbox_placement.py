"""CPU placement (placement.py): while the machine has enough CPUs, every open sandbox runs on CPUs
of its own; what a hog forks inside stays on them and cannot widen them (sched_setaffinity is
refused), so it cannot crowd a classmate's CPU. Started and forked workers, and the rlimits
fallback (its variant runs in test_sandbox_isolation_rlimits.py's machine)."""

from __future__ import annotations

import errno
import multiprocessing
import os

import pytest
from sandbox_helpers import needs_bwrap, needs_rlimits

from autograder.sandbox import placement

CPUS = sorted(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="one CPU: there is nothing to place a sandbox on")
pytestmark = needs_two_cpus

HOG = {
    "codesign.py": """
        import ctypes, json, os, threading, time

        def spinners(count, seconds):
            # What each forked spinner runs on, and what happens when it asks for every CPU
            # (through Python, the C library, and a new thread of its own).
            read_end, write_end = os.pipe()
            for _ in range(count):
                if os.fork() == 0:
                    seen = sorted(os.sched_getaffinity(0))
                    tries = {}
                    try:
                        os.sched_setaffinity(0, range(os.cpu_count()))
                        tries["python"] = 0
                    except OSError as exc:
                        tries["python"] = exc.errno
                    libc = ctypes.CDLL(None, use_errno=True)
                    mask = ctypes.c_uint64(2 ** os.cpu_count() - 1)
                    tries["libc"] = (libc.sched_setaffinity(0, 8, ctypes.byref(mask)), ctypes.get_errno())
                    in_thread = {}
                    def widen():
                        try:
                            os.sched_setaffinity(0, range(os.cpu_count()))
                            in_thread["errno"] = 0
                        except OSError as exc:
                            in_thread["errno"] = exc.errno
                        in_thread["seen"] = sorted(os.sched_getaffinity(0))
                    thread = threading.Thread(target=widen)
                    thread.start()
                    thread.join()
                    tries["thread"] = in_thread
                    os.write(write_end, (json.dumps([seen, tries, sorted(os.sched_getaffinity(0))]) + "\\n").encode())
                    stop = time.monotonic() + seconds
                    while time.monotonic() < stop:
                        pass
                    os._exit(0)
            os.close(write_end)
            with os.fdopen(read_end) as reports:
                return [json.loads(line) for line in reports.read().splitlines()[:count]]

        def own_cpus():
            return sorted(os.sched_getaffinity(0))
    """,
}


def _assert_hog_held_in_its_cpus(box):
    """The sandbox got a proper subset of the CPUs; 4 forked spinners see only it and are refused
    (EPERM) widening it through Python, libc and a new thread."""
    assert box.cpus and set(box.cpus) < set(CPUS), box.cpus
    reports = box.call("codesign", "spinners", (4, 0.2))
    assert reports.status == "ok", reports
    assert len(reports.value) == 4, reports.value
    for seen, tries, after in reports.value:
        assert seen == after == list(box.cpus), (box.cpus, seen, after)
        assert tries["python"] == errno.EPERM, tries
        assert tries["libc"] == [-1, errno.EPERM], tries
        assert tries["thread"] == {"errno": errno.EPERM, "seen": list(box.cpus)}, tries


@needs_bwrap
@pytest.mark.usefixtures("worker_start")
def test_a_forked_hog_cannot_leave_its_sandboxs_cpus(sandbox):
    _assert_hog_held_in_its_cpus(sandbox(HOG))


@needs_rlimits
def test_a_forked_hog_cannot_leave_its_sandboxs_cpus_under_rlimits(sandbox):
    _assert_hog_held_in_its_cpus(sandbox(HOG, isolation="rlimits"))


@needs_bwrap
def test_open_sandboxes_get_cpus_of_their_own_then_share_evenly(sandbox):
    """One sandbox per CPU set while there are enough; beyond that each set holds as few as can
    be; a closed sandbox's CPUs go to the next one."""
    sets = placement.cpu_sets(CPUS, 1)
    boxes = [sandbox(HOG) for _ in range(len(sets) + 1)]
    held = [box.cpus for box in boxes]
    assert sorted(held[:len(sets)]) == sorted(sets), held
    assert held[-1] in sets
    for box in boxes:   # the worker really runs there
        assert box.call("codesign", "own_cpus").value == list(box.cpus)
    boxes[0].close()
    boxes[-1].close()
    assert sandbox(HOG).cpus == held[0]


def _claim_in_another_process(connection):
    claim = placement.claim(1.0)
    connection.send(claim.cpus if claim else None)
    connection.recv()   # held until the test has looked


def test_graders_in_other_processes_see_each_others_claims():
    """`grade -j N` grades in forked processes: their sandboxes must not pile onto one CPU."""
    mine = placement.claim(1.0)
    ours, theirs = multiprocessing.get_context("fork").Pipe()
    other = multiprocessing.get_context("fork").Process(target=_claim_in_another_process, args=(theirs,))
    other.start()
    try:
        assert ours.poll(30)
        their_cpus = ours.recv()
        assert mine is not None and their_cpus is not None
        assert set(mine.cpus).isdisjoint(their_cpus), (mine.cpus, their_cpus)
    finally:
        ours.send("done")
        other.join(30)
        mine.release()
    # A claim ends with its process, even one that never released it.
    again = [placement.claim(1.0) for _ in placement.cpu_sets(CPUS, 1)]
    try:
        assert sorted(c.cpus for c in again) == placement.cpu_sets(CPUS, 1)
    finally:
        for claim in again:
            claim.release()


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by chown")


@needs_root
def test_a_folder_another_user_made_first_does_not_turn_placement_off(tmp_path, monkeypatch):
    """Any local user could create the grader's claims folder under a shared /tmp name first
    (here in a stand-in for /tmp, 1777): placement must not depend on a name others can take."""
    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    os.chmod(shared_tmp, 0o1777)
    taken = shared_tmp / f"cs349e-cpus-{os.geteuid()}"
    taken.mkdir(mode=0o700)
    os.chown(taken, 65534, 65534)
    monkeypatch.setattr("tempfile.tempdir", str(shared_tmp))
    monkeypatch.setenv("TMPDIR", str(shared_tmp))
    claim = placement.claim(1.0)
    try:
        assert claim is not None and placement.problem() is None
        folder, _ = placement.claims_folder()
        assert folder.stat().st_uid == os.geteuid() and folder.stat().st_mode & 0o077 == 0
        assert shared_tmp not in folder.parents
    finally:
        if claim is not None:
            claim.release()


@needs_root
@pytest.mark.parametrize("owner, mode, above", [(65534, 0o700, 0o755), (0, 0o755, 0o755), (0, 0o700, 0o777)],
                         ids=["another user's", "open to others", "in a folder others may change"])
def test_a_claims_folder_others_could_steer_is_refused_and_said(tmp_path, monkeypatch, owner, mode, above):
    parent = tmp_path / "runtime"
    parent.mkdir()
    os.chmod(parent, above)
    folder = parent / "cs349e-cpus"
    folder.mkdir()
    os.chmod(folder, mode)
    os.chown(folder, owner, owner)
    monkeypatch.setattr(placement, "_candidates", lambda: [folder])
    assert placement.claim(1.0) is None
    why = placement.problem()
    assert why and str(parent) in why, why


@needs_bwrap
def test_the_summary_says_when_placement_cannot_engage(tmp_path, monkeypatch):
    import io

    from autograder.engine import grade_batch
    from autograder.views.console_view import print_summary
    from engine.conftest import TEST_LIMITS
    from engine.corpus import ASSIGNMENT, CORPUS_DIR
    (tmp_path / "class" / "amy").mkdir(parents=True)
    (tmp_path / "class" / "amy" / "codesign.py").write_bytes((CORPUS_DIR / "correct_loops" / "codesign.py").read_bytes())
    taken = tmp_path / "taken"
    taken.mkdir()
    os.chown(taken, 65534, 65534)
    monkeypatch.setattr(placement, "_candidates", lambda: [taken])
    report = grade_batch(ASSIGNMENT, tmp_path / "class", tmp_path / "out", limits=TEST_LIMITS)
    assert str(taken) in report.placement and "uid 65534" in report.placement, report.placement
    printed = io.StringIO()
    print_summary(report, tmp_path / "out", stream=printed)
    assert "CPU placement off" in printed.getvalue() and str(taken) in printed.getvalue()
    monkeypatch.undo()
    report = grade_batch(ASSIGNMENT, tmp_path / "class", tmp_path / "out2", limits=TEST_LIMITS)
    assert report.placement == ""


def test_cpu_sets_are_disjoint_and_cover_the_allowed_cpus():
    assert placement.cpu_sets([0, 1, 2, 3], 1) == [(0,), (1,), (2,), (3,)]
    assert placement.cpu_sets([0, 1, 2, 3, 4], 2) == [(0, 1), (2, 3, 4)]
    assert placement.cpu_sets([2, 5], 3) == []


# -- a class graded at -j 2: an honest classmate beside a hog that forks spinners ----------------
SPINNERS = '''
import os as _os, time as _time
for _ in range(4):  # spinning processes the grader did not ask for
    if _os.fork() == 0:
        _stop = _time.monotonic() + 8
        while _time.monotonic() < _stop:
            pass
        _os._exit(0)
'''


class SandboxProcesses:
    """Samples, while a batch grades, every process running as the own uid of a sandbox of this
    process's children, the batch's graders: uid -> {pid: the CPUs it may run on}. Uids are drawn
    at random (uids.py), so each grader notes the uids it claims in `claims` (note_claims). This
    process's own sandbox is the batch's reference measurement (reference_measurement.py), taken
    before any student's code runs."""

    def __init__(self, claims):
        import threading
        self.claims = claims
        self.seen: dict[int, dict[int, str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()

    def _claimed_by(self, graders: set[int]) -> set[int]:
        lines = self.claims.read_text().split() if self.claims.exists() else []
        return {int(uid) for pid, uid in zip(lines[::2], lines[1::2]) if int(pid) in graders}

    def _run(self):
        ours: set[int] = set()
        while not self._stop.is_set():
            theirs = self._claimed_by(ours)
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                try:
                    with open(f"/proc/{entry.name}/status") as handle:
                        status = dict(line.split(":", 1) for line in handle.read().splitlines())
                except (OSError, ValueError):
                    continue
                uid = int(status["Uid"].split()[0])
                if int(status["PPid"]) == os.getpid():
                    ours.add(int(entry.name))   # the batch's graders
                if uid in theirs:
                    self.seen.setdefault(uid, {})[int(entry.name)] = status["Cpus_allowed_list"].strip()
            self._stop.wait(0.05)


def note_claims(monkeypatch, claims):
    """Every uid a grader (this process or one forked from it) claims for a sandbox, with its pid, in `claims`."""
    from autograder.sandbox import session
    claim = session.claim_uid

    def noted(*args):
        uid = claim(*args)
        with open(claims, "a") as handle:
            handle.write(f"{os.getpid()} {uid}\n")
        return uid

    monkeypatch.setattr(session, "claim_uid", noted)


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="sandbox processes are told apart by the uid a root grader gives each")
def test_a_classmate_graded_beside_a_hog_keeps_her_score_and_her_cpu(tmp_path, monkeypatch):
    from autograder.engine import grade_batch
    from engine.conftest import TEST_LIMITS
    from engine.corpus import ASSIGNMENT, CORPUS_DIR
    honest = (CORPUS_DIR / "correct_loops" / "codesign.py").read_text(encoding="utf-8")
    for folder, text in (("alone/amy", honest), ("class/amy", honest), ("class/hog", SPINNERS + honest)):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "codesign.py").write_text(text, encoding="utf-8")
    alone = grade_batch(ASSIGNMENT, tmp_path / "alone", tmp_path / "out-alone", limits=TEST_LIMITS)
    note_claims(monkeypatch, tmp_path / "claims")
    with SandboxProcesses(tmp_path / "claims") as sampled:
        beside = grade_batch(ASSIGNMENT, tmp_path / "class", tmp_path / "out-class", limits=TEST_LIMITS, jobs=2)
    score = {r.student: r.score for r in beside.results}
    assert alone.results[0].score > 0 and score["amy"] == alone.results[0].score, (alone.results, beside.results)
    # Two sandboxes, the hog's with its spinners; every process of each on one CPU set, not the other's.
    assert len(sampled.seen) == 2, sampled.seen
    placed = {}
    for uid, processes in sampled.seen.items():
        assert len(set(processes.values())) == 1, processes
        placed[uid] = {int(cpu) for part in next(iter(processes.values())).split(",")
                       for cpu in _cpu_range(part)}
        assert placed[uid] < set(CPUS), processes
    assert max(len(p) for p in sampled.seen.values()) >= 5, sampled.seen   # the hog's worker + 4 spinners
    first, second = placed.values()
    assert first.isdisjoint(second), placed


def _cpu_range(part: str) -> range:
    low, _, high = part.partition("-")
    return range(int(low), int(high or low) + 1)


# A core scheduling cookie (prctl PR_SCHED_CORE, no privilege needed for one's own tasks): on a
# machine with SMT, a core runs only tasks of one cookie at a time, so a sandbox with a cookie of
# its own keeps its sibling CPU, a classmate's, idle whenever it runs there. Refused, whatever the
# kernel (a kernel without core scheduling answers EINVAL, which is not a refusal of the sandbox's).
CORE_COOKIE = """
import ctypes

def core_cookie():
    libc = ctypes.CDLL(None, use_errno=True)
    found = {}
    for name, command in (("create", 1), ("share_from", 3)):   # PR_SCHED_CORE_CREATE, _SHARE_FROM
        ctypes.set_errno(0)
        found[name] = [libc.prctl(62, command, 0, 0, 0), ctypes.get_errno()]   # this task, PIDTYPE_PID
    return found
"""


def _cookie_refused(found) -> None:
    assert all(result == -1 and err == errno.EPERM for result, err in found.values()), found


@needs_bwrap
def test_no_core_scheduling_cookie_idles_a_classmates_sibling_cpu(sandbox, worker_start):
    from sandbox_helpers import notebook_json
    box = sandbox({"codesign.py": CORE_COOKIE,
                   "handout.ipynb": notebook_json(CORE_COOKIE, "found = core_cookie()")})
    outcome = box.call("codesign", "core_cookie")
    assert outcome.status == "ok", outcome
    _cookie_refused(outcome.value)
    notebook = box.run_notebook("handout.ipynb", ["found"])
    assert notebook.status == "ok" and not notebook.cell_errors, notebook
    _cookie_refused(notebook.variables["found"])


@needs_rlimits
def test_no_core_scheduling_cookie_under_rlimits(sandbox):
    outcome = sandbox({"codesign.py": CORE_COOKIE}, isolation="rlimits").call("codesign", "core_cookie")
    assert outcome.status == "ok", outcome
    _cookie_refused(outcome.value)
