"""One atomic writer: does every file the grader writes for others to read (results, feedback,
grades.csv, Gradescope's results.json, the bundle, the shared font list) replace its target only
through autograder/atomic.py, which puts the data on disk before the rename?"""

import ast
import os

from core.script_output import REPO

from autograder.atomic import atomic_file, atomic_write_bytes, atomic_write_text

ATOMIC = REPO / "autograder" / "atomic.py"
# Whole folders moved into place (a staged bundle, an exchange submission): not a file writer.
FOLDER_MOVES = {"autograder/nbgrader_bridge/solutions_bundle.py", "autograder/nbgrader_bridge/exchange.py"}


def renames(path) -> list[str]:
    """Calls in `path` that rename one file over another: os.replace / os.rename, or a Path's
    .replace(target) / .rename(target) (str.replace takes two arguments; dataclasses.replace is no file)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("replace", "rename"):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "dataclasses":
                continue   # dataclasses.replace(obj, field=...) makes a new object, no file
            if (isinstance(owner, ast.Name) and owner.id == "os") or len(node.args) == 1:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_no_file_is_replaced_outside_the_atomic_writer():
    sources = [p for p in sorted((REPO / "autograder").rglob("*.py"))
               if p != ATOMIC and str(p.relative_to(REPO)) not in FOLDER_MOVES]
    assert [use for path in sources for use in renames(path)] == []


def test_the_target_is_the_old_file_or_the_whole_new_one(tmp_path, monkeypatch):
    target = tmp_path / "deep" / "results.json"
    atomic_write_text(target, "old\n")
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    try:
        with atomic_file(target) as handle:
            handle.write("half")
            raise RuntimeError("killed mid-write")
    except RuntimeError:
        pass
    assert target.read_text() == "old\n" and [p.name for p in target.parent.iterdir()] == ["results.json"]
    atomic_write_bytes(target, b"new\n", permissions=0o644)
    assert target.read_bytes() == b"new\n" and oct(target.stat().st_mode & 0o777) == "0o644"
    assert len(synced) == 1   # on disk before the rename: only the write that completed
