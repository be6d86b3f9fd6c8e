"""MX quantisation (OCP FLOOR shared scale, E8M0) and dequantisation."""

import ml_dtypes
import numpy as np
import pytest

from catlass_py.errors import ArgumentError
from catlass_py.numerics import dequantize_mx, e1m2_decode, float_format, mx_scale_exponent, quantize_mx

ELEMS = ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "float4_e1m2"]
EMAX = {"float8_e4m3fn": 8, "float8_e5m2": 15, "float4_e2m1fn": 2, "float4_e1m2": 0}


def _values(data, elem):
    if elem == "float4_e1m2":
        return e1m2_decode(data, np.float64)
    return data.astype(np.float64)


def test_hand_computed_block_e4m3_and_e2m1():
    x = np.zeros(32, np.float32)
    x[:4] = [3.0, -1.0, 0.5, 0.0078125]
    # amax 3 = 1.5 * 2**1 -> s = 1 - 8 = -7 -> byte 120; elements scaled by 2**7
    d, s = quantize_mx(x, "e4m3")
    assert s.tolist() == [120] and d.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert d[:4].astype(np.float64).tolist() == [384.0, -128.0, 64.0, 1.0]
    np.testing.assert_array_equal(dequantize_mx(d, s), x)
    # e2m1: s = 1 - 2 = -1 -> byte 126; 3*2 = 6 (code 7), -2 (code 0xC), 1, 0.015625 -> 0
    d, s = quantize_mx(x, "e2m1")
    assert s.tolist() == [126]
    assert d[:4].astype(np.float64).tolist() == [6.0, -2.0, 1.0, 0.0]
    assert d[:4].view(np.uint8).tolist() == [7, 12, 2, 0]
    assert dequantize_mx(d, s)[:4].tolist() == [3.0, -1.0, 0.5, 0.0]


def test_floor_scale_clips_large_block_members():
    x = np.full(32, 1.0, np.float32)
    x[5] = 511.0  # floor(log2 511) = 8 -> e4m3: s = 0; 511 > 448 -> clipped
    d, s = quantize_mx(x, "e4m3")
    assert s.tolist() == [127] and float(d[5].astype(np.float64)) == 448.0
    x[5] = 7.9  # e2m1: floor(log2 7.9) = 2 -> s = 0; 7.9 -> 6
    d, s = quantize_mx(x, "e2m1")
    assert s.tolist() == [127] and float(d[5].astype(np.float64)) == 6.0
    x[5] = 1.9  # e1m2: floor(log2 1.9) = 0 -> s = 0; 1.9 -> 1.75 (code 7)
    d, s = quantize_mx(x, "e1m2")
    assert s.tolist() == [127] and d.dtype == np.uint8 and int(d[5]) == 7 and int(d[0]) == 4
    x[5] = -57344.0 * 3  # e5m2: floor(log2 172032) = 17 -> s = 2 -> -43008 = -1.3125 * 2**15 -> RNE -1.25 * 2**15
    d, s = quantize_mx(x, "e5m2")
    assert s.tolist() == [129] and float(d[5].astype(np.float64)) == -40960.0


def test_zero_nan_inf_and_subnormal_blocks():
    x = np.zeros((4, 32), np.float32)
    x[1, 3] = np.nan
    x[2, 0] = -np.inf
    x[2, 1] = 3.0
    x[3, :] = np.float32(1e-45)  # fp32 subnormal amax: exponent field 0 -> s clamps to -127
    for elem in ELEMS:
        d, s = quantize_mx(x, elem)
        # an infinite maximum keeps the exponent arithmetic: 255 - emax (PTO tquant inf_only goldens)
        assert s.tolist() == [[0], [255], [255 - EMAX[elem]], [0]], elem
        out = dequantize_mx(d, s, elem_dtype=elem, dtype=np.float64)
        assert (out[0] == 0).all() and np.isnan(out[1]).all() and (out[3] == 0).all()
        if elem != "float4_e1m2":  # e1m2 (emax 0): 255 - 0 is the NaN scale itself
            assert out[2, 0] < 0 and out[2, 1] == 0.0  # -inf saturates to -max, 3 * 2**-(128 - emax) -> 0
        d, s = quantize_mx(x, elem, inf_scale="nan")
        assert s[2].tolist() == [255] and np.isnan(dequantize_mx(d, s, elem_dtype=elem)[2]).all()
    d, _ = quantize_mx(x, "e4m3")
    assert (d[1].view(np.uint8) == 0x7F).all()  # fp8 keeps NaN in NaN-scale blocks
    assert d[2].view(np.uint8)[:2].tolist() == [0xFE, 0x00]  # -inf -> -448
    d, _ = quantize_mx(x, "e2m1")
    assert (d[1].view(np.uint8) == 0x7).all()  # fp4 has no NaN: PTO's encoder writes code 7
    assert d[2].view(np.uint8)[0] == 0xF  # -inf -> -6
    d, _ = quantize_mx(x, "e2m1", fp4_nan="zero")
    assert (d[1].view(np.uint8) == 0).all()
    d, _ = quantize_mx(x, "e1m2")
    assert (d[1] == 0x7).all()


