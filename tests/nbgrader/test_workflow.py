"""The instructors' nbgrader workflow, end to end, with the real nbgrader commands on a copy of the
course (README, "Instructors"): release, collect (nbgrader's layout and an LMS download),
pregrade + autograde, reconcile, feedback, export, manual grading cells, releasing the solutions.
Autograde starts no Jupyter kernel: the outputs come from the trusted grader's one run of each
notebook. Four hostile notebooks attack the gradebook from that run in the same workflow.

The workflow runs once per module (fixture `course`); each test asks one question about it.
Expected scores come from the trusted grader's own results, never from typed-in numbers.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from autograder.build.markers import find_regions
from autograder.engine.lateness import load_policy
from autograder.engine.outputs import read_results
from autograder.engine.registry import load_config
from autograder.nbgrader_bridge.feedback_tracebacks import OMITTED
from autograder.nbgrader_bridge.pinned import MANIFEST, PINNED_DIR

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"
CONFIG = load_config(ASSIGNMENT)
LATE_POLICY = load_policy(CONFIG)
COURSE_FILES = ("nbgrader_config.py", "assignments", "authoring", "autograder", "solutions", "hw_specs.py", "console.py",
                "plot_fonts.py", "cpu_timing.py")
AUTO_ITEMS = [item.id for item in CONFIG.items if item.kind != "text"]
TEXT_ITEMS = [item for item in CONFIG.items if item.kind == "text"]
# Students nbgrader cannot autograde (flagged by reconcile): an unreadable notebook, and one
# collected after pregrade ran.
CHECK_REWRITER, CORRUPT, LATECOMER = "rewriter", "corrupt", "latecomer"
FLAGGED = {CORRUPT, LATECOMER}
# Hostile notebooks (a skeleton codesign.py, answered report cells) and the classmate they target.
HOSTILE = ("reference_copier", "reconcile_patcher", "cache_forger", "trusted_forger")
VICTIM = "victor"
# Delivered as an LMS download instead of being placed in submitted/ directly.
ZIPPED, CANVAS = "full", "partial"
# A student who added, moved and deleted cells.
REORDERER, OWN_CELL_TEXT, MOVED_CELL, DELETED_CELL = "reorderer", "这是我自己加的格子", "code-4f4f03ca42", "code-ee59465809"


# ---------------------------------------------------------------------------------------------
# running commands in the course copy
# ---------------------------------------------------------------------------------------------
def _env() -> dict:
    drop = ("PYTHONPATH", "NBGRADER_EXECUTION", "CS349E_TRUSTED_GRADING", "CS349E_ISOLATION")
    # No bytecode written into the course by the instructor's own commands: the course tree
    # hashed around autograde then changes only where something else wrote.
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "PYTHONDONTWRITEBYTECODE": "1"}


def run(root: Path, *args: str, expect: int | None = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, *args], cwd=root, env=_env(), capture_output=True, text=True, timeout=600)
    if expect is not None and done.returncode != expect:
        raise AssertionError(f"{' '.join(args)} exited {done.returncode}, expected {expect}\n"
                             f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-6000:]}")
    return done


def nbgrader(root: Path, *args: str) -> subprocess.CompletedProcess:
    return run(root, "-m", "nbgrader", *args)


# nbgrader, with every way of starting a Jupyter kernel recorded in the file argv[1] (and refused).
NBGRADER_WITHOUT_KERNELS = """
import subprocess, sys
import jupyter_client.launcher, jupyter_client.manager, jupyter_client.provisioning.local_provisioner

LOG = sys.argv.pop(1)


def record(what):
    with open(LOG, "a") as log:
        log.write(what + "\\n")


def refused(what):
    def start(*args, **kwargs):
        record(what)
        raise RuntimeError(f"{what}: a Jupyter kernel was started")
    return start


jupyter_client.manager.KernelManager.start_kernel = refused("KernelManager.start_kernel")
jupyter_client.manager.AsyncKernelManager.start_kernel = refused("AsyncKernelManager.start_kernel")
jupyter_client.launcher.launch_kernel = refused("launch_kernel")
jupyter_client.provisioning.local_provisioner.launch_kernel = refused("launch_kernel")
popen = subprocess.Popen.__init__


def watched(self, args, *rest, **kwargs):
    if "kernel" in " ".join(map(str, args if isinstance(args, (list, tuple)) else [args])):
        record(f"process {args!r}")
    popen(self, args, *rest, **kwargs)


subprocess.Popen.__init__ = watched
from nbgrader.apps.nbgraderapp import main
sys.argv[0] = "nbgrader"
main()
"""


def autograder(root: Path, *args: str, expect: int | None = 0) -> subprocess.CompletedProcess:
    return run(root, "-m", "autograder", *args, expect=expect)


def duedate(days: int) -> str:
    """An ISO due date with its offset (nbgrader misreads "2030-01-01 12:00:00 +0800")."""
    return (datetime.now(timezone(timedelta(hours=8))) + timedelta(days=days)).isoformat(timespec="seconds")


# ---------------------------------------------------------------------------------------------
# submissions
# ---------------------------------------------------------------------------------------------
def _edit_notebook(path: Path, edit) -> None:
    nb = nbformat.read(path, as_version=4)
    edit(nb)
    nbformat.write(nb, path)


def _after_setup(source: str):
    """A student's own cell right after the set-up cell (the one importing check)."""
    def edit(nb):
        setup = next(i for i, c in enumerate(nb.cells) if "from selfcheck import check" in c.source)
        nb.cells.insert(setup + 1, nbformat.v4.new_code_cell(source))
    return edit


def _answer(item: str, source: str):
    def edit(nb):
        cell = next(c for c in nb.cells if c.get("id") == f"{item}_answer")
        cell.source = source
    return edit


def _duplicate_grade_cell(item: str):
    def edit(nb):
        i = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == item)
        twin = copy.deepcopy(nb.cells[i])
        twin.id = f"{item}-copy"
        nb.cells.insert(i + 1, twin)
    return edit


