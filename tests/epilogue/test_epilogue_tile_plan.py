"""The per-token-dequant epilogue's tile plan (made once per actual block shape) is the swizzle's tile walk."""

from __future__ import annotations

import pytest

from catlass_py.epilogue.tile_swizzle import EpilogueHorizontalTileSwizzle, EpilogueIdentityTileSwizzle
from catlass_py.gemm.coord import MatrixCoord
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import build_kernel


@pytest.mark.parametrize("swizzle", [EpilogueIdentityTileSwizzle, EpilogueHorizontalTileSwizzle])
@pytest.mark.parametrize("m, n", [(128, 256), (1, 256), (33, 100), (0, 256), (70, 17)])
def test_tile_plan_is_the_swizzle_walk(swizzle, m, n):
    spec = build_kernel().block_epilogue
    old = spec.epilogue_tile_swizzle
    spec.epilogue_tile_swizzle, spec._tiles = swizzle, {}
    try:
        plan = spec.tile_plan((m, n))
        assert spec.tile_plan((m, n)) is plan  # made once
        ts = MatrixCoord(*spec.tile_shape)
        walk = swizzle(MatrixCoord(m, n), ts)
        assert len(plan) == walk.get_loops()
        for loop, (tc, tshape, origin, ub_layout, columns, rows) in enumerate(plan):
            assert tc == walk.get_tile_coord(loop)
            assert tshape == walk.get_actual_tile_shape(tc)
            assert origin == tc * ts
            assert ub_layout == RowMajor(tshape.row, tshape.column, ts.column)
            assert (columns, rows) == (VectorLayout(tshape.column), VectorLayout(tshape.row))
    finally:
        spec.epilogue_tile_swizzle, spec._tiles = old, {}
