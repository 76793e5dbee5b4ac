# 自动生成：这是课程仓库根目录 hw_specs.py 的副本（python -m autograder build 生成），请勿修改——评分时它会被换回原样。
"""The chip table of lecture 1: dense per-GPU figures of four NVIDIA generations, each with its source.

Units are SI throughout: FLOP/s, B/s, B, W, exp/s. A figure NVIDIA never published is absent, not
zero: asking for it raises `MissingFigureError` naming the chip and the field, and the property
accessors return a falsy `Unpublished` sentinel so that `x if chip.power_w else "-"` still reads
naturally while any arithmetic on the missing value fails loudly.

Run `python hw_specs.py` (or `python -m hw_specs`) to print the table with its sources.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

# Lowest bit width first: "the lowest precision a chip publishes" is the first one it has.
PRECISIONS = ("nvfp4", "mxfp4", "fp8", "fp16", "bf16", "fp32")

# Storage per element including block scales: MXFP4 adds one 8-bit scale per 32 values,
# NVFP4 one 8-bit scale per 16 values (its per-tensor FP32 scale is negligible).
BYTES_PER_ELEM = MappingProxyType({
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "mxfp4": 4.25 / 8,
    "nvfp4": 4.5 / 8,
})

# Public name of each non-FLOP figure -> (dataclass attribute holding its Figure, unit, description).
FIELDS = MappingProxyType({
    "mem_bw": ("memory_bandwidth", "B/s", "HBM bandwidth"),
    "mem_cap": ("memory_capacity", "B", "HBM capacity"),
    "link_bw": ("nvlink_bandwidth", "B/s", "NVLink bandwidth per GPU"),
    "power_w": ("power", "W", "board power"),
    "exp_per_s": ("exp_throughput", "exp/s", "SFU exp throughput"),
})


class MissingFigureError(LookupError):
    """A figure the vendor never published was used as a number."""

    def __init__(self, chip_name: str, field_name: str):
        self.chip_name = chip_name
        self.field_name = field_name
        super().__init__(f"{chip_name} has no published {field_name} figure")

    def __reduce__(self):  # keep the two-argument constructor picklable across processes
        return (type(self), (self.chip_name, self.field_name))


@dataclass(frozen=True)
class Figure:
    """One published number and where it comes from."""

    value: float
    source: str  # the document the number is read from, by name
    note: str = ""  # caveats
    basis: str = ""  # what the number counts: configuration, dense or sparse, SMs and clock, ...

    def __post_init__(self):
        value = self.value
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"figure value must be a real number, got {value!r}")
        value = float(value)
        if not math.isfinite(value) or value <= 0:
            raise ValueError(
                f"figure value must be positive and finite, got {value!r} "
                "(leave an unpublished figure out instead of writing 0)")
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError(f"figure {value:g} needs a non-empty source string")
        for name in ("note", "basis"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"figure {name} must be a string, got {getattr(self, name)!r}")
        object.__setattr__(self, "value", value)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"value": self.value, "source": self.source}
        if self.note:
            d["note"] = self.note
        if self.basis:
            d["basis"] = self.basis
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Figure:
        if not isinstance(d, Mapping):
            raise ValueError(f"a figure must be a mapping with 'value' and 'source', got {d!r}")
        unknown = set(d) - {"value", "source", "note", "basis"}
        if unknown:
            raise ValueError(f"unknown figure keys {sorted(unknown)}; allowed: value, source, note, basis")
        missing = {"value", "source"} - set(d)
        if missing:
            raise ValueError(f"figure is missing {sorted(missing)}")
        return cls(d["value"], d["source"], d.get("note", ""), d.get("basis", ""))


def _refuse(self, *_args):
    raise MissingFigureError(self.chip_name, self.field_name)


@dataclass(frozen=True)
class Unpublished:
    """Stands in for a figure that was never published: falsy, and unusable as a number."""

    chip_name: str
    field_name: str

    __array_ufunc__ = None  # numpy defers to our reflected operators, which raise

    def __bool__(self):
        return False

    __float__ = __int__ = __index__ = __complex__ = __format__ = __round__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _refuse
    __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = __divmod__ = __rdivmod__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse


@dataclass(frozen=True)
class Chip:
    """One GPU's published figures. Immutable; build it directly, or with `Chip.from_dict`."""

    name: str
    flops: Mapping[str, Figure]  # precision -> dense FLOP/s
    # None = unpublished. Read them through the SI-valued properties named in FIELDS (mem_bw, ...).
    memory_bandwidth: Figure | None = None
    memory_capacity: Figure | None = None
    nvlink_bandwidth: Figure | None = None
    power: Figure | None = None
    exp_throughput: Figure | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"chip name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.flops, Mapping):
            raise ValueError(f"{self.name}: flops must be a mapping precision -> Figure")
        for precision, fig in self.flops.items():
            _check_precision(precision, f"{self.name}: flops")
            if not isinstance(fig, Figure):
                raise ValueError(f"{self.name}: flops[{precision!r}] must be a Figure, got {fig!r}")
        for public, (attr, _, _) in FIELDS.items():
            fig = getattr(self, attr)
            if fig is not None and not isinstance(fig, Figure):
                raise ValueError(f"{self.name}: {public} must be a Figure or None, got {fig!r}")
        # A private, precision-ordered copy behind a read-only view: nobody can edit the table.
        ordered = {p: self.flops[p] for p in PRECISIONS if p in self.flops}
        object.__setattr__(self, "flops", MappingProxyType(ordered))

    def __hash__(self):
        return hash((self.name, tuple(self.flops.items()))
                    + tuple(getattr(self, attr) for attr, _, _ in FIELDS.values()))

    def __reduce__(self):  # mappingproxy does not pickle; the plain description does
        return (Chip.from_dict, (self.to_dict(),))

    # --- asking for figures -------------------------------------------------------------
    def has(self, name: str) -> bool:
        """Whether a figure (a precision such as "fp8", or a field such as "power_w") is published."""
        if name in FIELDS:
            return getattr(self, FIELDS[name][0]) is not None
        _check_precision(name, self.name)
        return name in self.flops

    def figure(self, name: str) -> Figure:
        """The sourced figure for a precision or a field; MissingFigureError if unpublished."""
        if not self.has(name):
            raise MissingFigureError(self.name, name)
        if name in FIELDS:
            return getattr(self, FIELDS[name][0])
        return self.flops[name]

    def peak_flops(self, precision: str) -> float:
        """Dense peak FLOP/s at `precision`."""
        return self.figure(precision).value

    def _value(self, name: str) -> float | Unpublished:
        return self.figure(name).value if self.has(name) else Unpublished(self.name, name)

    @property
    def mem_bw(self) -> float | Unpublished:
        return self._value("mem_bw")

    @property
    def mem_cap(self) -> float | Unpublished:
        return self._value("mem_cap")

    @property
    def link_bw(self) -> float | Unpublished:
        return self._value("link_bw")

    @property
    def power_w(self) -> float | Unpublished:
        return self._value("power_w")

    @property
    def exp_per_s(self) -> float | Unpublished:
        return self._value("exp_per_s")

    def sources(self) -> Mapping[str, Figure]:
        """Every published figure, FLOP/s precisions first, keyed by precision or field name."""
        out = dict(self.flops)
        out.update((public, self.figure(public)) for public in FIELDS if self.has(public))
        return MappingProxyType(out)

    # --- plain JSON description ---------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name,
                             "flops": {p: fig.to_dict() for p, fig in self.flops.items()}}
        for public in FIELDS:
            if self.has(public):
                d[public] = self.figure(public).to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Chip:
        if not isinstance(d, Mapping):
            raise ValueError(f"a chip description must be a mapping, got {type(d).__name__}")
        unknown = set(d) - {"name", "flops", *FIELDS}
        if unknown:
            raise ValueError(f"unknown chip keys {sorted(unknown)}; allowed: name, flops, "
                             + ", ".join(FIELDS))
        name = d.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"chip description needs a non-empty 'name', got {name!r}")
        flops = d.get("flops", {})
        if not isinstance(flops, Mapping):
            raise ValueError(f"{name}: 'flops' must be a mapping precision -> figure")
        kwargs = {}
        for public, (attr, _, _) in FIELDS.items():
            if public in d:
                kwargs[attr] = _figure_from_dict(d[public], f"{name}.{public}")
        figures = {}
        for precision, fig in flops.items():
            _check_precision(precision, f"{name}: flops")
            figures[precision] = _figure_from_dict(fig, f"{name}.flops.{precision}")
        return cls(name=name, flops=figures, **kwargs)


