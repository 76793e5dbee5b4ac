"""What lecture 1's questions teach is right: each figure a prompt or an explanation states is
recomputed here from hw_specs (independently of answers.py), the model is named for what it is,
and most automatic report points need a step of reasoning the notebook does not print."""

import re

import pytest

from autograder.build.readme import grading_table
from autograder.engine.registry import load_config
from autograder.engine.vocabulary import KEYED_KINDS, Demand
from hw_specs import B200, B300, BYTES_PER_ELEM, H100
from solutions.lec01_codesign import handout, handout_data
from solutions.lec01_codesign.answers import answer_key
from solutions.lec01_codesign.explanations import EXPLANATIONS, RUBRICS

CONFIG = load_config("lec01_codesign")
KEY = answer_key()
PROMPTS = {cell.id: cell.prompt for cell in handout.CELLS if hasattr(cell, "prompt")}
MARKDOWN = "\n".join(cell.source for cell in handout.CELLS if type(cell).__name__ == "Markdown")


def _mla_times(chip, d_qk=192, d_v=128):
    t_exp, t_mma = 1 / chip.exp_per_s, (2 * d_qk + 2 * d_v) / chip.peak_flops("fp8")
    return max(t_exp, t_mma), t_exp + t_mma


# --- 1, 2: the measurement's shape, both bounds, and where 1.35× lies -----------------------------
def test_the_measurement_is_modelled_on_the_shape_it_was_measured_on():
    assert (handout_data.MEASURED_MODEL, handout_data.MEASURED_D_QK, handout_data.MEASURED_D_V) == ("DeepSeek-V3", 192, 128)
    assert "Making Softmax More Efficient with NVIDIA Blackwell Ultra" in handout_data.MEASURED_DOCUMENT
    assert handout_data.MEASURED_DOCUMENT in MARKDOWN and "d_qk = 192、d_v = 128" in MARKDOWN


def test_overlap_and_serial_speedups_on_mla_are_1_5625_and_1_48():
    (b200_max, b200_sum), (b300_max, b300_sum) = _mla_times(B200), _mla_times(B300)
    assert KEY["q18_model_speedup"] == pytest.approx(b200_max / b300_max) == pytest.approx(1.5625)
    assert KEY["q18b_serial_speedup"] == pytest.approx(b200_sum / b300_sum)
    assert round(KEY["q18b_serial_speedup"], 2) == 1.48
    # on d = 128 the serial bound is ≈ 1.54× (the figure), the overlap one 1.95×
    d128 = [_mla_times(chip, 128, 128) for chip in (B200, B300)]
    assert round(d128[0][1] / d128[1][1], 2) == 1.54 and d128[0][0] / d128[1][0] == pytest.approx(1.953125)


def test_the_measured_gain_lies_below_both_bounds_and_the_key_says_so():
    gain = handout_data.MEASURED_FP8_FORWARD_GAIN
    assert gain < min(KEY["q18_model_speedup"], KEY["q18b_serial_speedup"])
    assert handout_data.POSITION_OPTIONS[KEY["q18c_measured_position"]][0] == "below"


def test_implied_mma_efficiency_on_mla_is_86_percent_and_is_called_one_attribution():
    t_b300 = (1 / B200.exp_per_s) / handout_data.MEASURED_FP8_FORWARD_GAIN
    assert KEY["q19_mma_efficiency"] == pytest.approx(100 * 640 / B300.peak_flops("fp8") / t_b300)
    assert round(KEY["q19_mma_efficiency"]) == 86
    # imperfect overlap lands between the two models: it cannot explain a measurement below both (q18c)
    assert "一种归因" in EXPLANATIONS["q19_mma_efficiency"] and "q18c" in EXPLANATIONS["q19_mma_efficiency"]


def test_the_bottleneck_model_is_not_called_amdahl():
    """max(t_exp, t_mma) is a bottleneck model; Amdahl's shape is the serial sum (named only there)."""
    texts = {**EXPLANATIONS, **{f"handout {i}": p for i, p in PROMPTS.items()}, "markdown": MARKDOWN}
    texts.update({f"answer {c.id}": c.answer for c in handout.CELLS if hasattr(c, "answer")})
    named = {where for where, text in texts.items() if "Amdahl" in text.replace("不是 Amdahl", "")}
    assert named == {"q18b_serial_speedup"}


