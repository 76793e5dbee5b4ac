"""The committed student files are exactly what the build produces, and the build is deterministic,
for every assignment of the repository."""

import subprocess
import sys
from pathlib import Path

import pytest

from autograder.build import build_assignment, generated_files
from autograder.engine.registry import load_config
from discovery import assignments

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = pytest.mark.parametrize("name", assignments())


@ASSIGNMENTS
def test_committed_files_equal_the_build_output(name):
    drifted = build_assignment(name, check=True)
    assert drifted == [], f"run `python -m autograder build {name}`: {drifted} drifted"


@ASSIGNMENTS
def test_the_build_writes_the_same_bytes_every_time(name):
    assert generated_files(name) == generated_files(name)


@ASSIGNMENTS
def test_the_generated_set_is_what_students_need(name):
    from autograder.engine.variants import HELPER_FILE, TABLE_FILE, has_variants

    config = load_config(name)
    module = config.student_module
    variant_files = {HELPER_FILE, TABLE_FILE} if has_variants(name) else set()  # the parameter table and its reader
    lecture = {p.name for p in (ROOT / "solutions" / name / "lecture").glob("*.py")}  # the lecture's scripts, verbatim
    assert set(generated_files(name)) == {*config.student_files, *config.shared_modules, "README.md",
                                          "selfcheck.py", "public_checks.py", "conftest.py", f"test_{module}.py",
                                          *variant_files, *lecture}


def test_lecture_1_shares_the_chip_table_the_console_the_plot_fonts_and_the_timing_code():
    assert load_config("lec01_codesign").shared_modules == ("hw_specs.py", "console.py", "plot_fonts.py", "cpu_timing.py")


@ASSIGNMENTS
def test_shared_copies_say_they_are_generated_and_are_otherwise_identical(name):
    files = generated_files(name)
    for module in load_config(name).shared_modules:
        header, rest = files[module].split("\n", 1)
        assert header.startswith("# 自动生成") and "请勿修改" in header
        assert rest == (ROOT / module).read_text(encoding="utf-8")


@ASSIGNMENTS
def test_the_generic_student_files_name_no_lecture(name):
    """Everything but the skeleton, the notebook, the shared copies and the README comes from templates."""
    config = load_config(name)
    generic = {"selfcheck.py", "public_checks.py", "conftest.py", f"test_{config.student_module}.py"}
    others = [other for other in assignments() if other != name]
    for rel in generic:
        text = generated_files(name)[rel]
        assert not [other for other in others if other in text], rel


def test_cli_check_exits_zero_without_drift_and_writes_nothing():
    folder = ROOT / "assignments" / "lec01_codesign"
    before = {p: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file()}
    proc = subprocess.run([sys.executable, "-m", "autograder", "build", "lec01_codesign", "--check"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no drift" in proc.stdout
    assert {p: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file()} == before


@ASSIGNMENTS
def test_readme_points_come_from_grading_toml(name):
    readme = generated_files(name)["README.md"]
    config = load_config(name)
    for item in config.items:
        assert f"| `{item.id}` |" in readme and f"| {item.points:g} |" in readme
    assert f"满分 {config.total_points:g} 分" in readme
    assert "$" not in readme  # every placeholder was filled
