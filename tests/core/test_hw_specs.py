"""hw_specs: the chip table, its sources, its missing figures and its JSON form."""

import copy
import dataclasses
import json
import math
import pickle
import re

import ml_dtypes
import numpy as np
import pytest

import hw_specs
from hw_specs import (BYTES_PER_ELEM, CHIPS, DOCUMENTS, FIELDS, HGX_B200, LABELLED_FIGURES, PRECISIONS, B200, B300,
                      H100, RUBIN, Chip, Figure, MissingFigureError, Unpublished)
from core.script_output import REPO
from solutions.lec01_codesign import SCHEMES

DESIGN = REPO.parent / "shared" / "DESIGN.md"
ALL_NAMES = PRECISIONS + tuple(FIELDS)

# --- the figures agree with the design brief's table (an independent transcription) ----------
# DESIGN §3 row label -> the table's precision or field name
DESIGN_ROWS = {"BF16": "bf16", "FP8": "fp8", "NVFP4": "nvfp4", "HBM bandwidth": "mem_bw",
               "HBM capacity": "mem_cap", "NVLink per GPU": "link_bw", "power": "power_w", "SFU exp": "exp_per_s"}
SI = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def design_table():
    """{(chip name, field): value or None} parsed from DESIGN.md §3; empty without the brief."""
    if not DESIGN.exists():
        return {}
    text = DESIGN.read_text(encoding="utf-8")
    text = text[text.index("## 3."):text.index("## 4.")]
    header = next(line for line in text.splitlines() if line.startswith("| |"))
    chips = [c.split()[0] for c in header.strip("|").split("|")[1:]]
    table = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if parts[0] not in DESIGN_ROWS:
            continue
        for chip, cell in zip(chips, parts[1:]):
            m = re.match(r"([\d.]+)\s*([kMGTP]?)", cell)
            table[chip, DESIGN_ROWS[parts[0]]] = float(m[1]) * SI[m[2]] if m else None
    assert len(table) == len(DESIGN_ROWS) * len(chips), "DESIGN §3 table changed shape"
    return table


DESIGN_FIGURES = design_table()


def test_design_brief_is_available():
    if not DESIGN_FIGURES:
        pytest.skip(f"design brief not found at {DESIGN}: figures not cross-checked")


@pytest.mark.parametrize("key, expected", sorted(DESIGN_FIGURES.items()), ids=lambda v: str(v))
def test_figure_matches_design_brief(key, expected):
    """Does every figure (and every absence) match DESIGN §3?"""
    chip_name, name = key
    chip = CHIPS[chip_name]
    if expected is None:
        assert not chip.has(name)
    else:
        assert chip.figure(name).value == pytest.approx(expected, rel=1e-12)


def test_chips_are_keyed_by_name_in_generation_order():
    order = (H100, B200, HGX_B200, B300, RUBIN)
    assert list(CHIPS) == [c.name for c in order] == ["H100", "B200", "HGX B200", "B300", "Rubin"]
    assert all(CHIPS[name] is chip for name, chip in zip(CHIPS, order))


# --- sources --------------------------------------------------------------------------------
@pytest.mark.parametrize("chip", CHIPS.values(), ids=lambda c: c.name)
def test_every_published_figure_has_a_source(chip):
    sources = chip.sources()
    assert set(sources) == {n for n in ALL_NAMES if chip.has(n)}
    for name, fig in sources.items():
        assert isinstance(fig, Figure) and fig.source.strip(), f"{chip.name}.{name} has no source"


ALL_FIGURES = [(f"{chip.name}.{name}", fig) for chip in CHIPS.values() for name, fig in chip.sources().items()] + [
    (f"{chip}.{label}", fig) for chip, figures in LABELLED_FIGURES.items() for label, fig in figures.items()]


@pytest.mark.parametrize("where, fig", ALL_FIGURES, ids=[w for w, _ in ALL_FIGURES])
def test_every_figure_has_a_basis_and_a_named_document(where, fig):
    """Does each number say what it counts (configuration, dense/sparse, SMs x clock) and which
    document it is read from (one of DOCUMENTS, each naming a document)?"""
    assert fig.basis.strip(), f"{where} has no basis"
    assert fig.source in DOCUMENTS, f"{where} cites {fig.source!r}, not a named document"