def test_nv_rceil_scale():
    """NV: e = ceil(log2(fp32(amax * fp32(1/max)))) + 127, exact powers kept, inf -> 0xFE, NaN -> 0xFF."""
    amax = np.array([448.0, 449.0, 896.0, 0.0, np.inf, np.nan, 2.0**-130, 1.0], np.float32)
    assert mx_scale_exponent(amax, "e4m3", scale_alg="nv").tolist() == [127, 128, 128, 0, 0xFE, 0xFF, 0, 119]
    assert mx_scale_exponent(np.array([6.0, 6.5, 12.0]), "e2m1", scale_alg="nv").tolist() == [127, 128, 128]
    x = np.zeros(32, np.float32)
    x[0], x[1] = 449.0, 1.0  # scale 2**1: 449/2 = 224.5 -> 224; 0.5
    d, s = quantize_mx(x, "e4m3", scale_alg="nv")
    assert s.tolist() == [128] and d[:2].astype(np.float32).tolist() == [224.0, 0.5]
    with pytest.raises(ArgumentError, match="scale_alg"):
        quantize_mx(x, "e4m3", scale_alg="floor")


def test_emax_option():
    """TQUANT.md's table says e2m1 emax 1; the reference code uses 2 (default)."""
    assert mx_scale_exponent(np.array([6.0]), "e2m1").tolist() == [127]
    assert mx_scale_exponent(np.array([6.0]), "e2m1", emax=1).tolist() == [128]
    with pytest.raises(ArgumentError, match="emax"):
        mx_scale_exponent(np.array([6.0]), "e2m1", emax=-1)


def test_scale_matches_fp32_exponent_bits():
    """Stage 2 as torchao/PTO compute it: biased fp32 exponent of amax minus emax, clamped at 0."""
    rng = np.random.default_rng(8)
    bits = rng.integers(0, 0x7F800000, 5000).astype(np.uint32)
    amax = bits.view(np.float32)
    for elem in ELEMS:
        want = np.clip(((bits >> 23) & 0xFF).astype(np.int64) - EMAX[elem], 0, 255)
        np.testing.assert_array_equal(mx_scale_exponent(amax, elem), want)
    assert mx_scale_exponent(np.array([np.nan, np.inf, 0.0]), "e4m3").tolist() == [255, 247, 0]
    assert mx_scale_exponent(np.array([2.0**300]), "e4m3").tolist() == [247]  # beyond fp32: read as inf


@pytest.mark.parametrize("elem", ELEMS)
def test_round_trip_error_bound(elem):
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((8, 256)) * np.exp2(rng.integers(-20, 20, (8, 1)))).astype(np.float32)
    x[0, :32] *= 1e-3  # a block with a tiny member next to big ones
    d, s = quantize_mx(x, elem, block=32)
    assert d.shape == x.shape and s.shape == (8, 8) and s.dtype == np.uint8
    y = dequantize_mx(d, s, elem_dtype=elem, dtype=np.float64)
    fmt = float_format(elem)
    scale = np.repeat(np.exp2(s.astype(np.float64) - 127), 32, axis=1)
    half_ulp_rel = 2.0 ** -(fmt.mbits + 1)
    half_sub = fmt.min_subnormal / 2 * scale
    clip = np.maximum(np.abs(x) - fmt.max_finite * scale, 0)
    bound = np.maximum(half_ulp_rel * np.abs(x), half_sub) + clip
    assert np.all(np.abs(y - x) <= bound * (1 + 1e-12))
    # FLOOR never scales a block max below the element format's largest power of two
    amax = np.abs(x).reshape(8, 8, 32).max(-1)
    assert np.all(amax / np.exp2(s.astype(np.float64) - 127) >= 2.0 ** EMAX[float_format(elem).name])


def test_axis_and_e8m0_views():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    d, s = quantize_mx(x, "e4m3", block=32, axis=0)
    assert s.shape == (2, 3)
    d2, s2 = quantize_mx(x.T.copy(), "e4m3", block=32, axis=-1)
    np.testing.assert_array_equal(s, s2.T)
    np.testing.assert_array_equal(d.astype(np.float32), d2.T.astype(np.float32))
    y = dequantize_mx(d, s.view(ml_dtypes.float8_e8m0fnu), block=32, axis=0)
    np.testing.assert_array_equal(y, dequantize_mx(d, s, block=32, axis=0))
    np.testing.assert_array_equal(dequantize_mx(d.view(np.uint8), s, axis=0, elem_dtype="e4m3"), y)
    # bf16 inputs are read exactly
    xb = x.astype(ml_dtypes.bfloat16)
    db, sb = quantize_mx(xb, "e2m1", axis=0)
    db2, sb2 = quantize_mx(xb.astype(np.float32), "e2m1", axis=0)
    np.testing.assert_array_equal(sb, sb2)


def test_errors():
    x = np.zeros((2, 48), np.float32)
    with pytest.raises(ArgumentError, match="multiple"):
        quantize_mx(x, "e4m3")
    with pytest.raises(ArgumentError, match="elem_dtype"):
        quantize_mx(x, "fp16", block=16)
    with pytest.raises(ArgumentError):
        quantize_mx(x, "e4m3", block=0)
    with pytest.raises(ArgumentError):
        quantize_mx(x, "e4m3", block=16, axis=2)
    d, s = quantize_mx(x, "e1m2", block=16)
    with pytest.raises(ArgumentError, match="elem_dtype"):
        dequantize_mx(d, s, block=16)
    with pytest.raises(ArgumentError, match="scales"):
        dequantize_mx(d, s[:, :2], block=16, elem_dtype="e1m2")
    with pytest.raises(ArgumentError):
        dequantize_mx(d, s.astype(np.float32), block=16, elem_dtype="e1m2")
