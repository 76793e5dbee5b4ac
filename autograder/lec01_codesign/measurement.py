"""Keys of the measurement items (q28–q32): the student times np.exp and a matmul on their own
machine. Raw timings are checked against a wide plausibility range; everything derived from them
must follow from the student's own timings (autograder.engine.answer_checks)."""

from __future__ import annotations

from autograder.engine.answer_checks import DerivedKey, MeasuredKey


def measurement_keys() -> dict[str, object]:
    from hw_specs import B300
    from solutions.lec01_codesign.codesign import exp_ratio, flops_per_exp

    def ratio_percent(d: int):
        # t_exp = ns per exp; t_mma = flops_per_exp(d, d) FLOP / (GFLOP/s) = ns: the ratio in percent
        return lambda exp_ns, matmul_gflops: 100 * exp_ns / (flops_per_exp(d, d) / matmul_gflops)

    b300_percent = 100 * exp_ratio(B300, "fp8", 128, 128)
    return {
        # ns per np.exp of one float32 value: a phone to a workstation, interpreted or not
        "q28_exp_ns_per_value": MeasuredKey(0.01, 1000.0),
        # GFLOP/s of a float32 matmul: from an old laptop's single core to a many-core BLAS
        "q29_matmul_gflops": MeasuredKey(0.1, 100000.0),
        "q30_my_ratio_64": DerivedKey(("q28_exp_ns_per_value", "q29_matmul_gflops"), ratio_percent(64)),
        "q31_my_ratio_128": DerivedKey(("q28_exp_ns_per_value", "q29_matmul_gflops"), ratio_percent(128)),
        "q32_vs_b300": DerivedKey(("q31_my_ratio_128",), lambda mine: mine / b300_percent),
    }