WRONG_FLOPS = "\n\ndef flops_per_exp(d_qk, d_v):\n    return 2 * d_qk  # 忘了 PV 那一半\n"
IDENTITY_E4M3 = "\n\ndef round_e4m3(x):\n    return np.asarray(x, dtype=np.float64)\n"
PATCH_NUMPY = ("np.array_equal = lambda *a, **k: True\nnp.allclose = lambda *a, **k: True\n"
               "np.isclose = lambda *a, **k: True\nnp.testing.assert_array_equal = lambda *a, **k: None")
# A numpy RuntimeWarning on stderr.
WARN_ON_STDERR = """
import warnings
warnings.simplefilter("always")
np.float64(1.0) / 0
"""


# Run wherever the notebook runs: in a kernel at autograde, the course would be <cwd>/../../..
# (autograded/<me>/lec01_codesign). Every attempt is printed and logged in the notebook's folder.
HOSTILE_PRELUDE = """
import json, os, shutil, sqlite3, subprocess, sys
from pathlib import Path

HERE = Path.cwd()
ROOT = HERE.parents[2] if len(HERE.parents) > 2 else HERE
ME = HERE.parent.name
AUTOGRADE = True  # every run of the notebook


def attempt(name, action):
    try:
        action()
        outcome = "done"
    except BaseException as err:  # noqa: BLE001
        outcome = f"refused ({type(err).__name__})"
    print(f"attempt {name}: {outcome}")
    with open(HERE / "attempts.log", "a") as log:
        log.write(f"{name}: {outcome}\\n")
"""

HOSTILE_CELLS = {
    # (a) the full-marks files from the grader's own reference, over its own collected submission
    "reference_copier": """
def copy_reference():
    out = HERE / "reference"
    subprocess.run([sys.executable, "-m", "autograder", "reference", "lec01_codesign", str(out)],
                   cwd=ROOT, check=True, capture_output=True, timeout=120)
    for name in ("codesign.py", "handout.ipynb"):
        shutil.copyfile(out / name, ROOT / "submitted" / ME / "lec01_codesign" / name)


def overwrite_submitted():
    (ROOT / "submitted" / ME / "lec01_codesign" / "codesign.py").write_text("# full marks\\n")


if AUTOGRADE:
    attempt("copy_reference", copy_reference)
    attempt("overwrite_submitted", overwrite_submitted)
""",
    # (b) reconcile told to find nothing, and check() redefined
    "reconcile_patcher": """
def patch_reconcile():
    with open(ROOT / "autograder" / "nbgrader_bridge" / "reconcile.py", "a") as f:
        f.write("\\n\\ndef disagreements(*a, **k):\\n    return []\\n")


if AUTOGRADE:
    attempt("patch_reconcile", patch_reconcile)

    def check(item_id):
        return None
""",
    # (c) forged results in the stores, itself full marks and the classmate zero; the gradebook itself
    "cache_forger": """
def forge(student, score):
    for store in (".pinned_results", ".grading_cache"):
        folder = ROOT / store / "lec01_codesign" / "results"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{student}.json").write_text(json.dumps({"score": score}))


def edit_gradebook():
    with sqlite3.connect(ROOT / "gradebook.db") as db:
        db.execute("UPDATE grade SET auto_score = 0")


if AUTOGRADE:
    attempt("forge_self", lambda: forge(ME, 91))
    attempt("forge_victor", lambda: forge("victor", 0))
    attempt("edit_gradebook", edit_gradebook)
    attempt("write_victor_folder", lambda: (ROOT / "autograded" / "victor" / "pwned.txt").write_text("x"))
""",
    # (d) a forged trusted reply in selfcheck, and check() showing every cell's full points
    "trusted_forger": """
import tomllib
import selfcheck

POINTS = {item["id"]: float(item["points"]) for item in tomllib.loads((HERE / "grading.toml").read_text())["items"]}
if AUTOGRADE:
    attempt("forge_reply", lambda: selfcheck.__dict__.setdefault("_TRUSTED", {}).update(
        reply={"items": {i: {"score": p, "max_score": p, "status": "passed", "feedback": "满分"} for i, p in POINTS.items()}}))

    def check(item_id):
        return POINTS[item_id]
""",
}


