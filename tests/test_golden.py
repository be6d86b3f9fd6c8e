"""Tests of catlass_py.golden against slow, literal transcriptions of the CATLASS host goldens."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py import golden
from catlass_py.golden import _int8_dot_float32, _int8_dot_int32, grouped_matmul_slice_m_per_token_dequant, matmul
from catlass_py.errors import ArgumentError

BF16 = ml_dtypes.bfloat16


def wrap_int32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def ref_gmm_per_token(a, b, group_list, scale, pts) -> np.ndarray:
    """ComputeGroupedMatmulPerTokenDequant, element by element: Python-int dot products, float32 scalars."""
    m, k = a.shape
    groups, _, n = b.shape
    out = np.zeros((m, n), dtype=np.float32)
    start = 0
    for g in range(groups):
        end = int(group_list[g])
        for i in range(start, end):
            for j in range(n):
                acc = 0
                for kk in range(k):
                    acc += int(a[i, kk]) * int(b[g, kk, j])
                x = np.float32(wrap_int32(acc))
                x = x * np.float32(scale[g, j])
                x = x * np.float32(pts[i])
                out[i, j] = x
        start = end
    return out


def random_case(rng, m, k, n, group_list, *, scale_range=(-4.0, 4.0)):
    groups = len(group_list)
    a = rng.integers(-128, 128, size=(m, k), dtype=np.int8)
    b = rng.integers(-128, 128, size=(groups, k, n), dtype=np.int8)
    scale = rng.uniform(*scale_range, size=(groups, n)).astype(np.float32).astype(BF16)
    pts = rng.uniform(*scale_range, size=m).astype(np.float32).astype(BF16)
    return a, b, np.asarray(group_list, dtype=np.int64), scale, pts


def assert_bits_equal(x, y):
    assert x.dtype == np.float32 and y.dtype == np.float32 and x.shape == y.shape
    assert np.array_equal(x.view(np.uint32), y.view(np.uint32))


@pytest.mark.parametrize(
    "m,k,n,group_list",
    [
        (12, 9, 5, [3, 3, 4, 9, 12]),  # an empty group, a 1-row group, last prefix == m
        (12, 16, 7, [0, 1, 2, 2, 8]),  # empty first group, last prefix < m: rows 8..11 stay 0
        (5, 1, 3, [5]),  # one group
        (6, 0, 4, [2, 6]),  # k == 0: all accumulators 0
        (0, 4, 3, [0, 0]),  # no rows
        (9, 33, 1, [0, 0, 0]),  # nothing covered
    ],
)
def test_matches_literal_reference(m, k, n, group_list):
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    args = random_case(rng, m, k, n, group_list)
    out = grouped_matmul_slice_m_per_token_dequant(*args)
    assert_bits_equal(out, ref_gmm_per_token(*args))
    if group_list:
        assert not out[group_list[-1]:].any()


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 14), st.integers(0, 20), st.integers(1, 6),
    st.lists(st.integers(0, 14), min_size=1, max_size=5), st.integers(0, 2**32 - 1),
)
def test_random_shapes(m, k, n, raw_list, seed):
    group_list = sorted(min(v, m) for v in raw_list)
    args = random_case(np.random.default_rng(seed), m, k, n, group_list)
    assert_bits_equal(grouped_matmul_slice_m_per_token_dequant(*args), ref_gmm_per_token(*args))


def test_non_monotonic_group_list_follows_cpp_loop():
    # the C++ loop starts each group where the previous value ended: [3, 1, 4] gives group 0 rows 0..2,
    # group 1 nothing (1 < 3), group 2 rows 1..3 (overwriting rows 1, 2)
    args = random_case(np.random.default_rng(3), 5, 6, 4, [3, 1, 4])
    out = grouped_matmul_slice_m_per_token_dequant(*args)
    assert_bits_equal(out, ref_gmm_per_token(*args))


def test_two_float32_multiplies_not_one_rounding():
    rng = np.random.default_rng(2024)
    m, k, n = 48, 256, 40
    a, b, gl, scale, pts = random_case(rng, m, k, n, [16, 30, 48])
    out = grouped_matmul_slice_m_per_token_dequant(a, b, gl, scale, pts)
    assert_bits_equal(out, ref_gmm_per_token(a, b, gl, scale, pts))
    # the same product rounded once (exact in float64: |acc| < 2^22, 8-bit scales) differs somewhere,
    # so the test above does distinguish the two orders
    once = np.zeros_like(out)
    start = 0
    for g, end in enumerate(gl):
        acc = a[start:end].astype(np.int64) @ b[g].astype(np.int64)
        once[start:end] = (acc * scale[g].astype(np.float64)[None, :]
                           * pts[start:end].astype(np.float64)[:, None]).astype(np.float32)
        start = end
    assert not np.array_equal(out, once)
    assert np.count_nonzero(out != once) > 10


def test_int32_to_float32_rounds_to_nearest_even():
    k = 1026
    a = np.zeros((2, k), dtype=np.int8)
    b = np.zeros((1, k, 1), dtype=np.int8)
    a[:, :1024] = -128
    b[0, :1024, 0] = -128  # 1024 * 16384 = 2^24
    b[0, 1024, 0] = 1
    a[0, 1024] = 1  # row 0: 2^24 + 1 -> tie -> 2^24
    a[1, 1024] = 3  # row 1: 2^24 + 3 -> tie -> 2^24 + 4
    one = np.ones((1, 1), dtype=BF16)
    out = grouped_matmul_slice_m_per_token_dequant(a, b, np.array([2]), one, np.ones(2, dtype=BF16))
    assert out[:, 0].tolist() == [16777216.0, 16777220.0]


def test_int32_accumulator_wraps():
    k = 1 << 17
    a = np.full((1, k), -128, dtype=np.int8)
    b = np.full((1, k, 1), -128, dtype=np.int8)  # exact sum 2^31 -> int32 -2^31
    out = grouped_matmul_slice_m_per_token_dequant(a, b, np.array([1]), np.ones((1, 1), dtype=BF16),
                                                   np.ones(1, dtype=BF16))
    assert out[0, 0] == -2147483648.0
    assert _int8_dot_int32(a, b[0])[0, 0] == -(2**31)
    assert _int8_dot_float32(a, b[0])[0, 0] == -2147483648.0


def exact_int32(a, b) -> np.ndarray:
    """The exact int64 dot products wrapped to int32."""
    return (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)


def float64_gmm_per_token(a, b, group_list, scale, pts) -> np.ndarray:
    """The golden as computed before the float32 K-chunk version: whole operands in float64 BLAS (exact
    for k < 2^39), wrapped to int32, then the float32 dequant."""
    out = np.zeros((a.shape[0], b.shape[2]), dtype=np.float32)
    start = 0
    for g, end in enumerate(int(v) for v in group_list):
        if end > start:
            acc = (a[start:end].astype(np.float64) @ b[g].astype(np.float64)).astype(np.int64).astype(np.int32)
            x = acc.astype(np.float32)
            x *= scale[g].astype(np.float32)[None, :]
            x *= pts[start:end].astype(np.float32)[:, None]
            out[start:end] = x
        start = end
    return out


@pytest.mark.parametrize("k", [1, 1000, 1023, 1024, 1025, 2047, 2048, 3000, 4096])
def test_chunked_int8_dot_is_exact_at_extremes(k):
    rng = np.random.default_rng(k)
    a = rng.choice(np.array([-128, 127], np.int8), size=(6, k))
    b = rng.choice(np.array([-128, 127], np.int8), size=(k, 5))
    a[0], b[:, 0] = -128, -128  # row 0 x column 0: k * 2^14, the largest magnitude
    a[1], b[:, 1] = 127, -128
    got = _int8_dot_int32(a, b)
    assert got.dtype == np.int32 and np.array_equal(got, exact_int32(a, b))
    assert got[0, 0] == k * 16384 and got[1, 1] == -k * 127 * 128
    f = _int8_dot_float32(a, b)
    assert f.dtype == np.float32 and np.array_equal(f, exact_int32(a, b).astype(np.float32))


@pytest.mark.parametrize("k", [0, 7, 1024, 1500, 2048, 4096])
def test_grouped_golden_bit_identical_to_float64_version(k):
    rng = np.random.default_rng(100 + k)
    m, n = 37, 19
    gl = [0, 1, 5, 5, 9, 20, 33]  # empty first group, 1-row and empty groups, rows past the last stay 0
    a, b, gl, scale, pts = random_case(rng, m, k, n, gl)
    a[6], b[4, :, 2] = -128, -128  # row 6 (group 4, rows 5..8) x column 2: k * 2^14
    a[3], b[2, :, 0] = 127, -128  # row 3 (group 2, rows 1..4) x column 0: -k * 127 * 128
    got = grouped_matmul_slice_m_per_token_dequant(a, b, gl, scale, pts)
    assert_bits_equal(got, float64_gmm_per_token(a, b, gl, scale, pts))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4096), st.integers(1, 40), st.integers(1, 24))
def test_int8_goldens_bit_identical_to_exact_products(seed, k, m, n):
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, size=(m, k), dtype=np.int8)
    b = rng.integers(-128, 128, size=(k, n), dtype=np.int8)
    exact = exact_int32(a, b)
    assert np.array_equal(golden.matmul_int32(a, b), exact)
    assert np.array_equal(golden.matmul_int32(a, np.asfortranarray(b)), exact)  # column-major B
    scale = rng.uniform(-2, 2, n).astype(np.float32).astype(BF16)
    pts = rng.uniform(-2, 2, m).astype(np.float32).astype(BF16)
    want = exact.astype(np.float32) * scale.astype(np.float32)[None, :]
    want *= pts.astype(np.float32)[:, None]
    assert_bits_equal(golden.quant_matmul(a, b, scale, pts), want)


def test_slice_k_golden_matches_exact_products():
    rng = np.random.default_rng(4)
    m, k, n = 9, 3000, 7
    a = rng.integers(-128, 128, size=(m, k), dtype=np.int8)
    b = rng.integers(-128, 128, size=(k, n), dtype=np.int8)
    gl = np.array([0, 1100, 1100, 2600, 3000])
    scale = rng.uniform(-2, 2, (5, n)).astype(np.float32).astype(BF16)
    pts = rng.uniform(-2, 2, (5, m)).astype(np.float32).astype(BF16)
    out = golden.grouped_matmul_slice_k_per_token_dequant(a, b, gl, scale, pts)
    start = 0
    for g, end in enumerate(gl):
        want = exact_int32(a[:, start:end], b[start:end]).astype(np.float32)
        want *= scale[g].astype(np.float32)[None, :]
        want *= pts[g].astype(np.float32)[:, None]
        assert_bits_equal(out[g], want)
        start = end


def test_scale_dtypes_fp16_fp32():
    rng = np.random.default_rng(11)
    a, b, gl, scale, pts = random_case(rng, 7, 10, 5, [2, 7])
    for dt in (np.float16, np.float32):
        s, p = scale.astype(dt), pts.astype(dt)
        assert_bits_equal(grouped_matmul_slice_m_per_token_dequant(a, b, gl, s, p), ref_gmm_per_token(a, b, gl, s, p))


def test_inputs_unchanged():
    rng = np.random.default_rng(5)
    args = random_case(rng, 10, 12, 6, [4, 4, 9])
    copies = [x.copy() for x in args]
    grouped_matmul_slice_m_per_token_dequant(*args)
    for x, c in zip(args, copies):
        assert x.dtype == c.dtype and np.array_equal(x.view(np.uint8), c.view(np.uint8))
    fa = rng.standard_normal((4, 5)).astype(np.float16)
    fb = rng.standard_normal((5, 3)).astype(BF16)
    ca, cb = fa.copy(), fb.copy()
    matmul(fa, fb)
    assert np.array_equal(fa, ca) and np.array_equal(fb.view(np.uint16), cb.view(np.uint16))


def test_argument_errors():
    rng = np.random.default_rng(1)
    a, b, gl, scale, pts = random_case(rng, 6, 4, 3, [2, 6])
    f = grouped_matmul_slice_m_per_token_dequant
    with pytest.raises(ArgumentError, match="a:"):
        f(a.astype(np.int16), b, gl, scale, pts)
    with pytest.raises(ArgumentError, match="b:"):
        f(a, b[:, :3], gl, scale, pts)
    with pytest.raises(ArgumentError, match="group_list"):
        f(a, b, np.array([2, 7]), scale, pts)
    with pytest.raises(ArgumentError, match="group_list"):
        f(a, b, np.array([-1, 6]), scale, pts)
    with pytest.raises(ArgumentError, match="group_list"):
        f(a, b, np.array([2.0, 6.0]), scale, pts)
    with pytest.raises(ArgumentError, match="group_list"):
        f(a, b, np.array([6]), scale, pts)
    with pytest.raises(ArgumentError, match="scale"):
        f(a, b, gl, scale[:, :2], pts)
    with pytest.raises(ArgumentError, match="scale"):
        f(a, b, gl, scale.astype(np.int32), pts)
    with pytest.raises(ArgumentError, match="per_token_scale"):
        f(a, b, gl, scale, pts[:5])
    with pytest.raises(ArgumentError, match="a:"):
        f(a.tolist(), b, gl, scale, pts)


def test_matmul_float_inputs():
    rng = np.random.default_rng(9)
    for dt in (np.float16, BF16, np.float32, np.int8):
        x = (rng.standard_normal((13, 70)) * 4).astype(dt)
        y = (rng.standard_normal((70, 9)) * 4).astype(dt)
        out = matmul(x, y)
        assert out.dtype == np.float32 and out.shape == (13, 9)
        exact = x.astype(np.float64) @ y.astype(np.float64)
        assert np.array_equal(out, exact.astype(np.float32))
        # and close to C++'s sequential float accumulation
        seq = np.zeros((13, 9), dtype=np.float32)
        xf, yf = x.astype(np.float32), y.astype(np.float32)
        for kk in range(70):
            seq += xf[:, kk:kk + 1] * yf[kk:kk + 1, :]
        assert np.allclose(out, seq, rtol=1e-4, atol=1e-3)
    with pytest.raises(ArgumentError, match="b:"):
        matmul(np.ones((2, 3), np.float16), np.ones((4, 2), np.float16))
    with pytest.raises(ArgumentError, match="a:"):
        matmul(np.ones(3, np.float16), np.ones((3, 2), np.float16))
