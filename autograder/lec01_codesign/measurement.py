"""Keys of the measured CPU roofline (q28a–q32): the student measures a STREAM-like triad, a
single-thread matmul sweep and np.exp in the notebook, which the grader runs in its sandbox.

The raw timings are checked against the grading machine's own measurement of the same operations,
taken by `cpu_timing.reference_measurements` (a trusted shared module; it returns seconds, the
figures are computed here) in a sandbox of the assignment's trusted files
(autograder/engine/reference_measurement.py): within cpu_timing.AGREEMENT_FACTOR either way (docs/measurement.md says why that factor). Typed-in constants fail unless they happen to match the
grading machine. Everything derived from the timings must follow from the student's own timings
(DerivedKey): no key presumes which of CPU and GPU has the larger ratio.
"""

from __future__ import annotations

import math

from autograder.engine.answer_checks import DerivedKey, ReferenceKey

# the trusted measurement the grader runs in the sandbox (a shared module of the assignment folder)
SANDBOX_REFERENCE = "cpu_timing:reference_measurements"
# where cpu_timing notes every timing the student's run took: (operation, n or m, seconds)
RUN_TIMINGS = "cpu_timing:TIMINGS"
MAX_NOTED = 10_000   # timings a run can take in its time limit, with room to spare
EXP_BYTES_PER_VALUE = 2 * 4
# numpy's two-pass triad (a = 3·c; a += b): reads c, writes a; reads a, reads b, writes a. Counting these is
# q28p's step, so the figure stays out of the released cpu_timing.
NUMPY_TRIAD_BYTES_PER_ELEMENT = 5 * 8


def triad_gb_per_s(reference) -> float:
    from cpu_timing import TRIAD_BYTES_PER_ELEMENT, TRIAD_N

    return TRIAD_BYTES_PER_ELEMENT * TRIAD_N / reference["triad_seconds"] / 1e9


def gemm_peak_gflops(reference) -> float:
    from cpu_timing import GEMM_SIZES

    return max(2 * m**3 / reference[f"gemm_seconds_{m}"] / 1e9 for m in GEMM_SIZES)


def exp_ns_per_value(reference) -> float:
    from cpu_timing import EXP_N

    return reference["exp_seconds"] / EXP_N * 1e9


def noted_range(operation: str, figure, *, peak: bool = False):
    """The range of figures `figure(size, seconds)` the run's noted `operation` timings give, counted
    right: (low, high). An honest answer is one timing's figure, or an average or median of several
    (inside the range). `peak` (the GEMM sweep's best rate): the best size's, from the highest of the
    sizes' lowest figures to the highest figure. None when the run noted no such timing (the notebook
    timed it otherwise: the window alone judges); () when the record is not what cpu_timing notes
    (nothing is accepted)."""
    def accepted(record) -> tuple[float, float] | tuple[()] | None:
        if not isinstance(record, (list, tuple)) or len(record) > MAX_NOTED:
            return ()
        by_size: dict[int, list[float]] = {}
        for entry in record:
            if not (isinstance(entry, (list, tuple)) and len(entry) == 3 and isinstance(entry[0], str)):
                return ()
            name, size, seconds = entry
            if name != operation:
                continue
            if isinstance(size, bool) or not isinstance(size, int) or not 0 < size < 2**40:
                return ()
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
                return ()
            value = figure(size, float(seconds))
            if not math.isfinite(value):
                return ()
            by_size.setdefault(size, []).append(value)
        if not by_size:
            return None
        if peak:
            return max(min(values) for values in by_size.values()), max(max(values) for values in by_size.values())
        every = [value for values in by_size.values() for value in values]
        return min(every), max(every)

    return accepted


def triad_calibration() -> float:
    """What numpy's two-pass triad moves per element over what q28a counts (STREAM's convention)."""
    from cpu_timing import TRIAD_BYTES_PER_ELEMENT

    return NUMPY_TRIAD_BYTES_PER_ELEMENT / TRIAD_BYTES_PER_ELEMENT


def measurement_keys() -> dict[str, object]:
    from cpu_timing import AGREEMENT_FACTOR
    from hw_specs import B300
    from solutions.lec01_codesign.codesign import exp_ratio, flops_per_exp

    def exp_share_percent(d: int):
        # t_exp = ns per exp; t_mma = flops_per_exp(d, d) FLOP / (GFLOP/s) = ns; one set of vector units takes
        # both in turn (no exp unit of its own): exp's share of a score's time, in percent
        return lambda exp_ns, matmul_gflops: 100 * exp_ns / (exp_ns + flops_per_exp(d, d) / matmul_gflops)

    b300_percent = 100 * exp_ratio(B300, "fp8", 128, 128)
    calibration = triad_calibration()
    exp, gemm, triad = "q28_exp_ns_per_value", "q29_matmul_gflops", "q28a_triad_gb_per_s"
    from cpu_timing import TRIAD_BYTES_PER_ELEMENT

    # the counting each item asks, applied to each timing of the student's own run
    own_triad = noted_range("triad", lambda n, seconds: TRIAD_BYTES_PER_ELEMENT * n / seconds / 1e9)
    own_gemm = noted_range("gemm", lambda m, seconds: 2 * m**3 / seconds / 1e9, peak=True)
    own_exp = noted_range("exp", lambda n, seconds: seconds / n * 1e9)
    return {
        triad: ReferenceKey(triad_gb_per_s, AGREEMENT_FACTOR, RUN_TIMINGS, own_triad),
        gemm: ReferenceKey(gemm_peak_gflops, AGREEMENT_FACTOR, RUN_TIMINGS, own_gemm),
        exp: ReferenceKey(exp_ns_per_value, AGREEMENT_FACTOR, RUN_TIMINGS, own_exp),
        # FLOP/s ÷ B/s; both in 10^9
        "q29b_cpu_ridge": DerivedKey((gemm, triad), lambda gflops, gbs: gflops / gbs),
        # an m × m float32 matmul moves at least A and B in and C out (3m² × 4 B) for 2m³ FLOP: m / 6 FLOP/B,
        # the ridge at m = 6 × (FLOP/s ÷ B/s)
        "q29c_gemm_edge_at_ridge": DerivedKey((gemm, triad), lambda gflops, gbs: 2 * 3 * gflops / gbs),
        # np.exp(x, out=y) on float32 moves 4 B in and 4 B out, at the bandwidth numpy's triad really used
        # (q28a counts STREAM's 24 B an element, numpy's two passes move 40); GB/s = bytes per ns
        "q28p_exp_if_memory_bound": DerivedKey((triad,), lambda gbs: EXP_BYTES_PER_VALUE / (gbs * calibration)),
        "q28g_exp_vs_memory": DerivedKey((exp, "q28p_exp_if_memory_bound"), lambda ns, predicted: ns / predicted),
        # one FMA = 2 FLOP: the GEMM does gflops / 2 FMAs per ns
        "q28f_fmas_per_exp": DerivedKey((exp, gemm), lambda ns, gflops: ns * gflops / 2),
        "q30_exp_share_64": DerivedKey((exp, gemm), exp_share_percent(64)),
        "q31_exp_share_128": DerivedKey((exp, gemm), exp_share_percent(128)),
        # demo 3's ratio t_exp / t_mma at d = 128 on the CPU, over B300's
        "q32_vs_b300": DerivedKey((exp, gemm), lambda ns, gflops: 100 * ns / (flops_per_exp(128, 128) / gflops) / b300_percent),
    }
