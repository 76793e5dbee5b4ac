"""Copied numbers, end to end, with per-student variants: lecture 1 in a copy of the course,
released, submitted and collected through nbgrader's exchange, graded with pregrade + `nbgrader
autograde`, exported, and graded again by the Gradescope bundle's runner with each student's id in
submission_metadata.json; then the copy report (`python -m autograder answers`, default threshold).

The class is the roster's (the example class), cast by the variants the secret seed drew:
- two honest students with correct work in their own variants: the reference, their own id typed.
  One of them, the source, also typed the numbers their notebook printed into a last cell (an
  answer summary: what a student posts to a group chat);
- a student who hands in the source's answered notebook with their own id typed;
- a student who hands it in as it is, the source's id still typed;
- (nbgrader only) a student who hands in the source's notebook without the summary, the source's
  id typed: the notebook computes the source's numbers from the source's parameters.
Before per-student variants every copy got full marks and nothing named it. Now each copier loses
exactly the points of the items where the source's right answer fails the copier's own key (by the
grader's tolerance), the copy report names them with the source (a typed-other id is an id
mismatch as well), and an honest class gives no flags.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from autograder.build.variants_table import read_roster, roster_path
from autograder.engine.outputs import read_results
from autograder.engine.registry import load_config
from autograder.engine.report_items import accepts_choice, accepts_number
from autograder.sandbox import bubblewrap_problem
from course_copy import clean_env, run
from student_id_cell import typed_in
from variant_course import evaluate

NAME = "lec01_codesign"
ROSTER = tuple(read_roster(roster_path()))   # roster.txt: the example class
MIN_ITEMS = 3   # the copy report's default

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

MODULE = "codesign.py"


def ok(done) -> str:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done.stdout


def cast(keys: dict[str, dict]) -> SimpleNamespace:
    """Who is who: a source, three copiers whose variants differ from the source's in at least
    MIN_ITEMS number keys (so the copied numbers are wrong for them), and an honest classmate."""
    config = load_config(NAME)

    def differ(a: str, b: str) -> int:
        return sum(item.kind == "number" for item in wrong_for(config, keys, a, b))

    for source in ROSTER:
        others = [s for s in ROSTER if s != source and differ(s, source) >= MIN_ITEMS]
        if len(others) >= 4:
            return SimpleNamespace(source=source, own_id=others[0], other_id=others[1], computing=others[2],
                                   honest=others[3])
    pytest.fail(f"the seed drew variants too alike for the roster {ROSTER}")


def with_id(notebook: Path, student: str, token: str) -> nbformat.NotebookNode:
    """The notebook with `student`'s id and personal variant token typed in, as its owner would."""
    return typed_in(nbformat.read(notebook, as_version=4), student, token)


def with_numbers(nb: nbformat.NotebookNode, answers: dict) -> nbformat.NotebookNode:
    """The notebook with a last cell that types the numbers and letters in as literals."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    summary = "\n".join(f"{item} = {value!r}" for item, value in answers.items())
    nb.cells.append(nbformat.v4.new_code_cell("# 答案汇总\n" + summary))
    return nb


def submit(root: Path, exchange: Path, home: Path, student: str, module: Path, notebook: nbformat.NotebookNode):
    """The student's own copy of the release, their two files in it, `nbgrader submit`ted."""
    folder = home / NAME
    shutil.copytree(root / "release" / NAME, folder)
    shutil.copyfile(module, folder / MODULE)
    nbformat.write(notebook, folder / "handout.ipynb")
    done = subprocess.run([sys.executable, "-m", "nbgrader", "submit", NAME, "--course", "cs349e", "--student", student,
                           f"--Exchange.root={exchange}"], cwd=home, env={**clean_env(), "HOME": str(home)},
                          capture_output=True, text=True, timeout=300)
    ok(done)
    return folder