def _check_precision(precision: Any, where: str) -> None:
    if precision not in PRECISIONS:
        raise ValueError(f"{where}: unknown precision or field {precision!r}; "
                         f"precisions: {', '.join(PRECISIONS)}; fields: {', '.join(FIELDS)}")


def _figure_from_dict(d: Any, where: str) -> Figure:
    try:
        return Figure.from_dict(d)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


# ---------------------------------------------------------------------------------------------
# The table. A source names the document a reader can find the number in (DOCUMENTS); a basis says
# what the number counts (configuration, dense or sparse, SMs × clock); notes carry the caveats.
# ---------------------------------------------------------------------------------------------
_H100_WP = "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), H100 SXM5 column"
_H100_DS = "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM"
_GB200 = "NVIDIA GB200 NVL72 specifications (nvidia.com/en-us/data-center/gb200-nvl72), rack figure / 72 GPUs"
_BW_BRIEF = "NVIDIA Blackwell Architecture Technical Brief (2024), GB200 NVL72 per-GPU column"
_BU_BLOG = "NVIDIA technical blog, 'Inside NVIDIA Blackwell Ultra: The Chip Powering the AI Factory Era' (2025)"
_BU_CHART_SECONDARY = (_BU_BLOG + ", attention-layer acceleration chart; the Hopper value as reproduced in "
                       "secondary write-ups of NVIDIA's comparison (the blog text confirmed here names only "
                       "Blackwell's 5 and Blackwell Ultra's 10.7)")
