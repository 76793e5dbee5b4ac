"""nbgrader's exchange on one server, set up by following docs/exchange.md as written, with real
Unix accounts (useradd) for the instructor and five students, nbgrader's own `submit` run as each
student and `collect` as the instructor. Then what students can do to the exchange on their own:

- alice hands in honestly and is collected;
- bob hands in a `codesign.py` that is a symbolic link to the course's solutions, and, from his
  own account, a submission in alice's name (`nbgrader submit --student <alice>`), newer than hers;
- carol's `codesign.py` is a link to alice's collected file in `submitted/`, and beside it a link
  whose name is bytes that are no UTF-8 (before, listing it stopped collect for the whole class);
- dave hands in after the due date, then rewrites his `timestamp.txt` to a time before it;
- erin hands in after the due date, then renames her folder to a time before it (and its
  `timestamp.txt` to match).

The doc's commands run in a mount namespace of the test where /usr/local/share is a private folder:
the exchange is created at nbgrader's default place without touching the machine's.
"""

from __future__ import annotations

import csv
import os
import pwd
import re
from shlex import quote
import shutil
import subprocess
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder.engine.lateness import parse_time, submission_time
from course_copy import copy_course
from course_copy import run as run_in
from readme_text import commands
from rlimits_machine import PYTHON, interpreter_args, system_args

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "exchange.md"
ASSIGNMENT = "lec01_codesign"
INSTRUCTOR = "cs349e-teach"
ALICE, BOB, CAROL, DAVE, ERIN = (f"cs349e-{name}" for name in ("alice", "bob", "carol", "dave", "erin"))
DUE = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=3)
BEFORE_DUE = DUE - timedelta(days=1)
FLAGGED = Path("collect_flagged") / f"{ASSIGNMENT}.csv"
SKELETON_NOTE = "# handed in\n"
NOT_UTF8 = "caf\\xe9\\xff.py"   # a name of bytes that are no UTF-8, as bash's $'…' makes it and the list shows it


def doc_blocks() -> list[tuple[str, list[str]]]:
    """(who runs it: root, instructor or student, its commands) for each bash block of the doc."""
    blocks = []
    for block in re.findall(r"```bash\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S):
        first = block.splitlines()[0]
        who = next(w for w in ("instructor", "student", "root") if f"as {w}" in first or f"as the {w}" in first or f"as each {w}" in first)
        blocks.append((who, commands(f"```bash\n{block}```")))
    return blocks


def account(name: str) -> tuple[int, int]:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/bin/bash",
                               name], capture_output=True, text=True)
        assert made.returncode in (0, 9), made.stderr      # 9: made meanwhile by another run
        entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid


class Machine:
    """Runs commands as root or as an account, on the system (read-only) with the test's folder and a
    /usr/local/share of its own (tests/rlimits_machine.py: the interpreter under /root made enterable)."""

    def __init__(self, base: Path):
        self.base = base
        self.share = base / "share"
        self.share.mkdir()
        # the doc's root commands change these: the test's own copy of login.defs, its own /home
        self.login_defs = base / "login.defs"
        shutil.copyfile("/etc/login.defs", self.login_defs)
        (base / "home").mkdir(exist_ok=True)
        (base / "home").chmod(0o755)
        self.path = f"{Path(PYTHON).parent}:/usr/bin:/bin"

    def run(self, command: str, user: str = "root", cwd: Path | None = None, check: bool = True):
        # the system read-only, this interpreter enterable by every account, the test's folder
        args = ["bwrap", "--die-with-parent", *system_args(), "--proc", "/proc", "--dev", "/dev",
                "--perms", "1777", "--tmpfs", "/tmp", *interpreter_args(), "--bind", str(self.base), str(self.base),
                "--bind", str(self.share), "/usr/local/share", "--bind", str(self.login_defs), "/etc/login.defs",
                "--bind", str(self.base / "home"), "/home", "--"]
        home = cwd or self.base
        if user != "root":
            uid, gid = account(user)
            args += ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--init-groups", "--"]
            home = self.base / "home" / user
        env = {"PATH": self.path, "HOME": str(home), "USER": user, "LANG": "C.UTF-8"}
        done = subprocess.run([*args, "bash", "-c", command], cwd=cwd or home, env=env, capture_output=True,
                              text=True, timeout=600)
        if check:
            assert done.returncode == 0, f"`{command}` as {user} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
        return done

    def home(self, user: str) -> Path:
        folder = self.base / "home" / user
        if not folder.exists():
            folder.mkdir(parents=True)
            uid, gid = account(user)
            os.chown(folder, uid, gid)
            folder.chmod(0o700)
        return folder


