"""TLA's Ascend makers and the bridge from the 1.x layouts: same offsets everywhere."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tla_helpers import SETTINGS

from catlass_py.arch import ASCEND_950, ATLAS_A2
from catlass_py.errors import ArgumentError
from catlass_py.layout import (
    L0C,
    ColumnMajor,
    PaddingColumnMajor,
    PaddingRowMajor,
    RowMajor,
    VectorLayout,
    nN,
    nZ,
    zN,
    zZ,
)
from catlass_py.tla import (
    Layout,
    get_tile,
    get_tile_layout,
    make_layout_from_tag,
    make_layout_l0a,
    make_layout_l0b,
    make_layout_l0c,
    make_layout_tag,
    make_tensor,
)

DTYPES = ["int8", "float16", "bfloat16", "float32", "float4_e2m1fn"]
extent = st.integers(0, 70)
small = st.integers(1, 5)


@pytest.mark.parametrize(
    "dtype, tag, rows, cols, expected",
    [
        # include/tla/layout.hpp MakeLayout<Element, LayoutTag>(rows, cols), evaluated by hand
        ("float16", "zN", 40, 50, Layout(((16, 3), (16, 4)), ((16, 256), (1, 768)), (40, 50))),
        ("int8", "nZ", 40, 50, Layout(((32, 2), (16, 4)), ((1, 2048), (32, 512)), (40, 50))),
        ("float32", "zZ", 20, 12, Layout(((16, 2), (8, 2)), ((8, 256), (1, 128)), (20, 12))),
        ("float16", "L0C", 20, 12, Layout(((16, 2), (16, 1)), ((16, 256), (1, 512)), (20, 12))),
        ("float16", "RowMajor", 3, 5, Layout((3, 5), (5, 1))),
        ("float16", "ColumnMajor", 3, 5, Layout((3, 5), (1, 3))),
        ("float4_e2m1fn", "RowMajor", 3, 5, Layout((3, 5), (6, 1))),
        ("float4_e2m1fn", "ColumnMajor", 3, 5, Layout((3, 5), (1, 4))),
        ("float16", "VectorLayout", 1, 7, Layout((7,), (1,))),
    ],
)
def test_known_makers(dtype, tag, rows, cols, expected):
    assert make_layout_tag(dtype, tag, rows, cols) == expected


@SETTINGS
@given(st.sampled_from(DTYPES), st.sampled_from([RowMajor, ColumnMajor, zN, zZ, nZ]), extent, extent)
def test_tag_makers_equal_the_1x_make_layout(dtype, cls, rows, cols):
    old = cls.make_layout(dtype, rows, cols)
    new = make_layout_tag(dtype, cls, rows, cols)
    assert new == make_layout_tag(dtype, cls.__name__, rows, cols)
    assert new == make_layout_from_tag(old)


@SETTINGS
@given(extent, extent)
def test_l0c_and_vector_makers_equal_the_1x_layouts(rows, cols):
    assert make_layout_l0c(rows, cols) == make_layout_from_tag(L0C.make_layout(rows, cols))
    assert make_layout_tag("float16", L0C, rows, cols) == make_layout_l0c(rows, cols)
    assert make_layout_tag("float16", VectorLayout, rows, cols) == make_layout_from_tag(VectorLayout(cols))


@pytest.mark.parametrize("dtype", DTYPES)
def test_l0_selectors(dtype):
    assert make_layout_l0a(dtype, 32, 64) == make_layout_tag(dtype, "zZ", 32, 64)
    assert make_layout_l0a(dtype, 32, 64, ATLAS_A2) == make_layout_tag(dtype, "zZ", 32, 64)
    assert make_layout_l0a(dtype, 32, 64, "Ascend950") == make_layout_tag(dtype, "zN", 32, 64)
    assert make_layout_l0a(dtype, 32, 64, ASCEND_950) == make_layout_tag(dtype, "zN", 32, 64)
    assert make_layout_l0b(dtype, 64, 48) == make_layout_tag(dtype, "nZ", 64, 48)


@st.composite
def layouts_1x(draw):
    """Every 1.x layout kind, as CATLASS builds them, sometimes a GetTileLayout tile of one."""
    rows, cols = draw(extent), draw(extent)
    kind = draw(st.sampled_from(["row", "col", "make", "compact", "l0c", "prm", "pcm", "vec"]))
    if kind == "vec":
        return VectorLayout(cols, draw(st.integers(1, 4)))
    if kind == "row":
        lay = RowMajor(rows, cols, cols + draw(st.integers(0, 5)))
    elif kind == "col":
        lay = ColumnMajor(rows, cols, rows + draw(st.integers(0, 5)))
    elif kind == "make":
        lay = draw(st.sampled_from([zN, nZ, zZ, nN])).make_layout(draw(st.sampled_from(DTYPES[:4])), rows, cols)
    elif kind == "compact":
        lay = draw(st.sampled_from([zN, nZ, zZ, nN])).compact(rows, cols, draw(small), draw(small))
    elif kind == "l0c":
        lay = L0C.make_layout(rows, cols)
    else:
        lay = (PaddingRowMajor if kind == "prm" else PaddingColumnMajor)(rows, cols, draw(small), draw(small))
    if draw(st.booleans()):
        lay = lay.get_tile_layout(draw(st.integers(0, lay.rows)), draw(st.integers(0, lay.cols)))
    return lay


def _grid(lay):
    rows, cols = lay.padded_shape
    return np.arange(rows + 3)[:, None], np.arange(cols + 3)[None, :]


@SETTINGS
@given(layouts_1x())
def test_1x_layouts_and_their_tla_layouts_agree_on_every_offset(lay):
    t = make_layout_from_tag(lay)
    if isinstance(lay, VectorLayout):
        i = np.arange(lay.size + 5)
        np.testing.assert_array_equal(np.asarray(t((i,))), lay.offset(i))
        assert t.origin_shape == (lay.size,)
        return
    assert t.origin_shape == (lay.rows, lay.cols)
    r, c = _grid(lay)  # the padded grid and a margin past it: the unbounded last modes agree too
    want = np.broadcast_to(lay.offset(r, c), (r.shape[0], c.shape[1]))
    got = np.broadcast_to(np.asarray(t((r, c))), want.shape)
    np.testing.assert_array_equal(got, want)


@SETTINGS
@given(layouts_1x().filter(lambda x: not isinstance(x, VectorLayout)), st.data())
def test_tla_tiles_agree_with_1x_tiles(lay, data):
    """A TLA tile (GetTile at any element coordinate) addresses the 1.x layout's offsets; at a
    fractal-aligned origin, also the 1.x GetTileLayout tile shifted by the origin's offset."""
    t = make_layout_from_tag(lay)
    buf = np.arange(max(lay.capacity, 1) + 8 * 1024, dtype=np.int64)
    tensor = make_tensor(buf, t)
    r0 = data.draw(st.integers(0, lay.rows), label="r0")
    c0 = data.draw(st.integers(0, lay.cols), label="c0")
    h = data.draw(st.integers(0, lay.rows - r0), label="h")
    w = data.draw(st.integers(0, lay.cols - c0), label="w")
    tile = get_tile(tensor, (r0, c0), (h, w))
    assert tile.origin_shape == (h, w)
    rr, cc = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    np.testing.assert_array_equal(tile.read(), lay.offset(r0 + rr, c0 + cc).reshape(h, w))
    s0, s2 = getattr(lay, "fractal_shape", (1, 1))
    a0 = s0 * data.draw(st.integers(0, (lay.rows - h) // s0), label="a0")
    a1 = s2 * data.draw(st.integers(0, (lay.cols - w) // s2), label="a1")
    old_tile = lay.get_tile_layout(h, w)
    aligned = get_tile(tensor, (a0, a1), (h, w))
    want = lay.offset(a0, a1) + old_tile.offset(rr, cc)
    np.testing.assert_array_equal(aligned.read(), np.asarray(want).reshape(h, w))


@pytest.mark.parametrize(
    "layout, tile, coord, expected",
    [
        # depth 1: the tile shape replaces the shape, the origin is clipped at the edge
        (Layout((10, 7), (7, 1)), (4, 4), (8, 4), Layout((4, 4), (7, 1), (2, 3))),
        (Layout((10, 7), (7, 1)), (4, 4), (12, 0), Layout((4, 4), (7, 1), (0, 4))),
        (Layout((9,), (1,)), (4,), (8,), Layout((4,), (1,), (1,))),
        (Layout(9, 2), (4,), (2,), Layout((4,), (2,), (4,))),
        # fractal: the fractal count follows the tile, the strides stay
        (make_layout_tag("float16", "zN", 40, 50), (20, 20), (32, 32),
         Layout(((16, 2), (16, 2)), ((16, 256), (1, 768)), (8, 18))),
        # the MX-scale forms (rows, (C0, n)) and ((C0, n), cols) of include/tla/layout.hpp
        (Layout((6, (2, 3)), (6, (1, 2)), (6, 6)), (4, 5), (4, 0), Layout((4, (2, 3)), (6, (1, 2)), (2, 5))),
        (Layout(((2, 3), 5), ((1, 10), 2), (6, 5)), (5, 4), (0, 2), Layout(((2, 3), 4), ((1, 10), 2), (5, 3))),
    ],
)
def test_get_tile_layout(layout, tile, coord, expected):
    assert get_tile_layout(layout, tile, coord) == expected
    assert get_tile_layout(layout, tile, coord) == expected  # again (a layout made once is reused)


def test_get_tile_layout_checks_every_call_and_takes_numpy_integers():
    lay = Layout((10, 7), (7, 1))
    want = Layout((4, 4), (7, 1), (2, 3))
    assert get_tile_layout(lay, (4, 4), (8, 4)) == want
    assert get_tile_layout(lay, (np.int64(4), 4), (8, np.int32(4))) == want
    for tile, coord in (((4, -1), (8, 4)), ((4, 4), (8,)), ((True, 4), (8, 4)), ([4, 4], (8, 4)), ((4, 4), ())):
        with pytest.raises(ArgumentError):
            get_tile_layout(lay, tile, coord)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: make_layout_tag("float16", "NZ", 4, 4), "tag: expected one of"),
        (lambda: make_layout_tag("float16", nN, 4, 4), "tag: expected one of"),
        (lambda: make_layout_tag("float99", "zN", 4, 4), "dtype"),
        (lambda: make_layout_tag("float16", "zN", -1, 4), "rows: expected a non-negative integer"),
        (lambda: make_layout_l0a("float16", 4, 4, "Atlas300"), "arch: expected one of"),
        (lambda: make_layout_from_tag("RowMajor"), "layout: expected a catlass_py.layout"),
        (lambda: get_tile_layout(Layout((4, 4)), (2,), (0,)), "rank 2"),
        (lambda: get_tile_layout(Layout((4, 4)), (2, 2), (0,)), "coord: expected a flat tuple of 2"),
        (lambda: get_tile_layout(make_layout_tag("float16", "zN", 32, 32), (2, 2, 2), (0, 0, 0)), "fractal"),
        (lambda: get_tile_layout(Layout(((2, (2, 2)), 4)), (2, 2), (0, 0)), "fractal layouts"),
    ],
)
def test_errors(call, match):
    with pytest.raises(ArgumentError, match=match):
        call()
