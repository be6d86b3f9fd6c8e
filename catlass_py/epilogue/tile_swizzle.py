"""Tile order inside one epilogue block (CATLASS ``epilogue/tile/tile_swizzle.hpp``).

Both swizzles cut the actual block into ``ceil(block / tile)`` tiles and clip the last row/column of tiles.
Their names read the other way round from what they do; trust the formulas:
:class:`EpilogueIdentityTileSwizzle` walks tiles row-major (along a row of tiles first),
:class:`EpilogueHorizontalTileSwizzle` walks them column-major (down a column of tiles first).
"""

from __future__ import annotations

from catlass_py.gemm.coord import MatrixCoord, ceil_div


class _TileSwizzle:
    __slots__ = ("block_shape", "tile_shape", "loops_mn")

    def __init__(self, block_shape, tile_shape):
        self.block_shape = MatrixCoord(*block_shape)
        self.tile_shape = MatrixCoord(*tile_shape)
        self.loops_mn = MatrixCoord(
            ceil_div(self.block_shape.row, self.tile_shape.row),
            ceil_div(self.block_shape.column, self.tile_shape.column),
        )

    def get_loops(self) -> int:
        """Number of tiles (``GetLoops``)."""
        return self.loops_mn.row * self.loops_mn.column

    def get_actual_tile_shape(self, tile_coord) -> MatrixCoord:
        """``min(tile, block - coord * tile)`` element-wise (``GetActualTileShape``)."""
        return MatrixCoord(
            min(self.tile_shape.row, self.block_shape.row - tile_coord[0] * self.tile_shape.row),
            min(self.tile_shape.column, self.block_shape.column - tile_coord[1] * self.tile_shape.column),
        )


class EpilogueIdentityTileSwizzle(_TileSwizzle):
    """CATLASS ``EpilogueIdentityTileSwizzle``: tile i is at ``(i / loops.column, i % loops.column)``."""

    def get_tile_coord(self, loop_idx: int) -> MatrixCoord:
        return MatrixCoord(loop_idx // self.loops_mn.column, loop_idx % self.loops_mn.column)


class EpilogueHorizontalTileSwizzle(_TileSwizzle):
    """CATLASS ``EpilogueHorizontalTileSwizzle``: tile i is at ``(i % loops.row, i / loops.row)``."""

    def get_tile_coord(self, loop_idx: int) -> MatrixCoord:
        return MatrixCoord(loop_idx % self.loops_mn.row, loop_idx // self.loops_mn.row)
