"""Epilogue tile swizzles: Identity walks tiles row-major, Horizontal column-major."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py.epilogue import EpilogueHorizontalTileSwizzle, EpilogueIdentityTileSwizzle


def test_identity_is_row_major_with_tails():
    s = EpilogueIdentityTileSwizzle((100, 300), (32, 256))
    assert tuple(s.loops_mn) == (4, 2) and s.get_loops() == 8
    coords = [tuple(s.get_tile_coord(i)) for i in range(8)]
    assert coords == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)]
    shapes = [tuple(s.get_actual_tile_shape(c)) for c in coords]
    assert shapes == [(32, 256), (32, 44)] * 3 + [(4, 256), (4, 44)]


def test_horizontal_is_column_major_with_tails():
    s = EpilogueHorizontalTileSwizzle((100, 300), (32, 256))
    coords = [tuple(s.get_tile_coord(i)) for i in range(8)]
    assert coords == [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (3, 1)]
    assert [tuple(s.get_actual_tile_shape(c)) for c in coords] == [(32, 256)] * 3 + [(4, 256)] + [(32, 44)] * 3 + [(4, 44)]


def test_example_10_block_split():
    # full 128x256 block with 32x256 tiles: 4 tiles down the rows; m = 40 -> 2 tiles (32 + 8 rows)
    s = EpilogueHorizontalTileSwizzle((128, 256), (32, 256))
    assert [tuple(s.get_tile_coord(i)) for i in range(s.get_loops())] == [(0, 0), (1, 0), (2, 0), (3, 0)]
    s = EpilogueHorizontalTileSwizzle((40, 256), (32, 256))
    assert s.get_loops() == 2 and tuple(s.get_actual_tile_shape(s.get_tile_coord(1))) == (8, 256)
    s = EpilogueHorizontalTileSwizzle((0, 256), (32, 256))
    assert s.get_loops() == 0


@settings(max_examples=60, deadline=None)
@given(br=st.integers(1, 200), bc=st.integers(1, 300), tr=st.integers(1, 64), tc=st.integers(1, 128),
       horizontal=st.booleans())
def test_tiles_cover_the_block_exactly_once(br, bc, tr, tc, horizontal):
    cls = EpilogueHorizontalTileSwizzle if horizontal else EpilogueIdentityTileSwizzle
    s = cls((br, bc), (tr, tc))
    cover = np.zeros((br, bc), np.int32)
    seen = []
    for i in range(s.get_loops()):
        c = s.get_tile_coord(i)
        r, k = s.get_actual_tile_shape(c)
        assert 0 < r <= tr and 0 < k <= tc
        cover[c[0] * tr:c[0] * tr + r, c[1] * tc:c[1] * tc + k] += 1
        seen.append(tuple(c))
    assert np.all(cover == 1)
    # the walk order: Identity sorts by (row, col), Horizontal by (col, row)
    key = (lambda t: (t[1], t[0])) if horizontal else (lambda t: t)
    assert seen == sorted(seen, key=key)
