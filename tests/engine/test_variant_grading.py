"""Grading with per-student variants (fixture fx_intensity): each submission is graded against the
variant of the student it was handed in as — the folder's name for `grade` (and nbgrader's
submitted/<student>/), Gradescope's metadata for the runner — and a notebook that declares another
student's id is graded as the folder's student and flagged."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from autograder.sandbox import bubblewrap_problem
from course_copy import run
from variant_course import NAME, ROSTER, evaluate, ok, variant_course

pytestmark = [pytest.mark.slow,  # a course copy built, a class graded, the Gradescope runner
              pytest.mark.skipif(bubblewrap_problem() is not None, reason="bubblewrap unavailable")]
USE = "from autograder.engine.variants import params_for, keys_for, variant_digest"


def _typed_id(notebook, sid: str) -> None:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c.get("id") == "student_id")
    source = "".join(cell["source"])
    assert source.startswith('STUDENT_ID = ""')
    cell["source"] = source.replace('STUDENT_ID = ""', f"STUDENT_ID = {sid!r}", 1)
    notebook.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")


def _answered_with_numbers(notebook, answers: dict) -> None:
    """The answer cells hold typed-in numbers (copied from somewhere), not the computation."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        item = cell.get("id", "").removesuffix("_answer")
        if cell.get("id", "").endswith("_answer") and item in answers:
            cell["source"] = f"{item} = {answers[item]!r}\n"
    notebook.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = variant_course(tmp_path_factory.mktemp("course"))
    params = dict(zip(ROSTER, evaluate(root, f"[params_for({NAME!r}, s) for s in {list(ROSTER)!r}]", USE)))
    keys = dict(zip(ROSTER, evaluate(root, f"[dict(keys_for({NAME!r}, s)) for s in {list(ROSTER)!r}]", USE)))
    # a pair whose q01 keys differ (4 sizes among 8 students: there always is one)
    victim = ROSTER[0]
    copier = next(s for s in ROSTER[1:] if keys[s]["q01_intensity"] != keys[victim]["q01_intensity"])
    typist = next(s for s in ROSTER[1:] if s != copier and keys[s]["q01_intensity"] != keys[victim]["q01_intensity"])
    honest = next(s for s in ROSTER if s not in (victim, copier, typist))
    subs = root / "submitted"
    ok(run(root, "-m", "autograder", "reference", NAME, str(subs / victim / NAME)))
    shutil.copytree(subs / victim, subs / honest)
    _typed_id(subs / honest / NAME / "handout.ipynb", honest)  # an honest student types their own id
    shutil.copytree(subs / victim, subs / copier)  # the victim's notebook, the victim's id typed in it
    _typed_id(subs / copier / NAME / "handout.ipynb", victim)
    shutil.copytree(subs / victim, subs / typist)  # the victim's numbers typed in, the typist's own id
    _answered_with_numbers(subs / typist / NAME / "handout.ipynb", keys[victim])
    _typed_id(subs / typist / NAME / "handout.ipynb", typist)
    summary = ok(run(root, "-m", "autograder", "grade", NAME, "submitted", "--out", "out", "-j", "2"))
    results = {s: json.loads((root / "out" / "results" / f"{s}.json").read_text(encoding="utf-8"))
               ["extra_data"]["submission"] for s in (victim, copier, typist, honest)}
    with open(root / "out" / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    digests = evaluate(root, f"{{s: variant_digest(params_for({NAME!r}, s)) for s in {list(ROSTER)!r}}}", USE)
    return dict(root=root, params=params, keys=keys, victim=victim, copier=copier, typist=typist, honest=honest,
                summary=summary, results=results, rows=rows, digests=digests)


def _score(result, item):
    return next(i["score"] for i in result["items"] if i["id"] == item)


def test_students_with_their_own_work_get_every_automatic_point(graded):
    for student in (graded["victim"], graded["honest"]):
        assert graded["results"][student]["score"] == 8, graded["results"][student]


def test_numbers_copied_from_a_classmate_are_wrong_for_the_copier(graded):
    """The defect: one answer key for the class, so a classmate's numbers were worth full marks."""
    typist = graded["results"][graded["typist"]]
    assert _score(typist, "q01_intensity") == 0
    assert graded["results"][graded["victim"]]["score"] == 8
    assert typist["flags"] == []  # their own id: nothing to flag but the wrong numbers


def test_a_notebook_declaring_a_classmates_id_is_graded_as_the_folders_student_and_flagged(graded):
    copier, victim = graded["copier"], graded["victim"]
    result = graded["results"][copier]
    assert result["student_id"] == copier and result["variant"] == graded["digests"][copier]
    assert result["declared_id"] == victim
    assert _score(result, "q01_intensity") == 0  # computed for the victim's parameters
    flag = f"notebook declares STUDENT_ID {victim!r}, graded as {copier!r} (folder)"
    assert result["flags"] == [flag]
    assert graded["rows"][copier]["flags"] == flag
    assert f"flagged: {copier}: {flag}" in graded["summary"]
    assert all(not graded["rows"][s]["flags"] for s in (victim, graded["honest"], graded["typist"]))
    feedback = (graded["root"] / "out" / "feedback" / f"{copier}.md").read_text(encoding="utf-8")
    assert f"notebook 里填的是 `{victim}`，但这份提交属于 `{copier}`：按 `{copier}` 的参数评分" in feedback
    assert f"参数 variant `{graded['digests'][copier]}`" in feedback


def test_results_and_grades_csv_name_each_students_variant_and_where_the_id_came_from(graded):
    for student, result in graded["results"].items():
        assert result["variant"] == graded["digests"][student] == graded["rows"][student]["variant"]
        assert (result["student_id"], result["student_id_source"]) == (student, "folder")
    assert graded["results"][graded["honest"]]["declared_id"] == graded["honest"]
    assert graded["results"][graded["victim"]]["declared_id"] == ""  # left empty: the folder's id


def test_the_gradescope_runner_grades_the_student_its_metadata_names(graded, tmp_path):
    root, honest = graded["root"], graded["honest"]
    gradescope = tmp_path / "gs"
    shutil.copytree(root / "submitted" / graded["victim"] / NAME, gradescope / "submission")
    (gradescope / "submission_metadata.json").write_text(json.dumps(
        {"users": [{"email": f"{honest}@example.edu", "sid": honest, "name": honest}]}), encoding="utf-8")
    ok(run(root, "-m", "autograder.gradescope", NAME, "--root", str(gradescope)))
    results = json.loads((gradescope / "results" / "results.json").read_text(encoding="utf-8"))
    submission = results["extra_data"]["submission"]
    assert (submission["student_id"], submission["student_id_source"]) == (honest, "gradescope sid")
    assert submission["variant"] == graded["digests"][honest]
    assert results["score"] == 8  # the reference computes from the graded student's own parameters
