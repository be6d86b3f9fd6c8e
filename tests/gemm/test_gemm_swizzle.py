"""GemmIdentityBlockSwizzle: worked examples and properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py.errors import ConfigError
from catlass_py.gemm import GemmCoord, MatrixCoord
from catlass_py.gemm.block import GemmIdentityBlockSwizzle


def test_worked_example_offset3_direction0():
    # Lm = 4, Ln = 3 from a 4x3 grid of 10x20 tiles
    s = GemmIdentityBlockSwizzle(3, 0).update(GemmCoord(40, 60, 7), MatrixCoord(10, 20))
    assert s.get_core_loops() == 12
    got = [tuple(s.get_block_coord(i))[:2] for i in range(12)]
    assert got == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2), (3, 2), (3, 1), (3, 0)]
    assert all(s.get_block_coord(i).k == 0 for i in range(12))


def test_worked_example_offset3_direction1():
    s = GemmIdentityBlockSwizzle(3, 1).update(GemmCoord(30, 80, 7), MatrixCoord(10, 20))  # Lm = 3, Ln = 4
    got = [tuple(s.get_block_coord(i))[:2] for i in range(12)]
    assert got == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), (2, 3), (1, 3), (0, 3)]


def test_default_is_plain_row_of_blocks_then_next_column():
    s = GemmIdentityBlockSwizzle().update(GemmCoord(3, 2, 1), MatrixCoord(1, 1))  # offset 1, direction 0
    # strips of one block-row; odd strips run right-to-left
    assert [tuple(s.get_block_coord(i))[:2] for i in range(6)] == [(0, 0), (0, 1), (1, 1), (1, 0), (2, 0), (2, 1)]


def test_task_index_wraps_and_batch_index():
    s = GemmIdentityBlockSwizzle(3, 0).update(GemmCoord(40, 60, 7), MatrixCoord(10, 20))
    assert s.get_block_coord(12 + 5) == s.get_block_coord(5)
    assert [s.get_batch_idx(i) for i in (0, 11, 12, 35, 36)] == [0, 0, 1, 2, 3]


def test_actual_block_shape_clips_tails_and_keeps_full_k():
    s = GemmIdentityBlockSwizzle(3, 0).update(GemmCoord(250, 300, 77), MatrixCoord(128, 256))
    assert tuple(s.loops_mn) == (2, 2)
    assert s.get_actual_block_shape(GemmCoord(0, 0, 0)) == GemmCoord(128, 256, 77)
    assert s.get_actual_block_shape(GemmCoord(1, 0, 0)) == GemmCoord(122, 256, 77)
    assert s.get_actual_block_shape(GemmCoord(0, 1, 0)) == GemmCoord(128, 44, 77)
    assert s.get_actual_block_shape(GemmCoord(1, 1, 0)) == GemmCoord(122, 44, 77)


def test_explicit_loops_override():
    s = GemmIdentityBlockSwizzle(2, 0).update(GemmCoord(100, 100, 1), MatrixCoord(10, 10), MatrixCoord(2, 3))
    assert s.get_core_loops() == 6


@pytest.mark.parametrize("offset,direction", [(0, 0), (-1, 0), (1, 2), (True, 0), (1.5, 0)])
def test_bad_template_parameters_raise(offset, direction):
    with pytest.raises(ConfigError):
        GemmIdentityBlockSwizzle(offset, direction)


@settings(max_examples=200, deadline=None)
@given(lm=st.integers(1, 12), ln=st.integers(1, 12), s=st.integers(1, 8), direction=st.sampled_from([0, 1]))
def test_block_coords_are_a_bijection_onto_the_grid(lm, ln, s, direction):
    sw = GemmIdentityBlockSwizzle(s, direction).update(GemmCoord(lm, ln, 1), MatrixCoord(1, 1))
    coords = [sw.get_block_coord(i) for i in range(lm * ln)]
    assert all(0 <= c.m < lm and 0 <= c.n < ln for c in coords)
    assert len({(c.m, c.n) for c in coords}) == lm * ln
    assert [tuple(c)[:2] for c in coords] == serpentine_order(lm, ln, s, direction)


def serpentine_order(lm, ln, s, direction):
    """The visiting order built by walking the grid (not by the div/mod formula): strips of ``s``
    block-rows (direction 0) or block-columns (direction 1); inside a strip the short side is walked
    first; odd strips run backwards along the long side."""
    order = []
    if direction == 0:
        for j, top in enumerate(range(0, lm, s)):
            rows = range(top, min(top + s, lm))
            cols = range(ln) if j % 2 == 0 else range(ln - 1, -1, -1)
            order += [(r, c) for c in cols for r in rows]
    else:
        for j, left in enumerate(range(0, ln, s)):
            cols = range(left, min(left + s, ln))
            rows = range(lm) if j % 2 == 0 else range(lm - 1, -1, -1)
            order += [(r, c) for r in rows for c in cols]
    return order


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 300), n=st.integers(1, 300), tm=st.integers(1, 96), tn=st.integers(1, 96),
       s=st.integers(1, 4), direction=st.sampled_from([0, 1]))
def test_actual_block_shapes_tile_the_problem_exactly(m, n, tm, tn, s, direction):
    sw = GemmIdentityBlockSwizzle(s, direction).update(GemmCoord(m, n, 5), MatrixCoord(tm, tn))
    cover = np.zeros((m, n), np.int32)
    for i in range(sw.get_core_loops()):
        c = sw.get_block_coord(i)
        shape = sw.get_actual_block_shape(c)
        assert shape.k == 5 and shape.m > 0 and shape.n > 0
        assert shape.m <= tm and shape.n <= tn
        cover[c.m * tm:c.m * tm + shape.m, c.n * tn:c.n * tn + shape.n] += 1
    assert np.all(cover == 1)
