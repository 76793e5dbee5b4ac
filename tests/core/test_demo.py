"""`python -m solutions.lec01_codesign` prints the lecture's demos with the reference semantics;
every figure it quotes is the one computed here from hw_specs and the reference functions."""

import math

import pytest

from core.script_output import REPO, cells, observations, run_python, section, table_row, table_rows
from console import fmt_bytes, fmt_num
from hw_specs import B200, B300, BYTES_PER_ELEM, H100, PRECISIONS, RUBIN
from solutions.lec01_codesign import SCHEMES, exp_ratio, trend_row


@pytest.fixture(scope="module")
def demo_output():
    result = run_python(["-m", "solutions.lec01_codesign"], cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"the demo wrote to stderr:\n{result.stderr}"
    return result.stdout


def _pct(fraction: float, digits: int = 0) -> str:
    return f"{fraction * 100:.{digits}f}%"


def test_prints_three_demos_in_order(demo_output):
    positions = [demo_output.index(f"演示 {n}：") for n in (1, 2, 3)]
    assert positions == sorted(positions)


# --- demo 1 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("chip", [H100, B200, B300, RUBIN], ids=lambda c: c.name)
def test_demo1_row_is_the_reference_trend_row(demo_output, chip):
    low = next(p for p in PRECISIONS if chip.has(p))
    t = trend_row(chip, low)
    ratio = [("-" if t[k] is None else f"{t[k]:.1f}×") for k in
             ("compute", "fp8", "bandwidth", "capacity", "nvlink", "power")]
    expected = cells(chip.name, f"{fmt_num(chip.peak_flops(low))}FLOP/s ({low})", *ratio, f"{t['ridge']:,.0f}")
    assert table_row(section(demo_output, 1), chip.name) == expected


def test_demo1_observations(demo_output):
    b300, h100 = trend_row(B300, "nvfp4"), trend_row(H100, "fp8")
    first, second, _, rubin, power = observations(section(demo_output, 1))
    assert f"H100 的 {b300['compute']:.1f} 倍" in first
    assert f"同为 FP8 只有 {b300['fp8']:.1f} 倍" in first
    assert f"其余的 {b300['compute'] / b300['fp8']:.1f} 倍" in first
    for key in ("bandwidth", "capacity", "nvlink"):
        assert f"{b300[key]:.1f} 倍" in second
    assert f"屋脊点从 {h100['ridge']:,.0f} 涨到 {b300['ridge']:,.0f}" in second
    assert f"{fmt_bytes(RUBIN.mem_bw)}/s（Blackwell Ultra 的 {RUBIN.mem_bw / B300.mem_bw:.2f} 倍）" in rubin
    assert f"{H100.power_w:,.0f} W → {B300.power_w:,.0f} W，{b300['power']:.1f} 倍" in power


# --- demo 2 ---------------------------------------------------------------------------------
def test_demo2_table_shows_the_reference_errors(demo_output, reference_errors):
    text = section(demo_output, 2)
    rows = [line.split() for line in text.splitlines() if line.rstrip().endswith("%")]
    assert len(rows) == len(SCHEMES)
    for row, (rel, zeros) in zip(rows, reference_errors.values()):
        assert row[-3:] == [_pct(rel, 2), f"{20 * math.log10(1 / rel):.1f}", _pct(zeros, 1)]


def test_demo2_observations_quote_the_reference_errors(demo_output, reference_errors):
    (fp8, _), (fp4, fp4_zeros), (mx, _), (nv, _) = (reference_errors[s] for s in
                                                   ("fp8_tensor", "fp4_tensor", "mxfp4", "nvfp4"))
    fp4_obs, nv_obs, mx_obs, fp8_obs = observations(section(demo_output, 2))
    assert f"FP4 的相对误差是 {_pct(fp4, 2)}" in fp4_obs and f"{_pct(fp4_zeros, 1)} 的'普通'数" in fp4_obs
    assert f"误差降到 {_pct(nv, 2)}" in nv_obs and f"{SCHEMES['nvfp4'] - 1} 个邻居" in nv_obs
    assert f"误差 {_pct(mx, 2)}" in mx_obs and f"块更大（{SCHEMES['mxfp4']}）" in mx_obs
    assert "将近一半" not in mx_obs  # that describes a CEIL recipe, not MX's FLOOR scale
    assert f"FP8 误差只有 {_pct(fp8, 2)}" in fp8_obs
    assert fp8 < nv < mx < fp4, "the lecture's story: NVFP4 beats MXFP4 beats per-tensor FP4"


def test_demo2_storage_line(demo_output):
    weights = 300e9 * BYTES_PER_ELEM["nvfp4"]
    line = next(line for line in section(demo_output, 2).splitlines() if line.startswith("存储账"))
    assert f"× {BYTES_PER_ELEM['nvfp4'] * 8:g} bit = {fmt_bytes(weights)}" in line
    assert f"还剩 {fmt_bytes(B300.mem_cap - weights)} 给 KV cache" in line
    assert f"最多能放 {B300.mem_cap / BYTES_PER_ELEM['nvfp4'] / 1e9:.0f}B 参数" in line


# --- demo 3 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("chip", [H100, B200, B300], ids=lambda c: c.name)
@pytest.mark.parametrize("precision", ["bf16", "fp8"])
def test_demo3_rows(demo_output, chip, precision):
    text = section(demo_output, 3)
    expected = cells(chip.name, precision, f"{chip.exp_per_s / 1e12:.1f} T/s",
                     *(_pct(exp_ratio(chip, precision, d, dv)) for d, dv in ((64, 64), (128, 128), (192, 128))))
    assert table_rows(text, chip.name, precision) == [expected]


def test_demo3_observations(demo_output):
    hopper, blackwell, ultra, _, small_heads = observations(section(demo_output, 3))
    assert (f"BF16 下 exp 只需要矩阵乘法时间的 {_pct(exp_ratio(H100, 'bf16', 128, 128))}，"
            f"FP8 下 {_pct(exp_ratio(H100, 'fp8', 128, 128))}") in hopper
    assert f"约 {B200.peak_flops('fp8') / H100.peak_flops('fp8'):.1f} 倍" in blackwell
    assert f"矩阵乘法的约 {_pct(exp_ratio(B200, 'fp8', 128, 128))}" in blackwell
    assert f"{B300.exp_per_s / 1e12:.1f} T/s" in ultra and f"约 {_pct(exp_ratio(B300, 'fp8', 128, 128))}" in ultra
    for chip in (H100, B200, B300):
        assert f"{chip.name} {_pct(exp_ratio(chip, 'fp8', 64, 64))}" in small_heads


def test_mxfp4_saturation_is_measured_and_quoted(demo_output):
    """FLOOR scaling puts a block's maximum in [4, 8): on the demo data ~44 % of blocks clip their
    maximum, and those elements carry ~19 % of MXFP4's squared error (the numbers the text quotes)."""
    from solutions.lec01_codesign.demo import heavy_tailed_weights, mxfp4_saturation

    sat = mxfp4_saturation(heavy_tailed_weights())
    low, high = sat.scaled_max_range
    assert 4 <= low < 4.01 and 7.99 < high < 8
    assert 0.40 < sat.block_fraction < 0.48 and 0.15 < sat.error_share < 0.23
    _, _, mx_obs, _ = observations(section(demo_output, 2))
    assert f"{_pct(sat.block_fraction)} 的块截断了自己的最大值" in mx_obs
    assert f"平方误差的 {_pct(sat.error_share)}" in mx_obs and "[4, 8)" in mx_obs


def test_rubin_sfu_remark_quotes_per_sm_rates(demo_output):
    """Blackwell Ultra already doubled ex2 (FP32 and FP16); Rubin keeps its FP32 rate, only FP16 doubles."""
    from hw_specs import EX2_PER_SM_PER_CLK as rate

    *_, software, _ = observations(section(demo_output, 3))
    assert f"Blackwell Ultra FP32 和 FP16 都是 {rate['Blackwell Ultra FP32']}" in software
    assert f"Rubin 的 FP32 仍是 {rate['Rubin FP32']}，只有 FP16 再翻倍到 {rate['Rubin FP16']}" in software
    assert "224 个 SM" in software and "BF16" not in software and "继续提高 exp 吞吐" not in software


def test_demo_does_not_call_the_mixed_precision_ridge_the_memory_wall(demo_output):
    """591 → 1,875 mixes precisions: the same-precision ridge moves 1.06×, an NVFP4 kernel's wall ≈ 1.79×."""
    from solutions.lec01_codesign import ridge_point

    second = observations(section(demo_output, 1))[1]
    same = ridge_point(B300, "fp8") / ridge_point(H100, "fp8")
    wall = ridge_point(B300, "nvfp4") / ridge_point(H100, "fp8") * BYTES_PER_ELEM["nvfp4"] / BYTES_PER_ELEM["fp8"]
    assert f"（{same:.2f} 倍）" in second and f"约 {wall:.2f} 倍" in second
    assert "这就是常说的'内存墙'" not in second and "Amdahl" not in demo_output


def test_demo_states_the_h100_exp_basis_next_to_its_43_percent(demo_output):
    from hw_specs import EX2_PER_SM_PER_CLK, H100_SXM5_BOOST_HZ, H100_SXM5_SMS

    first = observations(section(demo_output, 3))[0]
    same_basis = H100.peak_flops("bf16") / 512 / (H100_SXM5_SMS * EX2_PER_SM_PER_CLK["Hopper"] * H100_SXM5_BOOST_HZ)
    assert "相符" in first and f"同一口径下这两个比值是 {_pct(same_basis)}" in first
