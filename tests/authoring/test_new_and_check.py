"""`python -m autograder new` + `check`, the way a course author uses them, in a copy of the
repository: the scaffold passes check as created, and an author who edits only files inside the
three new folders adds a second function and a second question that check then grades."""

from __future__ import annotations

import re
import shutil
import tomllib

import pytest

from course_copy import IGNORED, ROOT, copy_course, run, snapshot

NAME = "lec02_attention"
MODULE = "attention"
THREE_FOLDERS = (f"assignments/{NAME}/", f"solutions/{NAME}/", f"autograder/{NAME}/")


def autograder(root, *args):
    return run(root, "-m", "autograder", *args)


def _output(done) -> str:
    return f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("course"))
    before = snapshot(root)
    new = autograder(root, "new", NAME)
    assert new.returncode == 0, _output(new)
    return root, before, new


def test_new_writes_only_the_three_folders_and_lists_the_authors_files(course):
    root, before, new = course
    after = snapshot(root)
    changed = {rel for rel in after if before.get(rel) != after[rel]} | (set(before) - set(after))
    assert changed and all(rel.startswith(THREE_FOLDERS) for rel in changed), sorted(changed)
    listed = re.findall(r"^  (\S+)$", new.stdout, flags=re.M)
    assert len(listed) == 10 and all(rel.startswith(THREE_FOLDERS) for rel in listed)
    generated = {rel for rel in changed if rel not in listed}
    assert f"assignments/{NAME}/selfcheck.py" in generated and f"assignments/{NAME}/handout.ipynb" in generated


def test_new_refuses_a_taken_or_malformed_name(course):
    root, _, _ = course
    for name, words in ((NAME, "already exist"), ("Lec03", "lower-case"), ("lec03_numpy", "shadow"),
                        ("lec03_demo", "shadow")):  # demo.py is the lecture demo of the released solutions
        done = autograder(root, "new", name)
        assert done.returncode == 2 and words in done.stderr, _output(done)


def test_the_scaffold_passes_check(course):
    root, _, _ = course
    done = autograder(root, "check", NAME)
    assert done.returncode == 0, _output(done)
    assert f"{NAME}: ready" in done.stdout
    assert re.search(r"8 / 8 automatic points \(10 with the hand-graded items\)", done.stdout), done.stdout
    assert "0 / 6 points on functions" in done.stdout


def test_the_scaffold_has_the_courses_late_policy(course):
    root, _, _ = course
    late = tomllib.loads((root / "assignments" / NAME / "grading.toml").read_text(encoding="utf-8"))["late"]
    course_late = tomllib.loads((root / "assignments" / "lec01_codesign" / "grading.toml")
                                .read_text(encoding="utf-8"))["late"]
    assert late == course_late


def test_the_scaffold_releases_its_solutions_with_a_demo_that_runs(course, tmp_path):
    root, _, _ = course
    released = tmp_path / "released"
    done = autograder(root, "release-solutions", NAME, "--force", "--out", str(released))
    assert done.returncode == 0, _output(done)
    assert {f"{MODULE}.py", "handout.ipynb", "demo.py", "SOLUTIONS.md"} <= {p.name for p in released.iterdir()}
    demo = run(released, "demo.py")
    assert demo.returncode == 0 and "scale" in demo.stdout, _output(demo)


PER_ASSIGNMENT_TESTS = ("tests/build/test_drift.py", "tests/build/test_leak.py", "tests/build/test_notebook.py",
                        "tests/build/test_reference_submission.py", "tests/build/test_student_files.py",
                        "tests/nbgrader_bridge/test_nbgrader_config.py")


def test_the_scaffold_passes_the_suites_tests_of_every_assignment(course, tmp_path):
    """The scaffold, committed as `new` wrote it, passes every test the suite runs per assignment
    (and the course-wide nbgrader configuration test), run in a copy of the course with the suite."""
    root, _, _ = course
    suite = copy_course(tmp_path / "course", source=root)
    shutil.copytree(ROOT / "tests", suite / "tests", ignore=IGNORED)
    done = run(suite, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PER_ASSIGNMENT_TESTS,
               "-k", f"{NAME} or nbgrader_config")
    assert done.returncode == 0, _output(done)
    assert re.search(r"\b(\d+) passed", done.stdout), done.stdout


def _scratch(course, tmp_path):
    """A copy of the course with the scaffold as `new` wrote it, for one author's mistake."""
    return copy_course(tmp_path / "course", source=course[0])


def test_check_refuses_an_unknown_grading_key_naming_the_nearest(course, tmp_path):
    root = _scratch(course, tmp_path)
    _edit(root, f"assignments/{NAME}/grading.toml", lambda s: s.replace("points = 6", "points = 6\nweight = 3")
          .replace("shared_modules =", "total_points = 40\nshared_module = []\nshared_modules ="))
    done = autograder(root, "check", NAME)
    assert done.returncode == 2, _output(done)
    assert "unknown key 'shared_module' (did you mean 'shared_modules'?" in done.stderr
    assert "unknown key 'total_points' (valid keys: assignment, items, late" in done.stderr


