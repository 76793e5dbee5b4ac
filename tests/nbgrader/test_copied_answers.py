"""Copied numbers, end to end, with per-student variants: the fixture assignment fx_intensity
(tests/fixtures/course/, whose variant draws each student's matrix size and ridge point) in a copy
of the course, released, submitted and collected through nbgrader's exchange, graded with
pregrade + `nbgrader autograde`, exported, and graded again by the Gradescope bundle's runner
with each student's id in submission_metadata.json.

The class (ids from the copy's roster, chosen by their variants, which the secret seed draws):
- two honest students with correct work in their own variants: the reference, with their own id
  typed. The source of the copies writes the numbers their notebook printed into the answer cells
  (the answer cells ask for a number), as students who work on paper or in a calculator do;
- a student who hands in the source's answered notebook with their own id typed;
- a student who hands it in as it is, the source's id still typed;
- (nbgrader only) a student who hands in the source's notebook in its computing form, the source's
  id typed: the notebook computes the source's numbers from the source's parameters.
Before per-student variants every copy got full marks and nothing named it. Now each copier loses
exactly the points of the items whose key differs between the two variants, the copy report names
them with the source (and a typed-other id is an id mismatch), and an honest class gives no flags.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from autograder.engine.outputs import read_results
from autograder.engine.registry import load_config
from autograder.sandbox import bubblewrap_problem
from course_copy import clean_env, run
from variant_course import NAME, ROSTER, evaluate, variant_course

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

MODULE = "intensity.py"
ID_LINE = re.compile(r'^STUDENT_ID = ""', flags=re.M)


def ok(done) -> str:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done.stdout


def cast(keys: dict[str, dict]) -> SimpleNamespace:
    """Who is who: a source and two copiers whose matrix sizes differ from the source's (so the
    copied numbers are wrong for them), and an honest classmate. Chosen from the roster by the
    variants the seed drew; a roster where no such three exist cannot show a copy."""
    size = {s: keys[s]["q01_intensity"] for s in ROSTER}
    for source in ROSTER:
        others = [s for s in ROSTER if size[s] != size[source]]
        rest = [s for s in ROSTER if s != source and s not in others[:3]]
        if len(others) >= 3 and rest:
            return SimpleNamespace(source=source, own_id=others[0], other_id=others[1], computing=others[2],
                                   honest=rest[0])
    pytest.fail(f"the seed drew too few distinct sizes for the roster {ROSTER}: {size}")


def with_id(notebook: Path, student: str) -> nbformat.NotebookNode:
    nb = nbformat.read(notebook, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and ID_LINE.search(c.source))
    cell.source = ID_LINE.sub(f"STUDENT_ID = {student!r}", cell.source, count=1)
    return nb


def with_numbers(nb: nbformat.NotebookNode, answers: dict) -> nbformat.NotebookNode:
    """The answer cells holding the numbers the notebook printed, typed in as literals."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        item = grade_id.removesuffix("_answer")
        if grade_id.endswith("_answer") and item in answers:
            cell.source = f"{item} = {answers[item]!r}"
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
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("copied")
    root = variant_course(base / "course")
    keys = evaluate(root, f"{{s: dict(keys_for({NAME!r}, s)) for s in {list(ROSTER)!r}}}",
                    "from autograder.engine.variants import keys_for")
    who = cast(keys)
    config = load_config(NAME, assignments_dir=root / "assignments")
    ok(run(root, "-m", "autograder", "reference", NAME, str(base / "reference")))
    reference = base / "reference" / "handout.ipynb"
    exchange = base / "exchange"
    ok(run(root, "-m", "nbgrader", "generate_assignment", NAME, "--force"))
    ok(run(root, "-m", "nbgrader", "release_assignment", NAME, "--force", f"--Exchange.root={exchange}"))
    source_numbers = with_numbers(with_id(reference, who.source), keys[who.source])
    notebooks = {
        who.honest: with_id(reference, who.honest),
        who.source: source_numbers,
        who.own_id: with_numbers(with_id(reference, who.own_id), keys[who.source]),
        who.other_id: source_numbers,
        who.computing: with_id(reference, who.source),
    }
    uploads = {s: submit(root, exchange, base / "home" / s, s, base / "reference" / MODULE, nb)
               for s, nb in notebooks.items()}
    ok(run(root, "-m", "nbgrader", "collect", NAME, f"--Exchange.root={exchange}"))
    ok(run(root, "-m", "autograder", "pregrade", NAME))
    ok(run(root, "-m", "nbgrader", "autograde", NAME, "--force"))
    ok(run(root, "-m", "nbgrader", "export", "--to", "nbgrader_grades.csv"))
    pinned = root / ".pinned_results" / NAME
    report = ok(run(root, "-m", "autograder", "answers", NAME, str(pinned), "--min-items", "1", "--out", "copies.json"))
    # the honest part of the class alone: their results, nothing else
    honest = base / "honest"
    (honest / "results").mkdir(parents=True)
    for student in (who.honest, who.source):
        shutil.copyfile(pinned / "results" / f"{student}.json", honest / "results" / f"{student}.json")
    honest_report = ok(run(root, "-m", "autograder", "answers", NAME, str(honest), "--min-items", "1",
                           "--out", "honest.json"))
    ok(run(root, "-m", "autograder", "gradescope", NAME, "--out", "bundle.zip"))
    return SimpleNamespace(root=root, base=base, keys=keys, who=who, config=config, uploads=uploads,
                           report=report, honest_report=honest_report,
                           results={r.student: r for r in read_results(pinned)})


def auto_points(config) -> float:
    return sum(item.points for item in config.items if item.kind != "text")


def variant_points(config, keys, student, source) -> float:
    """Points of the items whose key differs between the two students' variants."""
    return sum(item.points for item in config.items_of("number", "choice")
               if keys[student][item.id] != keys[source][item.id])


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
        assert expected[copier] < auto_points(course.config)   # the size differs: q01 at least is lost
        result = course.results[copier]
        assert result.item("q01_intensity").status == "failed"
        assert result.item("arithmetic_intensity").score == result.item("arithmetic_intensity").max_score


def test_the_copy_report_names_each_copier_with_the_classmate(course):
    who = course.who
    report = json.loads((course.root / "copies.json").read_text("utf-8"))
    copiers = {who.own_id, who.other_id, who.computing}
    assert {f["student"] for f in report["flags"]} == copiers
    for copier in copiers:
        assert any(f["student"] == copier and f["source"] == who.source and f["items"] == ["q01_intensity"]
                   for f in report["flags"]), (copier, report["flags"])
    # the console names them too, with the source
    assert "5 students" in course.report and "3 flagged" in course.report
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
    done = run(course.root, "-m", "autograder", "answers", NAME, str(export), "--min-items", "1", "--out", "gs.json")
    ok(done)
    flags = json.loads((course.root / "gs.json").read_text("utf-8"))["flags"]
    assert {(f["student"], f["source"]) for f in flags} >= {(who.own_id, who.source), (who.other_id, who.source)}
    assert {f["student"] for f in flags} == {who.own_id, who.other_id}
