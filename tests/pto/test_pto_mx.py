"""MX formats (pto-mx-semantics 4.5, 5): OCP FLOOR scales, the [CONFLICT] options, E8M0 decoding, fp4 packing,
the zZ / nN scale buffers and the PTO TMATMUL_MX family on tiles.

Scale bytes are worked out by hand from the exponent of the block maximum; matmul expectations are float64
numpy products of explicitly dequantised operands.
"""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pto_helpers import aic

from catlass_py.arch import ATLAS_A2
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.numerics import dequantize_mx, e8m0_decode, mx_scale_exponent, pack_fp4, quantize_mx, unpack_fp4
from catlass_py.tile.pto import (
    FRACTAL_MX,
    Tile,
    TileType,
    tile_acc,
    tile_left,
    tile_left_scale,
    tile_right,
    tile_right_scale,
    tmatmul,
    tmatmul_acc,
    tmatmul_bias,
    tmatmul_mx,
    tmatmul_mx_acc,
)

ELEMS = ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "float4_e1m2"]


# -- scales -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("amax, elem, byte", [
    (448.0, "float8_e4m3fn", 127),   # floor(log2 448) = 8 = emax -> s = 0
    (1.0, "float8_e4m3fn", 119),     # 0 - 8
    (1.0, "float8_e5m2", 112),       # 0 - 15
    (1.0, "float4_e2m1fn", 125),     # 0 - 2
    (6.0, "float4_e2m1fn", 127),     # floor(log2 6) = 2
    (1.75, "float4_e1m2", 127),      # floor(log2 1.75) = 0 = emax
    (0.0, "float8_e4m3fn", 0),       # zero block -> 2^-127
    (2.0**-130, "float4_e2m1fn", 0),  # clamped at -127
])
def test_ocp_floor_scale_examples(amax, elem, byte):
    assert mx_scale_exponent(np.array([amax]), elem).tolist() == [byte]


def test_inf_block_scale_conflict_options():
    assert mx_scale_exponent(np.array([np.inf, np.nan]), "e4m3").tolist() == [0xF7, 0xFF]  # goldens (default)
    assert mx_scale_exponent(np.array([np.inf, np.nan]), "e4m3", inf_scale="nan").tolist() == [0xFF, 0xFF]
    assert mx_scale_exponent(np.array([-np.inf]), "e2m1").tolist() == [253]
    with pytest.raises(ArgumentError, match="inf_scale"):
        mx_scale_exponent(np.array([1.0]), "e4m3", inf_scale="max")


