"""The committed nbgrader_config.py, read the way nbgrader reads it."""

import re
import tomllib
from pathlib import Path

import pytest
from traitlets.config.loader import PyFileConfigLoader

from autograder.engine.vocabulary import ANSWER_STUB, TEXT_STUB
from discovery import assignments
from process_state import process_state_restored

ROOT = Path(__file__).resolve().parents[2]
NUMPY_WARNING = "/tmp/ipykernel_5097/3666673800.py:2: RuntimeWarning: divide by zero encountered in scalar divide\n"


@pytest.fixture(scope="module")
def config():
    with process_state_restored():
        yield PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()


def test_the_repository_is_the_course_and_assignments_the_source(config):
    assert config.CourseDirectory.root == str(ROOT)
    assert config.CourseDirectory.source_directory == "assignments"


def test_test_caches_are_never_released(config):
    assert {".pytest_cache", ".hypothesis", "__pycache__", ".ipynb_checkpoints"} <= set(config.CourseDirectory.ignore)


def test_only_the_students_own_python_file_survives_autograde(config):
    """Every assignment of the course, each with the .py files its grading.toml hands in."""
    expected = {}
    for name in assignments():
        grading = tomllib.loads((ROOT / "assignments" / name / "grading.toml").read_text(encoding="utf-8"))
        expected[name] = [f for f in grading["student_files"] if f.endswith(".py")]
    assert config.Autograde.exclude_overwriting == expected
    assert expected["lec01_codesign"] == ["codesign.py"]


def test_the_stubs_are_the_ones_the_build_writes(config):
    assert config.ClearSolutions.code_stub == {"python": ANSWER_STUB}
    assert config.ClearSolutions.text_stub == TEXT_STUB


def test_python_warnings_are_dropped_from_stderr_but_errors_are_not(config):
    assert config.IgnorePattern.enabled is True
    pattern = config.IgnorePattern.pattern
    assert re.search(pattern, NUMPY_WARNING)
    assert re.search(pattern, "some text\n" + NUMPY_WARNING)
    assert not re.search(pattern, "Traceback (most recent call last):\nValueError: bad\n")
    assert not re.search(pattern, "RuntimeWarning: mentioned in a print\n")


def test_autograde_scores_and_outputs_come_from_the_pinned_results_and_nothing_executes(config):
    steps = config.Autograde.autograde_preprocessors
    pipeline = "autograder.nbgrader_bridge.autograde_pipeline."
    assert steps[0] == pipeline + "LoadPinnedResult"
    assert steps[1] == pipeline + "WriteExecutedOutputs"
    assert "nbgrader.preprocessors.SaveAutoGrades" not in steps
    assert not [step for step in steps if step.rsplit(".", 1)[-1] in ("Execute", "ExecutePreprocessor")]
    assert steps.index(pipeline + "ShowTrustedFeedback") < steps.index(pipeline + "SaveTrustedGrades")


@pytest.mark.parametrize("lms_name, student, file_id", [
    ("alice_lec01_codesign.zip", "alice", "lec01_codesign.zip"),               # one zip per student
    ("bob_1001_2002_handout.ipynb", "bob", "handout.ipynb"),                   # Canvas
    ("bob_LATE_1001_2002_codesign.py", "bob", "codesign.py"),                  # Canvas, late
    ("cy_1001_2002_lec01_codesign.zip", "cy", "lec01_codesign.zip"),           # Canvas, a zip
])
def test_zip_collect_reads_student_and_file_from_lms_names(config, lms_name, student, file_id):
    match = re.match(config.FileNameCollectorPlugin.named_regexp, lms_name)
    assert match and match["student_id"] == student and match["file_id"] == file_id


def test_zip_collect_pattern_never_matches_a_path_inside_an_upload(config):
    regexp = config.FileNameCollectorPlugin.named_regexp
    assert re.match(regexp, "mallory_1_1_lec01.zip/extracted/victor_9_9_codesign.py") is None
    assert config.ZipCollectApp.extractor_plugin == "autograder.nbgrader_bridge.collect.GuardedLmsExtractor"


@pytest.mark.parametrize("path", ["__MACOSX/lec01_codesign/._handout.ipynb",
                                  ".ipynb_checkpoints/handout-checkpoint.ipynb"])
def test_zip_collect_skips_junk_inside_zips(path):
    from autograder.nbgrader_bridge.lms_upload import Entry

    assert Entry(tuple(path.split("/")), 10).ignored
    assert not Entry(("lec01_codesign", "handout.ipynb"), 10).ignored


def test_zip_collect_takes_python_files_too(config):
    assert set(config.FileNameCollectorPlugin.valid_ext) == {".ipynb", ".py"}


def test_feedback_hides_foreign_traceback_frames(config):
    assert config.GenerateFeedback.preprocessors[-1] == "autograder.nbgrader_bridge.feedback_tracebacks.HideForeignFrames"


def test_release_and_collect_use_the_guarded_exchange(config):
    """collect takes inbound/ as student data (autograder/nbgrader_bridge/exchange.py, docs/exchange.md)."""
    assert config.ExchangeFactory.collect == "autograder.nbgrader_bridge.exchange.GuardedExchangeCollect"
    assert config.ExchangeFactory.release_assignment == "autograder.nbgrader_bridge.exchange.GuardedReleaseAssignment"
    # inbound/ names are students' text on the instructor's terminal (test_exchange_list.py)
    assert config.ExchangeFactory.list == "autograder.nbgrader_bridge.exchange.GuardedExchangeList"