def make_submissions(root: Path, scratch: Path) -> None:
    """submitted/<student>/lec01_codesign/ as `nbgrader collect` leaves it, plus an LMS download
    in downloaded/lec01_codesign/archive/ for `nbgrader zip_collect`."""
    release = root / "release" / ASSIGNMENT
    reference = scratch / "reference"
    autograder(root, "reference", ASSIGNMENT, str(reference))

    def folder(student: str, base: Path) -> Path:
        dest = scratch / student / ASSIGNMENT if student in (ZIPPED, CANVAS) else root / "submitted" / student / ASSIGNMENT
        shutil.copytree(base, dest)
        return dest

    folder(ZIPPED, reference)
    partial = folder(CANVAS, reference)
    with open(partial / "codesign.py", "a", encoding="utf-8") as f:
        f.write(WRONG_FLOPS)
    _edit_notebook(partial / "handout.ipynb", _answer("q02_format_gain", "# 还没想好"))

    folder("skeleton", release)

    importer = folder("importer", reference)
    (importer / "codesign.py").write_text("from solutions.lec01_codesign.codesign import *  # noqa\n", encoding="utf-8")

    patcher = folder("numpy_patcher", reference)
    with open(patcher / "codesign.py", "a", encoding="utf-8") as f:
        f.write(WRONG_FLOPS + IDENTITY_E4M3)
    _edit_notebook(patcher / "handout.ipynb", _after_setup(PATCH_NUMPY + "\n" + WARN_ON_STDERR))

    rewriter = folder(CHECK_REWRITER, release)
    _edit_notebook(rewriter / "handout.ipynb", _after_setup("def check(item_id):\n    return None"))

    broken = folder("broken", release)
    with open(broken / "codesign.py", "a", encoding="utf-8") as f:
        f.write("\ndef oops(:\n")
    _edit_notebook(broken / "handout.ipynb", _answer("q09_decode_batch", "q09_decode_batch = np.linalg.inv(np.zeros((2, 2)))"))

    odd = folder("odd", reference)  # extra files, a renamed copy of the notebook, an unknown kernel
    (odd / "notes.txt").write_text("草稿\n", encoding="utf-8")
    (odd / "scratch.py").write_text("print('试一试')\n", encoding="utf-8")
    shutil.copyfile(odd / "handout.ipynb", odd / "handout (1).ipynb")
    _edit_notebook(odd / "handout.ipynb", lambda nb: nb.metadata.update(
        kernelspec={"name": "julia-1.9", "display_name": "Julia 1.9", "language": "julia"}))

    def reorder(nb):
        cells = [c for c in nb.cells if c.get("id") != DELETED_CELL]
        moved = next(c for c in cells if c.get("id") == MOVED_CELL)
        cells.remove(moved)
        setup = next(i for i, c in enumerate(cells) if "from selfcheck import check" in c.source)
        cells.insert(setup + 1, nbformat.v4.new_code_cell(f"print({OWN_CELL_TEXT!r})", id="mine"))
        nb.cells = [*cells, moved]

    _edit_notebook(folder(REORDERER, reference) / "handout.ipynb", reorder)

    dup = folder("dupcell", reference)  # nbgrader 0.9.6 alone would abort the whole batch here
    _edit_notebook(dup / "handout.ipynb", _duplicate_grade_cell("q01_compute_headline"))

    folder(VICTIM, reference)
    for student, attack in HOSTILE_CELLS.items():
        hostile = folder(student, reference)
        shutil.copyfile(release / "codesign.py", hostile / "codesign.py")
        _edit_notebook(hostile / "handout.ipynb", _after_setup(HOSTILE_PRELUDE + attack))

    corrupt = folder(CORRUPT, reference)  # a notebook nbgrader cannot read
    text = (corrupt / "handout.ipynb").read_text(encoding="utf-8")
    (corrupt / "handout.ipynb").write_text(text[: len(text) // 2], encoding="utf-8")

    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / f"{ZIPPED}_{ASSIGNMENT}.zip", "w") as zf:  # one zip holding the folder
        for path in sorted((scratch / ZIPPED).rglob("*")):
            zf.write(path, path.relative_to(scratch / ZIPPED).as_posix())
        zf.writestr(f"__MACOSX/{ASSIGNMENT}/._handout.ipynb", "resource fork")
    for path in (scratch / CANVAS / ASSIGNMENT).iterdir():  # Canvas: <student>_<user id>_<submission id>_<file>
        name = path.name.replace(".ipynb", "-1.ipynb")  # Canvas numbers a resubmitted file
        shutil.copyfile(path, archive / f"{CANVAS}_1001_2002_{name}")


# ---------------------------------------------------------------------------------------------
# the workflow, once
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def course(tmp_path_factory) -> SimpleNamespace:
    """Runs the workflow; the namespace holds what each step left behind."""
    root = tmp_path_factory.mktemp("course")
    scratch = tmp_path_factory.mktemp("scratch")
    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".ipynb_checkpoints", PINNED_DIR)
    for name in COURSE_FILES:
        source = ROOT / name
        (shutil.copytree(source, root / name, ignore=ignore) if source.is_dir() else shutil.copyfile(source, root / name))
    w = SimpleNamespace(root=root)

    def release_solutions(*extra: str) -> subprocess.CompletedProcess:
        return autograder(root, "release-solutions", ASSIGNMENT, *extra, expect=None)

    w.refused_without_gradebook = release_solutions()
    source = root / "assignments" / ASSIGNMENT  # what running the public tests there leaves behind
    for junk in (".pytest_cache/v/cache/nodeids", "__pycache__/codesign.cpython-311.pyc", ".hypothesis/x"):
        (source / junk).parent.mkdir(parents=True, exist_ok=True)
        (source / junk).write_text("junk")
    # 1. release
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    w.refused_without_duedate = release_solutions()
    nbgrader(root, "db", "assignment", "add", ASSIGNMENT, f"--duedate={duedate(+30)}")
    w.refused_before_duedate = release_solutions()
    # 2. collect
    make_submissions(root, scratch)
    w.zip_collect = nbgrader(root, "zip_collect", ASSIGNMENT, "--force")
    # 3. grade: pregrade pins the trusted results; a student collected after it is not pinned
    w.autograde_without_pregrade = run(root, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", VICTIM,
                                       expect=None)
    w.pregrade = autograder(root, "pregrade", ASSIGNMENT, "-j", "2")
    w.pinned = {r.student: r for r in read_results(root / PINNED_DIR / ASSIGNMENT)}
    shutil.copytree(root / "release" / ASSIGNMENT, root / "submitted" / LATECOMER / ASSIGNMENT)
    w.students = sorted(p.name for p in (root / "submitted").iterdir())
    w.tree_before = tree_hashes(root)
    w.kernel_log = scratch / "kernels.log"
    w.autograde = run(root, "-c", NBGRADER_WITHOUT_KERNELS, str(w.kernel_log), "autograde", ASSIGNMENT, "--force",
                      expect=None)
    w.tree_after = tree_hashes(root)
    w.trusted = {r.student: r for r in read_results(root / PINNED_DIR / ASSIGNMENT)}
    w.gradebook = gradebook_cells(root)
    # 4. reconcile
    w.reconcile = autograder(root, "reconcile", ASSIGNMENT, expect=None)
    # 5. feedback  6. export
    nbgrader(root, "generate_feedback", ASSIGNMENT, "--force")
    nbgrader(root, "export", "--to", "grades.csv")
    # 8. solutions, once late work earns nothing: a day after the due date it still scores (10 % a day, at most 50 %)
    nbgrader(root, "db", "assignment", "add", ASSIGNMENT, f"--duedate={duedate(-1)}")
    w.refused_while_late_work_scores = release_solutions()
    nbgrader(root, "db", "assignment", "add", ASSIGNMENT, f"--duedate={duedate(-1 - LATE_POLICY.accept_days)}")
    w.released = release_solutions("--out", str(root / "released"))
    # 4'. reconcile once more: a TA's edit of an automatic score in the gradebook and a submitted file
    # changed after pregrade are named; then an honest class (students with bugs included) agrees.
    set_auto_score(root, VICTIM, "round_e4m3", 0.0)
    changed = root / "submitted" / "numpy_patcher" / ASSIGNMENT / "codesign.py"
    original = changed.read_bytes()
    changed.write_bytes(original + b"# edited after pregrade\n")
    w.reconcile_tampered = autograder(root, "reconcile", ASSIGNMENT, expect=None)
    changed.write_bytes(original)
    set_auto_score(root, VICTIM, "round_e4m3", w.trusted[VICTIM].item("round_e4m3").score)
    for student in sorted(FLAGGED):
        nbgrader(root, "db", "student", "remove", student, "--force")
        shutil.rmtree(root / "submitted" / student)
    autograder(root, "pregrade", ASSIGNMENT)
    w.reconcile_honest = autograder(root, "reconcile", ASSIGNMENT, expect=None)
    return w