def test_e8m0_decode():
    got = e8m0_decode(np.array([127, 0, 254, 128, 255], np.uint8))
    assert got.dtype == np.float32
    assert got[:4].tolist() == [1.0, 2.0**-127, 2.0**127, 2.0]
    assert np.isnan(got[4])
    np.testing.assert_array_equal(e8m0_decode(np.arange(255, dtype=np.uint8)),
                                  np.arange(255, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(np.float32))


def test_stochastic_rounding_option_is_unbiased_between_neighbours():
    x = np.full((4000, 32), 2.5, np.float32)
    x[:, 0] = 4.0  # amax 4 -> s = 0 for e2m1; 2.5 lies between the grid points 2 and 3
    d, s = quantize_mx(x, "e2m1")
    assert (s == 127).all() and (d[:, 1:].astype(np.float32) == 2.0).all()  # RNE: tie to even (2 = 1.0 * 2^1)
    d, s = quantize_mx(x, "e2m1", rounding="stochastic", rng=np.random.default_rng(0))
    v = d[:, 1:].astype(np.float32)
    assert set(np.unique(v).tolist()) == {2.0, 3.0}
    assert abs(v.mean() - 2.5) < 0.01  # ~124000 draws: standard error 0.0014
    assert (d[:, 0].astype(np.float32) == 4.0).all()  # grid points never move
    with pytest.raises(ArgumentError, match="rng"):
        quantize_mx(x, "e2m1", rounding="stochastic")


@settings(max_examples=40, deadline=None)
@given(elem=st.sampled_from(ELEMS), seed=st.integers(0, 2**16), scale=st.integers(-20, 20))
def test_quantize_dequantize_is_a_projection(elem, seed, scale):
    x = np.random.default_rng(seed).standard_normal((3, 64)).astype(np.float32) * np.float32(2.0**scale)
    d, s = quantize_mx(x, elem)
    y = dequantize_mx(d, s, elem_dtype=elem)
    d2, s2 = quantize_mx(y, elem)
    np.testing.assert_array_equal(dequantize_mx(d2, s2, elem_dtype=elem), y)
    np.testing.assert_array_equal(s2, s)  # the block maxima keep their binade


# -- fp4 packing ------------------------------------------------------------------------------------------


def test_fp4_packing_examples():
    assert pack_fp4(np.array([1, 2, 3, 4], np.uint8)).tolist() == [0x21, 0x43]  # even element in the low nibble
    assert unpack_fp4(np.array([0x21, 0xF0], np.uint8)).tolist() == [1, 2, 0, 15]
    assert unpack_fp4(np.array([0x21, 0xF0], np.uint8), 3).tolist() == [1, 2, 0]
    codes = np.array([1.5, -6.0], np.float32).astype(ml_dtypes.float4_e2m1fn)  # codes 3 and 15
    assert pack_fp4(codes).tolist() == [0xF3]
    with pytest.raises(ArgumentError, match="even length"):
        pack_fp4(np.array([1, 2, 3], np.uint8))
    with pytest.raises(ArgumentError, match=r"\[0, 15\]"):
        pack_fp4(np.array([1, 16], np.uint8))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=0, max_size=64).filter(lambda v: len(v) % 2 == 0))
