"""Layouts: where element ``(row, col)`` of a logical matrix lives in a flat buffer (CATLASS ``layout::``).

Every CATLASS layout keeps its name and its ``shape``/``stride`` (element units) exactly:

=====================  ==========================================================  ==============
class                  order                                                       CANN name
=====================  ==========================================================  ==============
``RowMajor``           rows contiguous, ``r*ldm + c``                              ND
``ColumnMajor``        columns contiguous, ``r + c*ldm``                           DN
``zN``                 16 x C0 fractals, row-major inside, fractals column-major   NZ
``nZ``                 C0 x 16 fractals, column-major inside, fractals row-major   ZN
``zZ``                 16 x C0 fractals, row-major inside and between              ZZ
``nN``                 C0 x 16 fractals, column-major inside and between           NN
``L0C``                zN with 16 x 16 fractals (accumulator)                      NZ
``PaddingRowMajor``    row-major blocks in a row-major grid                        -
``PaddingColumnMajor`` column-major blocks in a column-major grid                  -
``VectorLayout``       ``i * stride``                                              -
=====================  ==========================================================  ==============

**Naming trap.** CATLASS writes the order *inside* a fractal first in lower case; CANN and AscendC
documents write the order *between* fractals first in upper case. CANN "NZ" (``FRACTAL_NZ``) is
CATLASS ``zN``; CANN "ZN" is ``nZ``. Code here uses CATLASS names only; :func:`make_layout` refuses
CANN names with a hint.

Layouts are immutable, hashable values. Besides the CATLASS API (``offset`` = ``GetOffset``,
``get_tile_layout``, ``capacity``, ``make_layout``) each one moves data: ``read``/``write`` gather and
scatter a region between a flat buffer and a 2-D array through strided numpy views (the simulator's
hot path), ``pack``/``unpack`` convert whole matrices.
"""

from __future__ import annotations

from catlass_py.errors import ArgumentError

from .algebra import inverse_map, is_injective, layout_to_index_map, padded_index_map
from .base import Layout, MatrixLayout
from .fractal import C0_NUM_PER_FRACTAL, L0C, FractalLayout, nN, nZ, zN, zZ
from .matrix import ColumnMajor, RowMajor
from .padding import PaddingColumnMajor, PaddingRowMajor
from .show import describe, show
from .vector import VectorLayout

_CLASSES = {
    cls.__name__: cls
    for cls in (RowMajor, ColumnMajor, zN, nZ, zZ, nN, L0C, PaddingRowMajor, PaddingColumnMajor, VectorLayout)
}
_CANN = {"ND": "RowMajor", "DN": "ColumnMajor", "NZ": "zN", "ZN": "nZ", "ZZ": "zZ", "NN": "nN"}


def layout_class(kind) -> type:
    """The layout class named ``kind`` (a CATLASS class name such as ``"zN"``, or the class itself)."""
    if isinstance(kind, type) and issubclass(kind, Layout):
        return kind
    if isinstance(kind, str):
        cls = _CLASSES.get(kind)
        if cls is not None:
            return cls
        hint = ""
        if kind.upper() in _CANN:
            hint = f"; {kind!r} reads like a CANN format name: CANN {kind.upper()} is CATLASS {_CANN[kind.upper()]!r}"
        raise ArgumentError(f"kind: expected one of {sorted(_CLASSES)}, got {kind!r}{hint}")
    raise ArgumentError(f"kind: expected a layout class or CATLASS class name, got {kind!r}")


def make_layout(kind, dtype, rows, cols=None):
    """CATLASS ``Layout::MakeLayout<Element>(rows, cols)`` for the class named ``kind``.

    ``L0C`` ignores ``dtype``; ``VectorLayout`` takes only ``rows`` (its length). The padding layouts
    have no ``MakeLayout`` in CATLASS: construct them with their block sizes.
    """
    cls = layout_class(kind)
    if cls is VectorLayout:
        if cols is not None:
            raise ArgumentError(f"cols: VectorLayout is 1-D, got cols={cols!r}")
        return VectorLayout.make_layout(dtype, rows)
    if cols is None:
        raise ArgumentError(f"cols: {cls.__name__} needs rows and cols")
    if cls is L0C:
        return L0C.make_layout(rows, cols, dtype)
    if cls in (PaddingRowMajor, PaddingColumnMajor):
        raise ArgumentError(
            f"kind: {cls.__name__} has no MakeLayout in CATLASS; use {cls.__name__}(rows, cols, block_rows, block_cols)"
        )
    return cls.make_layout(dtype, rows, cols)


__all__ = [
    "Layout",
    "MatrixLayout",
    "FractalLayout",
    "RowMajor",
    "ColumnMajor",
    "VectorLayout",
    "zN",
    "nZ",
    "zZ",
    "nN",
    "L0C",
    "PaddingRowMajor",
    "PaddingColumnMajor",
    "C0_NUM_PER_FRACTAL",
    "make_layout",
    "layout_class",
    "show",
    "describe",
    "layout_to_index_map",
    "padded_index_map",
    "is_injective",
    "inverse_map",
]
