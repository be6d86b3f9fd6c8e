"""TLOAD / TSTORE and the MX scale GM formats of PTO (pto-mx-semantics 4.5): offsets against the documented
index orders, loads into the cube's scale boxes, zero padding of boxed destinations."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pto_helpers import aic, aiv

from catlass_py.arch import GlobalBuffer
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.layout import RowMajor
from catlass_py.tile.pto import FRACTAL_MX, MX_FORMATS, ReluPreMode, Tile, TileType, mx_gm_layout, tload, tstore


def doc_offset(kind, r, c, rows_total, cols_total):
    """The GM index orders of pto-mx-semantics 4.5 (row r, column c of SA [M, KG] or SB [KG, N])."""
    if kind == "MX_A_ND":  # [M][KG]
        return r * cols_total + c
    if kind == "MX_A_DN":  # [KG/2][M][2]
        return (c // 2) * 2 * rows_total + 2 * r + c % 2
    if kind == "MX_A_ZZ":  # [M/16][KG/2][16][2]
        return ((r // 16) * (cols_total // 2) + c // 2) * 32 + (r % 16) * 2 + c % 2
    if kind == "MX_B_ND":  # [KG/2][N][2]
        return (r // 2) * 2 * cols_total + 2 * c + r % 2
    if kind == "MX_B_DN":  # [N][KG]
        return c * rows_total + r
    return ((c // 16) * (rows_total // 2) + r // 2) * 32 + (c % 16) * 2 + r % 2  # MX_B_NN [N/16][KG/2][16][2]


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(MX_FORMATS), a=st.integers(1, 3), g=st.integers(1, 3))
def test_mx_gm_layouts_follow_the_index_orders(kind, a, g):
    if kind.startswith("MX_A"):
        rows, cols = 16 * a, 2 * g  # M, KG
        ld = {"MX_A_ND": cols, "MX_A_DN": rows, "MX_A_ZZ": cols}[kind]
    else:
        rows, cols = 2 * g, 16 * a  # KG, N
        ld = {"MX_B_ND": cols, "MX_B_DN": rows, "MX_B_NN": rows}[kind]
    layout = mx_gm_layout(kind, rows, cols, ld=ld)
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    np.testing.assert_array_equal(layout.offset(r, c), doc_offset(kind, r, c, rows, cols))
    data = np.arange(rows * cols, dtype=np.int32).reshape(rows, cols)
    np.testing.assert_array_equal(layout.unpack(layout.pack(data)), data)


@pytest.mark.parametrize("kind", MX_FORMATS)
def test_tload_scales_into_cube_boxes(kind):
    core = aic()
    rows, cols = (48, 4) if kind.startswith("MX_A") else (4, 48)
    e = (np.arange(rows * cols).reshape(rows, cols) % 200 + 20).astype(np.uint8)
    ld = {"MX_A_ND": cols, "MX_A_DN": rows, "MX_A_ZZ": cols, "MX_B_ND": cols, "MX_B_DN": rows, "MX_B_NN": rows}[kind]
    layout = mx_gm_layout(kind, rows, cols, ld=ld)
    gm = GlobalBuffer.from_array(layout.pack(e), "scales", read_only=True).tensor("float8_e8m0fnu")
    fmt = "ZZ" if kind.startswith("MX_A") else "NN"
    tile = Tile.of(fmt, TileType.Mat, "float8_e8m0fnu", rows, cols, fractal=FRACTAL_MX).assign(core, 0)
    tload(tile, gm, layout)
    np.testing.assert_array_equal(tile.read().view(np.uint8), e)
    raw = tile.tensor.view().view(np.uint8)
    want = doc_offset("MX_A_ZZ" if fmt == "ZZ" else "MX_B_NN", *np.meshgrid(np.arange(rows), np.arange(cols),
                                                                            indexing="ij"), rows, cols)
    np.testing.assert_array_equal(raw[want], e)  # the cube's [16, 2] / [2, 16] box order


def test_tload_nd_to_nz_zero_pads_the_box_grid_and_tstore_from_ub():
    core = aic()
    host = (np.arange(20 * 100) % 120).astype(np.float16).reshape(20, 100)
    gm = GlobalBuffer.from_array(host, "a", read_only=True).tensor("float16")
    tile = Tile.of("NZ", TileType.Mat, "float16", 32, 48, valid=(20, 40)).assign(core, 0)
    tile.tensor.view()[:] = np.float16(7)
    tload(tile, gm[3], RowMajor(20, 40, 100))  # a 20 x 40 window starting at column 3
    np.testing.assert_array_equal(tile.read(), host[:, 3:43])
    full = tile.read(32, 48)
    assert (full[20:] == 0).all() and (full[:, 40:] == 0).all()  # rows to 32, columns to 48 (16-wide boxes)
    v = aiv()
    vt = Tile.of("ND", TileType.Vec, "float16", 8, 32, valid=(5, 30)).assign(v, 0)
    vt.write(np.arange(150, dtype=np.float16).reshape(5, 30))
    out = np.zeros((5, 64), np.float16)
    tstore(GlobalBuffer.from_array(out, "o").tensor("float16"), RowMajor(5, 30, 64), vt)
    np.testing.assert_array_equal(out[:, :30], np.arange(150, dtype=np.float16).reshape(5, 30))
    assert (out[:, 30:] == 0).all()


def test_load_store_rules():
    core = aic()
    gm = GlobalBuffer.from_array(np.zeros(1024, np.float16), "a", read_only=True).tensor("float16")
    with pytest.raises(ConfigError, match="GM dtype float16 differs"):
        tload(Tile.of("NZ", TileType.Mat, "bfloat16", 16, 16).assign(core, 0), gm, RowMajor(16, 16))
    with pytest.raises(ConfigError, match="Vec, Mat, Bias or Scaling"):
        tload(Tile.of("NZ", TileType.Left, "float16", 16, 16).assign(core, 0), gm, RowMajor(16, 16))
    with pytest.raises(ArgumentError, match="does not cover"):
        tload(Tile.of("NZ", TileType.Mat, "float16", 16, 16).assign(core, 0), gm, RowMajor(8, 16))
    with pytest.raises(ArgumentError, match="kind"):
        mx_gm_layout("MX_C_ND", 4, 4)
    e8 = GlobalBuffer.from_array(np.zeros(64, np.uint8), "s").tensor("float8_e8m0fnu")
    v = Tile.of("ND", TileType.Vec, "float8_e8m0fnu", 1, 32).assign(aiv(), 0)
    with pytest.raises(ConfigError, match="relu and quant forms apply to Acc sources only"):
        tstore(e8, RowMajor(1, 32), v, relu=ReluPreMode.NormalRelu)