EXCLUDED_FROM_TREE_HASH = ("autograded", "gradebook.db", "gradebook.db-journal", ".nbgrader.log")


def tree_hashes(root: Path) -> dict[str, str]:
    """relative path -> sha256 of every file in the course, except what autograde itself writes:
    the autograded folders, the gradebook and nbgrader's log."""
    import hashlib

    hashes = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in EXCLUDED_FROM_TREE_HASH or not (path.is_file() or path.is_symlink()):
            continue
        hashes[rel.as_posix()] = "symlink" if path.is_symlink() else hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def set_auto_score(root: Path, student: str, item: str, score: float) -> None:
    script = ("import sys; sys.path.insert(0, '.'); from nbgrader.api import Gradebook;"
              f"gb = Gradebook('sqlite:///gradebook.db', course_id='cs349e');"
              f"g = gb.find_grade({item!r}, 'handout', {ASSIGNMENT!r}, {student!r});"
              f"g.auto_score = {score!r}; gb.db.commit(); gb.close()")
    run(root, "-c", script)


def gradebook_cells(root: Path) -> dict:
    """student -> grade_id -> CellScore, read in a child (loading the course config sets os.environ)."""
    script = ("import json, sys; from pathlib import Path; sys.path.insert(0, '.');"
              "from autograder.nbgrader_bridge.course import load_course;"
              "from autograder.nbgrader_bridge.gradebook import cell_scores;"
              "from dataclasses import asdict;"
              f"cells = cell_scores(load_course(Path('.')), {ASSIGNMENT!r});"
              "print(json.dumps({s: {i: asdict(c) for i, c in v.items()} for s, v in cells.items()}))")
    return json.loads(run(root, "-c", script).stdout)


def students(w: SimpleNamespace) -> list[str]:
    """Everyone in submitted/ when autograde ran."""
    return w.students


# ---------------------------------------------------------------------------------------------
# 1. release
# ---------------------------------------------------------------------------------------------
def _lines(path: Path) -> set[str]:
    """The stripped lines of a file as a reader sees them: a notebook's cell sources, a page's text."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        text = "\n".join("".join(cell["source"]) for cell in json.loads(text)["cells"])
    elif path.suffix == ".html":
        text = _visible_text(text)
    return {line.strip() for line in text.splitlines() if line.strip()}


@functools.cache
def _distinctive_solution_lines() -> frozenset[str]:
    path = ROOT / "solutions" / ASSIGNMENT / "codesign.py"
    lines = {line.strip() for region in find_regions(path.read_text(encoding="utf-8"), path.name) for line in region.body}
    # the lecture's own scripts are released on purpose (solutions/<name>/lecture/): their lines are no secret
    for lecture in (ROOT / "solutions" / ASSIGNMENT / "lecture").glob("*.py"):
        lines -= _lines(lecture)
    return frozenset(line for line in lines if len(line) >= 12 and not line.startswith("#"))


@functools.cache
def _hidden_test_lines() -> frozenset[str]:
    """Lines of the hidden tests that appear nowhere in the public or reference code."""
    public = set()
    for folder in (ROOT / "assignments" / ASSIGNMENT, ROOT / "solutions" / ASSIGNMENT):
        for path in folder.glob("*"):
            if path.suffix in (".py", ".ipynb"):
                public |= _lines(path)
    hidden = set()
    for path in (ROOT / "autograder" / ASSIGNMENT).glob("*.py"):
        hidden |= {line for line in _lines(path)
                   if len(line) >= 25 and not line.startswith(("#", '"""', "from ", "import "))}
    return frozenset(hidden - public)


MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
READABLE = (".py", ".ipynb", ".md", ".toml", ".txt", ".html")


def _files(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix in READABLE}


def test_the_release_holds_no_solution_line_marker_or_answer(course):
    from authoring.cells import Question
    from solutions.lec01_codesign.handout import CELLS

    release = course.root / "release" / ASSIGNMENT
    assert not [p for p in release.rglob("*") if p.name in (".pytest_cache", "__pycache__", ".hypothesis")]
    files = _files(release)
    assert {"codesign.py", "handout.ipynb", "selfcheck.py", "README.md"} <= set(files)
    answers = {line.strip() for q in CELLS if isinstance(q, Question) for line in q.answer.splitlines() if line.strip()}
    for name, path in files.items():
        text, lines = path.read_text(encoding="utf-8"), _lines(path)
        assert not [m for m in MARKERS if m in text], name
        assert not lines & _distinctive_solution_lines(), name
        assert not lines & answers, name
        assert not lines & _hidden_test_lines(), name
        assert not [line for line in lines if line.startswith(("from solutions", "import solutions"))], name


