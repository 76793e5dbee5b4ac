"""Reference solution of lecture 1 (Blackwell Ultra co-design): the seven graded functions."""

from solutions.lec01_codesign.codesign import (
    SCHEMES,
    exp_ratio,
    flops_per_exp,
    quantize,
    ridge_point,
    round_e4m3,
    to_e2m1,
    trend_row,
)

__all__ = [
    "SCHEMES",
    "exp_ratio",
    "flops_per_exp",
    "quantize",
    "ridge_point",
    "round_e4m3",
    "to_e2m1",
    "trend_row",
]
