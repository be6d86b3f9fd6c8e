"""Operand rules of the Ascend 950 tile instructions (TQUANT, TDEQUANT, TEXTRACT, TINSERT, TFILLPAD, ...): each
bad operand raises ConfigError / ArgumentError naming the rule, before anything is written."""

from __future__ import annotations

import numpy as np
import pytest
from pto_helpers import aic, aiv

from catlass_py.arch import ATLAS_A2
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.tile.pto import (
    FRACTAL_MX,
    PadValue,
    QuantType,
    TFillPadMode,
    Tile,
    TileType,
    mx_gm_tensor,
    tdequant,
    textract,
    tfillpad,
    tget_scale_addr,
    tile_acc,
    tile_left,
    tinsert,
    tquant,
    tquant_int8,
)

V, M = TileType.Vec, TileType.Mat


def vec(ctx, dtype, rows, cols, at, fmt="ND", **kw):
    return Tile.of(fmt, V, dtype, rows, cols, **kw).assign(ctx, at)


def _tquant_tiles(core, src_dt="float32", dst_dt="float8_e4m3fn", cols=64, exp_dt="uint8"):
    src = vec(core, src_dt, 32, cols, 0)
    dst = vec(core, dst_dt, 32, -(-cols // 32) * 32, 0x4000)
    exp = vec(core, exp_dt, 1, 64, 0x8000)
    mx = vec(core, "float32", 1, 64, 0x9000)
    sc = vec(core, "float32", 1, 64, 0xA000)
    return dst, src, exp, mx, sc


@pytest.mark.parametrize("kw, match", [
    (dict(src_dt="int32"), "MXFP8 input has to be float32, bfloat16 or float16"),
    (dict(dst_dt="float16"), "the MXFP8 output is float8_e4m3fn"),
    (dict(cols=40), "N mod 32 = 0 is required"),
    (dict(exp_dt="float16"), "the exponent tile holds E8M0 bytes"),
])
def test_tquant_rules(kw, match):
    dst, src, exp, mx, sc = _tquant_tiles(aiv(), **kw)
    before = dst.tensor.view().view(np.uint8).copy()
    with pytest.raises(ConfigError, match=match):
        tquant(dst, src, exp, mx, sc)
    np.testing.assert_array_equal(dst.tensor.view().view(np.uint8), before)


def test_tquant_dn_and_interleave_rules():
    core = aiv()
    dst, src, exp, mx, sc = _tquant_tiles(core)
    with pytest.raises(ConfigError, match="exponent interleave is only supported for DN"):
        tquant(dst, src, exp, mx, sc, interleave=True)
    with pytest.raises(ConfigError, match="grp_axis must be 0"):
        tquant(dst, src, exp, mx, sc, grp_axis=2)
    src20 = vec(core, "float32", 32, 64, 0, valid=(20, 64))
    with pytest.raises(ConfigError, match="M mod 32 = 0 is required for DN"):
        tquant(dst, src20, exp, mx, sc, grp_axis=0)
    a2 = aiv(ATLAS_A2)
    with pytest.raises(ConfigError, match="Ascend 950 only"):
        tquant(*_tquant_tiles(a2))


def test_tquant_int8_and_tdequant_rules():
    core = aiv()
    src = vec(core, "float32", 16, 64, 0)
    dst = vec(core, "int8", 16, 64, 0x4000)
    udst = vec(core, "uint8", 16, 64, 0x6000)
    scale = vec(core, "float32", 16, 8, 0x8000)
    with pytest.raises(ConfigError, match="INT8_ASYM>: Out data type has to be uint8"):
        tquant_int8(dst, src, scale, None, quant_type=QuantType.INT8_ASYM)
    with pytest.raises(ConfigError, match="the asymmetric form needs an offset tile"):
        tquant_int8(udst, src, scale, None, quant_type=QuantType.INT8_ASYM)
    with pytest.raises(ConfigError, match="dst must be float32 and src int8 or int16"):
        tdequant(vec(core, "float16", 16, 64, 0xA000), dst, scale, scale)


def test_textract_rules():
    cube = aic()
    mat = Tile.of("NZ", M, "float16", 32, 64).assign(cube, 0)
    left = tile_left("float16", 16, 32).assign(cube, 0)
    with pytest.raises(ConfigError, match="indexRow"):
        textract(left, mat, -1, 0)
    with pytest.raises(ConfigError, match="must sit on the source's 16x16 box grid"):
        textract(left, mat, 3, 0)
    with pytest.raises(ConfigError, match="not a TEXTRACT pair"):
        textract(mat, left)
    with pytest.raises(ConfigError, match="relu, AccToVecMode and quant forms exist only for Acc sources"):
        textract(left, mat, 0, 0, pre_quant_scalar=1)


def test_tinsert_rules():
    v = aiv()
    src = vec(v, "float32", 16, 32, 0x0, fmt="NZ")
    mat = Tile.of("NZ", M, "float16", 16, 32).assign(v, 0)
    with pytest.raises(ConfigError, match="Source and destination data types must match"):
        tinsert(mat, src)
    mat32 = Tile.of("NZ", M, "float32", 16, 32).assign(v, 0)
    with pytest.raises(ConfigError, match="indexRow \\+ validRow exceeds destination rows"):
        tinsert(mat32, src, 8, 0)
    with pytest.raises(ConfigError, match="split must be 1, 2"):
        tinsert(mat32, src, split=3)
    nd = vec(v, "float32", 16, 32, 0x4000)
    with pytest.raises(ConfigError, match="the split modes need an NZ source"):
        tinsert(mat32, nd, split=2)
    cube = aic()
    acc = tile_acc("float32", 16, 32).assign(cube, 0)
    with pytest.raises(ConfigError, match="only the dual Acc -> Vec modes take two destination tiles"):
        tinsert((mat32, mat32), src)
    assert acc.loc is TileType.Acc


def test_tfillpad_and_tget_scale_addr_rules():
    v = aiv()
    src = vec(v, "float32", 16, 32, 0, valid=(16, 20))
    with pytest.raises(ConfigError, match="dst vecTile pad value must not be Null"):
        tfillpad(vec(v, "float32", 16, 32, 0x4000), src)
    with pytest.raises(ConfigError, match="src and dst data type is different"):
        tfillpad(vec(v, "float16", 16, 32, 0x4000, pad=PadValue.Max), src)
    with pytest.raises(ConfigError, match="Rows/Cols must be the same"):
        tfillpad(vec(v, "float32", 8, 32, 0x8000, pad=PadValue.Max), src, TFillPadMode.Normal)
    cube = aic()
    s1 = Tile.of("ZZ", M, "float8_e8m0fnu", 32, 2, fractal=FRACTAL_MX).assign(cube, 0)
    with pytest.raises(ConfigError, match="a Mat tile's scales are a ScaleLeft / ScaleRight tile"):
        tget_scale_addr(s1, s1)


@pytest.mark.parametrize("args, exc, match", [
    (("MX_A_ND", (2, 1, 16, 2, 2), (1, 1, 4, 2, 1)), ConfigError, "3-D"),
    (("MX_A_ZZ", (1, 1, 2, 8, 2), (64, 64, 32, 2, 1)), ConfigError, "16 x 2"),
    (("MX_B_ND", (1, 1, 2, 16, 2), (1, 1, 33, 2, 1)), ConfigError, "whole scale pairs"),
    (("MX_A_ND", (1, 1, 16, 2, 3), (1, 1, 4, 2, 1)), ConfigError, "dense pair"),
    (("MX_X", (1, 1, 1, 1, 2), (1, 1, 1, 2, 1)), ArgumentError, "kind"),
    (("MX_A_ND", (1, 1, 16), (1, 1, 4)), ArgumentError, "5 positive integers"),
])
def test_mx_gm_tensor_rules(args, exc, match):
    with pytest.raises(exc, match=match):
        mx_gm_tensor(*args)
