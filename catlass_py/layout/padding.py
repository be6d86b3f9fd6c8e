"""Blocked layouts of the padding kernels: CATLASS ``layout::PaddingRowMajor`` / ``PaddingColumnMajor``.

A matrix stored as a grid of ``block_rows x block_cols`` blocks, every block padded to full size.
``PaddingRowMajor`` is row-major inside a block and between blocks (zZ with arbitrary blocks);
``PaddingColumnMajor`` column-major in both (nN with arbitrary blocks). The 4-D offset formula of
:mod:`catlass_py.layout.fractal` applies unchanged.

Difference from CATLASS: CATLASS's ``GetTileLayout`` rebuilds a padding layout from the tile shape,
so its between-block strides follow the *tile* width/height; ``get_tile_layout`` here keeps the
parent's strides (offsets inside the tile equal the parent's). Both agree when the tile fits in one
block, which is how CATLASS uses it (its GM->L1 copies read only ``stride[0]``/``stride[2]``).
"""

from __future__ import annotations

from .base import as_positive, as_size, as_sizes, ceil_div, round_up
from .fractal import FractalLayout


class _PaddingLayout(FractalLayout):
    __slots__ = ()

    def __init__(self, rows, cols, block_rows, block_cols, *, stride=None):
        rows = as_size("rows", rows)
        cols = as_size("cols", cols)
        br = as_positive("block_rows", block_rows)
        bc = as_positive("block_cols", block_cols)
        shape = (br, ceil_div(rows, br), bc, ceil_div(cols, bc))
        if stride is None:
            stride = self._compact_stride(round_up(rows, br), round_up(cols, bc), br, bc)
        else:
            stride = as_sizes("stride", stride, 4)
        sa = object.__setattr__
        sa(self, "rows", rows)
        sa(self, "cols", cols)
        sa(self, "shape", shape)
        sa(self, "stride", stride)
        sa(self, "_geom", self._make_geom())

    @property
    def block_rows(self) -> int:
        """Rows of one block (``shape[0]``)."""
        return self.shape[0]

    @property
    def block_cols(self) -> int:
        """Columns of one block (``shape[2]``)."""
        return self.shape[2]

    @classmethod
    def compact(cls, rows, cols, fractal_rows, fractal_cols):
        """Same as the constructor: the gap-free layout with ``fractal_rows x fractal_cols`` blocks."""
        return cls(rows, cols, fractal_rows, fractal_cols)

    def __repr__(self):
        return (
            f"{type(self).__name__}(rows={self.rows}, cols={self.cols}, block_rows={self.shape[0]}, "
            f"block_cols={self.shape[2]}, stride={self.stride})"
        )


class PaddingRowMajor(_PaddingLayout):
    """CATLASS ``layout::PaddingRowMajor(R, C, bR, bC)``: row-major blocks in a row-major grid.

    shape ``(bR, ceil(R/bR), bC, ceil(C/bC))``, stride ``(bC, bR*roundup(C,bC), 1, bR*bC)``;
    ``capacity = stride[1] * shape[1]`` (CATLASS defines none). ``stride=`` overrides the strides
    (used by ``get_tile_layout``).
    """

    __slots__ = ()
    _OUTER_AXIS = 1
    INNER_ORDER = "row"
    OUTER_ORDER = "row"
    CANN_NAME = ""

    @classmethod
    def _compact_stride(cls, rr, cr, fr, fc):
        return (fc, cr * fr, 1, fr * fc)


class PaddingColumnMajor(_PaddingLayout):
    """CATLASS ``layout::PaddingColumnMajor(R, C, bR, bC)``: column-major blocks in a column-major grid.

    shape ``(bR, ceil(R/bR), bC, ceil(C/bC))``, stride ``(1, bR*bC, bR, roundup(R,bR)*bC)``;
    ``capacity = stride[3] * shape[3]`` (CATLASS defines none). ``stride=`` overrides the strides.
    """

    __slots__ = ()
    _OUTER_AXIS = 3
    INNER_ORDER = "col"
    OUTER_ORDER = "col"
    CANN_NAME = ""

    @classmethod
    def _compact_stride(cls, rr, cr, fr, fc):
        return (1, fr * fc, fr, rr * fc)


__all__ = ["PaddingRowMajor", "PaddingColumnMajor"]