def test_check_names_a_shared_modules_import_the_student_folder_lacks(course, tmp_path):
    """hw_specs.py alone: `python hw_specs.py` fails in the student folder (it prints with console.py)."""
    root = _scratch(course, tmp_path)
    _edit(root, f"assignments/{NAME}/grading.toml", lambda s: s.replace("shared_modules = []",
                                                                        'shared_modules = ["hw_specs.py"]'))
    assert autograder(root, "build", NAME).returncode == 0
    student = run(root / "assignments" / NAME, "hw_specs.py")
    assert student.returncode != 0 and "console" in student.stderr, _output(student)
    done = autograder(root, "check", NAME)
    assert done.returncode == 1, _output(done)
    assert (f'hw_specs.py imports console (line ' in done.stdout
            and f'add "console.py" to shared_modules in assignments/{NAME}/grading.toml' in done.stdout), done.stdout


def test_check_reports_a_missing_late_policy_and_the_answer_keys_expected_and_found(course, tmp_path):
    root = _scratch(course, tmp_path)
    _edit(root, f"assignments/{NAME}/grading.toml", lambda s: s[:s.index("[late]")])
    _edit(root, f"solutions/{NAME}/answers.py", lambda s: s.replace('return {"q01_scaled_sum"',
                                                                    'return {"q09_sum": 1.0, "q01_scaled_sum"'))
    done = autograder(root, "check", NAME)
    assert done.returncode == 1, _output(done)
    assert f"warning: no [late] table in assignments/{NAME}/grading.toml" in done.stdout, done.stdout
    assert ("answer_key() returns the keys ['q01_scaled_sum', 'q09_sum'], grading.toml's number and choice "
            "items are ['q01_scaled_sum'] (missing [], not an item ['q09_sum'])") in done.stdout, done.stdout


def test_check_says_which_line_of_the_reference_the_suite_takes_for_a_stub(course, tmp_path):
    root = _scratch(course, tmp_path)
    _edit(root, f"solutions/{NAME}/{MODULE}.py", lambda s: s.replace('"""\n\nfrom __future__',
                                                                      '把 raise NotImplementedError 换成你的代码。\n"""\n\nfrom __future__'))
    done = autograder(root, "check", NAME)
    assert done.returncode == 1, _output(done)
    assert re.search(rf"solutions/{NAME}/{MODULE}.py: line \d+ of the solved module says NotImplementedError",
                     done.stdout), done.stdout


def test_check_runs_release_solutions_and_shows_the_expected_key(course, tmp_path):
    """Two mistakes check catches only by doing what the release and the grader do: a missing
    lecture demo, and an answer key the notebook's reference answer does not reach (the expected
    value is shown beside what the notebook gives)."""
    root = _scratch(course, tmp_path)
    (root / "solutions" / NAME / "demo.py").unlink()
    _edit(root, f"solutions/{NAME}/answers.py", lambda s: s.replace(".sum())}", ".sum()) + 1.0}"))
    done = autograder(root, "check", NAME)
    assert done.returncode == 1, _output(done)
    shown = re.search(r"q01_scaled_sum: the reference scores 0 / 2 \(failed\)\. Expected ([-\d.e+]+) "
                      r"\(answer_key\(\) in solutions/.*你的答案 ([-\d.e+]+)", done.stdout)
    assert shown and float(shown[1]) == float(shown[2]) + 1.0, done.stdout
    assert re.search(r"release-solutions.*\(skipped", done.stdout), done.stdout  # after a failed step

    _edit(root, f"solutions/{NAME}/answers.py", lambda s: s.replace(".sum()) + 1.0}", ".sum())}"))
    done = autograder(root, "check", NAME)
    assert done.returncode == 1, _output(done)
    assert f"solutions/{NAME}/demo.py not found" in done.stdout, done.stdout
    assert not (root / "released_solutions").exists()  # check releases into a scratch folder only


SECOND_FUNCTION = '''

def offset(x, delta):
    """把数组 x 的每个元素加上 delta，返回 float64 数组。

    【边界】delta 不是有限的数时抛出 ValueError。
    """
    ### BEGIN SOLUTION
    if not math.isfinite(delta):
        raise ValueError("delta 必须是有限的数")
    return np.asarray(x, dtype=np.float64) + delta
    ### END SOLUTION
'''

SECOND_ITEMS = '''
[[items]]
id = "offset"
kind = "function"
points = 4
title = "把数组的每个元素加上一个数"

[[items]]
id = "q03_offset_mean"
kind = "choice"
points = 3
title = "平移以后的平均值变了吗"
choices = ["A", "B"]
'''