def test_documents_are_named():
    for doc in DOCUMENTS:
        assert doc.startswith("NVIDIA ") and any(word in doc for word in
                                                 ("whitepaper", "datasheet", "specifications", "blog", "Brief",
                                                  "announcement")), doc


def test_h100_exp_figure_states_its_basis_and_the_tensor_peak_basis():
    """4.5 T is the full GH100 (144 SMs x 16 x 1.98 GHz); the 989.4 TF peak is 132 SMs at 1.83 GHz,
    on which ex2 is 3.87 T and the lecture's 43 %/86 % become 50 %/100 %."""
    fig = H100.figure("exp_per_s")
    full = hw_specs.GH100_FULL_SMS * hw_specs.EX2_PER_SM_PER_CLK["Hopper"] * hw_specs.GH100_FULL_CLOCK_HZ
    sxm5 = hw_specs.H100_SXM5_SMS * hw_specs.EX2_PER_SM_PER_CLK["Hopper"] * hw_specs.H100_SXM5_BOOST_HZ
    assert fig.value == pytest.approx(full, rel=0.02) and "144 SMs" in fig.basis and "1.98 GHz" in fig.basis
    assert f"{sxm5 / 1e12:.3f}e12" in fig.note and "FlashAttention-3" in fig.note
    # the tensor peak really is 132 SMs x 4096 dense BF16 FLOP/clk x 1.83 GHz
    assert H100.peak_flops("bf16") == pytest.approx(hw_specs.H100_SXM5_SMS * 4096 * hw_specs.H100_SXM5_BOOST_HZ,
                                                    rel=1e-3)
    ratios = [H100.peak_flops(p) / 512 / sxm5 for p in ("bf16", "fp8")]
    assert [round(100 * r) for r in ratios] == [50, 100]
    assert "50 %/100 %" in fig.note and "secondary" in fig.source


def test_caveats_are_recorded_next_to_the_numbers():
    """The provenance notes of DESIGN §3 travel with the figures they qualify."""
    assert "186" in B200.figure("mem_cap").note
    assert "HGX" in B200.figure("fp8").note and "HGX" in B300.figure("fp8").note
    rack_per_gpu = 20e12 / 72  # the GB300 NVL72 rack's ~20 TB over its 72 GPUs
    assert f"~{rack_per_gpu / 1e9:.0f} GB" in B300.figure("mem_cap").note == B300.figure("mem_cap").note
    assert f"{rack_per_gpu / 1e9:.0f}" == "278"  # not 279: 277.8 rounds down
    for chip in (B200, B300):
        assert all("NVL72" in fig.basis for name, fig in chip.sources().items()
                   if name not in ("mem_cap", "exp_per_s")), chip.name
    assert "1,200 W" in B200.figure("power_w").basis and "Technical Brief" in B200.figure("power_w").source


def test_rubin_keeps_its_dense_figure_and_its_inference_figure_apart():
    assert RUBIN.peak_flops("nvfp4") == 35e15 and "dense" in RUBIN.figure("nvfp4").basis
    figures = LABELLED_FIGURES["Rubin"]
    fig = figures["nvfp4 inference (Transformer Engine)"]
    assert fig.value == 50e15 and "Transformer Engine" in fig.basis and "not comparable" in fig.note
    assert "64 FP16" in hw_specs.UNPUBLISHED_NOTES["Rubin"] and "BF16 4x" not in hw_specs.UNPUBLISHED_NOTES["Rubin"]
    assert hw_specs.EX2_PER_SM_PER_CLK["Rubin FP16"] == 2 * hw_specs.EX2_PER_SM_PER_CLK["Rubin FP32"] == 64
    assert hw_specs.RUBIN_SMS == 224 and "224 SMs" in hw_specs.UNPUBLISHED_NOTES["Rubin"]


