"""The reasoning items whose premise the student now works out: each key against an independent
computation of what its prompt leaves to the student."""

import itertools

import numpy as np
import pytest

from hw_specs import B200, B300, H100
from solutions.lec01_codesign import answers, variants
from solutions.lec01_codesign.handout_data import MEASURED_D_QK, MEASURED_D_V, MEASURED_FP8_FORWARD_GAIN


def test_q12ps_key_is_what_log_uniform_block_maxima_clip():
    """E8M0 FLOOR puts a block's maximum at 8·m (m the frexp mantissa) and clips it above 6. Block maxima
    spread evenly on a log scale over many octaves clip in the share q12p's key says (sampled here)."""
    amax = np.exp2(np.random.default_rng(0).uniform(-20, 20, 1_000_000))
    mantissa, _ = np.frexp(amax)
    sampled = 100 * np.mean(8 * mantissa > 6)
    assert answers.answer_key()["q12p_e8m0_clip_prediction"] == pytest.approx(sampled, abs=0.2)


def _speedup(sfu: float, mma: float, b200_exp_bound: bool, b300_exp_bound: bool) -> float:
    """The overlap model's B200 → B300 gain on the measured shape, each chip in the named regime."""
    flops = answers.flops_per_exp(MEASURED_D_QK, MEASURED_D_V)

    def time(chip, exp_bound):
        return 1 / (sfu * chip.exp_per_s) if exp_bound else flops / (mma * chip.peak_flops("fp8"))

    return time(B200, b200_exp_bound) / time(B300, b300_exp_bound)


@pytest.mark.parametrize("sfu", [0.70, 0.85, 1.00])
def test_q19_has_one_regime_that_explains_the_measurement(sfu):
    """q19's prompt no longer says which unit bounds each chip: of the four regimes exactly one reaches the
    measured gain at a matmul share a in (0, 1] that is consistent with it (each chip really in its regime)."""
    flops = answers.flops_per_exp(MEASURED_D_QK, MEASURED_D_V)
    consistent = []
    for b200_exp, b300_exp in itertools.product((True, False), repeat=2):
        for mma in np.linspace(0.01, 1.0, 9901):
            if not np.isclose(_speedup(sfu, mma, b200_exp, b300_exp), MEASURED_FP8_FORWARD_GAIN, rtol=1e-3):
                continue
            exp_bound = {chip: 1 / (sfu * chip.exp_per_s) >= flops / (mma * chip.peak_flops("fp8")) for chip in (B200, B300)}
            if (exp_bound[B200], exp_bound[B300]) == (b200_exp, b300_exp):
                consistent.append((b200_exp, b300_exp, mma))
    regimes = {(a, b) for a, b, _ in consistent}
    assert regimes == {(True, False)}, regimes
    found = [mma for *_, mma in consistent]
    key = answers.mma_efficiency_for_measured_gain(sfu)
    assert min(found) <= key + 1e-3 and key - 1e-3 <= max(found)


def test_q04_stays_near_the_spec_sheet_without_a_redraw():
    """One team's shares: B300's FP8 and HBM shares are near H100's (SAME_TEAM_FP8, SAME_TEAM_HBM), so q04 is
    the spec sheet's ratio times their quotient, never below 1.01, for every draw (no draw is rejected)."""
    spec = (B300.peak_flops("fp8") / B300.mem_bw) / (H100.peak_flops("fp8") / H100.mem_bw)
    rng = np.random.default_rng(7)
    growth = []
    for _ in range(5000):
        p = variants._trend_shares(rng)
        growth.append(spec * (p["b300_fp8_share"] / p["h100_fp8_share"]) / (p["b300_bw_share"] / p["h100_bw_share"]))
    assert 1.01 <= min(growth) and max(growth) <= 1.21, (min(growth), max(growth))
    assert max(growth) - min(growth) > 0.1  # still a number of the student's own


def test_the_end_to_end_predictions_accept_the_exact_form_of_their_model():
    """q34p's model (the error vector of a random direction, its length the tile's error times one factor)
    gives 1 − cos = 1 − 1/√(1 + r²) exactly; r²/2 is its small-error form, which the keys use. A student
    who calibrates the exact form on FP8 and predicts with it is right too: within each item's tolerance
    for every id of a class (per-tensor FP4's large error puts the two 7-30 % apart)."""
    import math

    from autograder.engine.registry import load_config

    tolerance = {item.id: item.rtol for item in load_config("lec01_codesign").items}
    measured_fp8 = answers.end_to_end()["fp8_tensor"]["deficit"]
    rng = np.random.default_rng(2026)
    for params in [variants.LECTURE] + [variants.variant(rng) for _ in range(60)]:
        tile = answers.end_tile_errors(params)
        factor = math.sqrt((1 - measured_fp8) ** -2 - 1) / tile["fp8_tensor"]   # 1 − cos(FP8) as measured
        exact = {name: 1 - 1 / math.sqrt(1 + (factor * tile[name]) ** 2) for name in tile}
        keys = answers.end_to_end_keys(params)
        for item, mine in (("q34p_nvfp4_end_prediction", answers.END_UNIT * exact["nvfp4"]),
                           ("q35p_fp4_end_prediction", exact["fp4_tensor"] / measured_fp8),
                           ("q34r_h16_end_prediction", exact["nvfp4 + H16"] / measured_fp8)):
            assert abs(mine - keys[item]) <= tolerance[item] * abs(keys[item]), (item, mine, keys[item])