# --- 3: each operand's precision in decode --------------------------------------------------------
def test_decode_states_w4a4_and_w4a8_and_the_w4a8_ridge_is_625_with_batch_176():
    intensity = 2 / BYTES_PER_ELEM["nvfp4"]
    assert B300.peak_flops("fp8") / B300.mem_bw == 625
    assert KEY["q09b_decode_batch_w4a8"] == pytest.approx(625 / intensity) and round(KEY["q09b_decode_batch_w4a8"]) == 176
    assert KEY["q09_decode_batch"] == pytest.approx(B300.peak_flops("nvfp4") / B300.mem_bw / intensity)
    assert "W4A4" in PROMPTS["q09_decode_batch"] and "W4A8" in PROMPTS["q09b_decode_batch_w4a8"]
    assert "W4A8" in MARKDOWN and "按 FP8 的算力" in MARKDOWN


def test_kv_cache_figures():
    from solutions.lec01_codesign.variants import LECTURE

    LECTURE_PARAMS = LECTURE["model_params_b"] * 1e9
    kv = 2 * 64 * 8 * 128 * BYTES_PER_ELEM["fp8"]
    assert KEY["q09c_kv_bytes_per_token"] == kv
    # the lecture's 110B model: at the crossover the KV cache equals the weights, and both fit in 90 % of
    # the B300's 288 GB (a 300B model's 2 × 168.75 GB would not)
    assert KEY["q09d_kv_equal_weights_context"] == pytest.approx(LECTURE_PARAMS * BYTES_PER_ELEM["nvfp4"] / (64 * kv))
    assert 2 * LECTURE_PARAMS * BYTES_PER_ELEM["nvfp4"] <= 0.9 * B300.mem_cap < 2 * 300e9 * BYTES_PER_ELEM["nvfp4"]


# --- 4: the mixed-precision ratio overstates the wall 1.78×, not 3× -------------------------------
def test_the_overstatement_is_1_78_not_3():
    mixed = (B300.peak_flops("nvfp4") / B300.mem_bw) / (H100.peak_flops("fp8") / H100.mem_bw)
    assert KEY["q06b_wall_for_nvfp4_kernel"] == pytest.approx(mixed * 0.5625) and round(mixed * 0.5625, 2) == 1.79
    overstatement = mixed / KEY["q06b_wall_for_nvfp4_kernel"]
    assert f"{overstatement:.2f}" == "1.78" and "夸大了约 1.78 倍" in EXPLANATIONS["q06b_wall_for_nvfp4_kernel"]
    assert "夸大约 3 倍" not in EXPLANATIONS["q06_memory_wall"]


# --- 8: the E8M0 grid, the clipped share and the interaction of the 2 × 2 ablation --------------
def test_e8m0_blocks_in_6_to_8_are_42_percent_and_the_ablation_does_not_add_up():
    import numpy as np

    from solutions.lec01_codesign.answers import ablation_errors

    x = handout_data.demo_weights(handout_data.DEMO2_N)
    amax = np.abs(x.reshape(-1, 16)).max(axis=1)
    scaled = amax / 2.0 ** (np.floor(np.log2(amax)) - 2)
    assert KEY["q12b_e8m0_clipped_blocks"] == pytest.approx(100 * np.mean(scaled > 6)) and round(KEY["q12b_e8m0_clipped_blocks"]) == 42
    a = ablation_errors(x)
    gap, block_e8m0 = 100 * (a[32, "e8m0"] - a[16, "e4m3"]), 100 * (a[32, "e8m0"] - a[16, "e8m0"])
    total = KEY["q11_scale_format_gain"] + KEY["q12_block_size_gain"]
    assert (round(total, 2), round(gap, 2), round(block_e8m0, 2)) == (4.24, 3.42, 0.18)
    text = EXPLANATIONS["q12_block_size_gain"]
    assert f"{total:.2f}" in text and f"{gap:.2f}" in text and f"{block_e8m0:.2f}" in text
    assert "(6, 8)" in EXPLANATIONS["q11_scale_format_gain"] and "更细" in EXPLANATIONS["q11_scale_format_gain"]


# --- 9: no prompt or rubric presumes another question's answer ------------------------------------
def test_prompts_and_rubrics_do_not_presume_other_answers():
    assert "如果本来就不超过，写 0" in PROMPTS["q16_software_exp_share"]
    q20 = PROMPTS["q20_explain_scaling"] + " ".join(c.asks for c in RUBRICS["q20_explain_scaling"])
    assert "整张量 FP4 的误差怎样随数据量" not in q20 and "它的误差怎样随数据量" not in q20
    assert "q10" not in " ".join(c.asks for c in RUBRICS["q20_explain_scaling"])


