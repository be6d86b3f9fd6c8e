"""PTO tiles (pto-mx-semantics 1.1-1.4): layout formulas, the 4x4 toy orders, static checks, TASSIGN, fp4 storage.

Expected offsets come from the reference's formula table (re-typed here element by element) and from its
worked 4x4 memory sequences.
"""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py.arch import ASCEND_950, ATLAS_A2, standalone_core
from catlass_py.errors import CapacityError, ConfigError
from catlass_py.layout import ColumnMajor, RowMajor, nN, nZ, zN, zZ
from catlass_py.tile.pto import (
    FRACTAL_MX,
    BLayout,
    SLayout,
    Tile,
    TileType,
    pto_layout,
    tile_acc,
    tile_left,
    tile_left_scale,
    tile_right,
    tile_right_scale,
)

# pto-mx-semantics 1.3: element value 4r + c of a 4x4 matrix with 2x2 boxes, in memory order
TOY = {
    "ND": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    "NZ": [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15],
    "ZZ": [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15],
    "ZN": [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15],
    "NN": [0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15],
}


def ref_offset(fmt, r, c, R, C, IR, IC):
    """pto-mx-semantics 1.2, typed from the table."""
    r1, r0 = divmod(r, IR)
    c1, c0 = divmod(c, IC)
    return {
        "ND": r * C + c,
        "DN": c * R + r,
        "NZ": c1 * R * IC + r1 * IR * IC + r0 * IC + c0,
        "ZN": r1 * C * IR + c1 * IR * IC + c0 * IR + r0,
        "ZZ": r1 * C * IR + c1 * IR * IC + r0 * IC + c0,
        "NN": c1 * R * IC + r1 * IR * IC + c0 * IR + r0,
    }[fmt]


@pytest.mark.parametrize("fmt", sorted(TOY))
def test_toy_4x4_memory_order(fmt):
    layout = pto_layout(fmt, 4, 4, 2, 2)
    buf = layout.pack(np.arange(16).reshape(4, 4))
    assert buf.tolist() == TOY[fmt]


def test_mmad_bitmode_toy_orders_match():
    # seed 002: A (ZZ) 0,1,4,5,2,3,6,7,...; B (ZN) 0,4,1,5,...; C (NZ) 0,1,4,5,8,9,12,13,...; A (NZ variant)
    a = pto_layout("ZZ", 4, 4, 2, 2).pack(np.arange(16).reshape(4, 4)).tolist()
    assert a == [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]
    assert pto_layout("ZN", 4, 4, 2, 2).pack(np.arange(16).reshape(4, 4)).tolist()[:8] == [0, 4, 1, 5, 2, 6, 3, 7]
    assert pto_layout("NZ", 4, 4, 2, 2).pack(np.arange(16).reshape(4, 4)).tolist()[:8] == [0, 1, 4, 5, 8, 9, 12, 13]


def test_catlass_classes_behind_pto_names():
    assert isinstance(pto_layout("ND", 4, 8), RowMajor)
    assert isinstance(pto_layout("DN", 8, 4), ColumnMajor)
    assert isinstance(pto_layout("NZ", 4, 4, 2, 2), zN)  # PTO/CANN "NZ" is CATLASS zN
    assert isinstance(pto_layout("ZN", 4, 4, 2, 2), nZ)  # PTO/CANN "ZN" is CATLASS nZ
    assert isinstance(pto_layout("ZZ", 4, 4, 2, 2), zZ)
    assert isinstance(pto_layout("NN", 4, 4, 2, 2), nN)


@settings(max_examples=60, deadline=None)
@given(fmt=st.sampled_from(["ND", "DN", "NZ", "ZN", "ZZ", "NN"]), ir=st.sampled_from([1, 2, 16]),
       ic=st.sampled_from([1, 2, 8, 16, 32]), rb=st.integers(1, 4), cb=st.integers(1, 4))
def test_layout_matches_formula_and_round_trips(fmt, ir, ic, rb, cb):
    R, C = rb * ir, cb * ic
    layout = pto_layout(fmt, R, C, ir, ic)
    rr, cc = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
    want = np.array([[ref_offset(fmt, r, c, R, C, ir, ic) for c in range(C)] for r in range(R)])
    np.testing.assert_array_equal(layout.offset(rr, cc), want)
    data = np.arange(R * C, dtype=np.int32).reshape(R, C)
    np.testing.assert_array_equal(layout.unpack(layout.pack(data)), data)


def test_real_nz_fp8_offset():
    # pto-mx-semantics 2.4: fp8 32 x 64 (C0 = 32): element (1, 33) lands at 1*32*32 + 1*32 + 1 = 1057
    t = Tile.of("NZ", TileType.Mat, "float8_e4m3fn", 32, 64)
    assert t.inner == (16, 32)
    assert int(t.layout.offset(1, 33)) == 1057


@pytest.mark.parametrize("dtype, fmt, want", [
    ("float16", "NZ", (16, 16)), ("float8_e4m3fn", "NZ", (16, 32)), ("float32", "ZN", (8, 16)),
    ("float4_e2m1fn", "NZ", (16, 64)), ("int8", "ZN", (32, 16)),
])
def test_inner_box_of_512_byte_fractal(dtype, fmt, want):
    assert Tile.of(fmt, TileType.Mat, dtype, 64, 128).inner == want


def test_inner_box_of_acc_and_mx_fractals():
    assert tile_acc("float32", 32, 32).inner == (16, 16)
    assert tile_left_scale(32, 4).inner == (16, 2) and tile_left_scale(32, 4).fmt == "ZZ"
    assert tile_right_scale(4, 32).inner == (2, 16) and tile_right_scale(4, 32).fmt == "NN"
    assert tile_left("float16", 32, 32, arch=ASCEND_950).fmt == "NZ"
    assert tile_left("float16", 32, 32, arch=ATLAS_A2).fmt == "ZZ"
    assert tile_right("int8", 64, 32).fmt == "ZN"


