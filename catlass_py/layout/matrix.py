"""Plain 2-D layouts: CATLASS ``layout::RowMajor`` and ``layout::ColumnMajor`` (``layout/matrix.hpp``).

One leading dimension ``ldm`` each: row-major puts ``(r, c)`` at ``r * ldm + c``, column-major at
``r + c * ldm``. CANN calls these formats ND and DN.
"""

from __future__ import annotations

from catlass_py.errors import ArgumentError
from catlass_py.numerics.dtypes import get_dtype

from .base import MatrixLayout, as_coord, as_size, round_up

_FP4_NAMES = frozenset({"float4_e2m1fn", "float4_e1m2"})
# get_tile_layout's results (immutable values) by (kind, rows, cols, ldm): kernels cut the same tiles again and
# again on every core
_TILES: dict = {}


def _check_ldm(cls_name: str, ldm: int, inner: int, inner_name: str, outer: int) -> None:
    # Rows (columns) may not overlap. A single row (column) never uses ldm, so any ldm is fine there:
    # CATLASS builds GetTileLayout(1, rows*cols) views of contiguous regions that way.
    if outer > 1 and ldm < inner:
        raise ArgumentError(f"ldm: {cls_name} with {inner} {inner_name} needs ldm >= {inner}, got {ldm}")


class RowMajor(MatrixLayout):
    """CATLASS ``layout::RowMajor``: shape ``(rows, cols)``, stride ``(ldm, 1)``; offset ``r*ldm + c``.

    ``ldm`` defaults to ``cols``. ``capacity = rows * ldm``.
    """

    __slots__ = ()

    def __init__(self, rows, cols, ldm=None):
        rows = as_size("rows", rows)
        cols = as_size("cols", cols)
        ldm = cols if ldm is None else as_size("ldm", ldm)
        _check_ldm("RowMajor", ldm, cols, "cols", rows)
        sa = object.__setattr__
        sa(self, "rows", rows)
        sa(self, "cols", cols)
        sa(self, "shape", (rows, cols))
        sa(self, "stride", (ldm, 1))
        sa(self, "_geom", self._make_geom())

    def _make_geom(self):
        return ("RM", self.stride[0])

    @property
    def ldm(self) -> int:
        """Leading dimension: elements between the starts of adjacent rows (``stride[0]``)."""
        return self.stride[0]

    @property
    def padded_shape(self) -> tuple[int, int]:
        """``(rows, max(cols, ldm))``: the grid including the gap at the end of each row."""
        return (self.rows, max(self.cols, self.stride[0]))

    @property
    def capacity(self) -> int:
        """CATLASS ``Capacity()``: ``rows * ldm``."""
        return self.rows * self.stride[0]

    def offset(self, row, col):
        """CATLASS ``GetOffset``: ``row * ldm + col``; ints give an int, arrays an int64 array."""
        if type(row) is not int or type(col) is not int or row < 0 or col < 0:
            row = as_coord("row", row)
            col = as_coord("col", col)
        return row * self.stride[0] + col

    def get_tile_layout(self, rows, cols) -> RowMajor:
        """CATLASS ``GetTileLayout``: a ``rows x cols`` RowMajor with the same ``ldm``."""
        ldm = self.stride[0]
        if type(rows) is int and type(cols) is int and 0 <= cols <= ldm and 0 <= rows:  # valid: skip the checks
            key = ("RM", rows, cols, ldm)
            hit = _TILES.get(key)
            if hit is None:
                if len(_TILES) >= 4096:
                    _TILES.clear()
                hit = _TILES[key] = RowMajor._new(rows, cols, (rows, cols), self.stride)
            return hit
        return RowMajor(rows, cols, ldm)

    def _pieces(self, rows, cols):
        return [((rows, cols), 0, (self.stride[0], 1), 0, (cols, 1))]

    def linear_axes(self):
        return ((1, self.stride[0], 0), (1, 1, 0))

    @classmethod
    def make_layout(cls, dtype, rows, cols) -> RowMajor:
        """CATLASS ``RowMajor::MakeLayout<Element>``: plain ``RowMajor(rows, cols)``.

        For the packed fp4 types (Ascend 950 only) ``ldm`` is rounded up to 2 so rows start on bytes.
        """
        dt = get_dtype(dtype)
        rows = as_size("rows", rows)
        cols = as_size("cols", cols)
        if dt.name in _FP4_NAMES:
            return cls(rows, cols, round_up(cols, 2))
        return cls(rows, cols)

    @classmethod
    def make_layout_in_ub(cls, dtype, rows, cols) -> RowMajor:
        """CATLASS ``RowMajor::MakeLayoutInUb<Element>``: ``ldm`` rounded up to a 32-byte block (C0)."""
        dt = get_dtype(dtype)
        cols = as_size("cols", cols)
        return cls(rows, cols, round_up(cols, dt.c0))

    def __repr__(self):
        return f"RowMajor(rows={self.rows}, cols={self.cols}, ldm={self.stride[0]})"


