"""Rewrite the example class's notebooks (examples/lec01_codesign/submissions/*/handout.ipynb) on
today's release, after a change to the handout: run from the repository root after `build`.

alice, dave and eve hand in the reference's answers (their codesign.py differs), bob the reference's
answers with his two mistakes, carol the released notebook unanswered. Every example types its own
id (the folder name, on the roster) in the STUDENT_ID cell, so it is graded in its own variant.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from autograder.build import write_reference_submission  # noqa: E402
from autograder.build.notebook import STUDENT_ID_CELL_ID  # noqa: E402

ASSIGNMENT = "lec01_codesign"
EXAMPLES = ROOT / "examples" / ASSIGNMENT / "submissions"
BOB = {  # grade id -> bob's answer
    "q08_decode_tokens_per_s_answer":
        "q08_decode_tokens_per_s = B300_SERVE.mem_bw / (MODEL_PARAMS * 4.5)  # 每个参数 4.5……字节？",
    "q10_size_sensitive_answer": 'q10_size_sensitive = "A"  # 我觉得 FP8 最敏感？',
}


def typed(nb, sid: str):
    nb = nbformat.from_dict(nb)
    (cell,) = [c for c in nb.cells if c.get("id") == STUDENT_ID_CELL_ID]
    if not cell.source.startswith('STUDENT_ID = ""'):
        raise SystemExit(f"the {STUDENT_ID_CELL_ID} cell does not start with an empty STUDENT_ID")
    cell.source = cell.source.replace('STUDENT_ID = ""', f'STUDENT_ID = "{sid}"', 1)
    return nb


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        write_reference_submission(ASSIGNMENT, Path(tmp))
        reference = nbformat.read(Path(tmp) / "handout.ipynb", as_version=4)
    released = nbformat.read(ROOT / "assignments" / ASSIGNMENT / "handout.ipynb", as_version=4)
    for name in ("alice", "dave", "eve"):
        nbformat.write(typed(reference, name), EXAMPLES / name / "handout.ipynb")
    bob = typed(reference, "bob")
    for cell in bob.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in BOB:
            cell.source = BOB[grade_id]
    nbformat.write(bob, EXAMPLES / "bob" / "handout.ipynb")
    nbformat.write(typed(released, "carol"), EXAMPLES / "carol" / "handout.ipynb")


if __name__ == "__main__":
    main()
