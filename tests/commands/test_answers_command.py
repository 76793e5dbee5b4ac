"""`python -m autograder answers`, run as the instructor runs it, in a copy of the course with the
fixture assignment fx_intensity (which has per-student variants). The class's results are written
by the grader's own report grading against each student's keys from the secret seed; the command
recomputes the keys itself. The whole path (nbgrader, Gradescope) is tests/nbgrader/test_copied_answers.py."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from autograder.engine.outputs import write_result
from autograder.engine.registry import load_config
from autograder.engine.report_items import grade_report
from autograder.engine.results import SubmissionResult
from autograder.sandbox import NotebookOutcome
from course_copy import copy_course, run
from variant_course import NAME, evaluate, variant_course

IDS = [f"2026{n:04d}" for n in range(40)]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = variant_course(tmp_path_factory.mktemp("course"))
    keys = evaluate(root, f"{{s: dict(keys_for({NAME!r}, s)) for s in {IDS!r}}}",
                    "from autograder.engine.variants import keys_for")
    return root, keys, load_config(NAME, assignments_dir=root / "assignments")


def write_class(root, config, keys, answers_of: dict[str, dict], out: str = "out"):
    report = config.items_of("number", "choice")
    for student, answers in answers_of.items():
        items = grade_report(report, keys[student], NotebookOutcome("ok", answers, (), ""), "handout.ipynb")
        write_result(root / out, SubmissionResult(student, sum(i.score for i in items), config.total_points,
                                                  tuple(items), "bubblewrap", 1.0, assignment=NAME))
    return root / out


def answers(root, *args):
    return run(root, "-m", "autograder", "answers", NAME, *args)


def test_an_honest_class_gives_no_flags(course):
    root, keys, config = course
    out = write_class(root, config, keys, {s: keys[s] for s in IDS}, "honest")
    done = answers(root, str(out), "--min-items", "1", "--out", "honest.csv")
    assert done.returncode == 0, done.stderr
    assert f"{len(IDS)} students, 1 number items compared; 0 flagged" in done.stdout
    with open(root / "honest.csv", newline="", encoding="utf-8") as f:
        assert list(csv.DictReader(f)) == []


def test_the_student_who_handed_in_a_classmates_number_is_named_with_the_classmate(course, tmp_path):
    root, keys, config = course
    copier, source = next((a, b) for a in IDS for b in IDS if keys[a]["q01_intensity"] != keys[b]["q01_intensity"])
    class_ = {s: keys[s] for s in IDS}
    class_[copier] = keys[source]
    out = write_class(root, config, keys, class_, "copied")
    done = answers(root, str(out), "--min-items", "1", "--out", "copied.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((root / "copied.json").read_text("utf-8"))
    assert {f["student"] for f in report["flags"]} == {copier}
    assert {"student": copier, "source": source, "items": ["q01_intensity"], "own_right": 0, "compared": 1,
            "declared": ""} \
        in report["flags"]
    # every other classmate with the same number, and no one else, is listed with the copier
    same = {s for s in IDS if keys[s]["q01_intensity"] == keys[source]["q01_intensity"]}
    lecture = evaluate(root, f"keys_for({NAME!r}, None)['q01_intensity']", "from autograder.engine.variants import keys_for")
    assert {f["source"] for f in report["flags"]} == same | (
        {"(lecture example)"} if lecture == keys[source]["q01_intensity"] else set())
    assert copier in done.stdout and source in done.stdout
    # the default threshold (3 number items) cannot be reached by an assignment with one
    assert "0 flagged" in answers(root, str(out)).stdout
    # a folder of results JSON files laid out otherwise (Gradescope's export: one folder per submission)
    export, sealed = tmp_path / "export", _sealed_copy(root, out, tmp_path / "sealed")
    for path in (sealed / "results").glob("*.json"):
        (export / f"submission_{path.stem}").mkdir(parents=True)
        shutil.copyfile(path, export / f"submission_{path.stem}" / "results.json")
    again = answers(root, str(export), "--min-items", "1", "--out", "export.json")
    assert again.returncode == 0, again.stderr
    assert json.loads((root / "export.json").read_text("utf-8"))["flags"] == report["flags"]


def test_usage_errors_exit_2_with_the_reason(course, tmp_path):
    root, _, _ = course
    missing = answers(root, str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    (tmp_path / "empty").mkdir()
    empty = answers(root, str(tmp_path / "empty"))
    assert empty.returncode == 2 and "no results of fx_intensity" in empty.stderr
    suffix = answers(root, str(tmp_path / "empty"), "--out", "report.txt")
    assert suffix.returncode == 2 and ".csv or .json" in suffix.stderr
    threshold = answers(root, str(tmp_path / "empty"), "--min-items", "0")
    assert threshold.returncode == 2 and "--min-items" in threshold.stderr


def test_an_assignment_without_variants_has_nothing_to_compare(tmp_path):
    """An assignment `new` scaffolds without --variants: one key for everybody, nothing to compare."""
    root, name = copy_course(tmp_path / "course"), "lec09_plain"
    done = run(root, "-m", "autograder", "new", name)
    assert done.returncode == 0, done.stderr
    config = load_config(name, assignments_dir=root / "assignments")
    report = config.items_of("number", "choice")
    assert report, "the scaffold has number or choice questions"
    items = grade_report(report, {}, NotebookOutcome("ok", {}, (), ""), "handout.ipynb")
    write_result(root / "plain", SubmissionResult("alice", 0.0, config.total_points, tuple(items), "none", 1.0,
                                                  assignment=name))
    done = run(root, "-m", "autograder", "answers", name, str(root / "plain"))
    assert done.returncode == 0 and "declares no variants" in done.stdout, done.stderr


def test_the_answers_table_sends_no_control_sequence_to_the_terminal(capsys):
    """The STUDENT_ID a notebook declares is the student's own text: ESC]52 (the instructor's
    clipboard) or ESC[2J in it is shown, not sent."""
    from autograder.commands import answers
    from autograder.views.answer_matches import AnswerReport, CopyFlag

    hostile = "bob\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J"
    flag = CopyFlag("amy", "bob", ("q04",), 0, 3, declared=hostile)
    report = AnswerReport("lec01_codesign", ("amy", "bob"), ("q04",), 1, (flag,),
                          notes=(("cy", f"no answers recorded: {hostile}"),), declared_ids=(("amy", hostile),))
    answers._print(report)
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out, repr(out)
    assert "\\x1b" in out


def test_a_results_shaped_upload_neither_frames_a_classmate_nor_stops_the_report(course, tmp_path):
    """A Gradescope export holds what each student uploaded beside their result. Before, every
    *.json below the folder was read: eve's upload shaped like bob's result (his id, eve's numbers)
    framed bob as a copier (the first by path won) or, beside his own, stopped the report for the
    class (exit 2). Now only results at their known paths are read, and a student with two results
    is a note while the class is compared; a copier of that student is still found."""
    root, keys, config = course
    value = {s: keys[s]["q01_intensity"] for s in IDS}
    bob, eve, copier = next((a, b, c) for a in IDS for b in IDS for c in IDS
                            if len({value[a], value[b], value[c]}) == 3)
    honest = {s: keys[s] for s in IDS}
    honest[copier] = keys[bob]                                   # a real copier, of bob's numbers
    out = _sealed_copy(root, write_class(root, config, keys, honest, "gs-class"), tmp_path / "gs-sealed")
    forged = write_class(root, config, keys, {bob: keys[eve]}, "gs-forged") / "results" / f"{bob}.json"
    export = tmp_path / "export"
    for path in (out / "results").glob("*.json"):
        (export / f"submission_{path.stem}").mkdir(parents=True)
        shutil.copyfile(path, export / f"submission_{path.stem}" / "results.json")
    (export / f"submission_{eve}" / "notes").mkdir()
    shutil.copyfile(forged, export / f"submission_{eve}" / "notes" / "results.json")     # deeper: never read
    shutil.copyfile(forged, export / f"submission_{eve}" / "bob.json")                    # beside hers: never read
    done = answers(root, str(export), "--min-items", "1", "--out", "gs-framed.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((root / "gs-framed.json").read_text("utf-8"))
    assert {f["student"] for f in report["flags"]} == {copier}, report["flags"]
    (export / "submission_0001_eve_upload").mkdir()
    shutil.copyfile(forged, export / "submission_0001_eve_upload" / "results.json")       # a second result for bob
    done = answers(root, str(export), "--min-items", "1", "--out", "gs-twice.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((root / "gs-twice.json").read_text("utf-8"))
    assert {f["student"] for f in report["flags"]} == {copier}, report["flags"]       # bob framed by neither
    assert any(f["source"] == bob for f in report["flags"])                            # his copier still found
    assert any("not sealed" in n["note"] for n in report["notes"]), report["notes"]   # eve's, unsealed: no record
    assert bob in report["students"] and len(report["students"]) == len(IDS)
    # two sealed records of one student (an export laid out twice): neither is compared
    shutil.copyfile(out / "results" / f"{bob}.json", export / "submission_0001_eve_upload" / "results.json")
    done = answers(root, str(export), "--min-items", "1", "--out", "gs-twice.json")
    report = json.loads((root / "gs-twice.json").read_text("utf-8"))
    assert any(n["student"] == bob and "two results" in n["note"] for n in report["notes"]), report["notes"]
    assert bob not in report["students"] and len(report["students"]) == len(IDS) - 1


def test_a_result_filed_under_another_students_name_is_left_out(course):
    """grade's OUT/results/<student>.json and pregrade's pinned results are named after the student
    graded: a record of bob filed as alice's (or one the pinned manifest does not know) is a note."""
    root, keys, config = course
    bob, alice = next((a, b) for a in IDS[:5] for b in IDS[:5] if keys[a]["q01_intensity"] != keys[b]["q01_intensity"])
    out = write_class(root, config, keys, {s: keys[s] for s in IDS[:5]}, "misfiled")
    forged = write_class(root, config, keys, {bob: keys[alice]}, "misfiled-forged") / "results" / f"{bob}.json"
    shutil.copyfile(forged, out / "results" / f"{alice}.json")
    done = answers(root, str(out), "--min-items", "1", "--out", "misfiled.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((root / "misfiled.json").read_text("utf-8"))
    assert report["flags"] == [] and alice not in report["students"], report
    assert any(n["student"] == alice and bob in n["note"] for n in report["notes"]), report["notes"]


def _sealed_copy(root, out, dest):
    """Each result of `out` written again by the grader's own writer, in the course (whose seed seals it)."""
    script = ("import sys, pathlib\n"
              "from autograder.engine.outputs import read_result, write_result\n"
              "for path in sorted(pathlib.Path(sys.argv[1]).glob('results/*.json')):\n"
              "    write_result(pathlib.Path(sys.argv[2]), read_result(path))\n")
    done = run(root, "-c", script, str(out), str(dest))
    assert done.returncode == 0, done.stderr
    return dest


def test_a_results_file_a_student_uploaded_into_an_export_is_no_record(course, tmp_path):
    """In a folder of submission folders (Gradescope's export) a submission folder holds what the
    student uploaded beside the grader's results.json: a student's own results.json there, a record
    they wrote (answers right for their own keys, filed as a classmate), named that classmate as the
    one who copied. A record outside the grader's own folders counts only when it carries the seal
    the grader writes with the assignment's secret seed; anything else is a note, never compared."""
    root, keys, config = course
    honest = {s: keys[s] for s in IDS[:6]}
    sealed = _sealed_copy(root, write_class(root, config, keys, honest, "export-src"), tmp_path / "sealed")
    forger = IDS[0]   # the framed classmate's own record is not in this export
    framed = next(s for s in IDS[6:] if keys[s]["q01_intensity"] != keys[forger]["q01_intensity"])
    forged = write_class(root, config, keys, {framed: keys[forger]}, "forged")
    export = tmp_path / "export"
    for path in (sealed / "results").glob("*.json"):
        (export / f"submission_{path.stem}").mkdir(parents=True)
        shutil.copyfile(path, export / f"submission_{path.stem}" / "results.json")
    (export / "submission_upload").mkdir()
    shutil.copyfile(forged / "results" / f"{framed}.json", export / "submission_upload" / "results.json")
    done = answers(root, str(export), "--min-items", "1", "--out", "forged.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((root / "forged.json").read_text("utf-8"))
    assert report["flags"] == [] and framed not in report["students"]
    assert sorted(report["students"]) == sorted(honest)
    assert "not sealed by the grader" in done.stdout