_GB300 = "NVIDIA GB300 NVL72 specifications (nvidia.com/en-us/data-center/gb300-nvl72), rack figure / 72 GPUs"
_HGX = "NVIDIA HGX platform specifications (nvidia.com/en-us/data-center/hgx), HGX B200 column, 8-GPU figure / 8"
_RUBIN = ("NVIDIA Vera Rubin NVL144 announcement (GTC 2025) and Rubin platform update (CES 2026 keynote and "
          "NVIDIA technical blog 'Inside the NVIDIA Rubin Platform'), per Rubin GPU")
DOCUMENTS = (_H100_WP, _H100_DS, _GB200, _BW_BRIEF, _BU_BLOG, _BU_CHART_SECONDARY, _GB300, _HGX, _RUBIN)

_DENSE = "dense (half of the listed 2:4-sparse figure)"
_GB200_GPU = "per B200 GPU in GB200 NVL72 (the lecture's B200); HGX B200 boards are lower, see the 'HGX B200' chip"
_GB300_GPU = "per Blackwell Ultra GPU in GB300 NVL72 (the lecture's B300); HGX B300 boards are lower"
_H100_SXM5 = "H100 SXM5: 132 SMs at 1.83 GHz boost"

# Published SFU ex2 rates per SM and clock, so a student can rebuild an exp/s figure on a stated basis.
# Blackwell Ultra doubled ex2 for FP32 and FP16 alike (10.7 vs 5 T/s); Rubin keeps Blackwell Ultra's
# FP32 rate and doubles only FP16.
EX2_PER_SM_PER_CLK = MappingProxyType({"Hopper": 16, "Blackwell": 16,
                                       "Blackwell Ultra FP32": 32, "Blackwell Ultra FP16": 32,
                                       "Rubin FP32": 32, "Rubin FP16": 64})
# FP32 add, multiply and multiply-add results per SM and clock on Blackwell (compute capability 10.0): the FMA
# pipe a software exp (a polynomial) runs on. CUDA C++ Programming Guide, "Throughput of Native Arithmetic
# Instructions"; FlashAttention-4 (arXiv 2603.05451) sets it against the SFU's 16 exp2 per SM and clock.
FP32_FMA_PER_SM_PER_CLK = MappingProxyType({"Blackwell": 128})
GH100_FULL_SMS, GH100_FULL_CLOCK_HZ = 144, 1.98e9  # the full GH100 die at its top clock
H100_SXM5_SMS, H100_SXM5_BOOST_HZ = 132, 1.83e9  # the product whose tensor peaks the table lists
RUBIN_SMS = 224
B300_SMS = 160  # Blackwell Ultra: 160 SMs over its two dies (the Blackwell Ultra blog); its clocks are unpublished

H100 = Chip(
    name="H100",
    flops={
        "bf16": Figure(989.4e12, _H100_WP, "1978.9 TFLOPS with 2:4 sparsity", f"{_DENSE}; {_H100_SXM5}"),
        "fp8": Figure(1978.9e12, _H100_WP, "3957.8 TFLOPS with 2:4 sparsity", f"{_DENSE}; {_H100_SXM5}"),
    },
    memory_bandwidth=Figure(3.35e12, _H100_DS, "", "H100 SXM, HBM3"),
    memory_capacity=Figure(80e9, _H100_DS, "", "H100 SXM, HBM3"),
    nvlink_bandwidth=Figure(900e9, _H100_DS, "", "per GPU, NVLink 4, both directions"),
    power=Figure(700.0, _H100_DS, "configurable", "H100 SXM max TDP"),
    exp_throughput=Figure(
        4.5e12, _BU_CHART_SECONDARY,
        "on the tensor peaks' basis, 132 SMs x 16 ex2/clk x 1.83 GHz = 3.865e12 (FlashAttention-3's 3.9e12): "
        "with it the lecture's 43 %/86 % (BF16/FP8, d_head = 128) become 50 %/100 %",
        "consistent with the full GH100: 144 SMs x 16 ex2/clk x 1.98 GHz = 4.56e12 (a reconstruction: no H100 "
        "product runs 144 SMs) -- not the 132 SMs at 1.83 GHz of the 989.4 TFLOPS it is compared with"),
)