def test_hgx_b200_is_its_own_chip_with_the_board_figures():
    assert (HGX_B200.peak_flops("fp8"), HGX_B200.mem_cap, HGX_B200.mem_bw, HGX_B200.power_w) == (
        4.5e15, 180e9, 7.7e12, 1000.0)
    assert not HGX_B200.has("exp_per_s")
    assert all("HGX" in fig.source for fig in HGX_B200.sources().values())


def test_sourced_table_prints(capsys):
    hw_specs._print_sourced_table()
    out = capsys.readouterr().out
    for chip in CHIPS.values():
        assert chip.name in out
        for fig in chip.sources().values():
            assert fig.source in out


# --- missing figures ------------------------------------------------------------------------
MISSING = [(chip, name) for chip in CHIPS.values() for name in ALL_NAMES if not chip.has(name)]


def test_rubin_misses_what_was_never_published():
    assert {n for c, n in MISSING if c is RUBIN} >= {"fp8", "bf16", "power_w", "exp_per_s"}


@pytest.mark.parametrize("chip, name", MISSING, ids=lambda v: getattr(v, "name", v))
def test_missing_figure_error_names_chip_and_field(chip, name):
    with pytest.raises(MissingFigureError, match=rf"\b{chip.name}\b.*\b{name}\b") as info:
        chip.figure(name)
    assert (info.value.chip_name, info.value.field_name) == (chip.name, name)
    if name in PRECISIONS:
        with pytest.raises(MissingFigureError, match=rf"{chip.name}.*{name}"):
            chip.peak_flops(name)


UNUSABLE = {
    "float": float, "int": int, "format": lambda u: f"{u:.1f}", "empty format": lambda u: f"{u}",
    "add": lambda u: u + 1, "radd": lambda u: 1 + u, "mul": lambda u: 2 * u, "div": lambda u: u / 2,
    "rdiv": lambda u: 2 / u, "sub": lambda u: 1 - u, "pow": lambda u: u ** 2, "neg": lambda u: -u,
    "compare": lambda u: u > 1, "round": round, "numpy scalar": lambda u: np.float64(2.0) * u,
    "numpy array": lambda u: np.ones(3) / u, "math": math.isfinite,
}


