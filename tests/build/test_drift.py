"""The committed student files are exactly what the build produces, and the build is deterministic."""

import subprocess
import sys
from pathlib import Path

from autograder.build import build_assignment, generated_files

ROOT = Path(__file__).resolve().parents[2]


def test_committed_files_equal_the_build_output():
    drifted = build_assignment("lec01_codesign", check=True)
    assert drifted == [], f"run `python -m autograder build lec01_codesign`: {drifted} drifted"


def test_the_build_writes_the_same_bytes_every_time():
    assert generated_files("lec01_codesign") == generated_files("lec01_codesign")


def test_the_generated_set_is_what_students_need():
    assert set(generated_files("lec01_codesign")) == {"codesign.py", "handout.ipynb", "hw_specs.py", "console.py",
                                                      "README.md"}


def test_shared_copies_say_they_are_generated_and_are_otherwise_identical():
    files = generated_files("lec01_codesign")
    for module in ("hw_specs.py", "console.py"):
        header, rest = files[module].split("\n", 1)
        assert header.startswith("# 自动生成") and "请勿修改" in header
        assert rest == (ROOT / module).read_text(encoding="utf-8")


def test_cli_check_exits_zero_without_drift_and_writes_nothing():
    folder = ROOT / "assignments" / "lec01_codesign"
    before = {p: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file()}
    proc = subprocess.run([sys.executable, "-m", "autograder", "build", "lec01_codesign", "--check"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no drift" in proc.stdout
    assert {p: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file()} == before


def test_readme_points_come_from_grading_toml():
    from autograder.engine.registry import load_config

    readme = generated_files("lec01_codesign")["README.md"]
    config = load_config("lec01_codesign")
    for item in config.items:
        assert f"| `{item.id}` |" in readme and f"| {item.points:g} |" in readme
    assert f"满分 {config.total_points:g} 分" in readme
    assert "$" not in readme  # every placeholder was filled
