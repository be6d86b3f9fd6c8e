"""Tensors: element placement, slicing, GetTile/TileView/MakeTensorLike, CuTe local_tile, errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tla_helpers import SETTINGS

from catlass_py.errors import ArgumentError, OutOfBoundsError
from catlass_py.layout import RowMajor, zN
from catlass_py.tla import (
    POSITIONS,
    Layout,
    Tensor,
    get_tile,
    local_tile,
    make_layout_from_tag,
    make_layout_tag,
    make_tensor,
    make_tensor_like,
    tile_view,
)


def _matrix_tensor(rows, cols, tag="RowMajor", dtype="float16"):
    lay = make_layout_tag(dtype, tag, rows, cols)
    buf = np.arange(max(lay.cosize(), 1) + 16, dtype=np.int64)
    return make_tensor(buf, lay)


def test_elements_live_at_layout_offsets():
    t = _matrix_tensor(5, 7)
    assert t.position == "GM" and t.coord == (0, 0) and t.rank == 2
    assert t(2, 3) == 2 * 7 + 3 == t.index(2, 3) == t((2, 3))
    np.testing.assert_array_equal(t.read(), np.arange(35).reshape(5, 7))
    v = make_tensor(np.arange(10, dtype=np.int32), Layout((5,), (2,)))
    assert v(3) == 6 and v.read().tolist() == [0, 2, 4, 6, 8]
    z = _matrix_tensor(20, 40, "zN")
    ref = zN.make_layout("float16", 20, 40)
    r, c = np.meshgrid(np.arange(20), np.arange(40), indexing="ij")
    np.testing.assert_array_equal(z.offsets(), ref.offset(r, c))


def test_write_and_set_scatter_into_the_buffer():
    buf = np.zeros(64, dtype=np.float32)
    t = make_tensor(buf, make_layout_tag("float32", "zN", 4, 3), "UB")
    vals = np.arange(12, dtype=np.float32).reshape(4, 3)
    t.write(vals)
    np.testing.assert_array_equal(t.read(), vals)
    ref = zN.make_layout("float32", 4, 3)
    np.testing.assert_array_equal(ref.read(buf), vals)
    t.set((1, 2), np.float32(99))
    assert buf[ref.offset(1, 2)] == 99 and t(1, 2) == 99
    assert np.count_nonzero(buf) == 11  # only the 12 logical elements changed (one of them holds 0)


def test_slicing_keeps_the_fixed_modes_in_the_offset():
    t = _matrix_tensor(6, 8)
    row = t(2, None)
    assert row.rank == 1 and row.offset == 16 and row.origin_shape == (8,)
    assert row.read().tolist() == list(range(16, 24))
    col = t(None, 5)
    assert col.read().tolist() == [5 + 8 * i for i in range(6)]
    tile = get_tile(t, (2, 2), (3, 4))
    sub = tile(1, None)  # TLA: the tensor's coordinate is part of the base
    assert sub.offset == t.index(3, 2) and sub.read().tolist() == [t(3, 2 + j) for j in range(4)]


def test_get_tile_and_tile_view():
    t = _matrix_tensor(10, 12)
    tile = get_tile(t, (4, 8), (4, 8))
    assert tile.coord == (4, 8) and tile.origin_shape == (4, 4)  # clipped at the right edge
    assert tile.shape == (4, 8) and tile.stride == (12, 1)
    np.testing.assert_array_equal(tile.read(), t.read()[4:8, 8:12])
    inner = get_tile(tile, (1, 1), (2, 2))
    assert inner.coord == (5, 9) and inner(0, 0) == t(5, 9)
    assert tile_view(t, (1, 1), (4, 8)).coord == tile.coord
    tail = tile_view(t, (2, 1), (4, 8))
    assert tail.origin_shape == (2, 4)
    empty = tile_view(t, (3, 0), (4, 8))
    assert empty.origin_shape == (0, 8) and empty.read().shape == (0, 8)


def test_get_tile_on_a_fractal_tensor_uses_absolute_coordinates():
    t = _matrix_tensor(40, 50, "zN")
    ref = zN.make_layout("float16", 40, 50)
    tile = get_tile(t, (5, 7), (20, 30))  # not fractal-aligned: the coordinate carries it
    r, c = np.meshgrid(np.arange(20), np.arange(30), indexing="ij")
    np.testing.assert_array_equal(tile.read(), ref.offset(5 + r, 7 + c))


def test_make_tensor_like():
    like = get_tile(_matrix_tensor(40, 50), (16, 0), (30, 40))  # origin (24, 40)
    buf = np.zeros(4096, dtype=np.int64)
    z = make_tensor_like("zN", buf, like, "L1", dtype="int64")
    assert z.position == "L1" and z.layout == make_layout_tag("int64", "zN", 24, 40)
    base = make_layout_tag("int64", "RowMajor", 32, 48)
    b = make_tensor_like("RowMajor", buf, like, "UB", layout_base=base)
    assert b.layout == Layout((32, 48), (48, 1), (24, 40))
    vec = make_tensor_like("VectorLayout", buf, like(0, None), "UB")
    assert vec.layout == Layout((40,), (1,), (40,))
    with pytest.raises(ArgumentError, match="pass dtype="):
        make_tensor_like("zN", np.zeros(16, np.float32), like, "L1")
    with pytest.raises(ArgumentError, match="stored as"):
        make_tensor_like("zN", np.zeros(16, np.float32), like, "L1", dtype="float16")


def test_local_tile_is_cutes():
    t = _matrix_tensor(8, 12)
    m = t.read()
    lt = local_tile(t, (4, 3), (1, 2))
    assert lt.layout == Layout((4, 3), (12, 1))
    np.testing.assert_array_equal(lt.read(), m[4:8, 6:9])
    flat = local_tile(t, (4, 3), 5)  # a flat index into the (2, 4) grid of tiles: tile (1, 2)
    np.testing.assert_array_equal(flat.read(), m[4:8, 6:9])
    keep = local_tile(t, (4, 3), (1,))  # the grid modes the coordinate leaves out are kept
    assert keep.layout == Layout((4, 3, 4), (12, 1, 3))
    np.testing.assert_array_equal(keep.read()[:, :, 2], m[4:8, 6:9])
    # on a fractal tensor: one 16 x 16 fractal
    z = _matrix_tensor(32, 32, "zN")
    f = local_tile(z, (16, 16), (1, 1))
    ref = zN.make_layout("float16", 32, 32)
    r, c = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    np.testing.assert_array_equal(f.read(), ref.offset(16 + r, 16 + c))
    # a get_tile tensor on fractal boundaries is re-based; off the boundaries it is refused (the rows of
    # an fp16 zN layout are linear, 16 x 16 = 256, so a row offset is always fine; the columns are not)
    g = local_tile(get_tile(z, (16, 0), (16, 32)), (16, 16), (0, 1))
    np.testing.assert_array_equal(g.read(), f.read())
    g = local_tile(get_tile(z, (3, 16), (16, 16)), (13, 16), (0, 0))
    np.testing.assert_array_equal(g.read(), ref.offset(3 + r[:13], 16 + c[:13]))
    with pytest.raises(ArgumentError, match="mode boundaries"):
        local_tile(get_tile(z, (0, 3), (32, 16)), (16, 16), (0, 0))


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 4), st.integers(1, 4), st.data())
def test_local_tile_matches_numpy_slicing(tm, tn, gm, gn, data):
    rows, cols = tm * gm, tn * gn
    lay = make_layout_from_tag(RowMajor(rows, cols, cols + data.draw(st.integers(0, 3))))
    t = make_tensor(np.arange(lay.cosize() + 8, dtype=np.int64), lay)
    m = t.read()
    i, j = data.draw(st.integers(0, gm - 1)), data.draw(st.integers(0, gn - 1))
    np.testing.assert_array_equal(local_tile(t, (tm, tn), (i, j)).read(), m[i * tm : (i + 1) * tm, j * tn : (j + 1) * tn])
    np.testing.assert_array_equal(tile_view(t, (i, j), (tm, tn)).read(), m[i * tm : (i + 1) * tm, j * tn : (j + 1) * tn])


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: make_tensor([1, 2, 3], Layout(3)), ArgumentError, "data: expected a 1-D numpy array"),
        (lambda: make_tensor(np.zeros((2, 2)), Layout(3)), ArgumentError, "data: expected a 1-D numpy array"),
        (lambda: make_tensor(np.zeros(4), Layout(3), "L2"), ArgumentError, "position: expected one of"),
        (lambda: make_tensor(np.zeros(4), Layout((3, 2)), coord=(1,)), ArgumentError, "coord: expected a flat tuple of 2"),
        (lambda: make_tensor(np.zeros(4), Layout(3), offset=9), ArgumentError, "offset"),
        (lambda: make_tensor(np.zeros(4), (3, 2)), ArgumentError, "layout: expected a tla.Layout"),
        (lambda: make_tensor(np.zeros(4), Layout((2, 3)))(1), ArgumentError, "takes 2 coordinates"),
        (lambda: make_tensor(np.zeros(4), Layout((2, 3)))(1, -1), ArgumentError, "non-negative"),
        (lambda: make_tensor(np.zeros(4), Layout((2, 3)))(1, 2), OutOfBoundsError, "outside"),
        (lambda: make_tensor(np.zeros(4), Layout((2, 3))).read(), OutOfBoundsError, "buffer holds 4"),
        (lambda: make_tensor(np.zeros(6), Layout((2, 3))).write(np.zeros((3, 2))), ArgumentError, "values: expected shape"),
        (lambda: make_tensor(np.zeros(6), Layout((2, 3))).write(np.zeros((2, 3), np.float32)), ArgumentError, "never convert"),
        (lambda: get_tile(make_tensor(np.zeros(6), Layout((2, 3))), (0,), (1, 1)), ArgumentError, "coord"),
        (lambda: get_tile("t", (0, 0), (1, 1)), ArgumentError, "tensor: expected a tla.Tensor"),
        (lambda: local_tile(make_tensor(np.zeros(6), Layout((2, 3))), (1, 1), (0, 0, 0)), ArgumentError, "more modes"),
        (lambda: make_tensor(np.zeros(6), Layout((2, 3)))((0, None), None), ArgumentError, "flat coordinate"),
    ],
)
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_tensor_is_immutable_and_positions_are_catlass_names():
    t = make_tensor(np.zeros(4), Layout(4), "l0a")
    assert t.position == "L0A" and "UB" in POSITIONS and "Bias" in POSITIONS
    with pytest.raises(AttributeError):
        t.layout = Layout(2)
    assert isinstance(t, Tensor) and "L0A" in repr(t)


def test_read_only_buffer_refuses_writes():
    buf = np.zeros(4)
    buf.flags.writeable = False
    with pytest.raises(ArgumentError, match="read-only"):
        make_tensor(buf, Layout(4)).write(np.ones(4))
