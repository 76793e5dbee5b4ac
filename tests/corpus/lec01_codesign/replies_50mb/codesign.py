"""Hostile: replies of 50 MB per call, to make the grader keep gigabytes of replies."""

import numpy as np


def _huge(*args, **kwargs):
    return np.zeros(6_250_000)


round_e4m3 = to_e2m1 = quantize = flops_per_exp = exp_ratio = ridge_point = trend_row = _huge