def inbound_folder(submit: subprocess.CompletedProcess) -> Path:
    """The inbound folder `nbgrader submit` just wrote (its log names it)."""
    return Path(re.search(r"Destination: (.+)", submit.stderr)[1].strip())


def stamp(when: datetime) -> str:
    """A time as nbgrader's exchange writes it (names and timestamp.txt)."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


@pytest.fixture(scope="module")
def exchange():
    if os.geteuid() != 0:
        pytest.skip("creates Unix accounts and runs as them: needs root")
    if shutil.which("bwrap") is None or shutil.which("setpriv") is None:
        pytest.skip("needs bubblewrap and setpriv (util-linux)")
    base = Path(tempfile.mkdtemp(prefix="cs349e-exchange-"))
    base.chmod(0o755)
    try:
        yield _follow_the_doc(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _follow_the_doc(base: Path) -> SimpleNamespace:
    machine = Machine(base)
    course = copy_course(base / "course")
    # the course's students, by their logins: collect refuses anyone else's folder
    (course / "roster.txt").write_text("".join(f"{s}\n" for s in (ALICE, BOB, CAROL, DAVE, ERIN)), encoding="utf-8")
    (base / "reference").mkdir()
    machine.run(f"{PYTHON} -m autograder reference {ASSIGNMENT} {base / 'reference' / 'full'}", cwd=course)
    uid, gid = account(INSTRUCTOR)
    subprocess.run(["chown", "-R", f"{uid}:{gid}", str(course)], check=True)
    course.chmod(0o700)          # students cannot read the course (solutions/ included)
    w = SimpleNamespace(root=course, machine=machine, submits={}, log={})

    def as_student(student: str, files: dict[str, bytes] | None = None) -> subprocess.CompletedProcess:
        """The doc's student block as `student`: fetch, put their files in, submit."""
        home = machine.home(student)
        for command in student_block:
            if command.startswith("nbgrader submit") and files:
                for name, data in files.items():
                    (home / ASSIGNMENT / name).write_bytes(data)
                subprocess.run(["chown", "-R", f"{student}:{student}", str(home / ASSIGNMENT)], check=True)
            done = machine.run(command, user=student)
            if command.startswith("nbgrader submit"):
                w.submits[student] = inbound_folder(done)
        return done

    reference = {name: (base / "reference" / "full" / name).read_bytes() for name in ("codesign.py", "handout.ipynb")}
    blocks = doc_blocks()
    student_block = next(c for who, c in blocks if who == "student")
    for who, block in blocks:
        if who == "student":
            as_student(ALICE, reference)
            continue
        for command in block:
            if command == f"nbgrader collect --update {ASSIGNMENT}":
                _students_hand_in(w, as_student, reference)
            user = INSTRUCTOR if who == "instructor" else "root"
            w.log[command] = machine.run(command, user=user, cwd=course if who == "instructor" else None)
            if command.startswith("nbgrader release_assignment"):
                machine.run(f"nbgrader db assignment add {ASSIGNMENT} --duedate={DUE.isoformat()}", user=INSTRUCTOR,
                            cwd=course)
    return w


