"""TileMmad: C (=|+=) A @ B over the first m x n x k of L0A (zZ), L0B (nZ), L0C (16x16 zN).

Operands are placed with hand-written fractal offsets; expectations come from numpy int64 / float64
products.
"""

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.arch import InstructionEvent, Observer, standalone_core
from catlass_py.errors import ConfigError
from catlass_py.gemm import GemmType
from catlass_py.layout import RowMajor
from catlass_py.numerics import compare_data
from catlass_py.tile import TileMmad

NP = {"int8": np.int8, "float16": np.float16, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16}
C0 = {"int8": 32, "float16": 16, "bfloat16": 16, "float32": 8}
ACC = {"int8": np.int32, "float16": np.float32, "bfloat16": np.float32, "float32": np.float32}


def rup(a, b):
    return -(-a // b) * b


def zz_off(r, c, cols_pad, c0):
    return (r // 16) * cols_pad * 16 + (c // c0) * 16 * c0 + (r % 16) * c0 + c % c0


def nz_off(r, c, cols_pad, c0):
    return (r // c0) * cols_pad * c0 + (c // 16) * 16 * c0 + (r % c0) + (c % 16) * c0


def l0c_off(r, c, rows_pad):
    return (r // 16) * 256 + (c // 16) * rows_pad * 16 + (r % 16) * 16 + c % 16


def grid(rows, cols):
    return np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")


class Cube:
    """Standalone AIC; L0A/L0B/L0C start as the poison pattern (0xFF: -1 / NaN)."""

    def __init__(self, dtype, observers=()):
        self.dtype = dtype
        self.c0 = C0[dtype]
        self.ctx = standalone_core(A2, "AIC", observers=observers)
        r = self.ctx.resource
        self.l0a = r.l0a_buf.get_buffer_by_byte(dtype, 0)
        self.l0b = r.l0b_buf.get_buffer_by_byte(dtype, 0)
        self.l0c = r.l0c_buf.get_buffer_by_byte("int32" if dtype == "int8" else "float32", 0)
        self.mmad = TileMmad(A2, GemmType(dtype, RowMajor), GemmType(dtype, RowMajor))

    def put_a(self, a_full):
        """a_full: the whole padded (rows_pad x cols_pad) L0A grid."""
        rp, cp = a_full.shape
        r, c = grid(rp, cp)
        self.l0a.view()[zz_off(r, c, cp, self.c0)] = a_full

    def put_b(self, b_full):
        rp, cp = b_full.shape
        r, c = grid(rp, cp)
        self.l0b.view()[nz_off(r, c, cp, self.c0)] = b_full

    def put_c(self, c_full):
        rp, cp = c_full.shape
        r, c = grid(rp, cp)
        self.l0c.view()[l0c_off(r, c, rp)] = c_full

    def get_c(self, m, n):
        r, c = grid(m, n)
        return self.l0c.view()[l0c_off(r, c, rup(m, 16))]


def int8_operands(m, n, k, rng, *, garbage=True):
    """Padded L0 grids whose padding (rows >= m / cols >= k of A, rows >= k / cols >= n of B) holds
    garbage, and the valid parts a (m x k), b (k x n)."""
    c0 = 32
    a_full = rng.integers(-128, 128, size=(rup(m, 16), rup(k, c0))).astype(np.int8)
    b_full = rng.integers(-128, 128, size=(rup(k, c0), rup(n, 16))).astype(np.int8)
    if not garbage:
        a_full[m:, :] = 0
        a_full[:, k:] = 0
        b_full[k:, :] = 0
        b_full[:, n:] = 0
    return a_full, b_full, a_full[:m, :k], b_full[:k, :n]


@pytest.mark.parametrize("m,n,k", [(16, 16, 32), (37, 21, 45), (1, 1, 1), (64, 48, 1000), (16, 16, 4095)])
def test_int8_is_exact_and_ignores_padding(m, n, k):
    rng = np.random.default_rng(m * n + k)
    cube = Cube("int8")
    a_full, b_full, a, b = int8_operands(m, n, k, rng)
    cube.put_a(a_full)
    cube.put_b(b_full)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, m, n, k)
    want = a.astype(np.int64) @ b.astype(np.int64)
    got = cube.get_c(m, n)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.astype(np.int64), want)


@pytest.mark.parametrize("k", [1024, 2048, 4095])
def test_int8_extreme_values_exact(k):
    """All products +16384: partial sums reach 2**24 (k=1024) and beyond; must stay exact."""
    m = n = 16
    cube = Cube("int8")
    a_full = np.full((16, rup(k, 32)), -128, np.int8)
    b_full = np.full((rup(k, 32), 16), -128, np.int8)
    b_full[0, 0] = 127  # one odd product breaks any rounding to even
    cube.put_a(a_full)
    cube.put_b(b_full)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, m, n, k)
    want = a_full[:m, :k].astype(np.int64) @ b_full[:k, :n].astype(np.int64)
    np.testing.assert_array_equal(cube.get_c(m, n).astype(np.int64), want)


def test_int32_accumulator_wraps_around():
    m, n, k = 16, 16, 64
    rng = np.random.default_rng(3)
    cube = Cube("int8")
    a_full = np.full((16, 64), 127, np.int8)
    b_full = np.full((64, 16), 127, np.int8)
    b_full[:, 1::2] = -128
    cube.put_a(a_full)
    cube.put_b(b_full)
    start = np.where(rng.random((16, 16)) < 0.5, 2**31 - 1000, -(2**31) + 1000).astype(np.int32)
    cube.put_c(start)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, m, n, k, init_c=False)
    total = start.astype(np.int64) + a_full.astype(np.int64) @ b_full.astype(np.int64)
    wrapped = ((total + 2**31) % 2**32) - 2**31
    assert np.any(total > 2**31 - 1) and np.any(total < -(2**31))  # the case really overflows both ways
    np.testing.assert_array_equal(cube.get_c(m, n).astype(np.int64), wrapped)


