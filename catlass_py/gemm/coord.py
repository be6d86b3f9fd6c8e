"""Coordinates and static shapes (CATLASS ``GemmCoord``, ``GemmShape``, ``MatrixCoord``, ``MatrixShape``).

All are small immutable tuples: arithmetic is element-wise (``coord * shape``) like the C++ ``Coord``.
"""

from __future__ import annotations

from typing import NamedTuple

from catlass_py.errors import ConfigError
from catlass_py.integers import is_int
from catlass_py.layout.base import ceil_div, round_up  # noqa: F401 - re-exported (CATLASS CeilDiv, RoundUp)


def round_down(a: int, b: int) -> int:
    """CATLASS ``RoundDown``."""
    return a // b * b


def _check_extents(shape, what: str, names) -> tuple:
    """``shape`` with Python int extents if each is a positive int or numpy integer (the C++ template parameters
    are ints), else :class:`ConfigError` naming the first bad one."""
    for name, v in zip(names, shape):
        if not is_int(v) or v <= 0:
            raise ConfigError(f"{what}: {name} must be a positive int, got {v!r}")
    return type(shape)(*(int(v) for v in shape))


class MatrixCoord(NamedTuple):
    """CATLASS ``MatrixCoord(row, column)``."""

    row: int
    column: int

    def __mul__(self, other) -> "MatrixCoord":  # element-wise, like Coord::operator*
        return MatrixCoord(self.row * other[0], self.column * other[1])

    def __add__(self, other) -> "MatrixCoord":
        return MatrixCoord(self.row + other[0], self.column + other[1])


class GemmCoord(NamedTuple):
    """CATLASS ``GemmCoord(m, n, k)``: a problem size, a block index or a block shape."""

    m: int
    n: int
    k: int

    @property
    def mn(self) -> MatrixCoord:
        """``GetCoordMN()``."""
        return MatrixCoord(self.m, self.n)

    @property
    def mk(self) -> MatrixCoord:
        """``GetCoordMK()``."""
        return MatrixCoord(self.m, self.k)

    @property
    def kn(self) -> MatrixCoord:
        """``GetCoordKN()``."""
        return MatrixCoord(self.k, self.n)


class GemmShape(GemmCoord):
    """CATLASS ``GemmShape<M, N, K>``: a static tile shape (L1 or L0 tile). The extents and the ``mn``/``mk``/
    ``kn`` views are :class:`GemmCoord`'s (as ``GemmShape::ToCoord()`` gives the same extents at runtime); the
    type says the shape is fixed at assembly."""

    __slots__ = ()  # a tuple like GemmCoord: no per-instance attributes

    def to_coord(self) -> GemmCoord:
        """``GemmShape::ToCoord()``: the same extents as a runtime :class:`GemmCoord`."""
        return GemmCoord(self.m, self.n, self.k)

    def check(self, what: str) -> "GemmShape":
        """Raise :class:`ConfigError` unless every extent is a positive int."""
        return _check_extents(self, what, ("M", "N", "K"))


class MatrixShape(NamedTuple):
    """CATLASS ``MatrixShape<ROW, COLUMN>``: a static 2-D tile shape (epilogue tiles)."""

    row: int
    column: int

    @property
    def count(self) -> int:
        """``COUNT = ROW * COLUMN``."""
        return self.row * self.column

    def check(self, what: str) -> "MatrixShape":
        """Raise :class:`ConfigError` unless ROW and COLUMN are positive ints."""
        return _check_extents(self, what, ("ROW", "COLUMN"))
