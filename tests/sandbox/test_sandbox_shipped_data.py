"""Can a student's own copy of a file the course ships in every student folder (the end-to-end
lab's minilm_encoder.npz, real_tensors.npz, hw_specs.py, cpu_timing.py, variants.json) change what
the grader computes for them, or make it read more than it should? The grader stages only the
student files, lays its own copy of every other file of the assignment over the sandbox, and
computes keys from the repository's copy."""

from __future__ import annotations

import hashlib
import shutil

import numpy as np

from autograder.engine.locate import locate
from autograder.engine.registry import REPO_ROOT, load_config
from autograder.gradescope.submission import collect_submission
from solutions.lec01_codesign import answers

CONFIG = load_config("lec01_codesign")
SHIPPED = REPO_ROOT / "assignments" / CONFIG.assignment
READER = {
    "codesign.py": """
        import hashlib, os

        def digests(names):
            return {n: hashlib.sha256(open(n, "rb").read()).hexdigest() if os.path.isfile(n) else None for n in names}
    """,
}


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_file_shipped_beside_the_student_files_is_the_graders_own():
    shipped = {p.name for p in SHIPPED.iterdir() if p.is_file()} - set(CONFIG.student_files)
    assert {"minilm_encoder.npz", "real_tensors.npz", "hw_specs.py", "cpu_timing.py"} <= shipped
    assert shipped <= set(CONFIG.trusted_files())
    # the keys read the repository's copy, wherever the grader runs from
    for path in (answers.ENCODER, answers.REAL_TENSORS):
        assert path.resolve().parent == SHIPPED.resolve()


def _forged_folder(tmp_path):
    folder = tmp_path / "mallory"
    folder.mkdir()
    shutil.copyfile(SHIPPED / "codesign.py", folder / "codesign.py")
    # a forged model: an object array (a pickle, run by np.load(allow_pickle=True)) and zeros
    np.savez(folder / "minilm_encoder.npz", sentences=np.array([object()], dtype=object), pairs=np.zeros((1, 2)))
    (folder / "hw_specs.py").write_text("raise SystemExit('forged')\n", encoding="utf-8")
    return folder


def test_a_students_copy_of_a_shipped_file_is_never_staged(tmp_path):
    folder = _forged_folder(tmp_path)
    assert locate(folder, CONFIG).present == ("codesign.py",)
    got = collect_submission(folder, CONFIG.student_files, tmp_path / "gradescope" / "student")
    assert sorted(p.name for p in (tmp_path / "gradescope" / "student").iterdir()) == ["codesign.py"]
    assert got.found == {"codesign.py": "codesign.py"}


def test_inside_the_sandbox_the_shipped_files_are_the_graders_copies(sandbox):
    names = ["minilm_encoder.npz", "real_tensors.npz", "hw_specs.py"]
    forged = {**READER, "minilm_encoder.npz": "forged\n", "hw_specs.py": "raise SystemExit('forged')\n"}
    box = sandbox(forged, overlay=CONFIG.trusted_files())
    seen = box.call("codesign", "digests", (names,)).value
    assert seen == {n: _digest(SHIPPED / n) for n in names}
