"""Worked examples of the references (catlass-semantics 3, pto-mx-semantics 1.3) and the value API."""

import copy
import io
import pickle

import numpy as np
import pytest
from rich.console import Console
from rich.table import Table

from catlass_py.layout import (
    L0C,
    ColumnMajor,
    PaddingColumnMajor,
    PaddingRowMajor,
    RowMajor,
    VectorLayout,
    describe,
    layout_class,
    layout_to_index_map,
    make_layout,
    nN,
    nZ,
    show,
    zN,
    zZ,
)
from catlass_py.layout.algebra import inverse_map, is_injective

# --- catlass-semantics.md 3.2 worked examples -------------------------------------------------------


def test_zn_int8_128x512():
    lay = zN.make_layout("int8", 128, 512)
    assert lay.shape == (16, 8, 32, 16)
    assert lay.stride == (32, 512, 1, 4096)
    assert (lay.rows, lay.cols) == (128, 512)
    assert lay.capacity == 4096 * 16 == 128 * 512
    r = np.arange(128)[:, None]
    c = np.arange(512)[None, :]
    expected = (r // 16) * 512 + (c // 32) * 4096 + (r % 16) * 32 + c % 32
    np.testing.assert_array_equal(layout_to_index_map(lay), expected)
    assert repr(lay) == "zN(rows=128, cols=512, shape=(16, 8, 32, 16), stride=(32, 512, 1, 4096))"


def test_zn_fp16_128x256():
    lay = zN.make_layout("fp16", 128, 256)
    assert lay.shape == (16, 8, 16, 16)
    assert lay.stride == (16, 256, 1, 2048)


def test_nz_int8_l0b_128x256():
    lay = nZ.make_layout(np.int8, 128, 256)
    assert lay.shape == (32, 4, 16, 16)
    assert lay.stride == (1, 8192, 32, 512)
    assert lay.capacity == 8192 * 4


@pytest.mark.parametrize("dtype", ["int8", "fp16", "bf16", "fp32", "int4"])
@pytest.mark.parametrize("rows,cols", [(1, 1), (17, 33), (128, 256), (100, 7)])
def test_make_layout_table(dtype, rows, cols):
    """Table 3.2 of catlass-semantics for every fractal class."""
    from catlass_py.numerics.dtypes import get_dtype

    c0 = get_dtype(dtype).c0
    f = 16 * c0

    def ru(a, b):
        return -(-a // b) * b

    rr, cr = ru(rows, 16), ru(cols, c0)
    z = zN.make_layout(dtype, rows, cols)
    assert z.shape == (16, rr // 16, c0, cr // c0) and z.stride == (c0, f, 1, rr * c0)
    zz = zZ.make_layout(dtype, rows, cols)
    assert zz.shape == (16, rr // 16, c0, cr // c0) and zz.stride == (c0, cr * 16, 1, f)
    rr, cr = ru(rows, c0), ru(cols, 16)
    n = nZ.make_layout(dtype, rows, cols)
    assert n.shape == (c0, rr // c0, 16, cr // 16) and n.stride == (1, cr * c0, c0, f)
    nn = nN.make_layout(dtype, rows, cols)
    assert nn.shape == (c0, rr // c0, 16, cr // 16) and nn.stride == (1, f, c0, rr * 16)


def test_l0c():
    lay = L0C.make_layout(128, 256)
    assert lay.shape == (16, 8, 16, 16)
    assert lay.stride == (16, 256, 1, 2048)
    odd = L0C.make_layout(100, 60)
    assert odd.shape == (16, 7, 16, 4)
    assert odd.stride == (16, 256, 1, 112 * 16)
    assert odd.capacity == 112 * 64
    z = zN.make_layout_in_l0c(100, 60)
    assert (z.shape, z.stride) == (odd.shape, odd.stride)
    assert z != odd  # different CATLASS classes
    assert L0C.make_layout(100, 60, "int32") == odd
    assert make_layout("L0C", "fp32", 100, 60) == odd


def test_plain_layouts():
    r = RowMajor(4, 6)
    assert r.shape == (4, 6) and r.stride == (6, 1) and r.capacity == 24 and r.ldm == 6
    r = RowMajor(4, 6, 10)
    assert r.offset(2, 3) == 23 and r.capacity == 40
    c = ColumnMajor(4, 6)
    assert c.stride == (1, 4) and c.offset(2, 3) == 14 and c.capacity == 24
    assert ColumnMajor(4, 6, 8).capacity == 48
    assert RowMajor.make_layout_in_ub("fp16", 3, 20) == RowMajor(3, 20, 32)
    assert RowMajor.make_layout_in_ub("int8", 3, 20) == RowMajor(3, 20, 32)
    assert RowMajor.make_layout_in_ub("fp32", 3, 20) == RowMajor(3, 20, 24)
    assert RowMajor.make_layout("fp16", 3, 5) == RowMajor(3, 5)
    assert RowMajor.make_layout("fp4_e2m1", 3, 5) == RowMajor(3, 5, 6)
    assert ColumnMajor.make_layout("fp4_e2m1", 5, 3) == ColumnMajor(5, 3, 6)
    # a single row may be longer than ldm (CATLASS views contiguous runs as GetTileLayout(1, n))
    assert RowMajor(64, 16).get_tile_layout(1, 64 * 16).cols == 1024


def test_padding_layouts():
    p = PaddingRowMajor(5, 7, 2, 4)
    assert p.shape == (2, 3, 4, 2)
    assert p.stride == (4, 2 * 8, 1, 8)
    assert p.capacity == 6 * 8
    q = PaddingColumnMajor(5, 7, 2, 4)
    assert q.shape == (2, 3, 4, 2)
    assert q.stride == (1, 8, 2, 6 * 4)
    assert q.capacity == 6 * 8
    # the blocks of PaddingRowMajor are zZ with arbitrary blocks, PaddingColumnMajor are nN
    np.testing.assert_array_equal(layout_to_index_map(p), layout_to_index_map(zZ.compact(5, 7, 2, 4)))
    np.testing.assert_array_equal(layout_to_index_map(q), layout_to_index_map(nN.compact(5, 7, 2, 4)))


# --- pto-mx-semantics.md 1.3: 4x4 toy, 2x2 fractals, value 4r + c ---------------------------------

TOY = {
    # PTO name: (CATLASS layout, memory order)
    "ND": (RowMajor(4, 4), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]),
    "NZ": (zN.compact(4, 4, 2, 2), [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15]),
    "ZZ": (zZ.compact(4, 4, 2, 2), [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]),
    "ZN": (nZ.compact(4, 4, 2, 2), [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15]),
    "NN": (nN.compact(4, 4, 2, 2), [0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15]),
}


@pytest.mark.parametrize("pto_name", sorted(TOY))
def test_toy_memory_order(pto_name):
    lay, order = TOY[pto_name]
    x = (4 * np.arange(4)[:, None] + np.arange(4)[None, :]).astype(np.int32)
    np.testing.assert_array_equal(lay.pack(x), np.array(order, np.int32))
    np.testing.assert_array_equal(lay.unpack(np.array(order, np.int32)), x)


def test_toy_pto_formulas():
    """The PTO offsets of section 1.2 (R = C = 4, IR = IC = 2) equal the CATLASS strides."""
    R = C = 4
    IR = IC = 2
    r = np.arange(4)[:, None]
    c = np.arange(4)[None, :]
    r1, r0, c1, c0 = r // IR, r % IR, c // IC, c % IC
    pto = {
        "NZ": c1 * R * IC + r1 * IR * IC + r0 * IC + c0,
        "ZN": r1 * C * IR + c1 * IR * IC + c0 * IR + r0,
        "ZZ": r1 * C * IR + c1 * IR * IC + r0 * IC + c0,
        "NN": c1 * R * IC + r1 * IR * IC + c0 * IR + r0,
    }
    for name, expected in pto.items():
        np.testing.assert_array_equal(layout_to_index_map(TOY[name][0]), expected)


# --- values: immutability, equality, repr, pickling ------------------------------------------------

ALL = [
    RowMajor(3, 5, 8),
    ColumnMajor(3, 5, 4),
    zN.make_layout("int8", 40, 70),
    nZ.make_layout("fp16", 40, 70),
    zZ.make_layout("fp32", 9, 9),
    nN.make_layout("bf16", 9, 9),
    L0C.make_layout(20, 30),
    PaddingRowMajor(5, 7, 2, 4),
    PaddingColumnMajor(5, 7, 2, 4).get_tile_layout(3, 3),
    VectorLayout(10, 3),
]


@pytest.mark.parametrize("lay", ALL, ids=lambda x: type(x).__name__)
def test_value_semantics(lay):
    assert eval(repr(lay)) == lay  # noqa: S307 - repr round trip
    assert hash(eval(repr(lay))) == hash(lay)  # noqa: S307
    assert pickle.loads(pickle.dumps(lay)) == lay
    assert copy.deepcopy(lay) is lay
    with pytest.raises(AttributeError):
        lay.shape = (1, 1)
    with pytest.raises(AttributeError):
        lay.new_field = 1
    assert lay != object()
    assert len({lay, eval(repr(lay))}) == 1  # noqa: S307


def test_equality_distinguishes_classes_and_fields():
    assert RowMajor(4, 4) == RowMajor(4, 4, 4)
    assert RowMajor(4, 4) != RowMajor(4, 4, 8)
    assert RowMajor(4, 4) != ColumnMajor(4, 4)
    assert zN.make_layout("fp16", 32, 32) != L0C.make_layout(32, 32)
    assert zN.make_layout("fp16", 32, 32) == zN(32, 32, (16, 2, 16, 2), (16, 256, 1, 512))


def test_tile_layout_keeps_strides():
    lay = zN.make_layout("int8", 128, 512)
    t = lay.get_tile_layout(40, 70)
    assert t.stride == lay.stride
    assert t.shape == (16, 3, 32, 3)
    assert (t.rows, t.cols) == (40, 70)
    p = PaddingRowMajor(10, 10, 4, 4).get_tile_layout(3, 3)
    assert p.stride == PaddingRowMajor(10, 10, 4, 4).stride
    assert VectorLayout(10, 2).get_tile_layout(4) == VectorLayout(4, 2)
    assert zZ.make_layout("int8", 64, 64).get_tile_layout(16, 32).shape == (16, 1, 32, 1)


def test_offset_vectorised():
    lay = nZ.make_layout("int8", 64, 64)
    r = np.arange(64)[:, None]
    c = np.arange(64)[None, :]
    m = lay.offset(r, c)
    assert m.dtype == np.int64 and m.shape == (64, 64)
    assert m[37, 21] == lay.offset(37, 21)
    assert isinstance(lay.offset(np.int32(5), 3), int)
    assert lay.offset(100, 100) > 0  # padding and beyond have addresses too
    v = VectorLayout(5, 3)
    np.testing.assert_array_equal(v.offset(np.arange(5)), np.arange(5) * 3)


def test_make_layout_convenience():
    assert make_layout("zN", "int8", 128, 512) == zN.make_layout("int8", 128, 512)
    assert make_layout(nZ, "fp16", 16, 16) == nZ.make_layout("fp16", 16, 16)
    assert make_layout("RowMajor", "fp16", 3, 4) == RowMajor(3, 4)
    assert make_layout("VectorLayout", "fp32", 7) == VectorLayout(7)
    assert layout_class("nN") is nN


def test_describe_and_show():
    assert describe(zN.make_layout("int8", 128, 512)).startswith(
        "zN: 16x32 fractals, row-major inside, fractals column-major (CANN: NZ)"
    )
    assert "(CANN: ZN)" in describe(nZ.make_layout("int8", 32, 32))
    assert "accumulator" in describe(L0C.make_layout(16, 16))
    assert "ND" in describe(RowMajor(2, 2)) and "DN" in describe(ColumnMajor(2, 2))
    assert "blocks" in describe(PaddingRowMajor(4, 4, 2, 2))
    assert "stride 2" in describe(VectorLayout(4, 2))
    console = Console(file=io.StringIO(), width=200, color_system=None)
    table = show(zN.compact(4, 8, 2, 4), console=console)
    assert isinstance(table, Table)
    text = console.file.getvalue()
    assert "16" in text and "31" in text
    # big layouts are clipped by default, explicit regions are capped
    show(zN.make_layout("int8", 128, 512), console=console)
    show(VectorLayout(5, 2), console=console)
    show(RowMajor(3, 3), 3, 3, console=console, colour=False)


def test_algebra_helpers():
    lay = zN.compact(4, 4, 2, 2)
    inv = inverse_map(lay)
    assert inv.shape == (16, 2)
    assert tuple(inv[2]) == (1, 0)  # zN: the first panel holds column pair 0-1 of every row
    assert tuple(inv[8]) == (0, 2)
    assert is_injective(lay)
    gaps = inverse_map(zN.make_layout("fp16", 3, 5))  # 16x16 fractal, 3x5 logical
    assert (gaps[:, 0] >= 0).sum() == 15 and gaps.shape == (256, 2)
    assert not is_injective(RowMajor(1, 8, 2), 2, 8)  # rows overlap when ldm < cols