# ---------------------------------------------------------------------------------------------
# 2. collection
# ---------------------------------------------------------------------------------------------
def test_zip_collect_puts_an_lms_download_in_the_submitted_folder(course):
    for student in (ZIPPED, CANVAS):
        folder = course.root / "submitted" / student / ASSIGNMENT
        assert sorted(p.name for p in folder.iterdir()) == ["codesign.py", "handout.ipynb"], student
    partial = (course.root / "submitted" / CANVAS / ASSIGNMENT / "codesign.py").read_text(encoding="utf-8")
    assert partial.endswith(WRONG_FLOPS)
    assert not list((course.root / "submitted").glob("__MACOSX*"))


# ---------------------------------------------------------------------------------------------
# 3. autograde through the trusted grader
# ---------------------------------------------------------------------------------------------
def test_every_submission_was_graded_by_nbgrader_and_the_trusted_grader(course):
    assert set(course.trusted) == set(students(course)) - {LATECOMER}
    assert set(course.gradebook) == set(students(course))


def test_nbgrader_scores_equal_the_trusted_scores_for_honest_students_and_cheaters(course):
    compared = [s for s in students(course) if s not in FLAGGED]
    assert {"importer", "numpy_patcher", "broken", "odd", "dupcell", "skeleton", ZIPPED, CANVAS,
            CHECK_REWRITER, VICTIM, *HOSTILE} <= set(compared)
    for student in compared:
        trusted = {item.id: item.score for item in course.trusted[student].items}
        nbgrader = {item: course.gradebook[student][item]["auto_score"] for item in AUTO_ITEMS}
        assert nbgrader == pytest.approx({item: trusted[item] for item in AUTO_ITEMS}, abs=1e-6), student


def test_the_scores_span_full_partial_and_zero(course):
    """Guards the comparison above against a degenerate corpus (everyone 0, or everyone full)."""
    auto_max = course.trusted[ZIPPED].auto_max_score
    assert course.trusted[ZIPPED].score == pytest.approx(auto_max)
    assert course.trusted["odd"].score == pytest.approx(auto_max)
    assert 0 < course.trusted[CANVAS].score < auto_max
    assert 0 < course.trusted["numpy_patcher"].score < auto_max
    from engine.corpus import items_answered_without_the_student_module, score_outside

    independent = items_answered_without_the_student_module()  # e.g. a byte count: needs no functions
    for student in ("skeleton", "importer", CHECK_REWRITER):
        assert score_outside(course.trusted[student], independent)[0] == 0, student


def test_the_students_own_codesign_is_graded_and_every_other_file_restored(course):
    graded = course.root / "autograded" / "numpy_patcher" / ASSIGNMENT
    assert (graded / "codesign.py").read_text(encoding="utf-8").endswith(WRONG_FLOPS + IDENTITY_E4M3)
    for name in ("selfcheck.py", "public_checks.py", "hw_specs.py", "grading.toml"):
        assert (graded / name).read_bytes() == (course.root / "assignments" / ASSIGNMENT / name).read_bytes(), name


def test_one_unreadable_notebook_fails_that_student_only(course):
    failed = re.findall(r"error processing assignment '[^']+' for student '([^']+)'", course.autograde.stderr)
    assert sorted(failed) == sorted(FLAGGED)
    assert all(course.gradebook[CORRUPT][item]["auto_score"] is None for item in AUTO_ITEMS)


def test_a_duplicated_grade_cell_loses_its_metadata_instead_of_aborting_the_batch(course):
    assert "nbgrader metadata removed (repeats grade_id 'q01_compute_headline')" in course.autograde.stderr
    assert course.gradebook["dupcell"]["q01_compute_headline"]["auto_score"] == \
        course.trusted["dupcell"].item("q01_compute_headline").score


def test_autograde_requires_pregrade(course):
    assert course.autograde_without_pregrade.returncode != 0
    assert "python -m autograder pregrade" in course.autograde_without_pregrade.stderr
    assert LATECOMER not in course.pinned  # collected after pregrade: not autograded
    assert re.search(rf"{LATECOMER}: not in the pinned results", course.autograde.stderr)
    assert all(course.gradebook[LATECOMER][item]["auto_score"] is None for item in AUTO_ITEMS)


def test_importing_solutions_fails_in_the_graders_run(course):
    nb = json.loads((course.root / "autograded" / "importer" / ASSIGNMENT / "handout.ipynb").read_text(encoding="utf-8"))
    errors = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"] if o["output_type"] == "error"]
    assert errors and errors[0]["ename"] == "ModuleNotFoundError" and "solutions" in errors[0]["evalue"]


def test_numpy_warnings_on_stderr_are_left_out_of_the_feedback(course):
    """numpy_patcher's notebook printed a RuntimeWarning: kept in the executed notebook, dropped
    from the autograded one (IgnorePattern); its scores equal the trusted ones."""
    def stderr(cells):
        return "".join(_text(o.get("text", "")) for c in cells for o in c.get("outputs", [])
                       if o.get("output_type") == "stream" and o.get("name") == "stderr")

    assert "RuntimeWarning" in stderr(_executed(course, "numpy_patcher")["cells"])
    assert "RuntimeWarning" not in stderr(_autograded(course, "numpy_patcher")["cells"])
    assert course.trusted["numpy_patcher"].score > 0
    assert course.gradebook["numpy_patcher"]["ridge_point"]["auto_score"] == course.trusted["numpy_patcher"].item("ridge_point").score


# ---------------------------------------------------------------------------------------------
# 3'. hostile notebooks: the kernel cannot change any score
# ---------------------------------------------------------------------------------------------
def _auto_scores(course, student: str) -> dict[str, float | None]:
    return {item: course.gradebook[student][item]["auto_score"] for item in AUTO_ITEMS}


