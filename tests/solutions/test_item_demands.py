"""Is lecture 1's `demand` declared by the written definition (docs/authoring.md, *What an item
demands*), do at least half of the automatic report points need reasoning by it, and does the
per-item table in docs/lec01_items.md say what grading.toml declares?"""

import subprocess
import sys

from autograder.engine.registry import REPO_ROOT, load_config
from autograder.engine.vocabulary import KEYED_KINDS, Demand
from solutions.lec01_codesign import handout
from solutions.lec01_codesign.items import REASONS, TEACHES, Why

CONFIG = load_config("lec01_codesign")
KEYED = CONFIG.items_of(*KEYED_KINDS)
CELLS = list(handout.CELLS)


def _question_index(item: str) -> int:
    return next(i for i, cell in enumerate(CELLS) if getattr(cell, "id", None) == item)


# What a student reads besides the notebook: the skeleton's docstrings (q12p's octave was once stated there),
# cpu_timing.py (q28p's bytes were), the student README and the lecture script.
RELEASED = "\n".join((REPO_ROOT / "assignments" / "lec01_codesign" / name).read_text(encoding="utf-8")
                      for name in ("codesign.py", "cpu_timing.py", "README.md", "05_codesign_blackwell_ultra.py"))


def _shown_to(item: str, why: Why) -> str:
    """What a student can read when answering: the files released beside the notebook, and the notebook's
    Markdown cells, Code cells and prompts (never the answer cells: they are the reference's). A student
    reads ahead, so every Markdown cell and prompt counts (q28f, two questions below q30, once stated the
    fact q30's model rests on; a Markdown cell below q12b once explained q12p's octave). Only a
    prediction's later Code cells are left out: they run after it is committed, to verify it."""
    index = _question_index(item)
    shown = [getattr(cell, "prompt", "") if hasattr(cell, "prompt") else cell.source
             for i, cell in enumerate(CELLS)
             if type(cell).__name__ == "Markdown" or hasattr(cell, "prompt")
             or (type(cell).__name__ == "Code" and (i < index or why != Why.PREDICTION))]
    return "\n".join([RELEASED] + shown)


def reasoning_share(items) -> float:
    """The share of automatic report points whose item is declared reasoning."""
    return sum(i.points for i in items if i.demand == Demand.REASONING) / sum(i.points for i in items)


def test_at_least_half_of_the_automatic_report_points_need_reasoning_by_the_definition():
    share = reasoning_share(KEYED)
    assert share >= 0.5, f"{share:.1%} of the automatic report points are declared reasoning"


def test_the_share_is_computed_from_the_declarations():
    """A planted re-declaration moves it: the figure is read from grading.toml, not typed in."""
    from dataclasses import replace

    demoted = [replace(i, demand=Demand.READ_OFF) if i.id == "q09f_w4a4_context_limit" else i for i in KEYED]
    assert reasoning_share(demoted) < reasoning_share(KEYED)


def test_an_item_is_declared_reasoning_exactly_when_it_has_a_written_reason():
    declared = {i.id for i in KEYED if i.demand == Demand.REASONING}
    assert declared == set(REASONS), (sorted(declared - set(REASONS)), sorted(set(REASONS) - declared))


def test_no_reasoning_item_is_given_its_formula_anywhere_a_student_reads_first():
    """Model set-up and decisions: the expression that yields the key is the student's to write."""
    for item, reason in REASONS.items():
        shown = _shown_to(item, reason.why)
        leaked = [fragment for fragment in reason.hidden if fragment in shown]
        assert not leaked, f"{item} ({reason.why}): what a student reads states {leaked}"


def test_a_prediction_is_answered_before_the_cell_that_verifies_it():
    for item, reason in REASONS.items():
        if reason.why != Why.PREDICTION:
            continue
        # A code cell, or a later question's answer cell that measures it (q28 times the exp q28p predicts).
        verifying = [i for i, cell in enumerate(CELLS)
                     if reason.verified_by in (cell.source if type(cell).__name__ == "Code" else getattr(cell, "answer", ""))]
        assert verifying, f"{item}: no cell computes {reason.verified_by!r}"
        assert _question_index(item) < min(verifying), f"{item}: the verifying cell runs before the prediction"


def test_every_item_says_what_it_teaches():
    assert set(TEACHES) == {i.id for i in CONFIG.items}


def test_the_item_table_in_the_docs_is_what_the_declarations_give():
    result = subprocess.run([sys.executable, "tools/item_table.py", "--check"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    page = (REPO_ROOT / "docs" / "lec01_items.md").read_text(encoding="utf-8")
    for item in CONFIG.items:
        assert f"| `{item.id}` | {item.points:g} | {item.demand.value}" in page, item.id
    assert "docs/lec01_items.md" in (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_q06bs_prompt_leaves_both_factors_of_the_wall_to_the_student():
    """q06b (read-off, 1 point) still leaves both factors of the wall to the student: the ridge to reach
    grows by q05 and the kernel's own FLOP/B by the bytes ratio. The prompt once named both (q05 and
    BYTES_PER_ELEM), leaving one multiplication."""
    prompt = CELLS[_question_index("q06b_wall_for_nvfp4_kernel")].prompt
    assert "q05" not in prompt and "BYTES_PER_ELEM" not in prompt and "q06" in prompt


def test_q28ps_prompt_leaves_the_bytes_per_value_to_the_student():
    """q28p is a prediction from a model the student sets up: the bytes one value of np.exp(x, out=y)
    moves (a float32 read, a float32 written) over the measured bandwidth. The prompt once stated
    both accesses, leaving one division: the model was the prompt's, not the student's."""
    import re

    prompt = CELLS[_question_index("q28p_exp_if_memory_bound")].prompt
    assert not re.search(r"[读写]一个 float32", prompt) and not re.search(r"\b[48] ?(字节|B\b)", prompt)
    assert "q28a" in prompt


def test_at_least_six_items_are_predictions_a_later_item_verifies():
    """Predict, then verify: the student commits a number before the cell that measures it (the
    PREDICTION reasons), or a later item verifies it ("verifies qNN" in what it teaches: q09e checks
    q09's weights-only batch with the KV cache read)."""
    import re

    predicted = {item for item, reason in REASONS.items() if reason.why == Why.PREDICTION}
    for item, teaches in TEACHES.items():
        for short in re.findall(r"^verifies (q\d+\w?):", teaches):
            [target] = [i.id for i in KEYED if i.id.split("_")[0] == short]
            assert _question_index(target) < _question_index(item), (target, item)
            predicted.add(target)
    assert len(predicted) >= 6, sorted(predicted)