def test_fp4_pack_round_trip(codes):
    c = np.array(codes, np.uint8)
    packed = pack_fp4(c)
    assert packed.shape == (len(codes) // 2,)
    np.testing.assert_array_equal(unpack_fp4(packed), c)


# -- TMATMUL_MX on tiles ----------------------------------------------------------------------------------


def _mx_tiles(core, a_dt, b_dt, m, k, n, rows=None, cols=None):
    rows = rows or -(-m // 16) * 16
    cols = cols or -(-n // 16) * 16
    kg = -(-k // 32)
    a = tile_left(a_dt, rows, k, valid=(m, k)).assign(core, 0)
    b = tile_right(b_dt, k, cols, valid=(k, n)).assign(core, 0)
    sa = tile_left_scale(rows, kg, valid=(m, kg)).assign(core, 0)
    sb = tile_right_scale(kg, cols, valid=(kg, n)).assign(core, 0)
    c = tile_acc("float32", rows, cols, valid=(m, n)).assign(core, 0)
    return a, sa, b, sb, c


def _deq(vals, scales, axis):
    f = np.where(scales == 255, np.nan, np.ldexp(1.0, scales.astype(np.int64) - 127))
    return vals * np.repeat(f, 32, axis=axis)


def test_tmatmul_mx_fp8_and_scale_buffer_bytes():
    core = aic()
    m, k, n = 40, 128, 48
    kg = k // 32
    rng = np.random.default_rng(5)
    av = rng.uniform(-3, 3, (m, k)).astype(ml_dtypes.float8_e5m2)
    bv = rng.uniform(-3, 3, (k, n)).astype(ml_dtypes.float8_e4m3fn)
    sav = rng.integers(118, 136, (m, kg)).astype(np.uint8)
    sbv = rng.integers(118, 136, (kg, n)).astype(np.uint8)
    a, sa, b, sb, c = _mx_tiles(core, "float8_e5m2", "float8_e4m3fn", m, k, n)
    a.write(av)
    b.write(bv)
    sa.write(sav.view(ml_dtypes.float8_e8m0fnu))
    sb.write(sbv.view(ml_dtypes.float8_e8m0fnu))
    raw_a = sa.tensor.view().view(np.uint8)
    raw_b = sb.tensor.view().view(np.uint8)
    for i, g in ((0, 0), (0, 1), (1, 0), (17, 3), (39, 2)):  # SA byte(i, g), KG = 4
        assert raw_a[((i // 16) * (kg // 2) + g // 2) * 32 + (i % 16) * 2 + g % 2] == sav[i, g]
    for g, j in ((0, 0), (1, 0), (0, 1), (3, 17), (2, 47)):  # SB byte(g, j)
        assert raw_b[((j // 16) * (kg // 2) + g // 2) * 32 + (j % 16) * 2 + g % 2] == sbv[g, j]
    tmatmul_mx(c, a, sa, b, sb)
    da, db = _deq(av.astype(np.float64), sav, 1), _deq(bv.astype(np.float64), sbv, 0)
    want = da @ db
    tol = 2.0**-23 * k * (np.abs(da) @ np.abs(db))  # float32 accumulation bound, any summation order
    assert np.all(np.abs(c.read() - want) <= tol)
    tmatmul_mx_acc(c, c, a, sa, b, sb)
    assert np.all(np.abs(c.read() - 2 * want) <= 2 * tol + 2.0**-23 * np.abs(2 * want))
    bias = Tile.of("ND", TileType.Bias, "float32", 1, 64, valid=(1, 48)).assign(core, 0)
    bias.write(np.arange(48, dtype=np.float32)[None, :])
    tmatmul_mx(c, a, sa, b, sb, bias)
    assert np.all(np.abs(c.read() - (want + np.arange(48))) <= tol + 2.0**-23 * (np.abs(want) + 48))


def test_tmatmul_mx_fp4_mixed_formats():
    core = aic()
    m, k, n = 16, 128, 16
    rng = np.random.default_rng(6)
    ca = rng.integers(0, 16, (m, k)).astype(np.uint8)
    cb = rng.integers(0, 16, (k, n)).astype(np.uint8)
    a, sa, b, sb, c = _mx_tiles(core, "float4_e2m1fn", "float4_e1m2", m, k, n)
    a.write(ca.view(ml_dtypes.float4_e2m1fn))
    b.write(cb)
    sav = np.full((m, 4), 126, np.uint8)
    sbv = np.full((4, n), 129, np.uint8)
    sa.write(sav.view(ml_dtypes.float8_e8m0fnu))
    sb.write(sbv.view(ml_dtypes.float8_e8m0fnu))
    e2m1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, 0, -.5, -1, -1.5, -2, -3, -4, -6])
    e1m2 = np.array([0, .25, .5, .75, 1, 1.25, 1.5, 1.75, 0, -.25, -.5, -.75, -1, -1.25, -1.5, -1.75])
    tmatmul_mx(c, a, sa, b, sb)
    np.testing.assert_allclose(c.read(), (e2m1[ca] * 0.5) @ (e1m2[cb] * 4.0), rtol=1e-6)


def test_nan_scale_poisons_its_rows():
    core = aic()
    m, k, n = 16, 64, 16
    a, sa, b, sb, c = _mx_tiles(core, "float8_e4m3fn", "float8_e4m3fn", m, k, n)
    a.write(np.ones((m, k), ml_dtypes.float8_e4m3fn))
    b.write(np.ones((k, n), ml_dtypes.float8_e4m3fn))
    sav = np.full((m, 2), 127, np.uint8)
    sav[3, 1] = 0xFF  # E8M0 0xFF is NaN
    sa.write(sav.view(ml_dtypes.float8_e8m0fnu))
    sb.write(np.full((2, n), 127, np.uint8).view(ml_dtypes.float8_e8m0fnu))
    tmatmul_mx(c, a, sa, b, sb)
    out = c.read()
    assert np.isnan(out[3]).all() and (np.delete(out, 3, axis=0) == 64).all()


def test_tmatmul_mx_rules():
    core = aic()
    a, sa, b, sb, c = _mx_tiles(core, "float8_e4m3fn", "float8_e4m3fn", 16, 64, 16)
    fp4b = tile_right("float4_e2m1fn", 64, 16).assign(core, 0)
    with pytest.raises(ConfigError, match="float8_e4m3fn x float4_e2m1fn is not a supported"):
        tmatmul_mx(c, a, sa, fp4b, sb)
    a32 = tile_left("float8_e4m3fn", 16, 32).assign(core, 0)
    b32 = tile_right("float8_e4m3fn", 32, 16).assign(core, 0)
    with pytest.raises(ConfigError, match="multiple of 64"):
        tmatmul_mx(c, a32, sa, b32, sb)
    small = tile_left_scale(16, 2, valid=(8, 2)).assign(core, 0)
    with pytest.raises(ConfigError, match="does not cover"):
        tmatmul_mx(c, a, small, b, sb)
    nn_left = Tile.of("NN", TileType.ScaleLeft, "float8_e8m0fnu", 16, 16, fractal=FRACTAL_MX).assign(core, 0)
    with pytest.raises(ConfigError, match="ScaleLeft tile must be ZZ"):
        tmatmul_mx(c, a, nn_left, b, sb)
    with pytest.raises(ConfigError, match="only by the non-scaled matmul"):
        _, sa16, _, sb16, _ = _mx_tiles(core, "float16", "float16", 16, 64, 16)
        tmatmul_mx(c, tile_left("float16", 16, 64).assign(core, 0), sa16,
                   tile_right("float16", 64, 16).assign(core, 0), sb16)
    with pytest.raises(ConfigError, match="static shapes must chain"):
        tmatmul_mx(tile_acc("float32", 32, 16).assign(core, 0), a, sa, b, sb)
    with pytest.raises(ConfigError, match=r"m, k, n must lie in \[1, 4095\]"):
        a.set_valid(0, 64)
        tmatmul_mx(c, a, sa, b, sb)
    a2 = aic(ATLAS_A2)
    al = tile_left("float16", 16, 16, arch=ATLAS_A2).assign(a2, 0)
    br = tile_right("float16", 16, 16).assign(a2, 0)
    ca = tile_acc("float32", 16, 16).assign(a2, 0)
    with pytest.raises(ConfigError, match="only on Ascend 950"):  # A2 has no MX buffers ...
        tile_left_scale(16, 2).assign(a2, 0)
    with pytest.raises(ConfigError, match="scaled \\(MX\\) matmul exists only on Ascend 950"):  # ... nor MX matmul
        tmatmul_mx(ca, al, tile_left_scale(16, 2).assign(core, 0), br, tile_right_scale(2, 16).assign(core, 0))


def test_plain_tmatmul_family():
    core = aic()
    rng = np.random.default_rng(7)
    av = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    bv = rng.integers(-128, 128, (64, 16)).astype(np.int8)
    a = tile_left("int8", 32, 64).assign(core, 0)
    b = tile_right("int8", 64, 16).assign(core, 0)
    c = tile_acc("int32", 32, 16).assign(core, 0)
    a.write(av)
    b.write(bv)
    want = av.astype(np.int64) @ bv.astype(np.int64)
    tmatmul(c, a, b)
    np.testing.assert_array_equal(c.read(), want)
    tmatmul_acc(c, c, a, b)
    np.testing.assert_array_equal(c.read(), 2 * want)
    bias = Tile.of("ND", TileType.Bias, "int32", 1, 16).assign(core, 0)
    bias.write(np.arange(16, dtype=np.int32)[None, :])
    tmatmul_bias(c, a, b, bias)
    np.testing.assert_array_equal(c.read(), want + np.arange(16))
    with pytest.raises(ConfigError, match="bias of a int32 accumulator is int32"):
        tmatmul_bias(c, a, b, Tile.of("ND", TileType.Bias, "float32", 1, 16).assign(core, 0))
    fp4a = tile_left("float4_e2m1fn", 32, 64).assign(core, 0)
    with pytest.raises(ConfigError, match="only by the scaled matmul"):
        tmatmul(tile_acc("float32", 32, 16).assign(core, 0), fp4a, tile_right("float4_e2m1fn", 64, 16).assign(core, 0))
    with pytest.raises(ConfigError, match="Left tile must be NZ"):
        tmatmul(c, Tile.of("ZZ", TileType.Left, "int8", 32, 64).assign(core, 0), b)
