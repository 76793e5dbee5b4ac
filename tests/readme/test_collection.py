"""The README's test command (`python -m pytest` from the repository root) runs every test file
under tests/: each `test_*.py` on disk is collected without error. (pytest's default
`norecursedirs` skipped tests/build/, whose drift, leak and reference tests then never ran.)"""

from __future__ import annotations

import subprocess
import sys

from course_copy import ROOT, clean_env

IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".hypothesis"}


def test_every_test_file_under_tests_is_collected():
    on_disk = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py")
               if not IGNORED_PARTS & set(p.parts)}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                          cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=300)
    collected = {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}
    assert on_disk, "no test files found"
    assert sorted(on_disk - collected) == [], done.stdout[-3000:]
    assert done.returncode == 0, done.stdout[-3000:]