def test_init_c_overwrites_and_accumulate_adds():
    m, n, k = 32, 32, 64
    rng = np.random.default_rng(4)
    cube = Cube("int8")
    a_full, b_full, a, b = int8_operands(m, n, k, rng)
    cube.put_a(a_full)
    cube.put_b(b_full)
    prod = a.astype(np.int64) @ b.astype(np.int64)
    prior = rng.integers(-1000, 1000, size=(32, 32)).astype(np.int32)
    cube.put_c(prior)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, m, n, k, init_c=True)
    np.testing.assert_array_equal(cube.get_c(m, n), prod)
    cube.put_c(prior)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, m, n, k, init_c=False)
    np.testing.assert_array_equal(cube.get_c(m, n), prior + prod)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, m, n, k, init_c=False)
    np.testing.assert_array_equal(cube.get_c(m, n), prior + 2 * prod)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (33, 20, 50), (48, 64, 256)])
def test_float_inputs_accumulate_in_fp32_and_ignore_nan_padding(dtype, m, n, k):
    c0 = C0[dtype]
    rng = np.random.default_rng(m + n + k)
    cube = Cube(dtype)
    a_full = np.full((rup(m, 16), rup(k, c0)), np.nan, np.float32)
    b_full = np.full((rup(k, c0), rup(n, 16)), np.inf, np.float32)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32).astype(NP[dtype])
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32).astype(NP[dtype])
    a_full = a_full.astype(NP[dtype])
    b_full = b_full.astype(NP[dtype])
    a_full[:m, :k] = a
    b_full[:k, :n] = b
    cube.put_a(a_full)
    cube.put_b(b_full)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, m, n, k)
    got = cube.get_c(m, n)
    assert got.dtype == np.float32
    golden = a.astype(np.float64) @ b.astype(np.float64)
    res = compare_data(got, golden, k)
    assert res, str(res)
    # fp32 accumulation is much better than the tolerance: within a few fp32 ulps of the exact sum
    np.testing.assert_allclose(got, golden, rtol=0, atol=k * 2.0**-22)


def test_m_n_k_above_4095_raise_config_error():
    cube = Cube("int8")
    for m, n, k in [(4096, 16, 32), (16, 4096, 32), (16, 16, 4096)]:
        with pytest.raises(ConfigError):
            cube.mmad(cube.l0c, cube.l0a, cube.l0b, m, n, k)
    assert np.all(cube.ctx.resource.l0c_buf.raw == 0xFF)


def test_zero_sizes_are_no_ops():
    cube = Cube("int8")
    rng = np.random.default_rng(5)
    a_full, b_full, _, _ = int8_operands(16, 16, 32, rng)
    cube.put_a(a_full)
    cube.put_b(b_full)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, 0, 16, 32)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, 16, 0, 32)
    assert np.all(cube.ctx.resource.l0c_buf.raw == 0xFF)
    prior = rng.integers(-5, 5, size=(16, 16)).astype(np.int32)
    cube.put_c(prior)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, 16, 16, 0, init_c=False)  # C += (nothing)
    np.testing.assert_array_equal(cube.get_c(16, 16), prior)


@pytest.mark.parametrize("dtype", ["int8", "float16"])
def test_bias_overload_starts_from_the_bias_row(dtype):
    m, n, k = 20, 24, 40
    rng = np.random.default_rng(6)
    cube = Cube(dtype)
    c0 = C0[dtype]
    if dtype == "int8":
        a_full, b_full, a, b = int8_operands(m, n, k, rng)
        bias = rng.integers(-10**6, 10**6, size=n).astype(np.int32)
    else:
        a_full = rng.uniform(-1, 1, (rup(m, 16), rup(k, c0))).astype(np.float16)
        b_full = rng.uniform(-1, 1, (rup(k, c0), rup(n, 16))).astype(np.float16)
        a, b = a_full[:m, :k], b_full[:k, :n]
        bias = rng.uniform(-4, 4, n).astype(np.float32)
    cube.put_a(a_full)
    cube.put_b(b_full)
    bt = cube.ctx.resource.bt_buf.get_buffer_by_byte(bias.dtype, 0, n)
    bt.view()[:] = bias
    cube.put_c(np.full((32, 32), 7, ACC[dtype]))  # stale C must not leak in
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, m, n, k, bias=bt)
    want = bias[None, :].astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    got = cube.get_c(m, n)
    if dtype == "int8":
        np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64))
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)


def test_mmad_event_reports_flops():
    class Rec(Observer):
        def __init__(self):
            self.ev = []

        def on_event(self, e):
            if isinstance(e, InstructionEvent):
                self.ev.append(e)

    rec = Rec()
    cube = Cube("int8", observers=(rec,))
    rng = np.random.default_rng(1)
    a_full, b_full, _, _ = int8_operands(32, 16, 64, rng)
    cube.put_a(a_full)
    cube.put_b(b_full)
    cube.mmad(cube.l0c, cube.l0a, cube.l0b, 32, 16, 64)
    (ev,) = rec.ev
    assert ev.op == "Mmad" and ev.flops == 2 * 32 * 16 * 64
