"""Hostile: takes every function from the reference package instead of writing them."""

from solutions.lec01_codesign import (  # noqa: F401
    exp_ratio,
    flops_per_exp,
    quantize,
    ridge_point,
    round_e4m3,
    to_e2m1,
    trend_row,
)
