"""The lecture script runs unmodified against our hw_specs and console and prints what its
observations quote. Expected strings are built from hw_specs and the reference functions."""

import math

import pytest

from core.script_output import REPO, cells, observations, run_python, section, table_row, table_rows
from console import fmt_bytes, fmt_num
from hw_specs import B200, B300, BYTES_PER_ELEM, H100, PRECISIONS, RUBIN
from solutions.lec01_codesign import exp_ratio

LECTURE = REPO.parent / "shared" / "lecture" / "05_codesign_blackwell_ultra.py"
HEAD_SHAPES = ((64, 64), (128, 128), (192, 128))  # the lecture's d_head = 64, 128 and MLA columns


@pytest.fixture(scope="module")
def lecture_output(tmp_path_factory):
    if not LECTURE.exists():
        pytest.skip(f"lecture script not found at {LECTURE} (it lives in the course's shared/ folder)")
    # Run from an empty folder: the only hw_specs/console it can import are ours, via PYTHONPATH.
    result = run_python([str(LECTURE)], cwd=tmp_path_factory.mktemp("lecture"))
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"the lecture wrote to stderr:\n{result.stderr}"
    return result.stdout


def _x(ratio: float) -> str:
    return f"{ratio:.1f}×"


# --- demo 1 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("chip", [H100, B200, B300, RUBIN], ids=lambda c: c.name)
def test_demo1_rows_come_from_the_table(lecture_output, chip):
    low = next(p for p in PRECISIONS if chip.has(p))
    peak = chip.peak_flops(low)
    base = H100.peak_flops("fp8")
    expected = cells(
        chip.name, f"{fmt_num(peak)}FLOP/s ({low})", _x(peak / base),
        _x(chip.peak_flops("fp8") / base) if chip.has("fp8") else "-",
        _x(chip.mem_bw / H100.mem_bw), _x(chip.mem_cap / H100.mem_cap), _x(chip.link_bw / H100.link_bw),
        _x(chip.power_w / H100.power_w) if chip.has("power_w") else "-", f"{peak / chip.mem_bw:,.0f}",
    )
    assert table_row(section(lecture_output, 1), chip.name) == expected


def test_demo1_observations_quote_our_table(lecture_output):
    first, second, _, rubin, power = observations(section(lecture_output, 1))
    fp8 = H100.peak_flops("fp8")
    assert f"H100 的 {B300.peak_flops('nvfp4') / fp8:.1f} 倍" in first
    assert f"同为 FP8 只有 {B300.peak_flops('fp8') / fp8:.1f} 倍" in first
    assert f"带宽只涨了 {B300.mem_bw / H100.mem_bw:.1f} 倍" in second
    assert f"容量涨了 {B300.mem_cap / H100.mem_cap:.1f} 倍" in second
    assert f"NVLink 涨了 {round(B300.link_bw / H100.link_bw, 1):g} 倍" in second
    assert f"屋脊点从 {fp8 / H100.mem_bw:,.0f} 涨到 {B300.peak_flops('nvfp4') / B300.mem_bw:,.0f}" in second
    assert f"{RUBIN.mem_bw / 1e12:g} TB/s（Blackwell 的 {RUBIN.mem_bw / B200.mem_bw:.2f} 倍）" in rubin
    assert f"{H100.power_w:.0f} W → {B300.power_w:.0f} W" in power


# --- demo 2 ---------------------------------------------------------------------------------
def test_demo2_errors_match_the_reference_to_the_printed_digits(lecture_output, reference_errors):
    """The lecture's argmin to_e2m1 breaks ties downward, but seed 0's data holds no exact tie:
    its table equals the reference semantics to every printed digit."""
    text = section(lecture_output, 2)
    labels = {"fp8_tensor": "FP8 E4M3", "fp4_tensor": "FP4 E2M1", "mxfp4": "MXFP4", "nvfp4": "NVFP4"}
    for scheme, (rel, zeros) in reference_errors.items():
        row = next(line for line in text.splitlines() if line.startswith(labels[scheme]))
        assert row.split()[-3:] == [f"{rel * 100:.2f}%", f"{20 * math.log10(1 / rel):.1f}", f"{zeros * 100:.1f}%"]


def test_demo2_observations_and_storage_line(lecture_output, reference_errors):
    text = section(lecture_output, 2)
    err = {scheme: rel for scheme, (rel, _) in reference_errors.items()}
    fp4, nv, mx, fp8 = observations(text)
    assert f"FP4 的相对误差是 {err['fp4_tensor'] * 100:.0f}%" in fp4
    assert f"误差降到 {err['nvfp4'] * 100:.1f}%" in nv
    assert f"误差 {err['mxfp4'] * 100:.1f}%" in mx
    assert f"FP8 误差只有 {err['fp8_tensor'] * 100:.1f}%" in fp8

    weights = 300e9 * BYTES_PER_ELEM["nvfp4"]  # the lecture's 300 B-parameter model
    assert (f"= {fmt_bytes(weights)}，放进 {fmt_bytes(B300.mem_cap)} 后还剩 {fmt_bytes(B300.mem_cap - weights)}"
            in text)
    assert f"最多能放 {B300.mem_cap / BYTES_PER_ELEM['nvfp4'] / 1e9:.0f}B 参数" in text


# --- demo 3 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("chip", [H100, B200, B300], ids=lambda c: c.name)
@pytest.mark.parametrize("precision", ["bf16", "fp8"])
def test_demo3_rows_come_from_the_reference_exp_ratio(lecture_output, chip, precision):
    text = section(lecture_output, 3)
    expected = cells(chip.name, precision, f"{chip.exp_per_s / 1e12:.1f} T/s",
                     *(f"{exp_ratio(chip, precision, dqk, dv) * 100:.0f}%" for dqk, dv in HEAD_SHAPES))
    assert table_rows(text, chip.name, precision) == [expected]


def test_demo3_observations_quote_our_table(lecture_output):
    hopper, blackwell, ultra, _, small_heads = observations(section(lecture_output, 3))
    assert (f"BF16 下 exp 只需要矩阵乘法时间的 {exp_ratio(H100, 'bf16', 128, 128) * 100:.0f}%，"
            f"FP8 下 {exp_ratio(H100, 'fp8', 128, 128) * 100:.0f}%") in hopper
    assert f"快了约 {B200.peak_flops('fp8') / H100.peak_flops('fp8'):.1f} 倍" in blackwell
    assert f"从 {H100.exp_per_s / 1e12:g} 涨到 {B200.exp_per_s / 1e12:g} T/s" in blackwell
    assert f"约 {round(exp_ratio(B200, 'fp8', 128, 128))} 倍" in blackwell
    assert f"翻倍到 {B300.exp_per_s / 1e12:g} T/s" in ultra and exp_ratio(B300, "fp8", 128, 128) < 1
    assert "都超过 100%" in small_heads
    assert all(exp_ratio(chip, "fp8", 64, 64) > 1 for chip in (H100, B200, B300))
