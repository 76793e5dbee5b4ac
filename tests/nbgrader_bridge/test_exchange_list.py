"""`nbgrader list --inbound` is run by the instructor on inbound/, where every student names
folders. nbgrader prints each folder's student, assignment and time as the name holds them: a
name with an escape sequence or a line break drove the instructor's terminal or forged a line
("alice ... (feedback ready to be fetched)"). The kit's list (GuardedExchangeList, set in
nbgrader_config.py) shows them as collect's table does: every control character as an escape."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

ASSIGNMENT = "lec01_codesign"
FORGED = "bob\x1b]0;owned\x07\nalice"   # a title-setting escape, then a line of its own


def listed(tmp_path, name: str, caplog) -> list[str]:
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from autograder.nbgrader_bridge.exchange import GuardedExchangeList

    root = tmp_path / "exchange"
    (root / "cs349e" / "inbound" / name).mkdir(parents=True)
    coursedir = CourseDirectory(root=str(tmp_path / "course"), course_id="cs349e")
    lister = GuardedExchangeList(coursedir=coursedir, authenticator=Authenticator(), root=str(root),
                                 inbound=True)
    with caplog.at_level(logging.INFO):
        lister.log = logging.getLogger("list-under-test")
        lister.start()
    return [record.getMessage() for record in caplog.records if record.name == "list-under-test"]


def test_an_inbound_name_with_controls_reaches_the_terminal_escaped(tmp_path, caplog):
    lines = listed(tmp_path, f"{FORGED}+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+x1", caplog)
    # every line, the warning that quotes the folder's path (it holds no notebook) too
    assert not any(ord(c) < 32 or ord(c) == 127 for line in lines for c in line), lines
    listing = [line for line in lines if line.startswith("cs349e ")]
    assert len(listing) == 1 and listing[0].startswith("cs349e bob\\x1b]0;owned\\x07\\x0aalice "), lines


def test_an_honest_inbound_name_is_listed_as_nbgrader_lists_it(tmp_path, caplog):
    lines = listed(tmp_path, f"alice+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+x1", caplog)
    assert f"cs349e alice {ASSIGNMENT} 2026-01-01 00:00:00.000000 UTC (no feedback available)" in lines



# ---------------------------------------------------------------------------------------------
# the real CLI, with the course's config, on folders a student's own account made in inbound/
# ---------------------------------------------------------------------------------------------
STUDENT, CLASSMATE = "cs349e-ann", "cs349e-ben"
WHEN = "2026-01-01 00:00:00.000000 UTC"


def _account(name: str) -> str:
    import pwd
    import subprocess

    try:
        pwd.getpwnam(name)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", name],
                              capture_output=True, text=True)
        assert made.returncode in (0, 9), made.stderr
    return name


def _as(account: str, script: str) -> None:
    import subprocess

    done = subprocess.run(["setpriv", f"--reuid={account}", f"--regid={account}", "--clear-groups",
                           "sh", "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


HOSTILE_FOLDERS = {   # what the student's own folder holds besides a notebook (shell, run as her)
    "an empty submission_secret.txt": "echo '{}' > handout.ipynb && : > submission_secret.txt",
    "a notebook that is a FIFO": "mkfifo handout.ipynb",
    "a sparse 4 GiB submission_secret.txt": "echo '{}' > handout.ipynb && truncate -s 4G submission_secret.txt",
    # no secret: nbgrader hashes every notebook whole (its legacy feedback name), 4,000 x 64 MiB of holes
    "4,000 sparse notebooks of 64 MiB": "for i in $(seq 4000); do truncate -s 64M n$i.ipynb; done",
}


@pytest.mark.skipif(__import__("os").geteuid() != 0, reason="hands folders to other accounts: needs root")
@pytest.mark.parametrize("payload", sorted(HOSTILE_FOLDERS))
def test_one_students_inbound_folder_does_not_stop_the_instructors_listing(payload):
    """`nbgrader list --inbound` (the course's config: GuardedExchangeList) reads every folder's
    notebooks and submission_secret.txt whole, with no guard per folder: an empty secret failed
    nbgrader's assert (AssertionError), a FIFO named handout.ipynb blocked the listing forever, and
    a sparse secret of 4 GiB (no disk used) was read into memory (MemoryError at 1.5 GiB of address
    space; without a limit, 4 GiB of the server's RAM). Each stopped the listing of the whole class."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="cs349e-list-") as where:   # pytest's own is closed to students
        _listing_with(Path(where), HOSTILE_FOLDERS[payload])


def _listing_with(tmp_path, payload: str) -> None:
    import shutil
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    exchange = tmp_path / "exchange"
    inbound = exchange / "cs349e" / "inbound"
    inbound.mkdir(parents=True)
    tmp_path.chmod(0o755)
    exchange.chmod(0o1777)
    (exchange / "cs349e").chmod(0o755)
    inbound.chmod(0o3733)
    for account in (STUDENT, CLASSMATE):
        _account(account)
    _as(CLASSMATE, f"cd '{inbound}' && mkdir '{CLASSMATE}+{ASSIGNMENT}+{WHEN}+r1' && cd '{CLASSMATE}+{ASSIGNMENT}+{WHEN}+r1'"
                   f" && echo '{{}}' > handout.ipynb && echo s3cret > submission_secret.txt")
    _as(STUDENT, f"cd '{inbound}' && mkdir '{STUDENT}+{ASSIGNMENT}+{WHEN}+r2' && cd '{STUDENT}+{ASSIGNMENT}+{WHEN}+r2'"
                 f" && {payload}")
    course = tmp_path / "course"
    course.mkdir()
    shutil.copyfile(root / "nbgrader_config.py", course / "nbgrader_config.py")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "HOME": str(tmp_path)}
    try:
        done = subprocess.run(["prlimit", f"--as={3 << 29}", sys.executable, "-m", "nbgrader", "list", "--inbound",
                               "--course", "cs349e", f"--Exchange.root={exchange}"],
                              cwd=course, env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("nbgrader list --inbound did not end in 60 s")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"cs349e {CLASSMATE} {ASSIGNMENT} {WHEN}" in done.stderr + done.stdout


def test_the_listing_does_not_grow_with_the_notebooks_one_folder_holds(tmp_path, caplog):
    """nbgrader's list keeps a record of every `*.ipynb` of a folder (and opens each to hash it when
    there is no secret): 200,000 empty notebooks a student made in her own inbound folder cost the
    instructor's `nbgrader list --inbound` 31 s and 266 MB, growing with their number. The kit's list
    reads a bounded number of a folder's notebooks; the classmates are listed."""
    from memory_peak import traced_peak

    root = tmp_path / "exchange"
    hostile = root / "cs349e" / "inbound" / f"mallory+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+x2"
    hostile.mkdir(parents=True)
    for i in range(30_000):
        (hostile / f"n{i}.ipynb").touch()
    with traced_peak() as peak:
        lines = listed(tmp_path, f"alice+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+x1", caplog)
    assert f"cs349e alice {ASSIGNMENT} 2026-01-01 00:00:00.000000 UTC (no feedback available)" in lines
    assert peak.bytes < 8 << 20, f"{peak.bytes >> 20} MiB for one folder of 30,000 notebooks"


# ---------------------------------------------------------------------------------------------
# two listings at once, in threads of one process
# ---------------------------------------------------------------------------------------------
def _sparse_notebooks(folder: Path, **sizes_mib: int) -> None:
    folder.mkdir(parents=True)
    for name, size in sizes_mib.items():     # holes: no disk used, every byte still read and hashed
        with open(folder / f"{name}.ipynb", "wb") as handle:
            handle.truncate(size << 20)


def _lister(root: Path, assignment: str, logger: logging.Logger):
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from autograder.nbgrader_bridge.exchange import GuardedExchangeList

    coursedir = CourseDirectory(root=str(root.parent / "course"), course_id="cs349e", assignment_id=assignment)
    lister = GuardedExchangeList(coursedir=coursedir, authenticator=Authenticator(), root=str(root), inbound=True)
    lister.log = logger
    return lister


class _PauseAt(logging.Handler):
    """Holds the listing whose logger it is on at the first record that mentions `mark`, until let go."""

    def __init__(self, mark: str):
        super().__init__(logging.DEBUG)
        self.mark, self.paused, self.go_on = mark, threading.Event(), threading.Event()

    def emit(self, record):
        if self.mark in record.getMessage() and not self.paused.is_set():
            self.paused.set()
            self.go_on.wait(timeout=DEADLOCK_GUARD)


DEADLOCK_GUARD = 60   # seconds a step may wait for another thread before the test calls it a deadlock


def test_two_listings_in_threads_each_read_within_their_own_bounds(tmp_path, caplog):
    """Each folder's bound (64 MiB read, 100 notebooks) belongs to the listing reading it. A listing
    held half-way through a folder of 68 MiB (10 MiB read, 58 to go) while another lists folders of
    its own still leaves that folder out: the other listing's start of a folder gives it no new
    64 MiB. The other listing leaves out its own folder of 70 MiB and lists its 4 MiB one. Neither
    waits for the other, and nbgrader's list module is never changed (its functions stay nbgrader's
    before, during and after a listing): no code of nbgrader's reads through a listing's bounds."""
    from nbgrader.exchange.default import list as list_module

    as_imported = dict(vars(list_module))
    root = tmp_path / "exchange"
    inbound = root / "cs349e" / "inbound"
    # no submission_secret.txt: nbgrader then hashes each notebook whole
    _sparse_notebooks(inbound / f"alice+hw_a+{WHEN}+x1", n1=10, n2=58)   # 68 MiB: past its bound
    _sparse_notebooks(inbound / f"dave+hw_a+{WHEN}+x4", n1=1)
    _sparse_notebooks(inbound / f"bob+hw_b+{WHEN}+x2", n1=40, n2=30)     # 70 MiB: past its bound
    _sparse_notebooks(inbound / f"carol+hw_b+{WHEN}+x3", n1=4)           # the last folder the second lists

    pause = _PauseAt(mark="+n2+")        # the key nbgrader logs before it reads a notebook: after n1, before n2
    first_log, second_log = logging.getLogger("list-a"), logging.getLogger("list-b")
    first_log.addHandler(pause)
    first_log.setLevel(logging.DEBUG)
    results = {}
    first = threading.Thread(target=lambda: results.setdefault("a", _lister(root, "hw_a", first_log).start()))
    second = threading.Thread(target=lambda: results.setdefault("b", _lister(root, "hw_b", second_log).start()))
    try:
        with caplog.at_level(logging.INFO):
            first.start()
            assert pause.paused.wait(timeout=DEADLOCK_GUARD), "the first listing never reached its second notebook"
            during = {name: value for name, value in vars(list_module).items() if as_imported.get(name) is not value}
            second.start()
            second.join(timeout=DEADLOCK_GUARD)
            assert not second.is_alive(), "the second listing waited for the first to end"
            pause.go_on.set()
            first.join(timeout=DEADLOCK_GUARD)
    finally:
        pause.go_on.set()
        first_log.removeHandler(pause)
        first.join()
        second.join()
    assert during == {}, f"nbgrader's list module changed while a listing ran: {sorted(during)}"
    assert {name: value for name, value in vars(list_module).items() if as_imported.get(name) is not value} == {}
    listed = {key: [(s["student_id"], len(s["notebooks"])) for group in results[key] for s in group["submissions"]]
              for key in ("a", "b")}
    assert listed == {"a": [("dave", 1)], "b": [("carol", 1)]}, listed
    for logger, student in (("list-a", "alice"), ("list-b", "bob")):
        left_out = [r.getMessage() for r in caplog.records if r.name == logger and r.levelno == logging.WARNING]
        assert len(left_out) == 1 and f"/{student}+" in left_out[0] and "not listed" in left_out[0], left_out


def test_a_folder_left_out_is_named_escaped(tmp_path, caplog):
    """The warning that leaves a folder out quotes its name: its control characters are escaped too."""
    name = f"{FORGED}+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+x1"
    folder = tmp_path / "exchange" / "cs349e" / "inbound" / name
    folder.mkdir(parents=True)
    (folder / "handout.ipynb").write_text("{}")
    (folder / "submission_secret.txt").write_bytes(b"")     # nbgrader's assert fails on an empty secret
    lines = listed(tmp_path, f"alice+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+x2", caplog)
    assert not any(ord(c) < 32 or ord(c) == 127 for line in lines for c in line), lines
    assert any("bob\\x1b]0;owned\\x07\\x0aalice" in line and "not listed" in line for line in lines), lines


def test_a_message_whose_arguments_do_not_fit_its_format_is_still_logged(caplog):
    """nbgrader's own messages pass through the shown log too: a bad format never stops a listing."""
    import logging

    from autograder.nbgrader_bridge.exchange import _ShownLog

    log = _ShownLog(logging.getLogger("listing-format"))
    with caplog.at_level(logging.WARNING, logger="listing-format"):
        log.warning("%s and %s", "\x1b]0;title\x07")
    assert "\x1b" not in caplog.text and "and" in caplog.text


def test_an_inbound_entry_that_is_a_link_is_not_listed(tmp_path, caplog):
    """A student's inbound entry that is a link to a folder elsewhere (the course's source, another
    student's submitted/) was followed by the listing, which read and hashed the notebooks there as
    the instructor; collect refuses such a link. The listing leaves it out and says so."""
    elsewhere = tmp_path / "course" / "source" / ASSIGNMENT
    elsewhere.mkdir(parents=True)
    (elsewhere / "handout.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    (elsewhere / "submission_secret.txt").write_text("0" * 128)
    link = tmp_path / "exchange" / "cs349e" / "inbound" / f"bob+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+x1"
    link.parent.mkdir(parents=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    lines = listed(tmp_path, f"alice+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+x2", caplog)
    assert any("bob+" in line and "not listed" in line and "link" in line for line in lines), lines
    assert not any(line.startswith("cs349e bob ") for line in lines), lines
    assert any(line.startswith("cs349e alice ") for line in lines), lines