B200 = Chip(
    name="B200",
    flops={
        "nvfp4": Figure(10e15, _GB200, "", f"{_DENSE}; {_GB200_GPU}"),
        "fp8": Figure(5e15, _GB200, "HGX B200: 4.5 PFLOPS", f"{_DENSE}; {_GB200_GPU}"),
        "bf16": Figure(2.5e15, _GB200, "", f"{_DENSE}; {_GB200_GPU}"),
    },
    memory_bandwidth=Figure(8e12, _GB200, "HGX B200: 7.7 TB/s", f"HBM3e; {_GB200_GPU}"),
    memory_capacity=Figure(192e9, _BW_BRIEF,
                           "GB200 NVL72 lists 186 GB usable per GPU (13.4 TB / 72); HGX B200: 180 GB",
                           "the B200 package's HBM3e (8 stacks of 24 GB)"),
    nvlink_bandwidth=Figure(1.8e12, _GB200, "", f"NVLink 5, both directions; {_GB200_GPU}"),
    power=Figure(1200.0, _BW_BRIEF, "the GB200 superchip (2 B200 + Grace) is rated 2700 W; HGX B200: 1000 W",
                 f"max TDP, configurable up to 1,200 W, of B200 as configured in GB200; {_GB200_GPU}"),
    exp_throughput=Figure(5e12, _BU_BLOG, "attention-layer acceleration chart: Blackwell 5 TeraExponentials/s; "
                                          "consistent with 148 SMs x 16 ex2/clk at about 2.1 GHz, a reconstruction "
                                          "(the chart gives neither SM count nor clock), so its basis may differ "
                                          "from the tensor peak's",
                          "a Blackwell GPU as NVIDIA's chart states it (SM count and clock not given there)"),
)

B300 = Chip(
    name="B300",
    flops={
        "nvfp4": Figure(15e15, _BU_BLOG, "NVIDIA quotes 7.5x Hopper", f"dense NVFP4; {_GB300_GPU}"),
        "fp8": Figure(5e15, _GB300, "HGX B300: 4.5 PFLOPS", f"{_DENSE}; {_GB300_GPU}"),
        "bf16": Figure(2.5e15, _GB300, "", f"{_DENSE}; {_GB300_GPU}"),
    },
    memory_bandwidth=Figure(8e12, _BU_BLOG, "", f"HBM3e; {_GB300_GPU}"),
    memory_capacity=Figure(288e9, _BU_BLOG,
                           "the blog's per-GPU HBM3e (8 stacks of 36 GB); the GB300 NVL72 rack lists about 20 TB "
                           "for 72 GPUs, i.e. ~278 GB per GPU usable; HGX B300: 270 GB",
                           "the Blackwell Ultra package's HBM3e"),
    nvlink_bandwidth=Figure(1.8e12, _BU_BLOG, "", f"NVLink 5, both directions; {_GB300_GPU}"),
    power=Figure(1400.0, _BU_BLOG, "HGX B300: 1100 W", f"max TDP of Blackwell Ultra in GB300; {_GB300_GPU}"),
    exp_throughput=Figure(10.7e12, _BU_BLOG, "attention-layer acceleration chart: 10.7 TeraExponentials/s, "
                                             "2x Blackwell's SFU exp throughput; consistent with 160 SMs x 32 "
                                             "ex2/clk at about 2.1 GHz, a reconstruction (no clock is given), so "
                                             "its basis may differ from the tensor peak's",
                          "a Blackwell Ultra GPU as NVIDIA's chart states it (160 SMs; clock not given there)"),
)

