"""Chips for the roofline tests: the real table, and seeded synthetic chips with random figures
so that a function that looks numbers up in a hard-coded table fails.

Chips cross into the sandbox as plain descriptions (`ChipArg(chip.to_dict())`, a sandbox
`Rebuilt` value); the worker rebuilds them with `CHIP_FACTORY`, from the trusted copy of
hw_specs — the one factory this assignment declares (`sandbox_factories()` in __init__.py). Expected values come from the reference called
with `Chip.from_dict` of the same description in the parent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

import hw_specs
from autograder.sandbox.codec import Rebuilt

SOURCE = "CS349E hidden test: synthetic chip"
FIELDS = ("mem_bw", "mem_cap", "link_bw", "power_w", "exp_per_s")


def figure(value: float) -> dict[str, Any]:
    return {"value": float(value), "source": SOURCE}


CHIP_FACTORY = "hw_specs:Chip.from_dict"


class ChipArg(Rebuilt):
    """A chip as the sandbox carries it: its description, rebuilt there by CHIP_FACTORY."""

    def __init__(self, spec: dict):
        super().__init__(CHIP_FACTORY, spec)

    @property
    def spec(self) -> dict:
        return self.data

    @property
    def label(self) -> str:
        """How feedback shows the argument (the engine reads `label`): the chip's name."""
        return str(self.data["name"])


def arg(spec: dict) -> ChipArg:
    return ChipArg(spec)


def chip(spec: dict) -> hw_specs.Chip:
    return hw_specs.Chip.from_dict(spec)


def real_specs() -> dict[str, dict]:
    return {name: c.to_dict() for name, c in hw_specs.CHIPS.items()}


def synthetic_spec(g: np.random.Generator, name: str, *, precisions: tuple[str, ...],
                   exp: bool = True, power: bool = True) -> dict:
    """A chip with log-uniform random figures in realistic ranges (3 significant digits)."""
    def value(low_exp: float, high_exp: float) -> float:
        return float(f"{10 ** g.uniform(low_exp, high_exp):.3g}")

    spec: dict[str, Any] = {
        "name": name,
        "flops": {p: figure(value(14, 17.5)) for p in precisions},
        "mem_bw": figure(value(12, 13.5)),
        "mem_cap": figure(value(10.5, 12)),
        "link_bw": figure(value(11, 13)),
    }
    if power:
        spec["power_w"] = figure(value(2.5, 3.5))
    if exp:
        spec["exp_per_s"] = figure(value(12, 13.5))
    return spec


def synthetic_specs(seed: int) -> list[dict]:
    """Six chips covering the shapes that matter: with and without FP4/FP8, exp and power figures."""
    g = np.random.default_rng(seed)
    layouts = [
        ("Synth-A", ("nvfp4", "fp8", "bf16"), True, True),
        ("Synth-B", ("fp8", "fp16", "bf16"), True, True),
        ("Synth-C", ("mxfp4", "fp8", "fp32"), True, False),
        ("Synth-D", ("nvfp4", "mxfp4", "bf16"), False, True),
        ("Synth-E", ("fp8", "bf16", "fp32"), True, True),
        ("Synth-F", ("nvfp4", "fp8"), True, False),
    ]
    return [synthetic_spec(g, name, precisions=p, exp=e, power=w) for name, p, e, w in layouts]


def synthetic_bases(seed: int) -> list[dict]:
    """Bases for trend_row: each publishes FP8 (the same-format comparison) and a lowest precision
    that is not always FP8 (so "base's lowest published precision" must really be looked up)."""
    g = np.random.default_rng(seed)
    return [
        synthetic_spec(g, "Base-1", precisions=("fp8", "bf16")),
        synthetic_spec(g, "Base-2", precisions=("nvfp4", "fp8", "bf16")),
        synthetic_spec(g, "Base-3", precisions=("mxfp4", "fp8"), power=False),
    ]


def describe(spec: dict) -> str:
    """The figures of a chip as a student would need them to reproduce a counterexample."""
    parts = [f"{p} = {v['value']:g} FLOP/s" for p, v in spec.get("flops", {}).items()]
    parts += [f"{f} = {spec[f]['value']:g}" for f in FIELDS if f in spec]
    missing = [f for f in FIELDS if f not in spec]
    if missing:
        parts.append("未公布：" + "、".join(missing))
    return f"{spec['name']}（{'，'.join(parts)}）"


# --- hypothesis: chips with arbitrary figures --------------------------------------------------
_values = st.floats(1e9, 1e18, allow_nan=False, allow_infinity=False)


@st.composite
def chip_specs(draw, *, name: str = "Gen", need: tuple[str, ...] = (), exp: bool | None = None) -> dict:
    """A random chip description; `need` lists precisions it must publish."""
    optional = [p for p in hw_specs.PRECISIONS if p not in need]
    chosen = draw(st.lists(st.sampled_from(optional), unique=True, min_size=0 if need else 1, max_size=4))
    spec: dict[str, Any] = {"name": name,
                            "flops": {p: figure(draw(_values)) for p in (*need, *chosen)}}
    for field in ("mem_bw", "mem_cap", "link_bw"):
        spec[field] = figure(draw(_values))
    if draw(st.booleans()):
        spec["power_w"] = figure(draw(_values))
    if exp if exp is not None else draw(st.booleans()):
        spec["exp_per_s"] = figure(draw(_values))
    return spec