def _variants(count: int, seed: int = 11):
    rng = np.random.default_rng(seed)
    return [variants.variant(rng) for _ in range(count)]


def test_q06cs_key_is_the_roofline_time_of_a_batch_1_token_on_each_chip():
    """q06c: a token of batch-1 decode on each measured chip takes max(FLOP / peak, bytes / bandwidth) for a model
    of P weights (FP8 on H100, NVFP4 on B300); the ratio of the two times is the key, whatever P is. A student who
    takes the compute headline (q01) or the bandwidth alone misses it by far more than the 1 % tolerance."""
    from hw_specs import BYTES_PER_ELEM

    for p in [variants.LECTURE, *_variants(60)]:
        h100_run, b300_run = answers.run_chips(p)
        key = answers.answer_key(p)
        for weights in (1e9, 70e9, 400e9):
            def token_seconds(chip, precision):
                return max(2 * weights / chip.peak_flops(precision), weights * BYTES_PER_ELEM[precision] / chip.mem_bw)

            gain = token_seconds(h100_run, "fp8") / token_seconds(b300_run, "nvfp4")
            assert key["q06c_decode_generation_speedup"] == pytest.approx(gain, rel=1e-9)
        for wrong in (key["q01_compute_headline"], b300_run.mem_bw / h100_run.mem_bw):
            assert abs(wrong / key["q06c_decode_generation_speedup"] - 1) > 0.2, p


def test_q16bs_key_is_the_best_split_of_three_units_counted_in_clocks():
    """q16b per SM and clock: the SFU's (1 − s) / 16, the FMA pipe's (a + s·c) / 128, the tensor cores' FLOP per
    score at B200's FP8 rate on the exp table's basis; the slowest sets the time. The best of a fine grid of
    splits, as a share of all exps on the SFU, is the key; taking only one of the two limits misses it by more
    than twice the item's 1 % tolerance."""
    from hw_specs import EX2_PER_SM_PER_CLK, FP32_FMA_PER_SM_PER_CLK

    sfu, fma = EX2_PER_SM_PER_CLK["Blackwell"], FP32_FMA_PER_SM_PER_CLK["Blackwell"]
    split = np.linspace(0, 1, 200_001)
    for p in [variants.LECTURE, *_variants(60)]:
        poly, softmax = p["exp_emulation"]
        tensor_per_clock = B200.peak_flops("fp8") / (B200.exp_per_s / sfu)  # FLOP per SM and clock, on the table's basis
        mma = answers.flops_per_exp(*p["software_shape"]) / tensor_per_clock
        times = np.maximum(mma, np.maximum((1 - split) / sfu, (softmax + split * poly) / fma))
        best = 100 * times.min() / max(mma, 1 / sfu, softmax / fma)
        key = answers.answer_key(p)["q16b_emulated_exp_time"]
        assert key == pytest.approx(best, rel=1e-4)
        tensor_only = 100 * sfu * mma  # q16's assumption: the FMA pipe is free
        balanced_only = 100 * answers.emulation_times(p)["balanced"]  # the tensor cores forgotten
        wrong = balanced_only if key == pytest.approx(tensor_only) else tensor_only
        assert abs(wrong / key - 1) > 0.02, p


def test_q09js_key_is_the_largest_chunk_that_keeps_q09es_step_as_long():
    """q09j: the largest number of prompt tokens n whose 2P·n FLOP, added to decode's, still finish within the time
    q09e's step spends reading its W + B·L·k bytes (found by bisection); it is B·(100 / q09e − 1)."""
    for p in [variants.LECTURE, *_variants(40)]:
        chip = answers.serve_chip(p)
        flop_per_token = 2 * p["model_params_b"] * 1e9
        batch, read = answers.service_batch(p), answers.service_bytes(p)
        step = read / chip.mem_bw
        low, high = 0.0, 1e7
        for _ in range(200):
            mid = (low + high) / 2
            low, high = (mid, high) if flop_per_token * (batch + mid) / chip.peak_flops("nvfp4") <= step else (low, mid)
        key = answers.answer_key(p)
        assert key["q09j_chunked_prefill_tokens"] == pytest.approx(low, rel=1e-6)
        assert key["q09j_chunked_prefill_tokens"] == pytest.approx(batch * (100 / key["q09e_ridge_share_with_kv"] - 1))