@pytest.fixture(scope="module")
def course(tmp_path_factory, released_course, reference_submission):
    base = tmp_path_factory.mktemp("copied")
    root = released_course(base / "course")   # generate_assignment ran (conftest.py)
    keys = evaluate(root, f"{{s: {{k: v for k, v in keys_for({NAME!r}, s).items() if isinstance(v, (int, float, str))}} "
                          f"for s in {list(ROSTER)!r}}}", "from autograder.engine.variants import keys_for")
    who = cast(keys)
    config = load_config(NAME, assignments_dir=root / "assignments")
    reference = reference_submission / "handout.ipynb"
    exchange = base / "exchange"
    ok(run(root, "-m", "nbgrader", "release_assignment", NAME, "--force", f"--Exchange.root={exchange}"))
    tokens = evaluate(root, f"{{s: variant_token({NAME!r}, s) for s in {list(ROSTER)!r}}}",
                      "from autograder.engine.variants import variant_token")
    answered = with_numbers(with_id(reference, who.source, tokens[who.source]), keys[who.source])
    notebooks = {
        who.honest: with_id(reference, who.honest, tokens[who.honest]),
        who.source: answered,
        who.own_id: with_numbers(with_id(reference, who.own_id, tokens[who.own_id]), keys[who.source]),
        who.other_id: answered,
        # the source's notebook as it is: their id and token typed, so it computes their numbers
        who.computing: with_id(reference, who.source, tokens[who.source]),
    }
    uploads = {s: submit(root, exchange, base / "home" / s, s, reference_submission / MODULE, nb)
               for s, nb in notebooks.items()}
    ok(run(root, "-m", "nbgrader", "collect", NAME, f"--Exchange.root={exchange}"))
    ok(run(root, "-m", "autograder", "pregrade", NAME, "-j", "2"))
    ok(run(root, "-m", "nbgrader", "autograde", NAME, "--force"))
    ok(run(root, "-m", "nbgrader", "export", "--to", "nbgrader_grades.csv"))
    pinned = root / ".pinned_results" / NAME
    report = ok(run(root, "-m", "autograder", "answers", NAME, str(pinned), "--out", "copies.json"))
    # the honest part of the class alone: their results, nothing else
    honest = base / "honest"
    (honest / "results").mkdir(parents=True)
    for student in (who.honest, who.source):
        shutil.copyfile(pinned / "results" / f"{student}.json", honest / "results" / f"{student}.json")
    honest_report = ok(run(root, "-m", "autograder", "answers", NAME, str(honest), "--out", "honest.json"))
    ok(run(root, "-m", "autograder", "gradescope", NAME, "--out", "bundle.zip"))
    return SimpleNamespace(root=root, base=base, keys=keys, who=who, config=config, uploads=uploads,
                           report=report, honest_report=honest_report,
                           results={r.student: r for r in read_results(pinned)})


def auto_points(config) -> float:
    return sum(item.points for item in config.items if item.kind != "text")


def wrong_for(config, keys, student, source) -> list:
    """The number and choice items the source's right answers fail in the student's variant
    (by the grader's own tolerance)."""
    wrong = []
    for item in config.items_of("number", "choice"):
        theirs, own = keys[source].get(item.id), keys[student].get(item.id)
        if own is None:   # measured on the student's machine: no variant's number
            continue
        right = accepts_choice(theirs, own) if item.kind == "choice" else accepts_number(item, theirs, own)
        if not right:
            wrong.append(item)
    return wrong


def variant_points(config, keys, student, source) -> float:
    """Points of the items whose key differs between the two students' variants."""
    return sum(item.points for item in wrong_for(config, keys, student, source))


def expected_scores(course) -> dict[str, float]:
    who, full = course.who, auto_points(course.config)
    lost = {s: variant_points(course.config, course.keys, s, who.source) for s in (who.own_id, who.other_id, who.computing)}
    return {who.honest: full, who.source: full, **{s: full - points for s, points in lost.items()}}


def test_honest_students_get_full_marks_and_copiers_lose_the_variant_dependent_points(course):
    with open(course.root / "nbgrader_grades.csv", newline="", encoding="utf-8") as f:
        nbgrader = {row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(f)}
    expected = expected_scores(course)
    assert nbgrader == pytest.approx(expected)
    assert {s: r.score for s, r in course.results.items()} == pytest.approx(expected)
    for copier in (course.who.own_id, course.who.other_id, course.who.computing):
        assert expected[copier] <= auto_points(course.config) - MIN_ITEMS   # cast: at least MIN_ITEMS numbers differ
        result = course.results[copier]
        lost = [i for i in result.items if i.kind == "number" and i.status == "failed"]
        assert len(lost) >= MIN_ITEMS
        assert all(i.score == i.max_score for i in result.items if i.kind == "function")   # their own code