HGX_B200 = Chip(
    name="HGX B200",
    flops={
        "nvfp4": Figure(9e15, _HGX, "", f"{_DENSE}; per GPU of an 8-GPU HGX B200 board (1000 W air-cooled)"),
        "fp8": Figure(4.5e15, _HGX, "", f"{_DENSE}; per GPU of an 8-GPU HGX B200 board (1000 W air-cooled)"),
        "bf16": Figure(2.25e15, _HGX, "", f"{_DENSE}; per GPU of an 8-GPU HGX B200 board (1000 W air-cooled)"),
    },
    memory_bandwidth=Figure(7.7e12, _HGX, "", "HBM3e, per GPU of an HGX B200 board"),
    memory_capacity=Figure(180e9, _HGX, "1.44 TB per 8-GPU board", "HBM3e usable per GPU of an HGX B200 board"),
    nvlink_bandwidth=Figure(1.8e12, _HGX, "", "NVLink 5, both directions, per GPU"),
    power=Figure(1000.0, _HGX, "", "max TDP per GPU of an HGX B200 board"),
)

RUBIN = Chip(
    name="Rubin",
    flops={
        "nvfp4": Figure(35e15, _RUBIN, "the 'up to' 50 PFLOPS is a Transformer Engine inference figure with "
                                       "adaptive compression (see LABELLED_FIGURES)",
                        "dense NVFP4 training figure, per Rubin GPU"),
    },
    memory_bandwidth=Figure(22e12, _RUBIN, "", "HBM4, per Rubin GPU"),
    memory_capacity=Figure(288e9, _RUBIN, "", "HBM4, per Rubin GPU"),
    nvlink_bandwidth=Figure(3.6e12, _RUBIN, "", "NVLink 6, both directions, per Rubin GPU"),
)

# Figures published on another basis than the dense table above, kept apart and labelled so
# that nobody divides them by a dense figure by mistake: chip name -> label -> Figure.
LABELLED_FIGURES: Mapping[str, Mapping[str, Figure]] = MappingProxyType({
    "Rubin": MappingProxyType({
        "nvfp4 inference (Transformer Engine)": Figure(
            50e15, _RUBIN, "not comparable with the dense table (dense NVFP4 training: 35 PFLOPS)",
            "'up to' 50 PFLOPS NVFP4 inference with the Transformer Engine's adaptive compression"),
        "fp8 training, per NVL144 rack": Figure(
            1.2e18, _RUBIN, "a rack figure for 72 Rubin GPUs (144 dies), about 16.7 PFLOPS per GPU; the "
                            "announcement does not say dense or sparse, so it stays out of the dense table",
            "1.2 EF FP8 training per Vera Rubin NVL144 rack (GTC 2025 announcement)"),
    }),
})

# Why a figure is absent, for the sourced table (fp16/fp32 etc. are simply outside this lecture's table).
UNPUBLISHED_NOTES = MappingProxyType({
    "H100": "no FP4 tensor cores",
    "HGX B200": "no exp figure published for the HGX board (NVIDIA's 5 T exp/s is Blackwell's)",
    "Rubin": "no published per-GPU dense FP8 (only a rack's FP8 training figure, see LABELLED_FIGURES), BF16, "
             "power or exp/s figure; NVIDIA lists the SFU ex2 rate per SM per clock (32 FP32 / 64 FP16, vs 16 for "
             "Blackwell and 32 / 32 for Blackwell Ultra) and 224 SMs, but no clock",
})

# Generation order; HGX B200 (the board most students meet) after the GB200 figure of its GPU.
CHIPS: Mapping[str, Chip] = MappingProxyType({chip.name: chip for chip in (H100, B200, HGX_B200, B300, RUBIN)})


def _print_sourced_table() -> None:
    from console import fmt_num, print_header, print_table

    for chip in CHIPS.values():
        print_header(f"{chip.name}: published dense figures")
        rows = []
        for key, fig in chip.sources().items():
            unit = FIELDS[key][1] if key in FIELDS else "FLOP/s"
            label = FIELDS[key][2] if key in FIELDS else f"{key} tensor"
            rows.append([label, f"{fmt_num(fig.value)}{unit}", fig.basis or "-", fig.source, fig.note or "-"])
        for label, fig in LABELLED_FIGURES.get(chip.name, {}).items():
            rows.append([label, f"{fmt_num(fig.value)}FLOP/s", fig.basis, fig.source, fig.note or "-"])
        print_table(["figure", "value", "basis", "source", "note"], rows)
        missing = [p for p in PRECISIONS if not chip.has(p)] + [f for f in FIELDS if not chip.has(f)]
        remark = f" ({UNPUBLISHED_NOTES[chip.name]})" if chip.name in UNPUBLISHED_NOTES else ""
        print(f"not in this table: {', '.join(missing) or 'none'}{remark}")


if __name__ == "__main__":
    _print_sourced_table()