def _students_hand_in(w: SimpleNamespace, as_student, reference: dict[str, bytes]) -> None:
    machine, course = w.machine, w.root
    # bob: his codesign.py becomes a link to the solutions, in his own inbound folder
    as_student(BOB, {**reference, "codesign.py": SKELETON_NOTE.encode()})
    machine.run(f"cd {quote(str(w.submits[BOB]))} && rm codesign.py && "
                f"ln -s {course}/solutions/{ASSIGNMENT}/codesign.py codesign.py", user=BOB)
    bob_own = w.submits[BOB]
    # ... and hands in an empty module in alice's name, from his own account (newer than hers)
    home = machine.home(BOB)
    (home / ASSIGNMENT / "codesign.py").write_bytes(b"")
    subprocess.run(["chown", "-R", f"{BOB}:{BOB}", str(home / ASSIGNMENT)], check=True)
    done = machine.run(f"nbgrader submit {ASSIGNMENT} --course cs349e --student {ALICE}", user=BOB)
    w.impersonation = inbound_folder(done)
    w.submits[BOB] = bob_own
    # carol: a link to alice's collected file
    as_student(CAROL, {**reference, "codesign.py": SKELETON_NOTE.encode()})
    machine.run(f"cd {quote(str(w.submits[CAROL]))} && rm codesign.py && "
                f"ln -s {course}/submitted/{ALICE}/{ASSIGNMENT}/codesign.py codesign.py && "
                f"ln -s {course}/solutions $'{NOT_UTF8}'", user=CAROL)
    # dave: late, then timestamp.txt set to before the due date
    as_student(DAVE, reference)
    machine.run(f"cd {quote(str(w.submits[DAVE]))} && printf '%s' '{stamp(BEFORE_DUE)}' > timestamp.txt", user=DAVE)
    # erin: late, then her folder renamed to a time before the due date
    as_student(ERIN, reference)
    folder = w.submits[ERIN]
    student, assignment, _, random = folder.name.split("+")
    renamed = folder.with_name(f"{student}+{assignment}+{stamp(BEFORE_DUE)}+{random}")
    machine.run(f"printf '%s' '{stamp(BEFORE_DUE)}' > '{folder}/timestamp.txt' && mv '{folder}' '{renamed}'", user=ERIN)
    w.submits[ERIN] = renamed


def submitted(w, student: str) -> Path:
    return w.root / "submitted" / student / ASSIGNMENT


def flagged(w) -> list[dict]:
    path = w.root / FLAGGED
    assert path.is_file(), f"collect wrote no {FLAGGED}"
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_doc_sets_up_an_exchange_students_fetch_from_and_submit_to(exchange):
    assert (exchange.machine.share / "nbgrader" / "exchange").stat().st_mode & 0o1777 == 0o1777   # sticky
    assert (exchange.machine.home(ALICE) / ASSIGNMENT / "README.md").is_file()     # fetched
    assert submitted(exchange, ALICE).joinpath("codesign.py").read_bytes() == \
        (exchange.root.parent / "reference" / "full" / "codesign.py").read_bytes()


def test_the_doc_closes_the_students_homes_and_collect_finds_none_open(exchange):
    """A classmate read a student's VARIANT_TOKEN from her notebook in a 0755 home (Debian's
    `useradd -m`): the doc makes new homes 0700 and closes those that exist; collect names any open one."""
    assert re.search(r"^HOME_MODE\s+0700$", exchange.machine.login_defs.read_text(), flags=re.M)
    for student in (ALICE, BOB, CAROL, DAVE, ERIN):
        assert exchange.machine.home(student).stat().st_mode & 0o077 == 0, student
    assert "chmod 700" not in exchange.log[f"nbgrader collect --update {ASSIGNMENT}"].stderr


def test_release_makes_inbound_sticky(exchange):
    inbound = exchange.machine.share / "nbgrader" / "exchange" / "cs349e" / "inbound"
    assert inbound.stat().st_mode & 0o1000, oct(inbound.stat().st_mode)


def test_a_link_to_the_solutions_is_not_followed(exchange):
    folder = submitted(exchange, BOB)
    solved = (exchange.root / "solutions" / ASSIGNMENT / "codesign.py").read_bytes()
    assert not (folder / "codesign.py").exists() or (folder / "codesign.py").read_bytes() != solved
    assert (folder / "handout.ipynb").is_file()      # his regular files are collected
    rows = [r for r in flagged(exchange) if r["student"] == BOB]
    assert any(r["file"] == "codesign.py" and "link" in r["reason"] for r in rows), rows