# --- 10: the student README says what is compared how ----------------------------------------------
def test_student_readme_says_which_lecture_helper_is_wrong_and_how_quantize_is_compared():
    readme = (CONFIG.folder / "README.md").read_text(encoding="utf-8")
    assert "逐位一致" not in readme and "`to_e2m1` 用 argmin" in readme and "只对非负数正确" in readme
    assert "8 个 ulp" in readme and "`round_e4m3`、`to_e2m1` 逐位比较" in readme


# --- 6: every item says what it asks; most automatic report points need reasoning ----------------
def test_every_item_declares_its_demand_and_the_readme_table_shows_it():
    assert all(item.demand is not None for item in CONFIG.items)
    table = grading_table(CONFIG)
    for item in CONFIG.items:
        assert re.search(rf"\| `{item.id}` \| [^|]+ \| {item.demand.label} \|", table), item.id
    assert table in (CONFIG.folder / "README.md").read_text(encoding="utf-8")


def test_at_least_half_of_automatic_report_points_need_reasoning():
    keyed = CONFIG.items_of(*KEYED_KINDS)
    share = sum(i.points for i in keyed if i.demand == Demand.REASONING) / sum(i.points for i in keyed)
    assert share >= 0.5, f"{share:.0%} of the automatic report points need reasoning (docs/authoring.md: What an item demands)"


def test_a_reasoning_key_is_not_printed_by_the_answered_notebook():
    """A key marked reasoning is computed in an answer cell, not by a demo cell: no non-answer code cell
    assigns the item's variable. A demo cell may read the student's own answer (the CPU roofline's plot
    places the GEMM by q29c), which shows the student's model, not the key."""
    import ast

    def assigned(source: str) -> set[str]:
        tree = ast.parse("\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()))
        return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}

    demo = [c.source for c in handout.CELLS if type(c).__name__ == "Code"]
    stored = set().union(*(assigned(source) for source in demo))
    reasoning = {item.id for item in CONFIG.items_of(*KEYED_KINDS) if item.demand == Demand.REASONING}
    assert stored & reasoning == set()
    # and no demo cell names one outside the plot that reads q29c
    named = {item for item in reasoning for source in demo if item in source}
    assert named <= {"q29c_gemm_edge_at_ridge"}, named


def test_the_main_readme_states_the_points_grading_toml_gives():
    """The README's "of 99" / "108 for lec01" are read against grading.toml, not typed in twice."""
    from autograder.engine.registry import REPO_ROOT
    from autograder.engine.vocabulary import ItemKind

    from readme_text import course_text

    readme = " ".join(course_text().split())   # the README and the docs/ pages it links
    functions = sum(i.points for i in CONFIG.items_of(ItemKind.FUNCTION))
    keyed = sum(i.points for i in CONFIG.items_of(*KEYED_KINDS))
    assert f"answers, of {functions + keyed:g})" in readme
    assert f"({CONFIG.total_points:g} for lec01)" in readme
    assert f"({functions + keyed:g} for lec01: {functions:g} for the functions, {keyed:g} for the number/choice" in readme
    # the grading night's hand-graded step names every free-text item and their points, computed here
    text = CONFIG.items_of(ItemKind.TEXT)
    short = ", ".join(i.id.split("_")[0] for i in text)
    assert f"**Free text.** The hand-graded items {short} ({sum(i.points for i in text):g} points)" in readme


def test_a_provided_cell_needs_only_what_provided_cells_and_the_answer_variables_define():
    """A student answers each question with code of their own, so a provided cell may read the answer
    variables but no other name the reference answer code happens to define (the roofline's plot once read
    the reference q29 cell's `gemm_sweep`: a NameError for a student who wrote q29 another way). VARIANT
    comes from the variant cell the build puts at the top."""
    import ast
    import builtins

    defined = set(dir(builtins)) | {item.id for item in CONFIG.items} | {"VARIANT"}
    needs = {}
    for cell in handout.CELLS:
        if type(cell).__name__ != "Code":
            continue
        tree = ast.parse("\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                                   for line in cell.source.splitlines()))
        bound = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                bound |= {node.name, *(a.arg for a in node.args.args + node.args.kwonlyargs)} if isinstance(node, ast.FunctionDef) else {node.name}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
            elif isinstance(node, ast.Lambda):
                bound |= {a.arg for a in node.args.args}
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
        loads = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
        if loads - defined - bound:
            needs[cell.source.strip().splitlines()[0][:60]] = sorted(loads - defined - bound)
        defined |= bound
    assert needs == {}