@pytest.mark.parametrize("gflops, gbs", [(40.0, 12.0), (120.0, 18.0), (8.0, 25.0)])
def test_q29cs_key_is_the_smallest_edge_whose_least_traffic_reaches_the_ridge(gflops, gbs):
    """q29c from the student's own q29 and q28a: the smallest m at which 2m³ FLOP over A and B read and C written
    (3m² float32) reaches the ridge, by bisection; counting C as read too (4m²) misses the 2 % tolerance."""
    from autograder.lec01_codesign.measurement import measurement_keys

    key = measurement_keys()["q29c_gemm_edge_at_ridge"].compute(gflops, gbs)
    low, high = 0.0, 1e6
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (low, mid) if 2 * mid**3 / (3 * 4 * mid**2) >= gflops / gbs else (mid, high)
    assert key == pytest.approx(high, rel=1e-9)
    from autograder.engine.registry import load_config

    rtol = next(item.rtol for item in load_config("lec01_codesign").items_of("number") if item.id == "q29c_gemm_edge_at_ridge")
    c_read_too = 2 * 4 * 4 * gflops / gbs / 2  # 2m³ / (4 · 4 · m²) = ridge: m = 8 × ridge
    assert abs(c_read_too - key) > rtol * key


def test_q09ks_key_is_the_bandwidth_over_the_bytes_a_routed_batch_reads_on_average():
    """q09k: route B tokens, each to k distinct experts of E drawn uniformly, in many simulated layers; the experts
    some token picked are read once. The mean bytes read, over the serving B300's bandwidth, is the key. A count of
    only the k active experts, of every expert, or of B·k distinct ones misses it by far more than the 1 % tolerance;
    E equal experts of total / E with nothing shared misses it too."""
    from hw_specs import BYTES_PER_ELEM

    rng = np.random.default_rng(3)
    for p in [variants.LECTURE, *_variants(12, seed=17)]:
        name, total, active, experts, top_k = p["moe_model"]
        batch = p["moe_batch"]
        expert = (total - active) * 1e9 / (experts - top_k)
        shared = active * 1e9 - top_k * expert
        layers = 20_000
        picks = np.argsort(rng.random((layers, batch, experts)), axis=2)[:, :, :top_k].reshape(layers, -1)
        read = np.mean([np.unique(row).size for row in picks])
        key = answers.answer_key(p)["q09k_moe_tokens_per_s"]
        bandwidth = answers.serve_chip(p).mem_bw
        simulated = bandwidth / ((shared + read * expert) * BYTES_PER_ELEM["nvfp4"])
        assert key == pytest.approx(simulated, rel=0.004), (name, batch)
        for wrong_experts in (top_k, experts, min(batch * top_k, experts)):
            wrong = bandwidth / ((shared + wrong_experts * expert) * BYTES_PER_ELEM["nvfp4"])
            assert abs(wrong / key - 1) > 0.08, (name, batch, wrong_experts)
        no_shared = bandwidth / (read * total * 1e9 / experts * BYTES_PER_ELEM["nvfp4"])  # total / E each, nothing shared
        assert abs(no_shared / key - 1) > 0.015, (name, batch)


