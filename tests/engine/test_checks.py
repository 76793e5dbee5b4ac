"""Do the checkers accept exactly what they should and explain failures with one template?"""

import numpy as np

from autograder.engine.checks import ArrayCheck, MappingCheck, ScalarCheck, as_real_array
from autograder.sandbox import Unsupported


def test_float32_lists_and_tuples_are_accepted_when_equal_in_value():
    desired = np.array([0.5, 1.0, 448.0])
    check = ArrayCheck(desired)
    assert check(desired.astype(np.float32), "f(x)").ok
    assert check([0.5, 1, 448.0], "f(x)").ok
    assert check((0.5, 1.0, 448), "f(x)").ok


def test_non_numeric_results_get_a_type_message():
    check = ArrayCheck(np.zeros(3))
    for bad, word in ((["0", "0", "0"], "list"), (None, "None"), (np.array([True] * 3), "bool"),
                      (Unsupported("Liar"), "Liar"), ([[1.0], [2.0, 3.0]], "list")):
        verdict = check(bad, "f(x)")
        assert not verdict.ok and "返回类型不对" in verdict.message and word in verdict.message


def test_shape_mismatch_names_both_shapes():
    verdict = ArrayCheck(np.zeros(4))(np.zeros(3), "f(x)")
    assert not verdict.ok and verdict.message == "`f(x)` 的形状不对 — 返回 (3,)，期望 (4,)"


def test_mismatch_summary_counts_and_shows_the_first_elements():
    desired = np.arange(1024, dtype=float)
    actual = desired.copy()
    actual[[3, 10, 700]] += 0.5
    message = ArrayCheck(desired, inputs=desired * 2)(actual, "f(x)").message
    assert "不一致的元素：3 / 1024（0.293 %）" in message
    assert "最大绝对误差：0.5" in message
    assert "`[3]`：输入 6.0 → 返回 3.5，期望 3.0" in message
    assert "`[700]`" in message


def test_tolerance_is_relative_to_the_desired_value_and_nan_always_fails():
    check = ArrayCheck(np.array([100.0, 1.0]), rtol=1e-3)
    assert check([100.09, 1.0009], "f").ok
    assert not check([100.0, 1.0011], "f").ok
    assert not check([np.nan, 1.0], "f").ok


def test_alternatives_accept_an_element_matching_any_of_them():
    check = ArrayCheck(np.array([1.0, 2.0]), alternatives=(np.array([0.5, 2.0]),))
    assert check([0.5, 2.0], "f").ok and check([1.0, 2.0], "f").ok
    assert not check([0.5, 3.0], "f").ok


def test_small_arrays_use_the_one_line_template():
    verdict = ArrayCheck(np.array([1.0]))(np.array([0.5]), "to_e2m1(np.array([0.75]))")
    assert verdict.message == "`to_e2m1(np.array([0.75]))` 的值不对（要求完全相等） — 返回 [0.5]，期望 [1.0]"


def test_scalar_check_accepts_numpy_numbers_and_rejects_bool_and_lists():
    check = ScalarCheck(768.0)
    assert check(np.int64(768), "f").ok and check(768, "f").ok and check(np.array(768.0), "f").ok
    assert not check(True, "f").ok and not check([768], "f").ok and not check("768", "f").ok


def test_mapping_check_wants_exact_keys_and_none_where_figures_are_missing():
    check = MappingCheck({"compute": 7.5, "fp8": None}, rtol=1e-9)
    assert check({"compute": 7.5, "fp8": None}, "row").ok
    assert "缺少 'fp8'" in check({"compute": 7.5}, "row").message
    assert "多了 `'x'`" in check({"compute": 7.5, "fp8": None, "x": 1}, "row").message
    assert "应为 None" in check({"compute": 7.5, "fp8": 2.0}, "row").message
    assert "row['compute']" in check({"compute": 7.6, "fp8": None}, "row").message


def test_as_real_array_converts_only_numbers():
    assert as_real_array(np.float32(0.25)).dtype == np.float64
    assert as_real_array([1, 2.5]).tolist() == [1.0, 2.5]
    assert as_real_array(["1"]) is None and as_real_array({"a": 1}) is None


def test_integers_beyond_float64_are_wrong_values_not_errors():
    """The wire carries ints up to 4000 bits; float() of them overflows."""
    huge = 2**3000
    for check, value in ((ScalarCheck(768.0), huge), (ScalarCheck(768.0), -huge),
                         (ArrayCheck(np.zeros(2)), [huge, 0]), (ArrayCheck(np.zeros(1)), huge),
                         (MappingCheck({"compute": 7.5}), {"compute": huge})):
        verdict = check(value, "f(x)")
        assert not verdict.ok and "值不对" in verdict.message, verdict.message
        assert str(huge)[:20] not in verdict.message  # described by its size, not 900 digits


def test_without_reveal_no_check_shows_the_expected_value():
    desired = 7.579968669462833
    cases = ((ScalarCheck(desired, rtol=1e-9), 8.5), (MappingCheck({"compute": desired}, rtol=1e-9), {"compute": 8.5}),
             (ArrayCheck(np.array([desired])), [8.5]), (ArrayCheck(np.full(64, desired)), np.full(64, 8.5)),
             (ScalarCheck(desired), 2**3000))
    for check, wrong in cases:
        shown = check(wrong, "trend_row(B300, 'nvfp4')", reveal=True).message
        hidden = check(wrong, "trend_row(B300, 'nvfp4')", reveal=False)
        assert repr(desired) in shown or "最大绝对误差" in shown
        assert not hidden.ok and "与参考值不符" in hidden.message
        assert "7.5799" not in hidden.message and "期望 " not in hidden.message
        assert "difference" not in hidden.message  # |got − desired| would give the key away too