def test_a_link_to_a_classmates_collected_file_is_not_followed(exchange):
    folder = submitted(exchange, CAROL)
    alice = submitted(exchange, ALICE).joinpath("codesign.py").read_bytes()
    assert not (folder / "codesign.py").exists() or (folder / "codesign.py").read_bytes() != alice
    assert any(r["student"] == CAROL and r["file"] == "codesign.py" for r in flagged(exchange))


def test_a_file_name_that_is_not_utf8_is_listed_and_the_class_still_collected(exchange):
    rows = [r for r in flagged(exchange) if r["student"] == CAROL and r["file"] == NOT_UTF8]
    assert rows and "link" in rows[0]["reason"], flagged(exchange)
    assert not any(name.endswith(b".py") and b"\xff" in name for name in os.listdir(os.fsencode(submitted(exchange, CAROL))))
    for student in (ALICE, DAVE, ERIN):
        assert submitted(exchange, student).joinpath("handout.ipynb").is_file(), student


def test_a_folder_in_a_classmates_name_is_refused_and_she_keeps_her_own(exchange):
    assert submitted(exchange, ALICE).joinpath("codesign.py").read_bytes() == \
        (exchange.root.parent / "reference" / "full" / "codesign.py").read_bytes()
    rows = [r for r in flagged(exchange) if r["inbound"] == exchange.impersonation.name]
    assert rows and rows[0]["student"] == ALICE and rows[0]["outcome"] == "not collected"
    assert BOB in rows[0]["reason"]
    assert "cheating attempt" not in exchange.log[f"nbgrader collect --update {ASSIGNMENT}"].stderr


def test_a_rewritten_timestamp_file_is_flagged_and_not_used(exchange):
    when = submission_time(submitted(exchange, DAVE))
    named = parse_time(exchange.submits[DAVE].name.split("+")[2])
    assert when == named and when > DUE
    rows = [r for r in flagged(exchange) if r["student"] == DAVE]
    assert any("timestamp.txt" in r["reason"] for r in rows), rows


def test_a_folder_renamed_to_an_earlier_time_gets_its_change_time(exchange):
    when = submission_time(submitted(exchange, ERIN))
    assert when > DUE      # the time of the rename at the earliest, not the forged name
    rows = [r for r in flagged(exchange) if r["student"] == ERIN]
    assert any("ctime" in r["reason"] for r in rows), rows


def test_alice_honest_is_not_flagged(exchange):
    assert [r for r in flagged(exchange) if r["student"] == ALICE and r["inbound"] != exchange.impersonation.name] == []
    assert parse_time((submitted(exchange, ALICE) / "timestamp.txt").read_text()) == \
        parse_time(exchange.submits[ALICE].name.split("+")[2])


def test_reconcile_lists_every_flagged_row(exchange):
    done = exchange.machine.run(f"{PYTHON} -m autograder reconcile {ASSIGNMENT}", user=INSTRUCTOR,
                                cwd=exchange.root, check=False)
    for row in flagged(exchange):
        assert f"{row['student']}: exchange {row['inbound']}" in done.stdout, (row, done.stdout, done.stderr)


def test_the_inbound_listing_through_the_course_config_shows_a_forged_name_escaped(exchange):
    """`nbgrader list --inbound`, run by the instructor in the course as the doc sets it up: bob names a
    folder with a title-setting escape and a line break followed by alice's name. nbgrader printed it raw
    (the escape drove the terminal, the line read as alice's); the course config's list escapes it."""
    inbound = exchange.machine.share / "nbgrader" / "exchange" / "cs349e" / "inbound"
    forged = f"{BOB}\x1b]0;owned\x07\n{ALICE}+{ASSIGNMENT}+{stamp(BEFORE_DUE)}+x1"
    exchange.machine.run(f"mkdir {quote(str(inbound / forged))}", user=BOB)
    try:
        done = exchange.machine.run(f"nbgrader list --inbound {ASSIGNMENT}", user=INSTRUCTOR, cwd=exchange.root)
    finally:
        shutil.rmtree(inbound / forged)
    printed = done.stdout + done.stderr
    assert not any(ord(c) < 32 and c not in "\n" or ord(c) == 127 for c in printed), printed
    assert f"{BOB}\\x1b]0;owned\\x07\\x0a{ALICE} {ASSIGNMENT}" in printed, printed
    assert not any(line.startswith(ALICE) for line in printed.splitlines()), printed
    assert re.search(f"cs349e {ALICE} {ASSIGNMENT} ", printed), printed      # her own submission, as nbgrader lists it


