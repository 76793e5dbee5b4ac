"""The fast lane, `pytest -m "not slow"`: what runs in-process in seconds. Marked slow besides
the tests marked one by one (tests/conftest.py applies these): every test of an area, or of a
file, whose tests start real processes (sandboxes, pytest and notebooks in a student folder,
nbgrader, dask, a fresh clone, a VM) or grade a class."""

SLOW_AREAS = {"assignment", "authoring", "benchmarks", "cluster", "commands", "gradescope", "nbgrader", "readme",
              "sandbox", "where"}
SLOW_FILES = {
    "build/test_drift.py", "build/test_reference_submission.py", "build/test_variant_build.py",
    "engine/test_batch.py", "engine/test_case_set.py", "engine/test_corpus.py", "engine/test_determinism.py",
    "engine/test_examples.py", "engine/test_item_grading.py", "engine/test_lateness.py",
    "engine/test_linked_submissions.py", "engine/test_machine_load.py", "engine/test_oversized_submissions.py",
    "engine/test_reference_drift.py",
    "engine/test_same_scores_everywhere.py", "engine/test_stub_credit.py", "engine/test_time_budget.py",
    "engine/test_unreadable_notebook.py", "engine/test_what_a_call_reveals.py",
    "lec01_codesign/test_answer_keys_hidden.py", "lec01_codesign/test_measured_roofline.py",
    "nbgrader_bridge/test_solutions_bundle.py",
    "nbgrader_bridge/test_zip_collect_uploads.py", "nbgrader_bridge/test_lms_upload.py", "similarity/test_packed_code.py",
    "similarity/test_similarity_command.py", "solutions/test_plot_labels.py", "suite/test_process_groups.py",
    # in-process, but tens of seconds each: classes of drawn variants, an nbgrader database
    "solutions/test_lecture_variants.py", "engine/test_variants.py", "nbgrader_bridge/test_gradebook_reads.py",
    "nbgrader_bridge/test_export_rounding.py", "suite/test_overloaded_is_a_skip.py", "suite/test_fast_lane.py",
    "engine/test_nothing_graded.py", "nbgrader_bridge/test_settle.py",
}
