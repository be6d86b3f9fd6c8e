"""RINT casts from fp16 / bf16 / fp32 to fp8 (e4m3fn, e5m2), e8m0 and fp4 e2m1 go through ml_dtypes' own casts
with the NaN cases patched; they must give the exact grid's bits for every input. Exhaustive over all 65536
fp16 and all 65536 bf16 patterns; for fp32 a dense sample: every tie between two neighbouring target values
(and the fp32 values one and two ulps either side), every target value and its fp32 neighbours, the range ends
and overflow thresholds, fp32 subnormals, NaNs with random payloads and both signs, infinities, signed zeros,
and a million random bit patterns. The exact path is reached through the public cast with float64 input (a
lossless widening)."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from catlass_py.numerics import cast, float_format

TARGETS = ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn")
POLICIES = [(False, False), (True, False), (True, True)]  # (saturate, keep_nan); keep_nan needs saturate


def _all(dtype) -> np.ndarray:
    return np.arange(1 << 16, dtype=np.uint16).view(dtype)


def _grid(dst: str) -> np.ndarray:
    """Every finite non-negative value of ``dst`` (float64, ascending)."""
    codes = np.arange(256 if dst.startswith("float8") else 16, dtype=np.uint8)
    v = codes.view(getattr(ml_dtypes, dst)).astype(np.float64)
    v = v[np.isfinite(v) & (v >= 0)]
    return np.unique(v)


def _dense_fp32(dst: str, seed: int = 0) -> np.ndarray:
    g = _grid(dst)
    fmt = float_format(dst)
    step = np.diff(g)
    ties = g[:-1] + step / 2
    top = fmt.max_finite
    # past the top: the tie with the next (unrepresentable) grid value, which decides overflow
    ulp_top = step[-1] if len(step) else top
    special_points = np.concatenate([g, ties, [top + ulp_top / 2, top + ulp_top, 2 * top, fmt.min_subnormal / 2,
                                               fmt.min_subnormal / 4]])
    pts = special_points[np.isfinite(special_points) & (special_points < 3.4e38)].astype(np.float32)
    around = [pts]
    for direction in (np.inf, -np.inf):
        p = pts
        for _ in range(2):
            p = np.nextafter(p, np.float32(direction))
            around.append(p)
    base = np.concatenate(around)
    rng = np.random.default_rng(seed)
    u32 = lambda n: rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)  # noqa: E731
    subnormals = (u32(20000) & np.uint32(0x007FFFFF)).view(np.float32)
    nan_payloads = ((u32(2000) & np.uint32(0x007FFFFF)) | np.uint32(0x7F800001)).view(np.float32)
    specials = np.array([np.inf, 0.0, np.finfo(np.float32).max, np.finfo(np.float32).tiny], np.float32)
    pos = np.concatenate([base, subnormals, nan_payloads, specials])
    return np.concatenate([pos, -pos, u32(1_000_000).view(np.float32)])


def _assert_same_bits(x: np.ndarray, dst: str, saturate: bool, keep_nan: bool) -> None:
    with np.errstate(all="ignore"):
        fast = cast(x, dst, saturate=saturate, keep_nan=keep_nan)
        exact = cast(x.astype(np.float64), dst, saturate=saturate, keep_nan=keep_nan)
    assert fast.dtype == exact.dtype == np.dtype(getattr(ml_dtypes, dst))
    bad = np.flatnonzero(fast.view(np.uint8) != exact.view(np.uint8))
    assert bad.size == 0, (f"{x.dtype} -> {dst} (saturate={saturate}, keep_nan={keep_nan}): {bad.size} differ, "
                           f"e.g. {x[bad[:4]]} -> fast {fast.view(np.uint8)[bad[:4]]}, "
                           f"exact {exact.view(np.uint8)[bad[:4]]}")


@pytest.mark.parametrize("dst, src, policy", list(itertools.product(TARGETS, ("float16", "bfloat16"), POLICIES)))
def test_every_fp16_and_bf16_input_gives_the_exact_bits(dst, src, policy):
    x = _all(np.float16 if src == "float16" else ml_dtypes.bfloat16)
    _assert_same_bits(x, dst, *policy)


@pytest.mark.parametrize("dst, policy", list(itertools.product(TARGETS, POLICIES)))
def test_dense_fp32_sample_gives_the_exact_bits(dst, policy):
    x = _dense_fp32(dst)
    assert np.isnan(x).sum() >= 4000 and np.isinf(x).sum() == 2
    _assert_same_bits(x, dst, *policy)


def test_the_sample_hits_ties_both_ways():
    # the sample really contains ties, resolved to even in both directions, and values just past them
    x = _dense_fp32("float8_e4m3fn")
    y = cast(x, "float8_e4m3fn").astype(np.float64)
    assert cast(np.array([1.0625, 1.1875], np.float32), "float8_e4m3fn").astype(np.float64).tolist() == [1.0, 1.25]
    assert np.count_nonzero(x == np.float32(1.0625)) >= 1 and np.count_nonzero(np.isnan(y)) > 0


def test_nan_policy_of_the_fast_path():
    nan = np.array([np.nan, -np.nan, np.inf, -np.inf, 1e6, -1e6], np.float32)
    e4 = cast(nan, "float8_e4m3fn").view(np.uint8)
    assert e4.tolist() == [0x7F] * 6  # one (positive) NaN code: e4m3fn has no inf
    assert cast(nan, "float8_e4m3fn", saturate=True).astype(np.float32).tolist()[:2] == [0.0, 0.0]
    assert cast(nan, "float8_e4m3fn", saturate=True).astype(np.float32).tolist()[2:] == [448, -448, 448, -448]
    assert np.isnan(cast(nan, "float8_e4m3fn", saturate=True, keep_nan=True).astype(np.float32)[:2]).all()
    fp4 = cast(nan, "float4_e2m1fn").astype(np.float32).tolist()
    assert fp4 == [0.0, 0.0, 6.0, -6.0, 6.0, -6.0]  # fp4 has neither NaN nor inf: NaN -> +0, overflow -> +-max
    e8 = cast(np.array([np.inf, 3e38, 0.0, -1.0], np.float32), "float8_e8m0fnu", saturate=True)
    assert e8.view(np.uint8).tolist() == [0xFE, 0xFE, 0xFF, 0xFF]  # 2**127, and NaN for zero and negatives
