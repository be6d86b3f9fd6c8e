"""The tile layer's fast path (single strided views, proved once per geometry) against the piecewise path.

Every region that splits at the fractal sides of the layouts taking part is one numpy view; these tests check
that the view holds exactly the elements the piecewise plans move, that copies and Mmads through the fast path
leave the same bytes as through the piecewise path, that the padding-row hint of TileMmad changes only rows
nobody reads, and that the checks still raise after a geometry has been cached.
"""

import numpy as np
import pytest

from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.arch import standalone_core
from catlass_py.errors import CapacityError
from catlass_py.gemm import GemmType
from catlass_py.layout import L0C, ColumnMajor, RowMajor, nZ, zN, zZ
from catlass_py.layout.base import split_axis, split_sizes
from catlass_py.tile import CopyL1ToL0A, CopyL1ToL0B, TileMmad
from catlass_py.tile import _region

LAYOUTS = [
    lambda r, c: RowMajor(r, c, c + 7),
    lambda r, c: ColumnMajor(r, c, r + 5),
    lambda r, c: zN.make_layout("int8", r, c),
    lambda r, c: nZ.make_layout("int8", r, c),
    lambda r, c: zZ.make_layout("int8", r, c),
    lambda r, c: L0C.make_layout(r, c),
    lambda r, c: zN.make_layout("float16", r, c),
]


@pytest.mark.parametrize("make", LAYOUTS)
@pytest.mark.parametrize("rows,cols", [(64, 96), (32, 32), (5, 64), (16, 7), (3, 5)])
def test_single_view_holds_the_region(make, rows, cols):
    layout = make(64, 96)
    (sr, tr, ur), (sc, tc, uc) = layout.linear_axes()
    rs, cs = split_sizes(sr), split_sizes(sc)
    r, c = split_axis(rows, rs, (sr, tr, ur)), split_axis(cols, cs, (sc, tc, uc))
    buf = np.arange(layout.capacity + 64, dtype=np.int64)
    expect = layout.read(buf, rows, cols)
    if r is None or c is None:  # a region ending inside a fractal past the first: not one view
        assert rows % rs[0] and rows > rs[0] or cols % cs[0] and cols > cs[0]
        return
    shape, strides = r[0] + c[0], r[1] + c[1]
    view = np.ndarray(shape, np.int64, buffer=buf, strides=tuple(s * 8 for s in strides))
    np.testing.assert_array_equal(view.reshape(rows, cols), expect)


def _core():
    ctx = standalone_core(A2, "AIC")
    r = ctx.resource
    return ctx, r.l1_buf, r.l0a_buf, r.l0b_buf, r.l0c_buf


@pytest.mark.parametrize("copy_cls,l1_layout,l0_make", [
    (CopyL1ToL0A, zN.make_layout("int8", 128, 512), lambda m, k: zZ.make_layout("int8", m, k)),
    (CopyL1ToL0B, zN.make_layout("int8", 512, 256), lambda k, n: nZ.make_layout("int8", k, n)),
])
def test_l1_to_l0_copy_matches_the_piecewise_path(copy_cls, l1_layout, l0_make):
    rng = np.random.default_rng(0)
    ctx, l1, l0a, l0b, _ = _core()
    dst_arena = l0a if copy_cls is CopyL1ToL0A else l0b
    l1.raw[:] = rng.integers(0, 256, l1.size, dtype=np.uint8)
    src = l1.get_buffer_by_byte("int8", 0)
    dst = dst_arena.get_buffer_by_byte("int8", 0)
    copy = copy_cls(A2, GemmType("int8", zN))
    for rows, cols in [(128, 128), (16, 128), (48, 64)]:
        layout = l0_make(rows, cols)
        dst_arena.raw[:] = 0xFF
        copy(dst, src, layout, l1_layout)  # fast path
        fast = dst_arena.raw.copy()
        dst_arena.raw[:] = 0xFF
        wide = layout.get_tile_layout(*layout.padded_shape)
        _region.local_write(dst, wide, _region.local_read(src, l1_layout, *layout.padded_shape, "t"), "t")
        np.testing.assert_array_equal(fast, dst_arena.raw)


def test_mmad_fast_path_and_valid_rows():
    rng = np.random.default_rng(1)
    ctx, _, l0a_arena, l0b_arena, l0c_arena = _core()
    l0a_arena.raw[:] = rng.integers(0, 256, l0a_arena.size, dtype=np.uint8)
    l0b_arena.raw[:] = rng.integers(0, 256, l0b_arena.size, dtype=np.uint8)
    l0a, l0b = l0a_arena.get_buffer_by_byte("int8", 0), l0b_arena.get_buffer_by_byte("int8", 0)
    l0c = l0c_arena.get_buffer_by_byte("int32", 0)
    mmad = TileMmad(A2, GemmType("int8", RowMajor), GemmType("int8", RowMajor))
    m, n, k = 32, 64, 96
    la, lb, lc = mmad._layouts(m, n, k)
    a, b = la.read(l0a.view(), m, k).astype(np.int64), lb.read(l0b.view(), k, n).astype(np.int64)
    mmad(l0c, l0a, l0b, m, n, k, True)
    np.testing.assert_array_equal(lc.read(l0c.view(), m, n), (a @ b).astype(np.int32))
    mmad(l0c, l0a, l0b, m, n, k, False)  # C += A @ B
    np.testing.assert_array_equal(lc.read(l0c.view(), m, n), (2 * (a @ b)).astype(np.int32))
    # valid_m: rows past it keep their old values, the others are computed
    l0c_arena.raw[:] = 0xFF
    mmad(l0c, l0a, l0b, m, n, k, True, valid_m=5)
    got = lc.read(l0c.view(), m, n)
    np.testing.assert_array_equal(got[:5], (a @ b)[:5].astype(np.int32))
    assert (got[16:] == -1).all()


def test_checks_still_raise_after_caching():
    ctx, l1, l0a_arena, _, _ = _core()
    copy = CopyL1ToL0A(A2, GemmType("int8", zN))
    l1_layout = zN.make_layout("int8", 128, 512)
    src = l1.get_buffer_by_byte("int8", 0)
    copy(l0a_arena.get_buffer_by_byte("int8", 0), src, zZ.make_layout("int8", 128, 128), l1_layout)
    short = l0a_arena.get_buffer_by_byte("int8", 0, 1024)  # the same slot, too few elements
    with pytest.raises(CapacityError):
        copy(short, src, zZ.make_layout("int8", 128, 128), l1_layout)
    with pytest.raises(CapacityError):  # check-only (data=False) path, proved once per geometry
        copy(short, src, zZ.make_layout("int8", 128, 128), l1_layout, data=False)