@pytest.mark.parametrize("kwargs, rule", [
    (dict(loc=TileType.Mat, dtype="float16", rows=20, cols=32, blayout=BLayout.ColMajor, slayout=SLayout.RowMajor),
     "Rows % InnerRows"),
    (dict(loc=TileType.Mat, dtype="float16", rows=32, cols=24, blayout=BLayout.ColMajor, slayout=SLayout.RowMajor),
     "Cols % InnerCols"),
    (dict(loc=TileType.Vec, dtype="float32", rows=4, cols=6), r"Cols \* sizeof\(DType\) % 32"),
    (dict(loc=TileType.Vec, dtype="float16", rows=8, cols=4, blayout=BLayout.ColMajor), r"Rows \* sizeof\(DType\) % 32"),
    (dict(loc=TileType.Mat, dtype="float16", rows=16, cols=16, fractal=256, blayout=BLayout.ColMajor,
          slayout=SLayout.RowMajor), "SFractalSize"),
    (dict(loc=TileType.Vec, dtype="float16", rows=0, cols=16), "positive"),
])
def test_static_checks(kwargs, rule):
    with pytest.raises(ConfigError, match=rule):
        Tile(**kwargs)


def test_static_check_exemptions():
    # Vec tiles, MX boxes and 1-row tiles need not fill whole box rows
    Tile(TileType.Vec, "float16", 17, 32, blayout=BLayout.ColMajor, slayout=SLayout.RowMajor)
    Tile(TileType.Mat, "float8_e8m0fnu", 8, 4, slayout=SLayout.RowMajor, fractal=FRACTAL_MX)
    Tile(TileType.Mat, "float16", 1, 32, blayout=BLayout.ColMajor, slayout=SLayout.RowMajor)


def test_valid_region_and_bounds():
    t = Tile.of("ND", TileType.Vec, "float16", 16, 32, valid=(3, 5))
    assert t.valid == (3, 5)
    with pytest.raises(ConfigError, match="ValidRow <= Rows"):
        t.set_valid(17, 5)


def test_assign_resolves_home_buffer():
    aic = standalone_core(ASCEND_950, "AIC")
    aiv = standalone_core(ASCEND_950, "AIV")
    homes = {TileType.Mat: "L1", TileType.Left: "L0A", TileType.Right: "L0B", TileType.Bias: "BT",
             TileType.Scaling: "FB"}
    for loc, home in homes.items():
        t = Tile.of("ND", loc, "float32", 1, 64).assign(aic, 0)
        assert t.tensor.position == home
    assert tile_acc("float32", 16, 16).assign(aic, 0).tensor.position == "L0C"
    sl = tile_left_scale(16, 2).assign(aic, 0)
    assert sl.tensor.position == "L0A_MX" and sl.tensor.arena.size == ASCEND_950.l0a_size // 16
    assert tile_right_scale(2, 16).assign(aic, 0).tensor.position == "L0B_MX"
    assert Tile.of("ND", TileType.Vec, "float16", 16, 16).assign(aiv, 64).tensor.position == "UB"
    with pytest.raises(ConfigError, match="has no UB"):
        Tile.of("ND", TileType.Vec, "float16", 16, 16).assign(aic, 0)
    with pytest.raises(ConfigError, match="only on Ascend 950"):
        tile_left_scale(16, 2).assign(standalone_core(ATLAS_A2, "AIC"), 0)
    with pytest.raises(ConfigError, match="lives in L0A"):
        tile_left("float16", 16, 16).assign(aic.resource.l1_buf.tensor("float16", 0))
    with pytest.raises(CapacityError):
        Tile.of("ND", TileType.Bias, "float32", 1, 2048).assign(aic, 0)  # 8 KiB > 4 KiB bias table


def test_read_write_through_layout_and_memory_bytes():
    aic = standalone_core(ASCEND_950, "AIC")
    t = Tile.of("NZ", TileType.Mat, "float16", 32, 32).assign(aic, 0)
    data = (np.arange(32 * 32) % 1000).astype(np.float16).reshape(32, 32)
    t.write(data)
    np.testing.assert_array_equal(t.read(), data)
    flat = aic.resource.l1_buf.tensor("float16", 0, 32 * 32).view()
    assert flat[ref_offset("NZ", 5, 20, 32, 32, 16, 16)] == data[5, 20]


def test_fp4_tiles_pack_two_codes_per_byte():
    aic = standalone_core(ASCEND_950, "AIC")
    t = Tile.of("NZ", TileType.Mat, "float4_e2m1fn", 16, 64).assign(aic, 0)
    assert t.nbytes == 16 * 64 // 2
    codes = (np.arange(16 * 64) % 16).astype(np.uint8).reshape(16, 64)
    t.write(codes.view(ml_dtypes.float4_e2m1fn))
    back = t.read()
    assert back.dtype == np.dtype(ml_dtypes.float4_e2m1fn)
    np.testing.assert_array_equal(back.view(np.uint8), codes)
    raw = aic.resource.l1_buf.raw[: t.nbytes]
    # one 16 x 64 box: row-major inside, element (0, 2i) low nibble, (0, 2i+1) high nibble of byte i
    assert raw[0] == codes[0, 0] | (codes[0, 1] << 4)
    assert raw[33] == codes[1, 2] | (codes[1, 3] << 4)
    e1m2 = Tile.of("ND", TileType.Mat, "float4_e1m2", 2, 64).assign(aic, 1024)
    e1m2.write(codes[:2])
    np.testing.assert_array_equal(e1m2.read(), codes[:2])
