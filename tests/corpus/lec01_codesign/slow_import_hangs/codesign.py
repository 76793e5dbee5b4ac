"""Hostile: spends almost the whole import allowance asleep, then hangs in every call, so every
worker restart after a timeout costs another slow import."""

import time

time.sleep(9)   # the corpus's import limit is 10 s; the default one is 20 s


def _hang(*args, **kwargs):
    while True:
        time.sleep(1)


round_e4m3 = to_e2m1 = quantize = flops_per_exp = exp_ratio = ridge_point = trend_row = _hang