def test_feedback_released_through_the_course_config_reaches_its_student_alone(exchange):
    """The course's release_feedback (the kit's, run by nbgrader through the course config) and each
    student's own `nbgrader fetch_feedback`: alice fetches her page; bob, who cannot list the
    exchange's feedback/, fetches none of hers, not even naming her (`--student`)."""
    course, machine = exchange.root, exchange.machine
    for student in (ALICE, BOB):
        source, dest = submitted(exchange, student), course / "feedback" / student / ASSIGNMENT
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns("*.ipynb"), dirs_exist_ok=True)
        (dest / "handout.html").write_text(f"<p>feedback of {student}</p>")
        subprocess.run(["chown", "-R", f"{INSTRUCTOR}:{INSTRUCTOR}", str(course / "feedback")], check=True)
    # due three days ago: late work still scores, so the course's release waits unless told otherwise
    refused = machine.run(f"nbgrader release_feedback {ASSIGNMENT}", user=INSTRUCTOR, cwd=course, check=False)
    assert refused.returncode != 0 and "late work is accepted until" in refused.stderr, refused.stderr
    machine.run(f"nbgrader release_feedback {ASSIGNMENT} --GuardedReleaseFeedback.during_late_work=True",
                user=INSTRUCTOR, cwd=course)
    machine.run(f"nbgrader fetch_feedback {ASSIGNMENT} --course cs349e", user=ALICE)
    pages = list((machine.home(ALICE) / ASSIGNMENT / "feedback").rglob("handout.html"))
    assert [p.read_text() for p in pages] == [f"<p>feedback of {ALICE}</p>"], pages
    feedback = "/usr/local/share/nbgrader/exchange/cs349e/feedback"
    assert machine.run(f"ls {feedback}", user=BOB, check=False).returncode != 0
    machine.run(f"nbgrader fetch_feedback {ASSIGNMENT} --course cs349e --student {ALICE}", user=BOB, check=False)
    for page in (machine.home(BOB) / ASSIGNMENT / "feedback").rglob("*.html"):
        assert ALICE not in page.read_text(), page


def test_a_missing_exchange_tells_the_instructor_what_to_do(tmp_path):
    """nbgrader says "Unwritable directory, please contact your instructor" to the instructor."""
    root = copy_course(tmp_path / "course")
    missing = tmp_path / "no-exchange"
    done = run_in(root, "-m", "nbgrader", "collect", ASSIGNMENT, f"--Exchange.root={missing}")
    assert done.returncode != 0
    assert "contact your instructor" not in done.stderr
    assert f"mkdir -p {missing} && chmod 1777 {missing}" in done.stderr and "docs/exchange.md" in done.stderr



MALLORY = "cs349e-mallory"


