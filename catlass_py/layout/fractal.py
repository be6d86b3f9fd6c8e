"""Fractal (4-D) layouts: CATLASS ``layout::zN``, ``nZ``, ``zZ``, ``nN`` and ``L0C`` (``layout/matrix.hpp``).

The matrix is cut into fractals of ``shape[0] x shape[2]`` elements. ``shape`` is
``(rows in fractal, fractal rows, cols in fractal, fractal cols)`` and ``stride`` the matching element
strides, so one formula serves every order::

    offset(r, c) = (r // s0) * t1 + (c // s2) * t3 + (r % s0) * t0 + (c % s2) * t2

Names: the small letter is the order *inside* a fractal (z = row-major, n = column-major), the capital
the order *between* fractals (Z = row-major, N = column-major). CANN writes the capital first, so
CANN's "NZ" format is CATLASS ``zN``, CANN "ZN" is ``nZ``.
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.numerics.dtypes import DType, get_dtype

from .base import MatrixLayout, as_coord, as_positive, as_size, as_sizes, ceil_div, round_up

C0_NUM_PER_FRACTAL = 16  # CATLASS constant: rows (or cols) of a cube fractal


def fractal_pieces(rows, cols, s0, s2, t0, t1, t2, t3):
    """Strided pieces (element units) of the region ``[0:rows, 0:cols]`` of a 4-D layout.

    At most four: whole fractals, the partial fractal row at the bottom, the partial fractal column
    at the right and the corner. The 2-D side is C-contiguous with row length ``cols``.
    """
    r1, rr = divmod(rows, s0)
    c1, cr = divmod(cols, s2)
    w = cols
    pieces = []
    if r1 and c1:
        pieces.append(((r1, s0, c1, s2), 0, (t1, t0, t3, t2), 0, (s0 * w, w, s2, 1)))
    if rr and c1:
        pieces.append(((rr, c1, s2), r1 * t1, (t0, t3, t2), r1 * s0 * w, (w, s2, 1)))
    if r1 and cr:
        pieces.append(((r1, s0, cr), c1 * t3, (t1, t0, t2), c1 * s2, (s0 * w, w, 1)))
    if rr and cr:
        pieces.append(((rr, cr), r1 * t1 + c1 * t3, (t0, t2), r1 * s0 * w + c1 * s2, (w, 1)))
    return pieces


class FractalLayout(MatrixLayout):
    """Base of the 4-D layouts (CATLASS ``zN``/``nZ``/``zZ``/``nN``/``L0C``/``Padding*``).

    Construct with ``Cls(rows, cols, shape, stride)`` like CATLASS's 10-argument constructors, or with
    the ``make_layout`` / ``compact`` classmethods.
    """

    __slots__ = ()

    #: index of the outermost axis: ``capacity = stride[axis] * shape[axis]``
    _OUTER_AXIS = 3
    #: "row" or "col": element order inside one fractal
    INNER_ORDER = "row"
    #: "row" or "col": order of the fractals
    OUTER_ORDER = "col"
    #: the CANN / AscendC name of the format (big letter first)
    CANN_NAME = ""

    def __init__(self, rows, cols, shape, stride):
        rows = as_size("rows", rows)
        cols = as_size("cols", cols)
        shape = as_sizes("shape", shape, 4)
        stride = as_sizes("stride", stride, 4)
        _check_shape(type(self).__name__, rows, cols, shape)
        sa = object.__setattr__
        sa(self, "rows", rows)
        sa(self, "cols", cols)
        sa(self, "shape", shape)
        sa(self, "stride", stride)
        sa(self, "_geom", self._make_geom())

    def _make_geom(self):
        s0, _, s2, _ = self.shape
        return ("F", s0, s2) + self.stride

    # -- geometry -------------------------------------------------------------------------------

    @property
    def fractal_shape(self) -> tuple[int, int]:
        """``(shape[0], shape[2])``: rows and columns of one fractal (block)."""
        return (self.shape[0], self.shape[2])

    @property
    def padded_shape(self) -> tuple[int, int]:
        """``(shape[0]*shape[1], shape[2]*shape[3])``: the whole fractal grid."""
        s = self.shape
        return (s[0] * s[1], s[2] * s[3])

    @property
    def capacity(self) -> int:
        """Elements spanned: ``stride[k] * shape[k]`` of the outermost axis ``k`` (CATLASS ``Capacity()``)."""
        k = self._OUTER_AXIS
        return self.stride[k] * self.shape[k]

    def offset(self, row, col):
        """``(r//s0)*t1 + (c//s2)*t3 + (r%s0)*t0 + (c%s2)*t2`` (CATLASS ``GetOffset``); vectorised.

        For zZ and nN CATLASS keeps only the fractal terms (it is called on fractal corners only);
        here the full formula gives the true address of every element.
        """
        if type(row) is not int or type(col) is not int or row < 0 or col < 0:
            row = as_coord("row", row)
            col = as_coord("col", col)
        s0, _, s2, _ = self.shape
        t0, t1, t2, t3 = self.stride
        if type(row) is int and type(col) is int:
            return (row // s0) * t1 + (col // s2) * t3 + (row % s0) * t0 + (col % s2) * t2
        rq, rm = np.divmod(row, s0)
        cq, cm = np.divmod(col, s2)
        return np.asarray(rq * t1 + cq * t3 + rm * t0 + cm * t2, dtype=np.int64)

    def get_tile_layout(self, rows, cols):
        """CATLASS ``GetTileLayout``: same strides, shape ``(s0, ceil(rows/s0), s2, ceil(cols/s2))``."""
        if type(rows) is not int or type(cols) is not int or rows < 0 or cols < 0:
            rows = as_size("rows", rows)
            cols = as_size("cols", cols)
        s0, _, s2, _ = self.shape
        return type(self)._new(rows, cols, (s0, -(-rows // s0), s2, -(-cols // s2)), self.stride)

    def _pieces(self, rows, cols):
        s0, _, s2, _ = self.shape
        return fractal_pieces(rows, cols, s0, s2, *self.stride)

    def linear_axes(self):
        s0, _, s2, _ = self.shape
        t0, t1, t2, t3 = self.stride
        return ((s0, t1, t0), (s2, t3, t2))

    # -- factories ------------------------------------------------------------------------------

    @classmethod
    def _compact_stride(cls, rows_round, cols_round, fr, fc):  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def compact(cls, rows, cols, fractal_rows, fractal_cols):
        """The gap-free layout of this order for ``fractal_rows x fractal_cols`` fractals.

        ``make_layout(dtype, ...)`` is ``compact`` with the cube fractal of ``dtype``; other sizes give
        e.g. the 2x2 toy fractals of the PTO documents or the 16x2 MX-scale boxes.
        """
        key = (cls, rows, cols, fractal_rows, fractal_cols)
        try:
            hit = _COMPACT_CACHE.get(key)
        except TypeError:  # unhashable arguments: validation below reports them
            hit, key = None, None
        if hit is not None:
            return hit
        rows = as_size("rows", rows)
        cols = as_size("cols", cols)
        fr = as_positive("fractal_rows", fractal_rows)
        fc = as_positive("fractal_cols", fractal_cols)
        rr = round_up(rows, fr)
        cr = round_up(cols, fc)
        layout = cls._new(rows, cols, (fr, rr // fr, fc, cr // fc), cls._compact_stride(rr, cr, fr, fc))
        if key is not None:
            if len(_COMPACT_CACHE) >= _COMPACT_CACHE_LIMIT:
                _COMPACT_CACHE.clear()
            _COMPACT_CACHE[key] = layout
        return layout

    def __repr__(self):
        return f"{type(self).__name__}(rows={self.rows}, cols={self.cols}, shape={self.shape}, stride={self.stride})"


# Layouts are immutable values, so the ones built again and again inside block loops (one per L0 tile) are
# shared: (class, rows, cols, fractal rows, fractal cols) -> layout.
_COMPACT_CACHE: dict = {}
_COMPACT_CACHE_LIMIT = 4096


def _check_shape(name, rows, cols, shape):
    s0, s1, s2, s3 = shape
    if s0 == 0 or s2 == 0:
        raise ArgumentError(f"shape: {name} fractal sides shape[0] and shape[2] must be positive, got {shape}")
    if s0 * s1 < rows or s2 * s3 < cols:
        raise ArgumentError(
            f"shape: {name} grid {s0 * s1}x{s2 * s3} (shape {shape}) does not cover the {rows}x{cols} logical matrix"
        )


_C0: dict = {}  # dtype name -> C0


def _fractal_of(dtype, inner_rows_is_16: bool):
    if type(dtype) is DType:
        c0 = dtype.c0
    else:
        c0 = _C0.get(dtype) if type(dtype) is str else None
        if c0 is None:
            c0 = get_dtype(dtype).c0  # raises for anything that is not a dtype
            if type(dtype) is str:
                _C0[dtype] = c0
    return (C0_NUM_PER_FRACTAL, c0) if inner_rows_is_16 else (c0, C0_NUM_PER_FRACTAL)


class zN(FractalLayout):  # noqa: N801 - CATLASS name
    """CATLASS ``layout::zN`` (CANN "NZ"): row-major inside a fractal, fractals column-major.

    ``make_layout(dtype)`` uses 16 x C0 fractals; a fractal column ("panel", ``Rr x C0``) is contiguous.
    Layout of row-major operands in L1 and of the GM "NZ" format. ``capacity = stride[3] * shape[3]``.
    """

    __slots__ = ()
    _OUTER_AXIS = 3
    INNER_ORDER = "row"
    OUTER_ORDER = "col"
    CANN_NAME = "NZ"

    @classmethod
    def _compact_stride(cls, rr, cr, fr, fc):
        return (fc, fr * fc, 1, rr * fc)

    @classmethod
    def make_layout(cls, dtype, rows, cols) -> zN:
        """CATLASS ``zN::MakeLayout<Element>``: shape ``(16, Rr/16, C0, Cr/C0)``, stride ``(C0, 16*C0, 1, Rr*C0)``."""
        return cls.compact(rows, cols, *_fractal_of(dtype, True))

    @classmethod
    def make_layout_in_l0c(cls, rows, cols) -> zN:
        """CATLASS ``zN::MakeLayoutInL0C``: 16 x 16 fractals whatever the dtype."""
        return cls.compact(rows, cols, C0_NUM_PER_FRACTAL, C0_NUM_PER_FRACTAL)


class nZ(FractalLayout):  # noqa: N801 - CATLASS name
    """CATLASS ``layout::nZ`` (CANN "ZN"): column-major inside a fractal, fractals row-major.

    ``make_layout(dtype)`` uses C0 x 16 fractals. Layout of column-major operands in L1 and of L0B.
    ``capacity = stride[1] * shape[1]``.
    """

    __slots__ = ()
    _OUTER_AXIS = 1
    INNER_ORDER = "col"
    OUTER_ORDER = "row"
    CANN_NAME = "ZN"

    @classmethod
    def _compact_stride(cls, rr, cr, fr, fc):
        return (1, cr * fr, fr, fr * fc)

    @classmethod
    def make_layout(cls, dtype, rows, cols) -> nZ:
        """CATLASS ``nZ::MakeLayout<Element>``: shape ``(C0, Rr/C0, 16, Cr/16)``, stride ``(1, Cr*C0, C0, 16*C0)``."""
        return cls.compact(rows, cols, *_fractal_of(dtype, False))


class zZ(FractalLayout):  # noqa: N801 - CATLASS name
    """CATLASS ``layout::zZ`` (CANN "ZZ"): row-major inside a fractal, fractals row-major.

    L0A layout on Atlas A2 (16 x C0 fractals). CATLASS has no ``Capacity``/``GetTileLayout`` for it;
    here ``capacity = stride[1] * shape[1]`` and ``get_tile_layout`` keeps the strides.
    """

    __slots__ = ()
    _OUTER_AXIS = 1
    INNER_ORDER = "row"
    OUTER_ORDER = "row"
    CANN_NAME = "ZZ"

    @classmethod
    def _compact_stride(cls, rr, cr, fr, fc):
        return (fc, cr * fr, 1, fr * fc)

    @classmethod
    def make_layout(cls, dtype, rows, cols) -> zZ:
        """CATLASS ``zZ::MakeLayout<Element>``: shape ``(16, Rr/16, C0, Cr/C0)``, stride ``(C0, Cr*16, 1, 16*C0)``."""
        return cls.compact(rows, cols, *_fractal_of(dtype, True))


class nN(FractalLayout):  # noqa: N801 - CATLASS name
    """CATLASS ``layout::nN`` (CANN "NN"): column-major inside a fractal, fractals column-major.

    C0 x 16 fractals; used by GEMV/TLA/MX-scale paths. CATLASS has no ``Capacity``/``GetTileLayout``
    for it; here ``capacity = stride[3] * shape[3]`` and ``get_tile_layout`` keeps the strides.
    """

    __slots__ = ()
    _OUTER_AXIS = 3
    INNER_ORDER = "col"
    OUTER_ORDER = "col"
    CANN_NAME = "NN"

    @classmethod
    def _compact_stride(cls, rr, cr, fr, fc):
        return (1, fr * fc, fr, rr * fc)

    @classmethod
    def make_layout(cls, dtype, rows, cols) -> nN:
        """CATLASS ``nN::MakeLayout<Element>``: shape ``(C0, Rr/C0, 16, Cr/16)``, stride ``(1, 16*C0, C0, Rr*16)``."""
        return cls.compact(rows, cols, *_fractal_of(dtype, False))


class L0C(FractalLayout):
    """CATLASS ``layout::L0C``: the accumulator layout, zN with 16 x 16 fractals whatever the dtype.

    shape ``(16, ceil(R/16), 16, ceil(C/16))``, stride ``(16, 256, 1, roundup(R,16)*16)``;
    ``capacity = stride[3] * shape[3]``. CANN calls the L0C format "NZ".
    """

    __slots__ = ()
    _OUTER_AXIS = 3
    INNER_ORDER = "row"
    OUTER_ORDER = "col"
    CANN_NAME = "NZ"

    @classmethod
    def _compact_stride(cls, rr, cr, fr, fc):
        return (fc, fr * fc, 1, rr * fc)

    @classmethod
    def make_layout(cls, rows, cols, dtype=None) -> L0C:
        """CATLASS ``L0C::MakeLayout<Element>`` (the element type is ignored, as in CATLASS)."""
        if dtype is not None:
            get_dtype(dtype)
        return cls.compact(rows, cols, C0_NUM_PER_FRACTAL, C0_NUM_PER_FRACTAL)


__all__ = ["FractalLayout", "zN", "nZ", "zZ", "nN", "L0C", "C0_NUM_PER_FRACTAL", "fractal_pieces"]