def test_q09ls_key_is_where_a_simulated_ring_all_reduce_takes_the_shards_read_time():
    """q09l: run a ring all-reduce (reduce-scatter, then all-gather) on N GPUs holding B × d_model values, count what
    each GPU sends, and time it at NVLink's one-direction rate for the step's two all-reduces a layer. At the key's
    batch it equals the time each GPU reads its 1/N of the NVFP4 weights. Forgetting the ring's factor, or taking
    the table's both-direction figure, misses the 1 % tolerance."""
    from hw_specs import BYTES_PER_ELEM

    def ring_bytes_sent_per_gpu(gpus: int, values: int) -> float:
        chunks = [[np.full(values // gpus, float(g)) for _ in range(gpus)] for g in range(gpus)]
        sent = np.zeros(gpus)
        for phase in ("reduce-scatter", "all-gather"):
            for step in range(gpus - 1):
                moves = []
                for g in range(gpus):
                    c = (g - step + (0 if phase == "reduce-scatter" else 1)) % gpus
                    moves.append((g, (g + 1) % gpus, c, chunks[g][c].copy()))
                    sent[g] += chunks[g][c].size
                for _, dst, c, data in moves:
                    chunks[dst][c] = chunks[dst][c] + data if phase == "reduce-scatter" else data
        total = sum(range(gpus))
        assert all(np.all(chunks[g][c] == total) for g in range(gpus) for c in range(gpus))  # a real all-reduce
        return float(sent.max())

    for p in [variants.LECTURE, *_variants(12, seed=19)]:
        gpus, width = p["tp_gpus"], p["query_heads"] * p["kv_head_dim"]
        key = answers.answer_key(p)["q09l_tp_allreduce_batch"]
        chip = answers.serve_chip(p)
        shard_seconds = p["model_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"] / gpus / chip.mem_bw
        per_value = ring_bytes_sent_per_gpu(gpus, gpus * 64) / (gpus * 64)  # values each GPU sends per value reduced
        per_sequence = 2 * p["kv_layers"] * per_value * width * BYTES_PER_ELEM["bf16"] / (chip.link_bw / 2)
        assert key == pytest.approx(shard_seconds / per_sequence, rel=1e-9)
        for wrong in (key * per_value, key * 2, key * per_value / 2):  # factor 1, both directions, factor 2
            assert abs(wrong / key - 1) > 0.1, (gpus, wrong, key)


def test_q25ws_key_is_the_narrowest_layer_whose_online_rotation_fits_the_budget():
    """q25w: Y = X·Wᵀ on B200 for some M × K and the key's N: the rotation of X (a 16-point fast Walsh–Hadamard
    transform, 4 log2-levels of 8 butterflies, an add and a subtract each, on the FMA pipe at its chip rate on the
    exp table's basis) takes the budget's share of the GEMM's 2·M·N·K FLOP at the sustained NVFP4 rate, whatever M
    and K are. The plausible slips miss the key by far more than its 1 % tolerance: the rotation counted as a
    16 × 16 matmul (on the tensor cores at NVFP4's or BF16's rate, or on the FMA pipe: log2 forgotten), one result
    a butterfly, or FP32's FLOP (2 a multiply-add) taken for the pipe's results."""
    from hw_specs import EX2_PER_SM_PER_CLK, FP32_FMA_PER_SM_PER_CLK

    fma_pipe = B200.exp_per_s / EX2_PER_SM_PER_CLK["Blackwell"] * FP32_FMA_PER_SM_PER_CLK["Blackwell"]
    butterflies = 4 * 8  # log2(16) levels of 16 / 2 pairs
    for p in [variants.LECTURE, *_variants(40)]:
        budget, share = p["online_rotation"]
        gemm = B200.peak_flops("nvfp4") * share
        key = answers.answer_key(p)["q25w_online_rotation_width"]
        for m, k in ((1, 4096), (8192, 16384), (333, 1024)):
            rotation = 2 * butterflies * (m * k / 16) / fma_pipe
            matmul = 2 * m * key * k / gemm
            assert rotation / matmul == pytest.approx(budget / 100, rel=1e-9)

        def width(seconds_per_value):  # N at which a rotation of this cost per value meets the budget
            return seconds_per_value * gemm / (2 * budget / 100)

        wrong = {"matmul on the tensor cores (NVFP4)": width(32 / B200.peak_flops("nvfp4")),
                 "matmul on the tensor cores (BF16)": width(32 / B200.peak_flops("bf16")),
                 "matmul on the FMA pipe (log2 forgotten)": width(16 / fma_pipe),
                 "one result a butterfly": width(2 / fma_pipe),
                 "FP32 FLOP for results": width(4 / (2 * fma_pipe))}
        for slip, value in wrong.items():
            assert abs(value / key - 1) > 0.3, (slip, p)


def test_q25xs_key_rotates_both_fresh_inputs_of_the_weight_gradient_gemm():
    """q25x: for M tokens, the rotation of dY (M × N) and X (M × K), 4 FMA-pipe results a value, over the GEMM
    dW = dYᵀ·X's 2·M·N·K FLOP at the sustained NVFP4 rate, whatever M is. Rotating only X (q25w's forward
    count) or only dY misses the key by more than ten times its 1 % tolerance."""
    from hw_specs import EX2_PER_SM_PER_CLK, FP32_FMA_PER_SM_PER_CLK

    fma_pipe = B200.exp_per_s / EX2_PER_SM_PER_CLK["Blackwell"] * FP32_FMA_PER_SM_PER_CLK["Blackwell"]
    for p in [variants.LECTURE, *_variants(40)]:
        k, n = p["wgrad_layer"]
        gemm = B200.peak_flops("nvfp4") * p["online_rotation"][1]
        key = answers.answer_key(p)["q25x_wgrad_rotation_share"]
        for m in (16, 4096, 1 << 20):
            def share(values):
                return 100 * (4 * values / fma_pipe) / (2 * m * n * k / gemm)

            assert share(m * n + m * k) == pytest.approx(key, rel=1e-9)
            for only in (m * k, m * n):
                assert abs(share(only) / key - 1) > 0.1, p
