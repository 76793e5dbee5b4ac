"""Do the shipped example submissions (README's main job) grade as their names promise?"""

import pytest

import solutions.lec01_codesign as ref
from engine.conftest import EXAMPLE_PREFIX
from engine.corpus import LOW_FRACTION, items_answered_without_the_student_module, score_outside


def result(batch, name):
    return batch.result(f"{EXAMPLE_PREFIX}{name}")


def test_alice_gets_full_marks(graded_batch):
    alice = result(graded_batch, "alice")
    assert alice.score == alice.auto_max_score
    assert {i.status for i in alice.items} == {"passed", "manual"}


def test_bob_gets_partial_credit(graded_batch):
    bob = result(graded_batch, "bob")
    assert 0.2 * bob.auto_max_score < bob.score < bob.auto_max_score
    assert {"partial", "passed"} <= {i.status for i in bob.items}


def test_carol_the_skeleton_gets_nothing(graded_batch):
    assert result(graded_batch, "carol").score == 0


def test_dave_learns_about_ties_to_even_from_a_shrunk_counterexample(graded_batch):
    """Does the lecture's argmin bug get the minimal hypothesis counterexample with the right values?"""
    dave = result(graded_batch, "dave")
    feedback = dave.item("to_e2m1").feedback_md
    assert dave.item("to_e2m1").status == "partial"
    assert "`to_e2m1(np.array([0.75]))`" in feedback
    assert f"期望 [{float(ref.to_e2m1(0.75))!r}]" in feedback and "ties to even" in feedback
    assert "负数" in dave.item("round_e4m3").feedback_md


def test_eve_the_cheater_gets_almost_nothing(graded_batch):
    """Her functions borrow the reference or return zeros. What she may still earn, item by item:
    - any answer that needs none of her functions (a byte count, the CPU timings), like anyone: those are
      exempt (which they are is checked statically below);
    - no number item that needs her functions;
    - on a function item only the cases whose right answer is all zeros (at most a tenth of its points);
    - a choice item whose key happens to be the letter her zeros make every comparison pick (exp_ratio
      0: "matmul-bound", both rotations' errors equal: "larger", ...): this, varying with her variant,
      is where the rest of her points come from, and all of it stays under LOW_FRACTION."""
    from autograder.engine.registry import load_config

    config = load_config("lec01_codesign")
    numbers = {item.id for item in config.items_of("number")}
    functions = {item.id for item in config.items_of("function")}
    eve = result(graded_batch, "eve")
    independent = items_answered_without_the_student_module()
    items = {i.id: i for i in eve.items if i.status != "manual"}
    assert {i for i in numbers - independent if items[i].score > 0} == set()
    assert {i for i in functions if items[i].score > 0.1 * items[i].max_score} == set()
    score, maximum = score_outside(eve, independent)
    assert score <= LOW_FRACTION * maximum
    # the exemption (byte counts, the CPU timings, reasoning items set up from the chip table alone such as
    # q09k-q09l and q25w-q25x) stays under two fifths: 61 of 179
    assert maximum >= 0.6 * eve.auto_max_score


@pytest.mark.parametrize("name", ["alice", "bob", "carol", "dave", "eve"])
def test_every_example_has_feedback_per_item(graded_batch, name):
    text = graded_batch.feedback(f"{EXAMPLE_PREFIX}{name}")
    for item in result(graded_batch, name).items:
        assert f"## {item.id}" in text


@pytest.mark.parametrize("name", ["alice", "bob", "carol", "dave", "eve"])
def test_example_notebooks_carry_the_current_locked_cells(name):
    """Examples are answered copies of today's release: every locked cell reads as released."""
    import nbformat

    from autograder.engine.registry import REPO_ROOT

    def locked(nb):
        return {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
                if c.metadata.get("nbgrader", {}).get("locked")}

    released = nbformat.read(REPO_ROOT / "assignments/lec01_codesign/handout.ipynb", as_version=4)
    example = nbformat.read(REPO_ROOT / f"examples/lec01_codesign/submissions/{name}/handout.ipynb", as_version=4)
    assert locked(example) == locked(released)


def test_the_exemption_follows_each_answers_dependencies():
    """A byte count is answered without the student's functions; anything computed from them, or
    from a variable computed from them (q18c from q18's flops_per_exp), is not exempt."""
    independent = items_answered_without_the_student_module()
    assert {"q09c_kv_bytes_per_token", "q09d_kv_equal_weights_context"} <= independent
    assert not {"q15_h100_tensor_basis", "q18c_measured_position", "q25_rotation_nvfp4", "q01_compute_headline"} & independent


def test_a_name_reassigned_from_clean_values_or_local_to_a_comprehension_is_not_tainted():
    """q17 reuses d_qk (an earlier comprehension's loop variable over exp_ratio) and q08 reads B300_SERVE,
    built by sustained_chip whose parameter is called chip (the trend table's loop variable): neither
    answer calls a student function, so neither counts against a broken submission."""
    independent = items_answered_without_the_student_module()
    assert {"q08_decode_tokens_per_s", "q17_backward_ratio"} <= independent