@pytest.mark.parametrize("use", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_unpublished_property_is_falsy_and_unusable_as_a_number(use):
    value = RUBIN.power_w
    assert isinstance(value, Unpublished) and not value
    assert (RUBIN.power_w / H100.power_w if RUBIN.power_w else "-") == "-"  # the lecture's idiom
    with pytest.raises(MissingFigureError, match=r"Rubin.*power_w"):
        use(value)


def test_missing_figure_error_survives_pickling():
    err = pickle.loads(pickle.dumps(MissingFigureError("Rubin", "fp8")))
    assert (err.chip_name, err.field_name, str(err)) == ("Rubin", "fp8", "Rubin has no published fp8 figure")
    assert isinstance(err, LookupError)


@pytest.mark.parametrize("ask", [lambda c: c.peak_flops("fp9"), lambda c: c.has("FP8"), lambda c: c.figure("power")])
def test_unknown_precision_or_field_is_a_value_error(ask):
    with pytest.raises(ValueError, match="unknown precision or field"):
        ask(H100)


def test_published_properties_are_plain_floats():
    for chip in CHIPS.values():
        for name in FIELDS:
            if chip.has(name):
                assert type(getattr(chip, name)) is float and getattr(chip, name) == chip.figure(name).value


# --- immutability ---------------------------------------------------------------------------
def test_chip_and_figure_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        H100.name = "H200"
    with pytest.raises(dataclasses.FrozenInstanceError):
        H100.memory_bandwidth = Figure(1.0, "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        H100.figure("fp8").value = 1.0


def test_flops_mapping_is_read_only_and_detached_from_its_input():
    with pytest.raises(TypeError):
        H100.flops["fp8"] = Figure(1.0, "x")
    given = {"fp8": Figure(1e15, "test")}
    chip = Chip("X", given)
    given["fp8"] = Figure(2e15, "test")
    given["bf16"] = Figure(1e15, "test")
    assert chip.peak_flops("fp8") == 1e15 and not chip.has("bf16")


def test_flops_are_ordered_lowest_precision_first():
    chip = Chip("X", {"fp32": Figure(1.0, "t"), "nvfp4": Figure(8.0, "t"), "fp8": Figure(2.0, "t")})
    assert list(chip.flops) == ["nvfp4", "fp8", "fp32"]


# --- JSON form ------------------------------------------------------------------------------
@pytest.mark.parametrize("chip", CHIPS.values(), ids=lambda c: c.name)
def test_to_dict_from_dict_round_trip_through_json(chip):
    d = chip.to_dict()
    again = Chip.from_dict(json.loads(json.dumps(d, allow_nan=False)))
    assert again == chip and hash(again) == hash(chip)
    assert again.to_dict() == d
    assert all(again.figure(n) == chip.figure(n) for n in ALL_NAMES if chip.has(n))


@pytest.mark.parametrize("chip", CHIPS.values(), ids=lambda c: c.name)
def test_chips_pickle_and_copy(chip):
    assert pickle.loads(pickle.dumps(chip)) == chip
    assert copy.deepcopy(chip) == chip


def _synthetic(**changes):
    d = {"name": "Synthetic", "flops": {"fp8": {"value": 1e15, "source": "test"}},
         "mem_bw": {"value": 1e12, "source": "test"}}
    d.update(changes)
    return d


def test_from_dict_builds_a_synthetic_chip():
    chip = Chip.from_dict(_synthetic())
    assert chip.peak_flops("fp8") == 1e15 and chip.mem_bw == 1e12 and not chip.power_w


BAD_DESCRIPTIONS = {
    "negative": (_synthetic(mem_bw={"value": -1.0, "source": "t"}), r"Synthetic\.mem_bw.*positive"),
    "zero": (_synthetic(mem_bw={"value": 0, "source": "t"}), r"Synthetic\.mem_bw.*positive"),
    "nan": (_synthetic(mem_bw={"value": float("nan"), "source": "t"}), r"Synthetic\.mem_bw.*finite"),
    "inf": (_synthetic(flops={"fp8": {"value": float("inf"), "source": "t"}}), r"Synthetic\.flops\.fp8.*finite"),
    "string value": (_synthetic(mem_bw={"value": "8e12", "source": "t"}), r"mem_bw.*real number"),
    "bool value": (_synthetic(mem_bw={"value": True, "source": "t"}), r"mem_bw.*real number"),
    "no source": (_synthetic(mem_bw={"value": 1.0}), r"mem_bw.*missing \['source'\]"),
    "empty source": (_synthetic(mem_bw={"value": 1.0, "source": " "}), r"mem_bw.*source"),
    "bare number": (_synthetic(mem_bw=8e12), r"mem_bw.*mapping"),
    "unknown precision": (_synthetic(flops={"fp6": {"value": 1.0, "source": "t"}}), r"unknown precision.*'fp6'"),
    "unknown key": (_synthetic(hbm_bw={"value": 1.0, "source": "t"}), r"unknown chip keys \['hbm_bw'\]"),
    "unknown figure key": (_synthetic(mem_bw={"value": 1.0, "source": "t", "unit": "B/s"}), r"unknown figure keys"),
    "no name": ({"flops": {}}, r"'name'"),
    "not a mapping": ([("name", "x")], r"mapping"),
}


@pytest.mark.parametrize("description, message", BAD_DESCRIPTIONS.values(), ids=BAD_DESCRIPTIONS.keys())
def test_from_dict_rejects_bad_input_with_a_clear_message(description, message):
    with pytest.raises(ValueError, match=message):
        Chip.from_dict(description)


def test_constructor_validates_figure_types():
    with pytest.raises(ValueError, match="Figure"):
        Chip("X", {"fp8": 1e15})
    with pytest.raises(ValueError, match="mem_bw"):
        Chip("X", {}, memory_bandwidth=8e12)


# --- bytes per element ----------------------------------------------------------------------
def _bits(dtype) -> int:
    return ml_dtypes.finfo(dtype).bits


def test_bytes_per_element_follow_the_formats():
    """Element bits from ml_dtypes; block formats add one 8-bit scale per block (SCHEMES)."""
    scale_bits = _bits(ml_dtypes.float8_e8m0fnu)  # MX's E8M0 scale; NVFP4's E4M3 scale is 8 bits too
    assert _bits(ml_dtypes.float8_e4m3fn) == scale_bits
    expected = {
        "fp32": np.dtype(np.float32).itemsize,
        "bf16": np.dtype(ml_dtypes.bfloat16).itemsize,
        "fp16": np.dtype(np.float16).itemsize,
        "fp8": np.dtype(ml_dtypes.float8_e4m3fn).itemsize,
        "mxfp4": (_bits(ml_dtypes.float4_e2m1fn) + scale_bits / SCHEMES["mxfp4"]) / 8,
        "nvfp4": (_bits(ml_dtypes.float4_e2m1fn) + scale_bits / SCHEMES["nvfp4"]) / 8,
    }
    assert dict(BYTES_PER_ELEM) == expected
    assert set(BYTES_PER_ELEM) == set(PRECISIONS)


def test_precisions_run_from_fewest_to_most_element_bits():
    """PRECISIONS order is by element width (block scales aside): "lowest published" means fewest bits."""
    element_bits = {"nvfp4": _bits(ml_dtypes.float4_e2m1fn), "mxfp4": _bits(ml_dtypes.float4_e2m1fn),
                    "fp8": _bits(ml_dtypes.float8_e4m3fn), "fp16": _bits(np.float16),
                    "bf16": _bits(ml_dtypes.bfloat16), "fp32": _bits(np.float32)}
    bits = [element_bits[p] for p in PRECISIONS]
    assert bits == sorted(bits)


def test_rubin_fp8_is_the_labelled_rack_training_figure_not_a_dense_one():
    """GTC 2025 gave 1.2 EF FP8 training per NVL144 rack (72 GPUs): kept labelled, out of the dense table."""
    fig = LABELLED_FIGURES["Rubin"]["fp8 training, per NVL144 rack"]
    assert fig.value == 1.2e18 and "NVL144" in fig.basis and "GTC 2025" in fig.source
    assert f"{fig.value / 72 / 1e15:.1f} PFLOPS per GPU" in fig.note and not RUBIN.has("fp8")
    assert "rack's FP8 training figure" in hw_specs.UNPUBLISHED_NOTES["Rubin"]


def test_ex2_rates_show_that_blackwell_ultra_doubled_and_rubin_doubles_only_fp16():
    rate = hw_specs.EX2_PER_SM_PER_CLK
    assert rate["Blackwell Ultra FP32"] == rate["Blackwell Ultra FP16"] == 2 * rate["Blackwell"]
    assert rate["Rubin FP32"] == rate["Blackwell Ultra FP32"]  # FP32 does not double again
    assert rate["Rubin FP16"] == 2 * rate["Blackwell Ultra FP16"]
    assert B300.exp_per_s / B200.exp_per_s == pytest.approx(rate["Blackwell Ultra FP32"] / rate["Blackwell"], rel=0.1)


@pytest.mark.parametrize("chip, sms, per_clk", [(B200, 148, "Blackwell"), (B300, 160, "Blackwell Ultra FP32")],
                         ids=["B200", "B300"])
def test_blackwell_exp_figures_carry_a_basis_note_that_reproduces_them(chip, sms, per_clk):
    """The 5 T and 10.7 T exp figures: the note's SMs x ex2/clk x ~2.1 GHz gives the figure within 3 %,
    and says it is a reconstruction (the chart gives no clock)."""
    note = chip.figure("exp_per_s").note
    assert f"{sms} SMs x {hw_specs.EX2_PER_SM_PER_CLK[per_clk]} ex2/clk at about 2.1 GHz" in note
    assert "reconstruction" in note
    assert sms * hw_specs.EX2_PER_SM_PER_CLK[per_clk] * 2.1e9 == pytest.approx(chip.exp_per_s, rel=0.03)


def test_h100_exp_basis_is_stated_as_a_reconstruction_not_a_fact():
    basis = H100.figure("exp_per_s").basis
    assert basis.startswith("consistent with the full GH100") and "no H100 product runs 144 SMs" in basis
