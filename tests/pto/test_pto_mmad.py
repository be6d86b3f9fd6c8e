"""Ascend C Mmad / MmadMx with MmadBitModeParams (seed 002; pto-mx-semantics 4.3-4.5).

Operands are placed in L0A / L0B / L0C / L0A_MX / L0B_MX with offset formulas typed from the references;
expectations are float64 numpy products.
"""

import ml_dtypes
import numpy as np
import pytest
from pto_helpers import aic

from catlass_py.arch import ATLAS_A2
from catlass_py.errors import AlignmentError, ArgumentError, ConfigError
from catlass_py.tile.pto import MmadBitModeParams, mmad, mmad_mx


def rup(a, b):
    return -(-a // b) * b


def nz_off(r, c, rows_pad, c0):  # NZ / zN: 16 x c0 boxes, boxes column-major
    return (c // c0) * rows_pad * c0 + r * c0 + c % c0


def zz_off(r, c, cols_pad, c0):  # ZZ / zZ: 16 x c0 boxes, boxes row-major
    return (r // 16) * cols_pad * 16 + (c // c0) * 16 * c0 + (r % 16) * c0 + c % c0


def zn_off(r, c, cols_pad, c0):  # ZN / nZ: c0 x 16 boxes, column-major inside, boxes row-major
    return (r // c0) * cols_pad * c0 + (c // 16) * c0 * 16 + (c % 16) * c0 + r % c0


def grid(rows, cols):
    return np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")


# -- the config0 word ------------------------------------------------------------------------------------


@pytest.mark.parametrize("field, value, bits", [
    ("m", 1, 1 << 0), ("m", 4095, 0xFFF), ("k", 1, 1 << 12), ("k", 4095, 0xFFF << 12), ("n", 1, 1 << 24),
    ("n", 4095, 0xFFF << 24), ("unit_flag", 2, 2 << 55), ("unit_flag", 3, 3 << 55), ("disable_gemv", True, 1 << 61),
    ("cmatrix_source", True, 1 << 62), ("cmatrix_init_val", True, 1 << 63),
])
def test_config0_bit_positions(field, value, bits):
    p = MmadBitModeParams.from_config0(0)  # the C++ default constructor: all zero
    setattr(p, field, value)
    assert p.config0 == bits
    assert getattr(p, f"get_{field}")() == value


def test_defaults_getters_setters_and_raw_word():
    p = MmadBitModeParams()
    assert p.config0 == 1 << 63 and p.cmatrix_init_val and not p.cmatrix_source and p.m == p.k == p.n == 0
    p = MmadBitModeParams(30, 70, 40, unit_flag=3, disable_gemv=True, cmatrix_source=True, cmatrix_init_val=False)
    assert p.get_config0() == 30 | 70 << 12 | 40 << 24 | 3 << 55 | 1 << 61 | 1 << 62
    p.set_k(64)
    p.set_cmatrix_init_val(True)
    assert (p.get_m(), p.get_k(), p.get_n(), p.get_cmatrix_init_val()) == (30, 64, 40, True)
    word = 5 | 7 << 12 | 9 << 24 | 1 << 40 | 2 << 55 | 1 << 62  # bit 40 is reserved: kept as given
    q = MmadBitModeParams.from_config0(word)
    assert (q.m, q.k, q.n, q.unit_flag, q.disable_gemv, q.cmatrix_source, q.cmatrix_init_val) == (5, 7, 9, 2, False, True, False)
    assert q.config0 == word
    q.set_config0(0xFFFF_FFFF_FFFF_FFFF)
    assert q.m == q.k == q.n == 4095 and q.unit_flag == 3
    with pytest.raises(ArgumentError, match=r"m: expected an integer in \[0, 4095\]"):
        p.set_m(4096)
    with pytest.raises(ArgumentError, match="unit_flag"):
        p.unit_flag = 4
    with pytest.raises(ArgumentError, match="config0"):
        p.set_config0(1 << 64)


# -- Mmad -------------------------------------------------------------------------------------------------


class Cube:
    def __init__(self, a_dt="float16", b_dt=None, c_dt="float32", arch=None):
        self.ctx = aic() if arch is None else aic(arch)
        r = self.ctx.resource
        self.a_dt, self.b_dt = a_dt, b_dt or a_dt
        self.l0a = r.l0a_buf.tensor(a_dt, 0)
        self.l0b = r.l0b_buf.tensor(self.b_dt, 0)
        self.l0c = r.l0c_buf.tensor(c_dt, 0)

    def put_a_nz(self, a, c0):
        m, k = a.shape
        r, c = grid(m, k)
        self.l0a.view()[nz_off(r, c, rup(m, 16), c0)] = a

    def put_b_zn(self, b, c0):
        k, n = b.shape
        r, c = grid(k, n)
        self.l0b.view()[zn_off(r, c, rup(n, 16), c0)] = b

    def get_c(self, m, n):
        r, c = grid(m, n)
        return self.l0c.view()[nz_off(r, c, rup(m, 16), 16)]


def test_mmad_fp16_layouts_and_init_modes():
    m, k, n = 20, 40, 24
    rng = np.random.default_rng(1)
    a = rng.integers(-8, 8, (m, k)).astype(np.float16)
    b = rng.integers(-8, 8, (k, n)).astype(np.float16)
    cube = Cube()
    cube.put_a_nz(a, 16)
    cube.put_b_zn(b, 16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    mmad(cube.l0c, cube.l0a, cube.l0b, MmadBitModeParams(m, k, n))
    np.testing.assert_array_equal(cube.get_c(m, n), want)  # small integers: exact in fp32
    mmad(cube.l0c, cube.l0a, cube.l0b, MmadBitModeParams(m, k, n, cmatrix_init_val=False))  # C += A @ B from L0C
    np.testing.assert_array_equal(cube.get_c(m, n), 2 * want)
    bt = cube.ctx.resource.bt_buf.tensor("float32", 0, n)
    bt.view()[:] = np.arange(n, dtype=np.float32)
    mmad(cube.l0c, cube.l0a, cube.l0b, MmadBitModeParams(m, k, n, cmatrix_init_val=False, cmatrix_source=True))
    np.testing.assert_array_equal(cube.get_c(m, n), want + np.arange(n))  # initial C from the bias table (C2)
    bias = cube.ctx.resource.bt_buf.tensor("float32", 128, n)
    bias.view()[:] = -1.5
    mmad(cube.l0c, cube.l0a, cube.l0b, MmadBitModeParams(m, k, n, cmatrix_source=False), bias)
    np.testing.assert_array_equal(cube.get_c(m, n), want - 1.5)  # bias overload: the bias position decides


def test_mmad_zero_size_is_a_no_op():
    cube = Cube()
    before = cube.l0c.view()[:1024].copy()
    for mkn in ((0, 16, 16), (16, 0, 16), (16, 16, 0)):
        mmad(cube.l0c, cube.l0a, cube.l0b, MmadBitModeParams(*mkn))
    np.testing.assert_array_equal(cube.l0c.view()[:1024].view(np.uint32), before.view(np.uint32))  # still poison


def test_mmad_gemv_reads_a_as_an_nd_row():
    k, n = 48, 32
    b = (np.arange(k * n) % 7 - 3).astype(np.float16).reshape(k, n)
    a = (np.arange(k) % 5 - 2).astype(np.float16)
    cube = Cube()
    cube.put_b_zn(b, 16)
    flat = cube.l0a.view()
    flat[:2048] = 0
    flat[:k] = a  # GEMV: the row lies contiguously
    mmad(cube.l0c, cube.l0a, cube.l0b, MmadBitModeParams(1, k, n))
    np.testing.assert_array_equal(cube.get_c(1, n)[0], a.astype(np.float64) @ b)
    # disableGemv: row 0 is read through NZ boxes (elements 0..15 at 0, 16..31 at 256, 32..47 at 512)
    mmad(cube.l0c, cube.l0a, cube.l0b, MmadBitModeParams(1, k, n, disable_gemv=True))
    nz_row = np.concatenate([flat[0:16], flat[256:272], flat[512:528]]).astype(np.float64)
    np.testing.assert_array_equal(cube.get_c(1, n)[0], nz_row @ b)


def test_mmad_zz_variant_and_int8_exact():
    m, k, n = 32, 64, 16
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    cube = Cube("int8", c_dt="int32")
    r, c = grid(m, k)
    cube.l0a.view()[zz_off(r, c, k, 32)] = a
    cube.put_b_zn(b, 32)
    mmad(cube.l0c, cube.l0a, cube.l0b, MmadBitModeParams(m, k, n), a_layout="ZZ")
    np.testing.assert_array_equal(cube.get_c(m, n), a.astype(np.int64) @ b.astype(np.int64))


def test_mmad_checks():
    cube = Cube()
    p = MmadBitModeParams(16, 16, 16)
    ctx = cube.ctx
    fp4 = ctx.resource.l0a_buf.tensor("float4_e2m1fn", 0)
    with pytest.raises(ConfigError, match="only by the scaled matmul"):
        mmad(cube.l0c, fp4, ctx.resource.l0b_buf.tensor("float4_e2m1fn", 0), p)
    with pytest.raises(ConfigError, match="float16 x bfloat16 is not a supported combination"):
        mmad(cube.l0c, cube.l0a, ctx.resource.l0b_buf.tensor("bfloat16", 0), p)
    with pytest.raises(ConfigError, match="accumulates in int32"):
        mmad(cube.l0c, ctx.resource.l0a_buf.tensor("int8", 0), ctx.resource.l0b_buf.tensor("int8", 0), p)
    with pytest.raises(AlignmentError, match="512-byte"):
        mmad(cube.l0c, cube.l0a[128], cube.l0b, p)
    with pytest.raises(AlignmentError, match="256-element"):
        mmad(cube.l0c[16], cube.l0a, cube.l0b, p)
    with pytest.raises(AlignmentError, match="128-byte"):
        mmad(cube.l0c, cube.l0a, cube.l0b, p, ctx.resource.bt_buf.tensor("float32", 64))
    with pytest.raises(ConfigError, match="bias of a float32 result is float32"):
        mmad(cube.l0c, cube.l0a, cube.l0b, p, ctx.resource.bt_buf.tensor("float16", 0))
    with pytest.raises(ConfigError, match="dst \\(CO1\\) must be in L0C"):
        mmad(ctx.resource.l1_buf.tensor("float32", 0), cube.l0a, cube.l0b, p)
    a2 = Cube(arch=ATLAS_A2)
    with pytest.raises(ConfigError, match="only on Atlas 350 / Ascend 950"):
        mmad(a2.l0c, a2.l0a, a2.l0b, p)
    with pytest.raises(ArgumentError, match="MmadBitModeParams"):
        mmad(cube.l0c, cube.l0a, cube.l0b, (16, 16, 16))


# -- MmadMx -----------------------------------------------------------------------------------------------


def _sa_off(i, g, kg):  # pto-mx-semantics 4.5, "zZ" 16 x 2 boxes
    return ((i // 16) * (kg // 2) + g // 2) * 32 + (i % 16) * 2 + g % 2


def _sb_off(g, j, kg):  # "nN" 2 x 16 boxes
    return ((j // 16) * (kg // 2) + g // 2) * 32 + (j % 16) * 2 + g % 2


def _deq(vals, scales, axis):
    f = np.ldexp(1.0, scales.astype(np.int64) - 127)
    f = np.where(scales == 255, np.nan, f)
    return vals * np.repeat(f, 32, axis=axis)


def test_mmad_mx_fp8_reads_scales_at_addr_over_16():
    m, k, n = 24, 128, 40
    kg = k // 32
    rng = np.random.default_rng(3)
    a = rng.uniform(-4, 4, (m, k)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.uniform(-4, 4, (k, n)).astype(ml_dtypes.float8_e5m2)
    sa = rng.integers(120, 134, (m, kg)).astype(np.uint8)
    sb = rng.integers(120, 134, (kg, n)).astype(np.uint8)
    cube = Cube("float8_e4m3fn", "float8_e5m2")
    fm = cube.ctx.resource.l0a_buf.tensor("float8_e4m3fn", 4096)  # scales then live at byte 4096 >> 4 = 256
    r, c = grid(m, k)
    fm.view()[nz_off(r, c, rup(m, 16), 32)] = a
    cube.put_b_zn(b, 32)
    l0a_mx = cube.ctx.extra_buffer("L0A_MX", cube.ctx.resource.l0a_buf.size // 16).raw
    l0b_mx = cube.ctx.extra_buffer("L0B_MX", cube.ctx.resource.l0b_buf.size // 16).raw
    i, g = grid(m, kg)
    l0a_mx[256 + _sa_off(i, g, kg)] = sa
    g, j = grid(kg, n)
    l0b_mx[_sb_off(g, j, kg)] = sb
    mmad_mx(cube.l0c, fm, cube.l0b, MmadBitModeParams(m, k, n))
    want = _deq(a.astype(np.float64), sa, 1) @ _deq(b.astype(np.float64), sb, 0)
    np.testing.assert_allclose(cube.get_c(m, n), want, rtol=1e-5)


def test_mmad_mx_fp4_packed_operands_and_rules():
    m, k, n = 16, 64, 16
    rng = np.random.default_rng(4)
    ca = rng.integers(0, 16, (m, k)).astype(np.uint8)  # fp4 e2m1 codes
    cb = rng.integers(0, 16, (k, n)).astype(np.uint8)  # fp4 e1m2 codes
    e2m1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])
    e1m2 = np.array([0, .25, .5, .75, 1, 1.25, 1.5, 1.75, -0., -.25, -.5, -.75, -1, -1.25, -1.5, -1.75])
    cube = Cube("float4_e2m1fn", "float4_e1m2")
    ctx = cube.ctx
    a_codes = np.zeros(m * k, np.uint8)
    r, c = grid(m, k)
    a_codes[nz_off(r, c, 16, 64)] = ca  # fp4 box: 16 x 64 elements (32-byte rows)
    b_codes = np.zeros(k * n, np.uint8)
    r, c = grid(k, n)
    b_codes[zn_off(r, c, 16, 64)] = cb
    ctx.resource.l0a_buf.raw[: m * k // 2] = a_codes[0::2] | (a_codes[1::2] << 4)  # even element: low nibble
    ctx.resource.l0b_buf.raw[: k * n // 2] = b_codes[0::2] | (b_codes[1::2] << 4)
    ctx.extra_buffer("L0A_MX", 4096).raw[:64] = 127
    ctx.extra_buffer("L0B_MX", 4096).raw[:64] = 128  # B scaled by 2
    mmad_mx(cube.l0c, cube.l0a, cube.l0b, MmadBitModeParams(m, k, n))
    np.testing.assert_allclose(cube.get_c(m, n), e2m1[ca] @ (2 * e1m2[cb]), rtol=1e-6)
    with pytest.raises(ConfigError, match="k must be a multiple of 64"):
        mmad_mx(cube.l0c, cube.l0a, cube.l0b, MmadBitModeParams(m, 32, n))
    fp16 = ctx.resource.l0a_buf.tensor("float16", 0)
    with pytest.raises(ConfigError, match="only by the non-scaled matmul"):
        mmad_mx(cube.l0c, fp16, ctx.resource.l0b_buf.tensor("float16", 0), MmadBitModeParams(m, k, n))
    with pytest.raises(ConfigError, match="float4_e2m1fn x float8_e4m3fn is not a supported"):
        mmad_mx(cube.l0c, cube.l0a, ctx.resource.l0b_buf.tensor("float8_e4m3fn", 0), MmadBitModeParams(m, k, n))
