"""NVIDIA's blog reports one figure (GB300's FP8 forward against GB200's on DeepSeek-V3). That it is the
attention alone, and that its shape is MLA's d_qk = 192, d_v = 128 (prefill; absorbed decode is 576 / 512),
is the course's reading of it: every student-facing text that states the shape with the model says so."""

import re

from solutions.lec01_codesign import handout
from solutions.lec01_codesign.explanations import EXPLANATIONS
from solutions.lec01_codesign.handout_data import MEASURED_D_QK, MEASURED_D_V, MEASURED_MODEL


def _texts() -> dict[str, str]:
    texts = {f"markdown {i}": cell.source for i, cell in enumerate(handout.CELLS) if type(cell).__name__ == "Markdown"}
    texts.update({f"prompt {cell.id}": cell.prompt for cell in handout.CELLS if type(cell).__name__ == "Question"})
    texts.update({f"released {item}": text for item, text in EXPLANATIONS.items()})
    return texts


def test_the_measured_shape_is_labelled_as_the_courses_inference():
    shape = f"d_qk = {MEASURED_D_QK}、d_v = {MEASURED_D_V}"
    unlabelled = []
    for where, text in _texts().items():
        for clause in re.split(r"[。；]", re.sub(r"\n[ \t]*", "", text)):
            if MEASURED_MODEL in clause and shape in clause and "推断" not in clause:
                unlabelled.append(f"{where}: {clause.strip()}")
    assert unlabelled == []