SECOND_SUITE = '''

_first_suites = function_suites


@lru_cache(maxsize=1)
def function_suites() -> Mapping[str, Suite]:
    from solutions.lec02_attention import attention as ref

    g = np.random.default_rng(SEED + 1)
    cases = [Case(f"{n} 个数 + {d:g}", Call("offset", (x, d)), Returns(ArrayCheck(ref.offset(x, d))))
             for n, x, d in ((k, g.normal(size=k), float(g.uniform(-3, 3))) for k in (8, 512))]
    cases.append(Case("delta = nan：要抛出 ValueError", Call("offset", (np.ones(2), float("nan"))),
                      Raises("ValueError", "delta 不是有限的数"), Standard.BAD_INPUT))
    return {**_first_suites(), "offset": Suite("offset", "随机数据、非有限的 delta", tuple(cases))}
'''


def _edit(root, rel, edit):
    assert rel.startswith(THREE_FOLDERS)
    path = root / rel
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")


def test_an_author_adds_a_function_and_a_question_inside_the_three_folders(course):
    root, _, _ = course
    before = snapshot(root)
    _edit(root, f"assignments/{NAME}/grading.toml", lambda s: s + SECOND_ITEMS)
    _edit(root, f"solutions/{NAME}/{MODULE}.py", lambda s: s + SECOND_FUNCTION)
    _edit(root, f"solutions/{NAME}/__init__.py", lambda s: s.replace("import scale", "import offset, scale")
          .replace('__all__ = ["scale"]', '__all__ = ["offset", "scale"]'))
    _edit(root, f"solutions/{NAME}/answers.py", lambda s: s.replace("import scale", "import offset, scale") + (
        '\n\n_first_key = answer_key\n\n\ndef answer_key() -> dict[str, float | str]:\n'
        '    moved = float(offset(np.array(SUM_INPUT), 1.0).mean()) != float(np.mean(SUM_INPUT))\n'
        '    return {**_first_key(), "q03_offset_mean": "A" if moved else "B"}\n'))
    _edit(root, f"solutions/{NAME}/explanations.py", lambda s: s.replace(
        "\n}", '\n    "q03_offset_mean": "每个数都加上 1，平均值也加上 1。",\n}'))
    _edit(root, f"solutions/{NAME}/handout.py", lambda s: s.replace(f"from {MODULE} import scale", f"from {MODULE} import offset, scale")
          .rstrip().removesuffix(")") + (
        '    FunctionCheck("offset"),\n'
        '    Question("q03_offset_mean", prompt="""\n'
        '        把每个元素加上 1 以后，平均值变了吗？A. 变了  B. 没变\n'
        '        """, answer="""\n'
        '        q03_offset_mean = "A" if offset(np.array([1.0, 2.0]), 1.0).mean() != 1.5 else "B"\n'
        '        """),\n)\n'))
    _edit(root, f"assignments/{NAME}/public_cases.py", lambda s: s + (
        '\nCASES += (Case("offset", "one", (np.array([1.0, -1.0]), 1.0), "每个元素加 1。", '
        'expected=np.array([2.0, 0.0])),)\n'))
    _edit(root, f"autograder/{NAME}/__init__.py", lambda s: s + SECOND_SUITE)

    done = autograder(root, "check", NAME)
    assert done.returncode == 0, _output(done)
    assert "offset: 3 cases" in done.stdout and "scale: 7 cases" in done.stdout
    assert "15 / 15 automatic points (17 with the hand-graded items)" in done.stdout
    assert "0 / 10 points on functions" in done.stdout
    after = snapshot(root)
    changed = {rel for rel in after if before.get(rel) != after[rel]}
    assert all(rel.startswith(THREE_FOLDERS) for rel in changed), sorted(changed)
    assert f"assignments/{NAME}/handout.ipynb" in changed  # check rebuilt the student files

    # An author's slip is reported in the author's terms: a public example that the reference fails.
    _edit(root, f"assignments/{NAME}/public_cases.py", lambda s: s.replace("expected=np.array([2.0, 0.0])",
                                                                          "expected=np.array([2.0, 1.0])"))
    done = autograder(root, "check", NAME)
    assert done.returncode == 1, _output(done)
    assert "on the reference solution, selfcheck says: ✗ offset" in done.stdout
    assert f"fix the example in assignments/{NAME}/public_cases.py" in done.stdout

    # A mistake in the author's own code names the file and the line, not a grader traceback.
    _edit(root, f"solutions/{NAME}/answers.py", lambda s: s.replace("moved = float(offset(", "moved = float(offest("))
    done = autograder(root, "check", NAME)
    assert done.returncode == 1, _output(done)
    assert f"NameError: name 'offest' is not defined at solutions/{NAME}/answers.py:" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