class ColumnMajor(MatrixLayout):
    """CATLASS ``layout::ColumnMajor``: shape ``(rows, cols)``, stride ``(1, ldm)``; offset ``r + c*ldm``.

    ``ldm`` defaults to ``rows``. ``capacity = cols * ldm``.
    """

    __slots__ = ()

    def __init__(self, rows, cols, ldm=None):
        rows = as_size("rows", rows)
        cols = as_size("cols", cols)
        ldm = rows if ldm is None else as_size("ldm", ldm)
        _check_ldm("ColumnMajor", ldm, rows, "rows", cols)
        sa = object.__setattr__
        sa(self, "rows", rows)
        sa(self, "cols", cols)
        sa(self, "shape", (rows, cols))
        sa(self, "stride", (1, ldm))
        sa(self, "_geom", self._make_geom())

    def _make_geom(self):
        return ("CM", self.stride[1])

    @property
    def ldm(self) -> int:
        """Leading dimension: elements between the starts of adjacent columns (``stride[1]``)."""
        return self.stride[1]

    @property
    def padded_shape(self) -> tuple[int, int]:
        """``(max(rows, ldm), cols)``: the grid including the gap at the end of each column."""
        return (max(self.rows, self.stride[1]), self.cols)

    @property
    def capacity(self) -> int:
        """CATLASS ``Capacity()``: ``cols * ldm``."""
        return self.cols * self.stride[1]

    def offset(self, row, col):
        """CATLASS ``GetOffset``: ``row + col * ldm``; ints give an int, arrays an int64 array."""
        if type(row) is not int or type(col) is not int or row < 0 or col < 0:
            row = as_coord("row", row)
            col = as_coord("col", col)
        return row + col * self.stride[1]

    def get_tile_layout(self, rows, cols) -> ColumnMajor:
        """CATLASS ``GetTileLayout``: a ``rows x cols`` ColumnMajor with the same ``ldm``."""
        ldm = self.stride[1]
        if type(rows) is int and type(cols) is int and 0 <= rows <= ldm and 0 <= cols:  # valid: skip the checks
            key = ("CM", rows, cols, ldm)
            hit = _TILES.get(key)
            if hit is None:
                if len(_TILES) >= 4096:
                    _TILES.clear()
                hit = _TILES[key] = ColumnMajor._new(rows, cols, (rows, cols), self.stride)
            return hit
        return ColumnMajor(rows, cols, ldm)

    def _pieces(self, rows, cols):
        return [((rows, cols), 0, (1, self.stride[1]), 0, (cols, 1))]

    def linear_axes(self):
        return ((1, 1, 0), (1, self.stride[1], 0))

    @classmethod
    def make_layout(cls, dtype, rows, cols) -> ColumnMajor:
        """CATLASS ``ColumnMajor::MakeLayout<Element>``: plain ``ColumnMajor(rows, cols)``.

        For the packed fp4 types (Ascend 950 only) ``ldm`` is rounded up to 2.
        """
        dt = get_dtype(dtype)
        rows = as_size("rows", rows)
        cols = as_size("cols", cols)
        if dt.name in _FP4_NAMES:
            return cls(rows, cols, round_up(rows, 2))
        return cls(rows, cols)

    def __repr__(self):
        return f"ColumnMajor(rows={self.rows}, cols={self.cols}, ldm={self.stride[1]})"


__all__ = ["RowMajor", "ColumnMajor"]