def test_a_course_folder_a_student_could_swap_is_refused_by_release_collect_and_reconcile():
    """The exchange as nbgrader documents it (0777, no sticky bit): mallory renames the course's
    folder away and puts her own in its place; before, classmates' fetch took her files (her
    hw_specs.py runs as each of them) and their submit landed in her inbound/. The kit's release,
    collect and reconcile refuse such an exchange, naming the chmod; with the sticky bit she can
    no longer rename the instructor's folder."""
    if os.geteuid() != 0 or shutil.which("bwrap") is None or shutil.which("setpriv") is None:
        pytest.skip("creates Unix accounts and runs as them: needs root, bubblewrap and setpriv")
    base = Path(tempfile.mkdtemp(prefix="cs349e-hijack-"))       # enterable by every account, as the doc's
    base.chmod(0o755)
    try:
        _hijack(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _hijack(base: Path) -> None:
    machine = Machine(base)
    course = copy_course(base / "course")
    uid, gid = account(INSTRUCTOR)
    subprocess.run(["chown", "-R", f"{uid}:{gid}", str(course)], check=True)
    course.chmod(0o700)
    machine.home(MALLORY)
    root = "/usr/local/share/nbgrader/exchange"

    def instructor(command: str):
        return machine.run(command, user=INSTRUCTOR, cwd=course, check=False)

    machine.run(f"mkdir -p {root} && chmod ugo+rw {root}")               # nbgrader's own instructions
    made = instructor(f"nbgrader generate_assignment {ASSIGNMENT} --force")
    assert made.returncode == 0, made.stderr[-3000:]
    refused = instructor(f"nbgrader release_assignment {ASSIGNMENT} --force")
    assert refused.returncode != 0 and f"chmod 1777 {root}" in refused.stderr, refused.stderr[-3000:]
    assert not (machine.share / "nbgrader" / "exchange" / "cs349e").exists()
    # mallory gets there first: a course folder of her own, with a trojan release in it
    machine.run(f"mkdir -p {root}/cs349e/outbound/{ASSIGNMENT} {root}/cs349e/inbound && "
                f"echo 'import os' > {root}/cs349e/outbound/{ASSIGNMENT}/hw_specs.py && chmod -R 777 {root}/cs349e",
                user=MALLORY)
    machine.run(f"chmod 1777 {root}")                                  # the instructor follows the message
    for command in (f"nbgrader release_assignment {ASSIGNMENT} --force", f"nbgrader collect {ASSIGNMENT}"):
        refused = instructor(command)
        assert refused.returncode != 0 and MALLORY in refused.stderr and f"rm -r {root}/cs349e" in refused.stderr, \
            (command, refused.stderr[-3000:])
    listed = instructor(f"{PYTHON} -m autograder reconcile {ASSIGNMENT}")
    assert listed.returncode != 0 and f"exchange: {root}/cs349e is owned by {MALLORY}" in listed.stdout, \
        (listed.stdout[-3000:], listed.stderr[-3000:])
    machine.run(f"rm -r {root}/cs349e")
    assert instructor(f"nbgrader release_assignment {ASSIGNMENT} --force").returncode == 0
    moved = machine.run(f"mv {root}/cs349e {root}/cs349e.old", user=MALLORY, check=False)
    assert moved.returncode != 0 and (machine.share / "nbgrader" / "exchange" / "cs349e" / "outbound").is_dir()
    listed = instructor(f"{PYTHON} -m autograder reconcile {ASSIGNMENT}")
    assert "exchange:" not in listed.stdout, listed.stdout[-3000:]


def _as_root_machine(prefix: str):
    if os.geteuid() != 0 or shutil.which("bwrap") is None or shutil.which("setpriv") is None:
        pytest.skip("creates Unix accounts and runs as them: needs root, bubblewrap and setpriv")
    base = Path(tempfile.mkdtemp(prefix=prefix))       # enterable by every account, as the doc's
    base.chmod(0o755)
    return base


def _instructors_course(machine: Machine, base: Path) -> Path:
    course = copy_course(base / "course")
    uid, gid = account(INSTRUCTOR)
    subprocess.run(["chown", "-R", f"{uid}:{gid}", str(course)], check=True)
    course.chmod(0o700)
    machine.home(MALLORY)
    return course


def test_an_exchange_folder_a_student_made_first_is_refused():
    """The exchange's own folder made by a student before the instructor (in a folder every account
    may create in, sticky as /tmp): sticky or not, its owner may rename or remove anything in it.
    Release went ahead in her folder; mallory then renamed the course's folder away and put her own
    in its place (classmates fetch her files, hand in to her). Release and collect refuse such an
    exchange, naming its owner and what to run."""
    base = _as_root_machine("cs349e-owned-root-")
    try:
        machine = Machine(base)
        course = _instructors_course(machine, base)
        root = "/usr/local/share/nbgrader/exchange"
        machine.run("mkdir -p /usr/local/share/nbgrader && chmod 1777 /usr/local/share/nbgrader")
        machine.run(f"mkdir {root} && chmod 1777 {root}", user=MALLORY)          # she is first
        for command in (f"nbgrader generate_assignment {ASSIGNMENT} --force",):
            assert machine.run(command, user=INSTRUCTOR, cwd=course, check=False).returncode == 0
        for command in (f"nbgrader release_assignment {ASSIGNMENT} --force", f"nbgrader collect {ASSIGNMENT}"):
            refused = machine.run(command, user=INSTRUCTOR, cwd=course, check=False)
            assert refused.returncode != 0 and f"{root} is owned by {MALLORY}" in refused.stderr \
                and f"rm -r {root}" in refused.stderr, (command, refused.stderr[-3000:])
        assert not (machine.share / "nbgrader" / "exchange" / "cs349e").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_doc_claims_the_course_folder_before_any_student_can():
    """Before the first release, any account could make the course's folder (`cs349e/`) in the
    sticky exchange: release refused it, but students fetching meanwhile took her files. The doc's
    set-up makes it the instructor's at once; mallory can no longer make it (nor rename it)."""
    base = _as_root_machine("cs349e-claim-")
    try:
        machine = Machine(base)
        course = _instructors_course(machine, base)
        root = "/usr/local/share/nbgrader/exchange"
        for who, block in doc_blocks():
            if any(command.startswith("nbgrader ") for command in block):
                break                                   # up to the first nbgrader command of the doc
            for command in block:
                machine.run(command, user=INSTRUCTOR if who == "instructor" else "root",
                            cwd=course if who == "instructor" else None)
        made = machine.run(f"mkdir -p {root}/cs349e/outbound/{ASSIGNMENT}", user=MALLORY, check=False)
        assert made.returncode != 0, "a student made the course's folder in the exchange before the first release"
        moved = machine.run(f"mv {root}/cs349e {root}/cs349e.old", user=MALLORY, check=False)
        assert moved.returncode != 0
        claimed = (machine.share / "nbgrader" / "exchange" / "cs349e").stat()
        assert claimed.st_uid == account(INSTRUCTOR)[0] and claimed.st_mode & 0o022 == 0, oct(claimed.st_mode)
        assert machine.run(f"nbgrader generate_assignment {ASSIGNMENT} --force && "
                           f"nbgrader release_assignment {ASSIGNMENT} --force", user=INSTRUCTOR, cwd=course,
                           check=False).returncode == 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_course_folder_a_student_made_first_says_how_to_claim_it_and_what_students_may_hold():
    """mallory made `cs349e/` in the sticky exchange before the instructor: release refuses it. The
    message tells the instructor exactly what to do: remove it, claim the folder at once, release
    again, and have students who fetched or submitted meanwhile fetch again and hand in again (their
    fetch and submit are nbgrader's own and check nothing)."""
    base = _as_root_machine("cs349e-early-")
    try:
        machine = Machine(base)
        course = _instructors_course(machine, base)
        root = "/usr/local/share/nbgrader/exchange"
        machine.run(f"mkdir -p {root} && chmod 1777 {root}")
        machine.run(f"mkdir -p {root}/cs349e/outbound/{ASSIGNMENT} {root}/cs349e/inbound && chmod -R 777 {root}/cs349e",
                    user=MALLORY)
        assert machine.run(f"nbgrader generate_assignment {ASSIGNMENT} --force", user=INSTRUCTOR, cwd=course,
                           check=False).returncode == 0
        refused = machine.run(f"nbgrader release_assignment {ASSIGNMENT} --force", user=INSTRUCTOR, cwd=course,
                              check=False)
        said = refused.stderr
        assert refused.returncode != 0 and f"rm -r {root}/cs349e" in said, said[-3000:]
        assert f"mkdir -m 755 {root}/cs349e" in said, said[-3000:]             # claim it before anyone again
        assert "fetch" in said and "submit" in said and "again" in said, said[-3000:]
    finally:
        shutil.rmtree(base, ignore_errors=True)
