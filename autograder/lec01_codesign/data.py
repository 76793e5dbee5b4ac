"""Seeded inputs for the hidden tests: distributions, and the format grids derived from the
definitions of E4M3 and E2M1 (OCP FP8 and MX v1.0), never from the reference's output.

Every generator takes its own seed, so adding a case never changes another case's data.
"""

from __future__ import annotations

import numpy as np

E4M3_MAX = 448.0
E2M1_MAX = 6.0


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- distributions ---------------------------------------------------------------------------
def student_t(n: int, seed: int, scale: float = 0.02) -> np.ndarray:
    """Heavy-tailed "weights": Student-t with 5 degrees of freedom (the lecture's data)."""
    return rng(seed).standard_t(5, n) * scale


def gaussian(n: int, seed: int, sigma: float) -> np.ndarray:
    return rng(seed).normal(0.0, sigma, n)


def uniform(n: int, seed: int, low: float, high: float) -> np.ndarray:
    return rng(seed).uniform(low, high, n)


def log_uniform_signed(n: int, seed: int, low_exp: float, high_exp: float) -> np.ndarray:
    """Magnitudes 2^U(low_exp, high_exp) with random signs (e.g. E4M3's subnormal range)."""
    g = rng(seed)
    return np.exp2(g.uniform(low_exp, high_exp, n)) * g.choice([-1.0, 1.0], n)


def with_signs(values: np.ndarray) -> np.ndarray:
    """values, then their negatives (zero once)."""
    values = np.asarray(values, dtype=np.float64)
    negatives = -values[values != 0]
    return np.concatenate([values, negatives])


def neighbours(values: np.ndarray) -> np.ndarray:
    """The nearest float64 on each side of every value."""
    values = np.asarray(values, dtype=np.float64)
    return np.concatenate([np.nextafter(values, -np.inf), np.nextafter(values, np.inf)])


# --- format grids --------------------------------------------------------------------------------
def e4m3_values() -> np.ndarray:
    """Every non-negative finite E4M3 value, ascending: subnormals k·2^-9, normals (1+m/8)·2^e."""
    subnormals = np.arange(8) * 2.0 ** -9
    normals = [(1 + m / 8) * 2.0 ** e for e in range(-6, 9) for m in range(8)]
    return np.unique(np.concatenate([subnormals, [v for v in normals if v <= E4M3_MAX]]))


def e2m1_values() -> np.ndarray:
    """The eight non-negative E2M1 values: 0, 0.5, 1, 1.5, 2, 3, 4, 6."""
    subnormal = [0.0, 0.5]
    normals = [(1 + m / 2) * 2.0 ** e for e in range(0, 3) for m in range(2)]
    return np.unique(np.concatenate([subnormal, normals]))


def midpoints(grid: np.ndarray, next_above_max: float) -> np.ndarray:
    """Exact midpoints between consecutive grid values, plus the one between the maximum and the
    value the format would have next (464 for E4M3, 7 for E2M1): a tie that must saturate."""
    grid = np.asarray(grid, dtype=np.float64)
    mids = (grid[:-1] + grid[1:]) / 2  # exact: grid values are short dyadic numbers
    return np.append(mids, (grid[-1] + next_above_max) / 2)


def saturation_values(maximum: float, next_above_max: float) -> np.ndarray:
    """Around the saturation boundary, and far beyond it."""
    tie = (maximum + next_above_max) / 2
    return np.array([maximum, np.nextafter(maximum, np.inf), tie, np.nextafter(tie, -np.inf),
                     np.nextafter(tie, np.inf), next_above_max, 2 * next_above_max, 1e6, 1e30, 1e300])


# --- tensors for quantize ----------------------------------------------------------------------
def zero_blocks(x: np.ndarray, block: int, every: int) -> np.ndarray:
    """x with every `every`-th block of `block` elements set to zero."""
    y = x.copy().reshape(-1, block)
    y[::every] = 0.0
    return y.reshape(-1)


def tiny_blocks(x: np.ndarray, block: int, every: int, factor: float) -> np.ndarray:
    """x with every `every`-th block shrunk by `factor` (an NVFP4 block scale that rounds to 0)."""
    y = x.copy().reshape(-1, block)
    y[1::every] *= factor
    return y.reshape(-1)


def mxfp4_ties(seed: int, n_blocks: int) -> np.ndarray:
    """Blocks whose MXFP4 scale is an exact power of two 2^k (block max 6·2^k or 4·2^k) and whose
    other elements are E2M1 values and exact midpoints times 2^k: every tie is exact whatever
    algebra divides by the scale, so ties-to-even is testable inside quantize."""
    g = rng(seed)
    points = np.concatenate([e2m1_values(), midpoints(e2m1_values(), 8.0)[:-1]])
    blocks = []
    for _ in range(n_blocks):
        k = int(g.integers(-8, 9))
        values = g.choice(points, 32) * g.choice([-1.0, 1.0], 32)
        values[int(g.integers(32))] = g.choice([6.0, 4.0]) * g.choice([-1.0, 1.0])
        blocks.append(np.ldexp(values, k))
    return np.concatenate(blocks)


def per_tensor_grid(seed: int, n: int, maximum: float, points: np.ndarray) -> np.ndarray:
    """A tensor whose amax is maximum·2^k, so its per-tensor scale is the power of two 2^k,
    with elements drawn from `points`·2^k (format values and midpoints)."""
    g = rng(seed)
    k = int(g.integers(-6, 7))
    values = g.choice(points, n) * g.choice([-1.0, 1.0], n)
    values[0] = maximum
    return np.ldexp(values, k)


def nvfp4_ties(seed: int, n_blocks: int) -> np.ndarray:
    """An NVFP4 tensor whose global scale g is the power of two 2^k (amax = 6·448·2^k, in block 0)
    and whose other blocks have the power-of-two E4M3 block scale 2^j (block max 6·2^(j+k)), with
    elements that are E2M1 values and exact midpoints times 2^(j+k): scaled values are exact ties
    whatever algebra divides by the two scales, so ties-to-even is testable inside NVFP4."""
    g = rng(seed)
    k = int(g.integers(-6, 7))
    points = np.concatenate([e2m1_values(), midpoints(e2m1_values(), 8.0)[:-1]])
    blocks = []
    for b in range(n_blocks):
        j = int(g.integers(-9, 8))  # 2^-9 … 2^7: E4M3 powers of two below the amax block's 448
        values = g.choice(points, 16) * g.choice([-1.0, 1.0], 16)
        values[int(g.integers(16))] = 6.0 * g.choice([-1.0, 1.0])
        blocks.append(np.ldexp(values, j + k))
    x = np.concatenate(blocks)
    x[0] = E2M1_MAX * E4M3_MAX * 2.0 ** k
    return x


def below_powers_of_two(block: int, exponents) -> np.ndarray:
    """One block per exponent k whose max is the float64 just below 2^k (then 1, 0, …): the block
    exponent is k − 1, which np.floor(np.log2(·)) gets wrong (log2 rounds up to k)."""
    blocks = np.zeros((len(exponents), block))
    for row, k in zip(blocks, exponents):
        row[0] = np.nextafter(2.0 ** k, 0.0)
        row[1] = 2.0 ** (k - 3)
    return blocks.reshape(-1)