def test_the_copy_report_names_each_copier_with_the_classmate(course):
    who = course.who
    report = json.loads((course.root / "copies.json").read_text("utf-8"))
    copiers = {who.own_id, who.other_id, who.computing}
    assert {f["student"] for f in report["flags"]} == copiers
    for copier in copiers:
        best = max((f for f in report["flags"] if f["student"] == copier), key=lambda f: len(f["items"]))
        differing = [item.id for item in wrong_for(course.config, course.keys, copier, who.source)
                     if item.kind == "number"]
        assert best["source"] == who.source and best["items"] == differing, (copier, best)
        keyed = [i.id for i in course.config.items_of("number") if isinstance(course.keys[copier].get(i.id), float)]
        assert (best["own_right"], best["compared"]) == (len(keyed) - len(differing), len(keyed))
    # the console names them too, with the source
    assert f"{len(course.results)} students" in course.report and "3 flagged" in course.report
    assert all(s in course.report for s in (*copiers, who.source))


def test_a_notebook_typing_the_classmates_id_is_an_id_mismatch(course):
    who = course.who
    for copier in (who.other_id, who.computing):
        result = course.results[copier]
        assert result.student_id == copier and result.declared_id == who.source
        assert result.flags and who.source in result.flags[0]
    assert not course.results[who.own_id].flags and not course.results[who.honest].flags
    report = json.loads((course.root / "copies.json").read_text("utf-8"))
    assert sorted(d["student"] for d in report["declared_ids"]) == sorted([who.other_id, who.computing])
    assert {f["student"]: f["declared"] for f in report["flags"] if f["source"] == who.source} == {
        who.own_id: "", who.other_id: who.source, who.computing: who.source}
    assert "id mismatch" in course.report


def test_an_honest_class_gives_no_copy_flags(course):
    report = json.loads((course.root / "honest.json").read_text("utf-8"))
    assert report["students"] == sorted([course.who.honest, course.who.source]) and report["flags"] == []
    assert "0 flagged" in course.honest_report


def test_the_gradescope_runner_grades_each_upload_against_the_metadatas_student(course, tmp_path):
    problem = bubblewrap_problem()
    if problem:
        pytest.skip(f"the Gradescope container is simulated with bubblewrap: {problem}")
    from gradescope.gradescope_container import lay_out, run_autograder

    who, expected = course.who, expected_scores(course)
    graded = {}
    for student in (who.honest, who.source, who.own_id, who.other_id):
        upload = tmp_path / "uploads" / student
        upload.mkdir(parents=True)
        for name in (MODULE, "handout.ipynb"):
            shutil.copyfile(course.uploads[student] / name, upload / name)
        root = lay_out(tmp_path / "gs" / student, course.root / "bundle.zip", upload)
        metadata = {"id": 1, "created_at": "2030-01-01T00:00:00Z", "assignment": {"title": NAME},
                    "users": [{"email": f"{student}@example.edu", "sid": student, "name": student}]}
        (root / "submission_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
        result = run_autograder(root)
        assert result.results is not None, result.log[-3000:]
        graded[student] = result.results
    assert {s: r["score"] for s, r in graded.items()} == pytest.approx({s: expected[s] for s in graded})
    # the export of Gradescope's results is a class the copy report reads as well
    export = tmp_path / "export"
    for student, results in graded.items():
        (export / f"submission_{student}").mkdir(parents=True)
        (export / f"submission_{student}" / "results.json").write_text(json.dumps(results), encoding="utf-8")
    done = run(course.root, "-m", "autograder", "answers", NAME, str(export), "--out", "gs.json")
    ok(done)
    flags = json.loads((course.root / "gs.json").read_text("utf-8"))["flags"]
    assert {(f["student"], f["source"]) for f in flags} >= {(who.own_id, who.source), (who.other_id, who.source)}
    assert {f["student"] for f in flags} == {who.own_id, who.other_id}