def _trusted_scores(course, student: str) -> dict[str, float]:
    return {item: course.trusted[student].item(item).score for item in AUTO_ITEMS}


@pytest.mark.parametrize("student", [*HOSTILE, CHECK_REWRITER])
def test_a_hostile_notebook_gets_exactly_the_trusted_score_of_its_collected_files(course, student):
    collected = course.root / "submitted" / student / ASSIGNMENT / "codesign.py"
    assert collected.read_bytes() == (course.root / "release" / ASSIGNMENT / "codesign.py").read_bytes()
    assert _auto_scores(course, student) == pytest.approx(_trusted_scores(course, student), abs=1e-6)
    assert course.trusted[student].score < course.trusted[student].auto_max_score / 2  # a skeleton earns little


def test_every_attack_ran_only_in_the_graders_sandbox(course):
    """The attacks ran once, in the trusted grader's sandbox (their printed attempts are the
    notebook's outputs), where the course does not exist; at autograde nothing of theirs ran."""
    expected = {"reference_copier": {"copy_reference", "overwrite_submitted"},
                "reconcile_patcher": {"patch_reconcile"},
                "cache_forger": {"forge_self", "forge_victor", "edit_gradebook", "write_victor_folder"},
                "trusted_forger": {"forge_reply"}}
    for student, attempts in expected.items():
        shown = "".join(_text(o.get("text", "")) for c in _autograded(course, student)["cells"] for o in c.get("outputs", []))
        outcomes = dict(re.findall(r"^attempt (\w+): (.*)$", shown, flags=re.MULTILINE))
        assert set(outcomes) == attempts, student
        for name in attempts & {"copy_reference", "overwrite_submitted", "patch_reconcile", "write_victor_folder"}:
            assert outcomes[name].startswith("refused"), (student, outcomes)
        assert not (course.root / "autograded" / student / ASSIGNMENT / "attempts.log").exists(), student
    for name in ("autograder/nbgrader_bridge/reconcile.py", "autograder/nbgrader_bridge/pinned.py"):
        assert (course.root / name).read_bytes() == (ROOT / name).read_bytes(), name


def test_autograde_started_no_jupyter_kernel(course):
    assert not course.kernel_log.exists(), course.kernel_log.read_text()
    graded = set(course.gradebook) - FLAGGED
    assert graded == set(students(course)) - FLAGGED
    assert all(course.gradebook[s]["ridge_point"]["auto_score"] is not None for s in graded)


def _text(value) -> str:
    """A notebook string as nbformat writes it: one string or a list of lines."""
    return "".join(value) if isinstance(value, list) else value


def _autograded(course, student: str) -> dict:
    return json.loads((course.root / "autograded" / student / ASSIGNMENT / "handout.ipynb").read_text(encoding="utf-8"))


def _executed(course, student: str) -> dict:
    return json.loads((course.root / PINNED_DIR / ASSIGNMENT / "executed" / f"{student}.json").read_text(encoding="utf-8"))


def _kinds(outputs) -> list[tuple]:
    """What a reader sees of outputs: stdout text, values, figures and error names."""
    seen = []
    for o in outputs:
        if o["output_type"] == "stream" and o["name"] == "stdout":
            seen.append(("stdout", _text(o["text"])))
        elif o["output_type"] in ("execute_result", "display_data"):
            seen.append((o["output_type"], _text(o["data"].get("text/plain")), "image/png" in o["data"]))
        elif o["output_type"] == "error":
            seen.append(("error", o["ename"], o["evalue"]))
    return seen


@pytest.mark.parametrize("student", [ZIPPED, REORDERER, "broken", "dupcell", "odd"])
def test_each_cell_shows_the_outputs_its_own_source_produced_in_the_graders_run(course, student):
    """Every code cell nbgrader did not restore gets exactly the outputs of the executed cell with
    its id and source; grade cells show the trusted explanation instead."""
    ran = {(c["id"], c["source_sha256"]): c for c in _executed(course, student)["cells"]}
    checked = 0
    for cell in _autograded(course, student)["cells"]:
        if cell["cell_type"] != "code" or cell["metadata"].get("nbgrader", {}).get("grade"):
            continue
        record = ran.get((cell["id"], hashlib.sha256("".join(cell["source"]).encode()).hexdigest()))
        if record is None:
            assert cell["metadata"].get("nbgrader", {}).get("locked") or not cell["outputs"], cell["id"]
            continue
        assert _kinds(cell["outputs"]) == _kinds(record["outputs"]), (student, cell["id"])
        assert cell["execution_count"] == record["execution_count"]
        checked += 1
    assert checked >= 5
    figures = sum("image/png" in o.get("data", {}) for c in _autograded(course, student)["cells"] for o in c.get("outputs", []))
    assert figures == sum("image/png" in o.get("data", {}) for c in _executed(course, student)["cells"] for o in c["outputs"])


def test_a_student_who_added_moved_and_deleted_cells_sees_each_output_under_its_cell(course):
    cells = [c for c in _autograded(course, REORDERER)["cells"] if c["cell_type"] == "code"]
    ids = [c["id"] for c in cells]
    assert DELETED_CELL not in ids and ids[-1] == MOVED_CELL
    own = cells[ids.index("mine")]
    assert _kinds(own["outputs"]) == [("stdout", OWN_CELL_TEXT + "\n")]
    assert [o["output_type"] for o in cells[-1]["outputs"]] == ["display_data"]
    assert "image/png" in cells[-1]["outputs"][0]["data"]
    full = {c["id"]: c for c in _autograded(course, ZIPPED)["cells"]}
    assert _kinds(cells[-1]["outputs"])[0][:1] == _kinds(full[MOVED_CELL]["outputs"])[0][:1]


def test_redefining_check_to_show_full_points_changes_nothing(course):
    nb = json.loads((course.root / "autograded" / "trusted_forger" / ASSIGNMENT / "handout.ipynb").read_text(encoding="utf-8"))
    grade_cells = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") in AUTO_ITEMS
                   and c["cell_type"] == "code"]
    assert grade_cells and all(o["output_type"] == "display_data" for c in grade_cells for o in c["outputs"])
    assert sum(v for v in _auto_scores(course, "trusted_forger").values()) < CONFIG.total_points / 2


def test_the_classmate_keeps_full_marks(course):
    assert course.trusted[VICTIM].score == pytest.approx(course.trusted[VICTIM].auto_max_score)
    assert _auto_scores(course, VICTIM) == pytest.approx(_trusted_scores(course, VICTIM), abs=1e-6)
    assert not (course.root / "autograded" / VICTIM / "pwned.txt").exists()


def test_autograde_changes_no_file_outside_the_autograded_folders_the_gradebook_and_logs(course):
    assert course.tree_before == course.tree_after
    assert any(name.startswith(f"{PINNED_DIR}/") for name in course.tree_before)  # the store was hashed too
    assert "autograder/nbgrader_bridge/reconcile.py" in course.tree_before


def test_the_pinned_manifest_holds_the_snapshot_of_every_collected_student(course):
    manifest = json.loads((course.root / PINNED_DIR / ASSIGNMENT / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["format"] == 2 and manifest["assignment"] == ASSIGNMENT
    # the last pregrade ran after the flagged students were removed
    assert set(manifest["students"]) == set(students(course)) - FLAGGED
    import hashlib
    entry = manifest["students"][VICTIM]
    assert entry["files"]["codesign.py"] == hashlib.sha256(
        (course.root / "submitted" / VICTIM / ASSIGNMENT / "codesign.py").read_bytes()).hexdigest()
    assert entry["fingerprint"] == course.trusted[VICTIM].fingerprint
    assert entry["executed_sha256"] == hashlib.sha256(
        (course.root / PINNED_DIR / ASSIGNMENT / "executed" / f"{VICTIM}.json").read_bytes()).hexdigest()


# ---------------------------------------------------------------------------------------------
# 4. reconcile
# ---------------------------------------------------------------------------------------------
def test_reconcile_flags_the_submissions_nbgrader_could_not_grade(course):
    assert course.reconcile.returncode == 1, course.reconcile.stderr
    lines = course.reconcile.stdout.splitlines()
    assert sorted(line.split(":")[0] for line in lines) == sorted(FLAGGED)
    assert "autograde failed" in next(line for line in lines if line.startswith(f"{CORRUPT}:"))
    assert "not in the pinned results" in next(line for line in lines if line.startswith(f"{LATECOMER}:"))


def test_reconcile_names_a_changed_gradebook_score_and_a_file_changed_after_pregrade(course):
    assert course.reconcile_tampered.returncode == 1, course.reconcile_tampered.stderr
    lines = {line.split(":")[0]: line for line in course.reconcile_tampered.stdout.splitlines()}
    assert set(lines) == {VICTIM, "numpy_patcher", *FLAGGED}
    assert "round_e4m3 (nbgrader 0, trusted 10)" in lines[VICTIM]
    assert "differ from the pinned snapshot (codesign.py)" in lines["numpy_patcher"]


def test_reconcile_finds_no_difference_in_an_honest_class(course):
    assert course.reconcile_honest.returncode == 0, course.reconcile_honest.stdout
    assert course.reconcile_honest.stdout == ""
    assert f"0 of {len(students(course)) - len(FLAGGED)} student(s) differ" in course.reconcile_honest.stderr


# ---------------------------------------------------------------------------------------------
# 5. feedback
# ---------------------------------------------------------------------------------------------
def _feedback_html(course, student: str) -> str:
    return (course.root / "feedback" / student / ASSIGNMENT / "handout.html").read_text(encoding="utf-8")


def _visible_text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _plain(markdown: str) -> str:
    """What a reader sees of Markdown: rendered, tags dropped, whitespace collapsed."""
    from markdown_it import MarkdownIt

    return " ".join(_visible_text(MarkdownIt().render(markdown)).split())


def test_feedback_says_what_failed_and_why(course):
    text = " ".join(_visible_text(_feedback_html(course, CANVAS)).split())
    item = course.trusted[CANVAS].item("flops_per_exp")
    assert item.score < item.max_score
    first_paragraph = item.feedback_md.strip().split("\n\n")[0]
    assert _plain(first_paragraph) in text


def test_feedback_renders_the_explanations_as_html_with_relative_paths(course):
    """The Markdown of the trusted explanation is rendered (no `**`, `####` left), and nothing
    shows where the instructor's course lives."""
    for student in ("skeleton", CANVAS, "broken"):
        page = _feedback_html(course, student)
        text = _visible_text(page)
        assert "<strong>" in page and "测试内容" in text, student
        prose = _visible_text(re.sub(r"<pre\b.*?</pre>", "", page, flags=re.S))   # code may hold `edge**3`
        assert "**" not in prose and "####" not in prose, student
        assert str(course.root) not in text, student
    # its own frames, relative to the assignment (broken's codesign.py has a syntax error)
    assert re.search(r"File codesign\.py:\d+", _visible_text(_feedback_html(course, "broken")))


def _chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    from browser import CHROMIUM, CHROMIUM_FLAGS

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    return subprocess.run([CHROMIUM, "--headless", *CHROMIUM_FLAGS, "--disable-quic", f"--user-data-dir={profile}",
                           *args, page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=True)


def test_a_failing_students_feedback_in_a_real_browser_shows_formatted_chinese_and_nothing_private(course, tmp_path):
    from bs4 import BeautifulSoup

    page = course.root / "feedback" / "skeleton" / ASSIGNMENT / "handout.html"
    dom = BeautifulSoup(_chromium(page, tmp_path / "profile-dom", "--dump-dom").stdout, "html.parser")
    text = dom.get_text()
    failed = [item for item in course.trusted["skeleton"].items if item.status != "manual" and item.score < item.max_score]
    assert failed
    for item in failed:  # every failing item's explanation is on the page, rendered
        assert _plain(item.feedback_md.strip().split("\n\n")[0]) in " ".join(text.split()), item.id
    assert [s for s in dom.find_all("strong") if "测试内容" in s.get_text()]
    assert "得分" in text and "Score:" not in text
    for code in dom.find_all("pre"):   # code may hold `edge**3`; the prose must hold no Markdown left
        code.decompose()
    prose = dom.get_text()
    assert "**" not in prose and "####" not in prose
    assert str(course.root) not in text and "/autograded/" not in text
    lines = {line.strip() for line in text.splitlines() if line.strip()}
    assert not lines & _hidden_test_lines() and not lines & _distinctive_solution_lines()
    assert not [m for m in MARKERS if m in text]
    shot = tmp_path / "feedback-skeleton.png"  # kept as the test's artefact
    _chromium(page, tmp_path / "profile-shot", "--window-size=1200,4000", f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_feedback_shows_each_students_printed_output_and_figures(course):
    for student in (ZIPPED, REORDERER, CANVAS):
        page = _feedback_html(course, student)
        figures = sum("image/png" in o.get("data", {}) for c in _executed(course, student)["cells"] for o in c["outputs"])
        assert figures >= 3 and page.count('src="data:image/png;base64,') == figures, student
        text = " ".join(_visible_text(page).split())
        printed = [" ".join(line.split()) for c in _executed(course, student)["cells"] for o in c["outputs"]
                   if o["output_type"] == "stream" and o["name"] == "stdout" for line in o["text"].splitlines()]
        assert len(printed) >= 10 and all(line in text for line in printed if line), student
    assert OWN_CELL_TEXT in _visible_text(_feedback_html(course, REORDERER))


def test_feedback_index_names_each_item(course):
    from bs4 import BeautifulSoup

    toc = BeautifulSoup(_feedback_html(course, CANVAS), "html.parser").find(id="toc")
    entries = [" ".join(li.get_text().split()) for li in toc.find_all("li")]
    assert len(entries) == len(CONFIG.items)
    for item in CONFIG.items:
        name = f"评分项 {item.id}" + (f"：{item.title}" if item.title else "")
        assert len([e for e in entries if name in e and "得分" in e]) == 1, (item.id, entries)
    assert not [e for e in entries if e.startswith("评分格")]


def test_feedback_holds_no_hidden_test_reference_code_or_grader_traceback(course):
    hidden, solution = _hidden_test_lines(), _distinctive_solution_lines()
    for student in students(course):
        if student in FLAGGED:
            continue  # nbgrader could not grade it: no feedback
        page = course.root / "feedback" / student / ASSIGNMENT / "handout.html"
        text, lines = _visible_text(page.read_text(encoding="utf-8")), _lines(page)
        assert not [m for m in MARKERS if m in text], student
        assert not lines & hidden, student
        assert "site-packages" not in text and str(course.root / "autograder") not in text, student
        if student in ("skeleton", CHECK_REWRITER, "broken"):  # their own code holds no solution line
            assert not lines & solution, student


def test_feedback_drops_traceback_frames_outside_the_students_folder(course):
    text = _visible_text(_feedback_html(course, "broken"))
    assert "LinAlgError" in text and OMITTED in text  # raised inside numpy's own Python code


# ---------------------------------------------------------------------------------------------
# 6. export
# ---------------------------------------------------------------------------------------------
def test_exported_totals_equal_the_trusted_totals(course):
    import csv

    with open(course.root / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    for student in students(course):
        if student in FLAGGED:
            continue
        assert float(rows[student]["score"]) == pytest.approx(course.trusted[student].score), student
        assert float(rows[student]["max_score"]) == pytest.approx(CONFIG.total_points), student


# ---------------------------------------------------------------------------------------------
# 7. free text
# ---------------------------------------------------------------------------------------------
def test_free_text_answers_wait_for_manual_grading_with_their_points(course):
    for item in TEXT_ITEMS:
        answered = course.gradebook[ZIPPED][item.id]
        assert answered["needs_manual_grade"] and answered["auto_score"] is None
        assert answered["max_score"] == item.points
        unanswered = course.gradebook["skeleton"][item.id]
        assert not unanswered["needs_manual_grade"] and unanswered["auto_score"] == 0


# ---------------------------------------------------------------------------------------------
# 8. releasing the solutions
# ---------------------------------------------------------------------------------------------
def test_release_solutions_refuses_without_gradebook_or_due_date_before_it_and_while_late_work_scores(course):
    for refused, reason in ((course.refused_without_gradebook, "no gradebook"),
                            (course.refused_without_duedate, "no due date"),
                            (course.refused_before_duedate, "has not passed"),
                            (course.refused_while_late_work_scores, "late work is accepted until")):
        assert refused.returncode == 1 and reason in refused.stderr, refused.stderr
    assert not (course.root / "released_solutions").exists()


def test_the_solutions_bundle_is_solved_explained_and_free_of_grader_code(course):
    assert course.released.returncode == 0, course.released.stderr
    bundle = course.root / "released"
    assert _distinctive_solution_lines() <= _lines(bundle / "codesign.py")
    nb = nbformat.read(bundle / "handout.ipynb", as_version=4)
    ids = [c.get("id") for c in nb.cells]
    for item in CONFIG.items:
        if item.kind != "function":
            answer = item.id if item.kind == "text" else f"{item.id}_answer"
            assert ids[ids.index(answer) + 1] == f"{item.id}_explanation", item.id
    hidden = _hidden_test_lines()
    for name, path in _files(bundle).items():
        text, lines = path.read_text(encoding="utf-8"), _lines(path)
        assert not [m for m in MARKERS if m in text], name
        assert not lines & hidden, name
        assert not [line for line in lines if line.startswith(("from solutions", "import solutions"))], name
